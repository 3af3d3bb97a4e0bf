/**
 * Coscheduling's Permit on the scheduler alone: a member changed while it waits at Permit goes
 * back to the queue as the watch shows it, as kube-scheduler's handleSchedulingFailure reads its
 * informer (the queue takes no update for an assumed pod).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { GVR } from '../../../src/cluster/client.ts';
import { ensureXPodGroupCRD } from '../../../src/cluster/scheduler/gang/crd.ts';
import { type SchedulerHandle, startScheduler } from '../../../src/cluster/scheduler/index.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { waitFor } from '../../support/wait.ts';
import { getPod, type Harness, nodeNameOf, nodeObj, podObj, startHarness } from './harness.ts';

const PODGROUPS = { group: 'scheduling.x-k8s.io', version: 'v1alpha1', resource: 'podgroups' };
const GROUP_LABEL = 'scheduling.x-k8s.io/pod-group';
const TAINT = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
const TOLERATION = { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' };

let h: Harness;
let sched: SchedulerHandle | undefined;
before(async () => {
  h = await startHarness();
  await ensureXPodGroupCRD(h.client);
});
after(async () => {
  await sched?.stop();
  await h.close();
});

function podGroup(name: string, spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'scheduling.x-k8s.io/v1alpha1',
    kind: 'PodGroup',
    metadata: { name, namespace: 'default' },
    spec,
  };
}

function member(name: string, group: string, spec: Record<string, unknown> = {}): KubeObject {
  const pod = podObj(name, { 'nvidia.com/gpu': '1' }, spec, { 'nvidia.com/gpu': '1' });
  pod.metadata.labels = { [GROUP_LABEL]: group };
  return pod;
}

test('a member changed while held at Permit is tried as changed once released', async () => {
  const clock = new ManualClock(Date.now());
  for (const n of ['n1', 'n2'])
    await h.client.create(GVR.nodes, nodeObj(n, { cpu: '4', 'nvidia.com/gpu': '1' }));
  await h.client.create(PODGROUPS, podGroup('h', { minMember: 3, scheduleTimeoutSeconds: 10 }));
  await h.client.create(PODGROUPS, podGroup('solo', { minMember: 1 }));
  // h-2 belongs to another scheduler: it counts for the quorum but is never placed here, so
  // h-0 and h-1 are held at Permit until the gang's timeout.
  await h.client.create(GVR.pods, member('h-2', 'h', { schedulerName: 'elsewhere' }));
  await h.client.create(GVR.pods, member('h-0', 'h'));
  await h.client.create(GVR.pods, member('h-1', 'h'));
  sched = startScheduler(h.client.as('system:kube-scheduler'), { gangScheduling: true, clock });
  const s = sched;
  await waitFor('h-0 and h-1 held at Permit', () => s.stats().binding === 2);

  // While h-0 is held: it moves to a gang of one and tolerates a taint both nodes then get.
  await h.client.mutate(GVR.pods, 'default', 'h-0', (p) => {
    p.metadata.labels = { [GROUP_LABEL]: 'solo' };
    (p.spec as { tolerations?: unknown[] }).tolerations?.push(TOLERATION);
  });
  for (const n of ['n1', 'n2'])
    await h.client.mutate(GVR.nodes, '', n, (node) => {
      (node.spec as { taints?: unknown[] }).taints = [TAINT];
    });
  clock.advance(11_000);
  await waitFor('the gang released at its timeout', () => s.stats().binding === 0);
  // Released members wait for a cluster event or the unschedulable flush (5 minutes).
  clock.advance(6 * 60_000);
  const node = await waitFor('h-0 placed on a tainted node, as the one member of solo', () =>
    nodeNameOf(getPod(h.client, 'h-0')),
  );
  assert.ok(['n1', 'n2'].includes(node));
  assert.equal(nodeNameOf(getPod(h.client, 'h-1')), undefined, 'h, one member short, places nothing');
});
