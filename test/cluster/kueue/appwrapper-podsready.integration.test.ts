/**
 * Kueue's waitForPodsReady against the real AppWrapper controller: the embedded cluster
 * started with Kueue's own Configuration file (as `--kueue-config` reads it) and troupe's
 * manager over HTTPS, all on one virtual clock so that minutes of grace periods and timeouts
 * pass exactly and in order. Kueue's PodsReady timeout counts from admission; AppWrapper's
 * warmup grace period from its resources' deployment. Whichever ends first acts: a shorter
 * warmup resets the AppWrapper (its quota kept, Kueue's clock still running), a shorter
 * Kueue timeout evicts the Workload and Kueue suspends the AppWrapper.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BuiltManager } from '../../../src/cli/manager.ts';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { GVR } from '../../../src/cluster/client.ts';
import { type EmbeddedCluster, startEmbeddedCluster } from '../../../src/cluster/index.ts';
import { parseKueueConfiguration } from '../../../src/cluster/kueue/config.ts';
import { KGVR, type Workload } from '../../../src/cluster/kueue/index.ts';
import { endSimulation, runUntil, startSimulation } from '../../../src/lib/virtual-clock.ts';
import { startQuietManager } from '../../support/in-process-manager.ts';

const MIN = 60_000;
const AW_ANN = 'workload.codeflare.dev.appwrapper';

const KUEUE_CONFIG = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  timeout: 5m
  requeuingStrategy: {backoffBaseSeconds: 60}
`;

/** An AppWrapper of one pod no node can take (its nodeSelector matches none): never ready. */
function stuckAppWrapper(name: string, annotations: Record<string, string>): KubeObject {
  return {
    apiVersion: 'workload.codeflare.dev/v1beta2',
    kind: 'AppWrapper',
    metadata: {
      name,
      namespace: 'default',
      labels: { 'kueue.x-k8s.io/queue-name': 'user-queue' },
      annotations,
    },
    spec: {
      suspend: true,
      components: [
        {
          template: {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: `${name}-pod` },
            spec: {
              restartPolicy: 'Never',
              nodeSelector: { 'example.com/pool': 'none' },
              containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m' } } }],
            },
          },
        },
      ],
    },
  };
}

type Cond = { type: string; status: string; reason: string; message: string; lastTransitionTime: string };
type AwStatus = { phase?: string; resettingCount?: number; conditions?: Cond[] };

test('AppWrapper warmup grace period and Kueue PodsReady timeout, both orders, on virtual time', async () => {
  const clock = startSimulation({ seed: 3 });
  let cluster: EmbeddedCluster | undefined;
  let built: BuiltManager | undefined;
  try {
    cluster = await startEmbeddedCluster({
      clock,
      nodes: 1,
      port: 0,
      kueue: parseKueueConfiguration(KUEUE_CONFIG),
    });
    const { client } = cluster;
    built = await startQuietManager(cluster.server.kubeconfig, clock, [
      '--controllers=appwrapper',
      '--log-level=error',
    ]);
    const start = clock.now();

    const aw = (name: string) =>
      client.get(KGVR.appWrappers, 'default', name)?.status as AwStatus | undefined;
    const awCond = (name: string, type: string) => aw(name)?.conditions?.find((c) => c.type === type);
    const wl = (name: string) =>
      client
        .list<Workload>(KGVR.workloads, 'default')
        .find((w) => w.metadata.ownerReferences?.some((r) => r.kind === 'AppWrapper' && r.name === name));
    const wlCond = (name: string, type: string) =>
      wl(name)?.status?.conditions?.find((c) => c.type === type) as Cond | undefined;
    const events = (obj: KubeObject | undefined, reason: string) =>
      client
        .list(GVR.events, 'default')
        .filter(
          (e) =>
            (e as { involvedObject?: { uid?: string } }).involvedObject?.uid === obj?.metadata.uid &&
            (e as { reason?: string }).reason === reason,
        )
        .map((e) => (e as { message?: string }).message);
    const at = (t: string | undefined) => (Date.parse(t ?? '') - start) / MIN;
    // Every wait is bounded in virtual time: the cluster's timers never run out.
    const until = async (what: string, done: () => boolean) => {
      const limit = clock.now() + 15 * MIN;
      await runUntil(clock, () => done() || clock.now() >= limit, { stallMs: 20_000 });
      assert.ok(done(), `${what}: not by +${(clock.now() - start) / MIN} min`);
    };

    // 'warm' has a 2m warmup (shorter than Kueue's 5m), 'slow' a 10m one (longer); both the
    // default 90s retry pause.
    await client.create(
      KGVR.appWrappers,
      stuckAppWrapper('warm', { [`${AW_ANN}/warmupGracePeriodDuration`]: '2m' }),
    );
    await client.create(
      KGVR.appWrappers,
      stuckAppWrapper('slow', { [`${AW_ANN}/warmupGracePeriodDuration`]: '10m' }),
    );
    await until('both running', () => aw('warm')?.phase === 'Running' && aw('slow')?.phase === 'Running');
    const admittedAt = at(wlCond('warm', 'Admitted')?.lastTransitionTime);
    assert.equal(at(wlCond('slow', 'Admitted')?.lastTransitionTime), admittedAt);
    assert.deepEqual(
      [wlCond('warm', 'PodsReady')?.status, wlCond('warm', 'PodsReady')?.reason],
      ['False', 'WaitForStart'],
    );

    // AppWrapper first: 'warm' resets at its 2m warmup; Kueue's Workload stays admitted.
    await until('warm resetting', () => aw('warm')?.resettingCount === 1);
    const unhealthy = awCond('warm', 'Unhealthy')!;
    assert.deepEqual(
      [unhealthy.status, unhealthy.reason, unhealthy.message],
      ['True', 'InsufficientPodsReady', '1 pods pending; 0 pods running; 0 pods succeeded'],
    );
    assert.equal(at(unhealthy.lastTransitionTime) - admittedAt, 2);
    assert.equal(wlCond('warm', 'Admitted')?.status, 'True');
    assert.equal(wlCond('warm', 'Evicted'), undefined);
    // The reset does not restart Kueue's timeout: it counts from admission, and at 5m both
    // Workloads are evicted, 'warm' in its second attempt (running again since 3m30s, its next
    // reset due at 5m30s), 'slow' before its warmup ends.
    await until(
      'both evicted',
      () => wlCond('warm', 'Evicted')?.status === 'True' && wlCond('slow', 'Evicted')?.status === 'True',
    );
    for (const name of ['warm', 'slow']) {
      const w = wl(name)!;
      const key = `default/${w.metadata.name}`;
      const evicted = wlCond(name, 'Evicted')!;
      assert.deepEqual(
        [evicted.reason, evicted.message],
        ['PodsReadyTimeout', `Exceeded the PodsReady timeout ${key}`],
        name,
      );
      assert.equal(at(evicted.lastTransitionTime) - admittedAt, 5, name);
      assert.deepEqual(
        [
          wlCond(name, 'PodsReady')?.status,
          wlCond(name, 'PodsReady')?.reason,
          wlCond(name, 'PodsReady')?.message,
        ],
        ['False', 'WaitForStart', 'Not all pods are ready or succeeded'],
        name,
      );
      assert.equal(w.status?.requeueState?.count, 1, name);
      // Requeued after backoffBaseSeconds (plus at most Kueue's 0.01% jitter).
      const wait = Date.parse(w.status!.requeueState!.requeueAt!) - Date.parse(evicted.lastTransitionTime);
      assert.ok(wait >= 60_000 && wait <= 60_006, `${name}: requeueAt ${wait} ms after the eviction`);
      assert.deepEqual(events(w, 'EvictedDueToPodsReadyTimeout'), [`Exceeded the PodsReady timeout ${key}`]);
    }
    // Kueue suspends both AppWrappers: their resources are deleted and quota given back.
    await until('both suspended', () =>
      ['warm', 'slow'].every(
        (name) => aw(name)?.phase === 'Suspended' && wlCond(name, 'QuotaReserved')?.status === 'False',
      ),
    );
    for (const name of ['warm', 'slow']) {
      assert.deepEqual(
        [awCond(name, 'QuotaReserved')?.status, awCond(name, 'QuotaReserved')?.reason],
        ['False', 'Suspended'],
        name,
      );
      assert.equal(awCond(name, 'ResourcesDeployed')?.status, 'False', name);
      assert.equal(client.get(GVR.pods, 'default', `${name}-pod`), undefined, name);
      assert.deepEqual(
        [wlCond(name, 'Requeued')?.status, wlCond(name, 'Requeued')?.reason],
        ['False', 'PodsReadyTimeout'],
        name,
      );
    }
    // The stand-in's Stopped and the AppWrapper controller's Suspending Events are written at
    // the same virtual instant about the same object: both are kept.
    const aws = ['warm', 'slow'].map((name) => client.get(KGVR.appWrappers, 'default', name));
    await until('the Stopped and Suspending Events', () =>
      aws.every((obj) => events(obj, 'Stopped').length > 0 && events(obj, 'Suspending').length > 0),
    );
    for (const [i, name] of ['warm', 'slow'].entries()) {
      const obj = aws[i];
      assert.equal(events(obj, 'Stopped').length, 1, name);
      assert.deepEqual(events(obj, 'Suspending'), ['Externally suspended while in the Running phase'], name);
    }
    // 'slow' never reached its warmup: no reset. 'warm' keeps its one reset.
    assert.equal(aw('slow')?.resettingCount, undefined);
    assert.equal(aw('warm')?.resettingCount, 1);

    // After the backoff both are requeued and admitted again, and run again.
    await until(
      'both running again',
      () =>
        wlCond('warm', 'Requeued')?.reason === 'BackoffFinished' &&
        wlCond('slow', 'Requeued')?.reason === 'BackoffFinished' &&
        aw('warm')?.phase === 'Running' &&
        aw('slow')?.phase === 'Running',
    );
    for (const name of ['warm', 'slow']) {
      assert.equal(wlCond(name, 'Requeued')?.message, 'The workload backoff was finished');
      assert.deepEqual(
        [wlCond(name, 'Evicted')?.status, wlCond(name, 'Evicted')?.message],
        ['False', `Previously: Exceeded the PodsReady timeout default/${wl(name)!.metadata.name}`],
        name,
      );
      assert.equal(at(wlCond(name, 'Admitted')?.lastTransitionTime) - admittedAt, 6, name);
    }
  } finally {
    await built?.stop();
    await cluster?.stop();
    endSimulation();
  }
});
