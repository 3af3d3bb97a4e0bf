import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { GVR } from '../../../src/cluster/client.ts';
import {
  type SchedulerHandle,
  type SchedulerOptions,
  startScheduler,
} from '../../../src/cluster/scheduler/index.ts';
import { waitFor } from '../../support/wait.ts';
import {
  clearCluster,
  condition,
  eventsFor,
  getPod,
  type Harness,
  nodeNameOf,
  nodeObj,
  podObj,
  startHarness,
  waitBound,
  waitUnschedulable,
} from './harness.ts';

/** Short backoffs so retries happen within a test's patience. */
const FAST: SchedulerOptions = { podInitialBackoffMs: 10, podMaxBackoffMs: 50 };
/** Backoffs a test can land inside, and no leftover flush: only a cluster event retries a parked pod. */
const BACKOFF_MS = 300;
const EVENTS_ONLY: SchedulerOptions = {
  podInitialBackoffMs: BACKOFF_MS,
  podMaxBackoffMs: BACKOFF_MS,
  podMaxInUnschedulableMs: 600_000,
};

function pinned(node: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return { nodeSelector: { 'kubernetes.io/hostname': node }, ...spec };
}

function setTaints(node: KubeObject, taints: { key: string; effect: string }[]): void {
  (node.spec as Record<string, unknown>).taints = taints;
}

/** Pods get their priority from a PriorityClass (the Priority admission plugin), as on a real cluster. */
async function priorityClass(
  client: { create(g: unknown, o: KubeObject): Promise<unknown> },
  value: number,
): Promise<string> {
  const name = `prio-${value}`;
  await client
    .create({ group: 'scheduling.k8s.io', version: 'v1', resource: 'priorityclasses' }, {
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name },
      value,
    } as KubeObject)
    .catch((err: { status?: { code?: number } }) => {
      // Made by an earlier test: the class is the same.
      if (err.status?.code !== 409) throw err;
    });
  return name;
}

describe('default-scheduler through the API', () => {
  let h: Harness;
  let sched: SchedulerHandle | undefined;

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await sched?.stop();
    await h.close();
  });
  beforeEach(async () => {
    await sched?.stop();
    sched = undefined;
    await clearCluster(h.client);
  });

  const start = (opts: SchedulerOptions = {}) => {
    sched = startScheduler(h.client.as('system:kube-scheduler'), { ...FAST, ...opts });
    return sched;
  };

  test('binds a pod to the node its requests fit and records Scheduled', async () => {
    await h.client.create(GVR.nodes, nodeObj('small', { cpu: '2', memory: '4Gi' }));
    await h.client.create(GVR.nodes, nodeObj('large', { cpu: '8', memory: '16Gi' }));
    start();
    await h.client.create(GVR.pods, podObj('pod-1', { cpu: '4', memory: '1Gi' }));
    assert.equal(await waitBound(h.client, 'pod-1'), 'large');
    assert.equal(condition(getPod(h.client, 'pod-1'), 'PodScheduled')?.status, 'True');
    const ev = await waitFor('Scheduled event', () => eventsFor(h.client, 'pod-1', 'Scheduled')[0]);
    assert.equal(ev.message, 'Successfully assigned default/pod-1 to large');
    assert.equal(ev.type, 'Normal');
    // Written through events.k8s.io/v1 as kube-scheduler does: no legacy source, an eventTime.
    assert.deepEqual(ev.source, {});
    assert.equal(ev.reportingComponent, 'default-scheduler');
    assert.equal(ev.reportingInstance, 'default-scheduler-troupe');
    assert.equal(ev.action, 'Binding');
    assert.match(String(ev.eventTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  test('honours nodeSelector and matchFields metadata.name affinity', async () => {
    await h.client.create(
      GVR.nodes,
      nodeObj('n-a', { cpu: '4', memory: '8Gi' }, { labels: { disk: 'ssd' } }),
    );
    await h.client.create(
      GVR.nodes,
      nodeObj('n-b', { cpu: '4', memory: '8Gi' }, { labels: { disk: 'hdd' } }),
    );
    await h.client.create(GVR.nodes, nodeObj('n-c', { cpu: '4', memory: '8Gi' }));
    start();
    await h.client.create(GVR.pods, podObj('selected', {}, { nodeSelector: { disk: 'hdd' } }));
    const pinned = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n-c'] }] }],
        },
      },
    };
    await h.client.create(GVR.pods, podObj('pinned', {}, { affinity: pinned }));
    assert.equal(await waitBound(h.client, 'selected'), 'n-b');
    assert.equal(await waitBound(h.client, 'pinned'), 'n-c');
  });

  test('keeps pods off tainted nodes unless they tolerate the taint', async () => {
    const taints = [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }];
    await h.client.create(GVR.nodes, nodeObj('tainted', { cpu: '4', memory: '8Gi' }, { taints }));
    start();
    await h.client.create(GVR.pods, podObj('plain', { cpu: '1' }));
    const tolerant = {
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
    };
    await h.client.create(GVR.pods, podObj('tolerant', { cpu: '1' }, tolerant));
    assert.equal(await waitBound(h.client, 'tolerant'), 'tainted');
    assert.equal(
      await waitUnschedulable(h.client, 'plain'),
      '0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}. ' +
        'preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
    );
  });

  test('GPU requests: the right node, or kube-scheduler’s exact message and a FailedScheduling event', async () => {
    await h.client.create(GVR.nodes, nodeObj('cpu-0', { cpu: '8', memory: '16Gi' }));
    await h.client.create(GVR.nodes, nodeObj('cpu-1', { cpu: '8', memory: '16Gi' }));
    const taints = [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }];
    await h.client.create(
      GVR.nodes,
      nodeObj('gpu-0', { cpu: '8', memory: '16Gi', 'nvidia.com/gpu': '4' }, { taints }),
    );
    start();
    await h.client.create(GVR.pods, podObj('untolerating', { cpu: '1' }, {}, { 'nvidia.com/gpu': '2' }));
    const tolerations = [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }];
    await h.client.create(
      GVR.pods,
      podObj('trainer', { cpu: '1' }, { tolerations }, { 'nvidia.com/gpu': '2' }),
    );
    assert.equal(await waitBound(h.client, 'trainer'), 'gpu-0');

    const expected =
      '0/3 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, 2 Insufficient nvidia.com/gpu. ' +
      'preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.';
    assert.equal(await waitUnschedulable(h.client, 'untolerating'), expected);
    assert.equal(
      getPod(h.client, 'untolerating')?.status &&
        (getPod(h.client, 'untolerating')!.status as { phase?: string }).phase,
      'Pending',
    );
    const ev = await waitFor(
      'FailedScheduling event',
      () => eventsFor(h.client, 'untolerating', 'FailedScheduling')[0],
    );
    assert.equal(ev.type, 'Warning');
    assert.equal(ev.message, expected);
    assert.deepEqual(ev.source, {});
    assert.equal(ev.reportingComponent, 'default-scheduler');
    assert.equal(ev.action, 'Scheduling');
  });

  test('retries join one Event series (patched at the second, counted after) and write the condition only when it changes', async () => {
    await h.client.create(GVR.nodes, nodeObj('tiny', { cpu: '1', memory: '1Gi' }));
    const s = start({ podMaxInUnschedulableMs: 30, unschedulableFlushIntervalMs: 20 });
    const created = await h.client.create(GVR.pods, podObj('big', { cpu: '2' }));
    await waitUnschedulable(h.client, 'big');
    const rv = getPod(h.client, 'big')!.metadata.resourceVersion;
    // The first verdict is about the pod as created; the condition it writes changes the
    // pod's resourceVersion, so the retries are another Event, whose series they join.
    const series = await waitFor('a FailedScheduling series', () =>
      eventsFor(h.client, 'big', 'FailedScheduling').find(
        (e) => (e.series as { count?: number } | undefined)?.count === 2,
      ),
    );
    const evs = eventsFor(h.client, 'big', 'FailedScheduling');
    assert.equal(evs.length, 2);
    const first = evs.find((e) => e !== series)!;
    assert.equal(
      (first.involvedObject as { resourceVersion?: string }).resourceVersion,
      created.metadata.resourceVersion,
    );
    assert.equal(first.series, undefined);
    assert.equal((series.involvedObject as { resourceVersion?: string }).resourceVersion, rv);
    // Later repeats are counted in memory until the series is refreshed or finished.
    const attempts = s.stats().unschedulableAttempts;
    await waitFor('more retries', () => s.stats().unschedulableAttempts >= attempts + 3);
    const now = eventsFor(h.client, 'big', 'FailedScheduling');
    assert.equal(now.length, 2);
    assert.equal(
      now.find((e) => e.metadata.name === series.metadata.name)!.metadata.resourceVersion,
      series.metadata.resourceVersion,
    );
    assert.equal(
      getPod(h.client, 'big')!.metadata.resourceVersion,
      rv,
      'an unchanged condition is not rewritten',
    );
  });

  test('an unschedulable pod is retried when a node that fits is added', async () => {
    await h.client.create(GVR.nodes, nodeObj('small', { cpu: '1', memory: '1Gi' }));
    start();
    await h.client.create(GVR.pods, podObj('waiting', { cpu: '4' }));
    await waitUnschedulable(h.client, 'waiting');
    await h.client.create(GVR.nodes, nodeObj('added', { cpu: '8', memory: '8Gi' }));
    assert.equal(await waitBound(h.client, 'waiting'), 'added');
  });

  test('an unschedulable pod is retried when a pod is deleted or finishes', async () => {
    await h.client.create(GVR.nodes, nodeObj('one', { cpu: '2', memory: '4Gi' }));
    start();
    await h.client.create(GVR.pods, podObj('first', { cpu: '2' }));
    await waitBound(h.client, 'first');
    await h.client.create(GVR.pods, podObj('second', { cpu: '2' }));
    assert.match(
      await waitUnschedulable(h.client, 'second'),
      /^0\/1 nodes are available: 1 Insufficient cpu\./,
    );
    await h.client.delete(GVR.pods, 'default', 'first', { gracePeriodSeconds: 0 });
    assert.equal(await waitBound(h.client, 'second'), 'one');

    await h.client.create(GVR.pods, podObj('third', { cpu: '2' }));
    await waitUnschedulable(h.client, 'third');
    await h.client.mutate(
      GVR.pods,
      'default',
      'second',
      (p) => {
        (p.status as Record<string, unknown>).phase = 'Succeeded';
      },
      'status',
    );
    assert.equal(await waitBound(h.client, 'third'), 'one');
  });

  test('gated pods wait until their last gate is removed', async () => {
    await h.client.create(GVR.nodes, nodeObj('n', { cpu: '4', memory: '8Gi' }));
    start();
    await h.client.create(GVR.pods, podObj('gated', {}, { schedulingGates: [{ name: 'example.com/wait' }] }));
    await h.client.create(GVR.pods, podObj('marker'));
    await waitBound(h.client, 'marker');
    const gated = getPod(h.client, 'gated')!;
    assert.equal(nodeNameOf(gated), undefined);
    assert.equal(condition(gated, 'PodScheduled')?.reason, 'SchedulingGated');
    await h.client.mutate(GVR.pods, 'default', 'gated', (p) => {
      (p.spec as Record<string, unknown>).schedulingGates = [];
    });
    assert.equal(await waitBound(h.client, 'gated'), 'n');
  });

  test('pods for another scheduler are left alone', async () => {
    await h.client.create(GVR.nodes, nodeObj('n', { cpu: '4', memory: '8Gi' }));
    start();
    await h.client.create(GVR.pods, podObj('elsewhere', {}, { schedulerName: 'my-scheduler' }));
    await h.client.create(GVR.pods, podObj('mine'));
    await waitBound(h.client, 'mine');
    const other = getPod(h.client, 'elsewhere')!;
    assert.equal(nodeNameOf(other), undefined);
    assert.equal(condition(other, 'PodScheduled'), undefined);
    assert.deepEqual(eventsFor(h.client, 'elsewhere'), []);
  });

  test('MostAllocated packs pods onto one node; LeastAllocated spreads them', async () => {
    for (const n of ['pack-a', 'pack-b', 'pack-c'])
      await h.client.create(GVR.nodes, nodeObj(n, { cpu: '8', memory: '8Gi' }));
    start({ scoringStrategy: 'MostAllocated' });
    for (let i = 0; i < 5; i++)
      await h.client.create(GVR.pods, podObj(`packed-${i}`, { cpu: '1', memory: '1Gi' }));
    const packed = new Set<string>();
    for (let i = 0; i < 5; i++) packed.add(await waitBound(h.client, `packed-${i}`));
    assert.equal(packed.size, 1);

    await sched!.stop();
    for (let i = 0; i < 5; i++)
      await h.client.delete(GVR.pods, 'default', `packed-${i}`, { gracePeriodSeconds: 0 });
    start();
    for (let i = 0; i < 3; i++)
      await h.client.create(GVR.pods, podObj(`spread-${i}`, { cpu: '1', memory: '1Gi' }));
    const spread = new Set<string>();
    for (let i = 0; i < 3; i++) spread.add(await waitBound(h.client, `spread-${i}`));
    assert.equal(spread.size, 3);
  });

  test('higher priority is scheduled first when both wait for room', async () => {
    start();
    await h.client.create(
      GVR.pods,
      podObj('low', { cpu: '2' }, { priorityClassName: await priorityClass(h.client, 10) }),
    );
    await h.client.create(
      GVR.pods,
      podObj('high', { cpu: '2' }, { priorityClassName: await priorityClass(h.client, 1000) }),
    );
    assert.equal(await waitUnschedulable(h.client, 'low'), 'no nodes available to schedule pods');
    await waitUnschedulable(h.client, 'high');
    await h.client.create(GVR.nodes, nodeObj('only', { cpu: '2', memory: '4Gi' }));
    assert.equal(await waitBound(h.client, 'high'), 'only');
    assert.match(
      await waitFor('low rejected for cpu', () => {
        const m = condition(getPod(h.client, 'low'), 'PodScheduled')?.message as string | undefined;
        return m?.includes('Insufficient cpu') ? m : undefined;
      }),
      /Insufficient cpu/,
    );
    assert.equal(nodeNameOf(getPod(h.client, 'low')), undefined);
  });

  test('preempts a lower-priority pod and nominates the node', async () => {
    await h.client.create(GVR.nodes, nodeObj('busy', { cpu: '2', memory: '4Gi' }));
    start();
    await h.client.create(
      GVR.pods,
      podObj('victim', { cpu: '2' }, { priorityClassName: await priorityClass(h.client, 1) }),
    );
    await waitBound(h.client, 'victim');
    await h.client.create(
      GVR.pods,
      podObj('urgent', { cpu: '2' }, { priorityClassName: await priorityClass(h.client, 100) }),
    );
    const victim = await waitFor('victim terminating', () => {
      const v = getPod(h.client, 'victim');
      return v?.metadata.deletionTimestamp ? v : undefined;
    });
    assert.equal(condition(victim, 'DisruptionTarget')?.reason, 'PreemptionByScheduler');
    await waitFor(
      'nominated',
      () =>
        (getPod(h.client, 'urgent')?.status as { nominatedNodeName?: string } | undefined)
          ?.nominatedNodeName === 'busy',
    );
    const preempted = await waitFor('Preempted event', () => eventsFor(h.client, 'victim', 'Preempted')[0]);
    assert.equal(preempted.action, 'Preempting');
    assert.equal((preempted.related as { name?: string } | undefined)?.name, 'urgent');
    assert.match(String(preempted.message), /^Preempted by pod \S+ on node busy$/);
    // The kubelet finishes the graceful deletion; the preemptor then takes the room.
    await h.client.delete(GVR.pods, 'default', 'victim', { gracePeriodSeconds: 0 });
    assert.equal(await waitBound(h.client, 'urgent'), 'busy');
  });

  test('preemption reads the start time the kubelet wrote after binding, not the creation time', async () => {
    await h.client.create(GVR.nodes, nodeObj('n1', { cpu: '2' }));
    await h.client.create(GVR.nodes, nodeObj('n2', { cpu: '2' }));
    start();
    const low = { priorityClassName: await priorityClass(h.client, 1) };
    // Created in this order, so by creation time n1's pod is the later one.
    await h.client.create(GVR.pods, podObj('on-n2', { cpu: '2' }, pinned('n2', low)));
    await waitBound(h.client, 'on-n2');
    await h.client.create(GVR.pods, podObj('on-n1', { cpu: '2' }, pinned('n1', low)));
    await waitBound(h.client, 'on-n1');
    // Started the other way round: n2's pod started last.
    for (const [name, startTime] of [
      ['on-n1', '2024-01-01T00:00:05Z'],
      ['on-n2', '2024-01-01T00:00:10Z'],
    ] as const) {
      await h.client.mutate(
        GVR.pods,
        'default',
        name,
        (p) => {
          (p.status as Record<string, unknown>).startTime = startTime;
        },
        'status',
      );
    }
    await h.client.create(
      GVR.pods,
      podObj('urgent', { cpu: '2' }, { priorityClassName: await priorityClass(h.client, 100) }),
    );
    // One victim each, same priority: pickOneNodeForPreemption takes the node whose victim
    // started latest (GetEarliestPodStartTime reads status.startTime).
    const nominated = await waitFor(
      'nominated',
      () =>
        (getPod(h.client, 'urgent')?.status as { nominatedNodeName?: string } | undefined)?.nominatedNodeName,
    );
    assert.equal(nominated, 'n2');
  });

  test('a pod parked on a taint is retried once the taint is lifted', async () => {
    await h.client.create(
      GVR.nodes,
      nodeObj('n1', { cpu: '4' }, { taints: [{ key: 'blocked', effect: 'NoSchedule' }] }),
    );
    start(EVENTS_ONLY);
    await h.client.create(GVR.pods, podObj('parked', {}, pinned('n1')));
    assert.match(await waitUnschedulable(h.client, 'parked'), /untolerated taint \{blocked: \}/);
    await h.client.mutate(GVR.nodes, '', 'n1', (n) => setTaints(n, []));
    assert.equal(await waitBound(h.client, 'parked'), 'n1');
  });

  test('a pod released in the same turn as its node’s taint is lifted binds, in either order', async () => {
    const blocked = { key: 'blocked', effect: 'NoSchedule' };
    await h.client.create(GVR.nodes, nodeObj('n1', { cpu: '4' }));
    start(EVENTS_ONLY);
    for (const name of ['release-first', 'lift-first']) {
      await h.client.mutate(GVR.nodes, '', 'n1', (n) => setTaints(n, [blocked]));
      const gates = [{ name: 'example.com/release' }];
      await h.client.create(GVR.pods, podObj(name, {}, pinned('n1', { schedulingGates: gates })));
      const release = () =>
        h.client.mutate(GVR.pods, 'default', name, (p) => {
          (p.spec as Record<string, unknown>).schedulingGates = [];
        });
      const lift = () => h.client.mutate(GVR.nodes, '', 'n1', (n) => setTaints(n, []));
      await Promise.all(name === 'release-first' ? [release(), lift()] : [lift(), release()]);
      assert.equal(await waitBound(h.client, name), 'n1', name);
    }
  });

  test('a lifted pod whose backoff ends while another pod is being scheduled is not forgotten', async () => {
    // `other` stays rejected by `keep` with the same message, so its retry writes nothing
    // that could wake the scheduler; `parked` tolerates `keep` and waits for `lifted` to go.
    const keep = { key: 'keep', effect: 'NoSchedule' };
    await h.client.create(
      GVR.nodes,
      nodeObj('n1', { cpu: '4' }, { taints: [keep, { key: 'lifted', effect: 'NoSchedule' }] }),
    );
    let slowUntil = 0;
    start({
      ...EVENTS_ONLY,
      // A scheduling cycle that outlasts `parked`'s backoff: the turn that retries `other`
      // ends after `parked` may leave the backoff queue.
      log: (_level, msg, fields) => {
        if (msg !== 'unschedulable' || fields?.pod !== 'default/other') return;
        while (Date.now() < slowUntil) {
          // busy: the scheduler is synchronous within a turn
        }
      },
    });
    await h.client.create(GVR.pods, podObj('other'));
    const otherMessage = await waitUnschedulable(h.client, 'other');
    const tolerations = [{ key: 'keep', operator: 'Exists', effect: 'NoSchedule' }];
    await h.client.create(GVR.pods, podObj('parked', {}, { tolerations }));
    assert.match(await waitUnschedulable(h.client, 'parked'), /untolerated taint \{lifted: \}/);
    slowUntil = Date.now() + BACKOFF_MS + 50;
    // Both pods were rejected by TaintToleration, so both move to the backoff queue; `other`'s
    // backoff ends first, and its retry runs past the end of `parked`'s.
    await h.client.mutate(GVR.nodes, '', 'n1', (n) => setTaints(n, [keep]));
    assert.equal(await waitBound(h.client, 'parked'), 'n1');
    assert.equal(await waitUnschedulable(h.client, 'other'), otherMessage);
  });
});
