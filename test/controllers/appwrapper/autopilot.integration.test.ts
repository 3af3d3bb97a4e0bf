/**
 * Upstream's end-to-end scenario "A running job is migrated away from an unhealthy node"
 * (AppWrapper v1.2.1 test/e2e/appwrapper_test.go, Autopilot Job Migration) on the whole
 * embedded cluster: GPU nodes, scheduler, kubelet, Job controller, the Kueue stand-in and
 * the AppWrapper controller with upstream's default Autopilot configuration.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GVR } from '../../../src/cluster/client.ts';
import { KGVR } from '../../../src/cluster/kueue/index.ts';
import { DEFAULT_NODE_CAPACITY, validateNodeConfig } from '../../../src/cluster/nodes/config.ts';
import { waitFor } from '../../support/wait.ts';
import { AW, type Env, getAw, startEnv, waitPhase } from './env.ts';

let env: Env;

before(async () => {
  env = await startEnv({
    embedded: true,
    cluster: {
      nodes: validateNodeConfig({
        pools: [
          {
            name: 'gpu',
            namePrefix: 'gpu-node',
            count: 3,
            capacity: { ...DEFAULT_NODE_CAPACITY, 'nvidia.com/gpu': '8' },
          },
        ],
      } as Parameters<typeof validateNodeConfig>[0]),
    },
  });
  // The seed's cluster-queue covers CPUs only: give it GPUs too.
  await env.client.mutate(KGVR.clusterQueues, '', 'cluster-queue', (cq) => {
    (cq.spec as Record<string, unknown>).resourceGroups = [
      {
        coveredResources: ['cpu', 'nvidia.com/gpu'],
        flavors: [
          {
            name: 'default-flavor',
            resources: [
              { name: 'cpu', nominalQuota: 8 },
              { name: 'nvidia.com/gpu', nominalQuota: 8 },
            ],
          },
        ],
      },
    ];
  });
});

after(async () => {
  await env.stop();
});

type PodLike = {
  metadata: { name?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec?: { nodeName?: string; affinity?: unknown };
  status?: { phase?: string };
};

const runningPod = () =>
  (env.client.list(GVR.pods, 'default') as PodLike[]).find(
    (p) =>
      p.metadata.labels?.['workload.codeflare.dev/appwrapper'] === 'apjob' &&
      p.status?.phase === 'Running' &&
      !p.metadata.deletionTimestamp,
  );

describe('Autopilot job migration', () => {
  test('a running job is migrated away from an unhealthy node', async () => {
    await env.client.create(AW, {
      apiVersion: 'workload.codeflare.dev/v1beta2',
      kind: 'AppWrapper',
      metadata: {
        name: 'apjob',
        namespace: 'default',
        labels: { 'kueue.x-k8s.io/queue-name': 'user-queue' },
        annotations: {
          'workload.codeflare.dev.appwrapper/retryPausePeriodDuration': '5s',
          'workload.codeflare.dev.appwrapper/failureGracePeriodDuration': '5s',
        },
      },
      spec: {
        suspend: true,
        components: [
          {
            podSets: [{ path: 'template.spec.template' }],
            template: {
              apiVersion: 'batch/v1',
              kind: 'Job',
              metadata: { generateName: 'apjob-' },
              spec: {
                template: {
                  spec: {
                    restartPolicy: 'Never',
                    terminationGracePeriodSeconds: 0,
                    containers: [
                      {
                        name: 'busybox',
                        image: 'quay.io/project-codeflare/busybox:1.36',
                        command: ['sh', '-c', 'sleep 600'],
                        resources: {
                          requests: { cpu: '200m', 'nvidia.com/gpu': '1' },
                          limits: { 'nvidia.com/gpu': '1' },
                        },
                      },
                    ],
                  },
                },
              },
            },
          },
        ],
      },
    });
    // workload is running
    await waitPhase(env, 'apjob', 'Running', 60_000);
    const first = await waitFor('the pod running', runningPod, { timeoutMs: 60_000 });
    const node = first.spec!.nodeName!;
    // The injected anti-affinity keeps GPU pods off nodes Autopilot marks unhealthy.
    assert.deepEqual(
      (
        first.spec!.affinity as {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: unknown[] } };
        }
      ).nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
      [
        {
          matchExpressions: [
            { key: 'autopilot.ibm.com/gpuhealth', operator: 'NotIn', values: ['TESTING', 'EVICT'] },
          ],
        },
      ],
    );

    // node is labeled by autopilot
    await env.client.mutate(GVR.nodes, '', node, (n) => {
      n.metadata.labels = { ...(n.metadata.labels ?? {}), 'autopilot.ibm.com/gpuhealth': 'EVICT' };
    });
    // workload is reset, without spending a retry
    await waitPhase(env, 'apjob', 'Resetting', 60_000);
    const resetting = getAw(env, 'apjob');
    const unhealthy = (
      resetting?.status as { conditions?: { type: string; reason: string; message: string }[] } | undefined
    )?.conditions?.find((c) => c.type === 'Unhealthy');
    assert.equal(unhealthy?.reason, 'AutopilotNoExecute');
    assert.equal(
      unhealthy?.message,
      `Workload contains pods using NoExecute resources on Nodes: map[${node}:{}]`,
    );
    // Upstream's Status.Retries is `json:"resettingCount,omitempty"`: a reset that spent a
    // retry would show 1 here; Autopilot's does not, so the field stays omitted.
    const count = (aw: ReturnType<typeof getAw>) =>
      (aw?.status as { resettingCount?: number } | undefined)?.resettingCount;
    assert.equal(count(resetting), undefined);

    // workload is running again, elsewhere
    await waitPhase(env, 'apjob', 'Running', 120_000);
    const again = await waitFor(
      'a new pod running on another node',
      () => {
        const p = runningPod();
        return p && p.spec?.nodeName !== node ? p : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.notEqual(again.spec?.nodeName, node);
    assert.equal(count(getAw(env, 'apjob')), undefined);
  });
});
