import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClusterState } from '../../../src/cluster/scheduler/core/index.ts';
import {
  compareSortKeys,
  gangMessage,
  gangOf,
  gangSpec,
  memberVerdict,
  resourceGap,
  sameGangSpec,
} from '../../../src/cluster/scheduler/gang/core.ts';
import { GangMembers } from '../../../src/cluster/scheduler/gang/members.ts';
import { nextXStatus } from '../../../src/cluster/scheduler/gang/podgroup-status.ts';
import { nodeObj, podObj } from './harness.ts';

describe('coscheduling core', () => {
  test('a pod belongs to the gang its label names; scheduler-plugins label first', () => {
    assert.equal(gangOf({ metadata: { namespace: 'ns', labels: {} } }), undefined);
    assert.deepEqual(
      gangOf({ metadata: { namespace: 'ns', labels: { 'podgroup.jhwagner.github.io/name': 'g' } } }),
      {
        namespace: 'ns',
        name: 'g',
        api: 'scheduling.incubator.k8s.io',
        key: 'scheduling.incubator.k8s.io:ns/g',
      },
    );
    const both = gangOf({
      metadata: {
        namespace: 'ns',
        labels: { 'podgroup.jhwagner.github.io/name': 'g', 'scheduling.x-k8s.io/pod-group': 'h' },
      },
    });
    assert.equal(both?.name, 'h');
    assert.equal(both?.api, 'scheduling.x-k8s.io');
    // kube-batch's annotation names troupe's group too; troupe's label wins over it.
    const annotated = { namespace: 'ns', annotations: { 'scheduling.k8s.io/group-name': 'a' } };
    assert.equal(gangOf({ metadata: annotated })?.key, 'scheduling.incubator.k8s.io:ns/a');
    assert.equal(
      gangOf({ metadata: { ...annotated, labels: { 'podgroup.jhwagner.github.io/name': 'g' } } })?.name,
      'g',
    );
  });

  test('PodGroup spec: minMember defaults to 1, timeouts only when positive', () => {
    const spec = gangSpec({
      apiVersion: 'scheduling.x-k8s.io/v1alpha1',
      kind: 'PodGroup',
      metadata: { name: 'g', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { minMember: 4, scheduleTimeoutSeconds: 30, minResources: { cpu: '2' } },
    });
    assert.deepEqual(spec, {
      minMember: 4,
      minResources: { cpu: '2' },
      scheduleTimeoutSeconds: 30,
      created: Date.parse('2026-01-01T00:00:00Z'),
    });
    const empty = gangSpec({
      apiVersion: 'v',
      kind: 'PodGroup',
      metadata: { name: 'g' },
      spec: { minMember: 0 },
    });
    assert.equal(empty.minMember, 1);
    assert.equal(empty.scheduleTimeoutSeconds, undefined);
  });

  test('queue order: earlier time first, then key', () => {
    assert.ok(compareSortKeys({ time: 1, key: 'b' }, { time: 2, key: 'a' }) < 0);
    assert.ok(compareSortKeys({ time: 2, key: 'a' }, { time: 2, key: 'b' }) < 0);
    assert.equal(compareSortKeys({ time: 2, key: 'a' }, { time: 2, key: 'a' }), 0);
  });

  test('pre-filter: too few siblings, or gated siblings eating the spare members', () => {
    assert.equal(
      memberVerdict('p-0', 3, 1, 0),
      'pre-filter pod p-0 cannot find enough sibling pods, current pods number: 1, minMember of group: 3',
    );
    assert.equal(memberVerdict('p-0', 2, 3, 1), undefined);
    assert.equal(
      memberVerdict('p-0', 2, 2, 1),
      'pre-filter pod p-0 cannot proceed due to gated pods in the same PodGroup',
    );
  });

  test('minResources: summed over nodes, the gang’s own pods not counted against it', () => {
    const state = new ClusterState();
    state.upsertNode(nodeObj('n1', { cpu: '4', 'nvidia.com/gpu': '2' }) as never);
    state.upsertNode(nodeObj('n2', { cpu: '4', 'nvidia.com/gpu': '2' }) as never);
    const other = { ...podObj('other', {}, {}, { 'nvidia.com/gpu': '2' }) };
    other.metadata.uid = 'u-other';
    state.addPod(other as never, 'n1');
    const own = { ...podObj('own', {}, {}, { 'nvidia.com/gpu': '1' }) };
    own.metadata.uid = 'u-own';
    state.addPod(own as never, 'n2');
    const isOwn = (uid: string) => uid === 'u-own';
    assert.equal(resourceGap(state.nodes, { 'nvidia.com/gpu': '2', cpu: '6' }, 2, isOwn), undefined);
    assert.deepEqual(resourceGap(state.nodes, { 'nvidia.com/gpu': '3' }, 2, isOwn), { 'nvidia.com/gpu': 1 });
    assert.deepEqual(
      resourceGap(state.nodes, { 'nvidia.com/gpu': '2' }, 2, () => false),
      {
        'nvidia.com/gpu': 1,
      },
    );
  });

  test('the gang verdict names how many members could not be placed', () => {
    assert.equal(gangMessage(3, 4, 'gang-a', 'x'), '3/4 pods of gang-a could not be placed: x');
  });
});

describe("scheduler-plugins' podgroup controller", () => {
  const now = new Date('2026-01-01T00:01:00Z');
  const pg = (status: object | undefined, minMember = 2) => ({
    apiVersion: 'scheduling.x-k8s.io/v1alpha1',
    kind: 'PodGroup',
    metadata: { name: 'g', namespace: 'ns', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { minMember },
    status,
  });
  const m = (phase: string, owners: string[] = []) => ({ phase, owners });

  test('a new group is Pending, then Scheduling once minMember pods exist', () => {
    assert.deepEqual(nextXStatus(pg(undefined), [], now), { phase: 'Pending' });
    assert.equal(nextXStatus(pg({ phase: 'Pending' }), [m('Pending')], now), undefined);
    assert.deepEqual(
      nextXStatus(pg({ phase: 'Pending' }), [m('Pending', ['ns/job-b', 'ns/job-a']), m('Pending')], now),
      {
        phase: 'Scheduling',
        scheduleStartTime: now.toISOString(),
        occupiedBy: 'ns/job-a,ns/job-b',
      },
    );
  });

  test('counts decide Running, Failed and Finished; too few pods go back to Pending', () => {
    const sched = { phase: 'Scheduling', scheduleStartTime: now.toISOString() };
    assert.equal(nextXStatus(pg(sched), [m('Running'), m('Running')], now)?.phase, 'Running');
    assert.equal(nextXStatus(pg(sched), [m('Running'), m('Failed')], now)?.phase, 'Failed');
    assert.equal(nextXStatus(pg(sched), [m('Succeeded'), m('Succeeded')], now)?.phase, 'Finished');
    assert.equal(nextXStatus(pg(sched), [m('Running')], now)?.phase, 'Pending');
    assert.deepEqual(nextXStatus(pg({ ...sched, phase: 'Running' }), [m('Running'), m('Pending')], now), {
      ...sched,
      phase: 'Scheduling',
      running: 1,
      succeeded: 0,
      failed: 0,
    });
    // Finished and Failed are final.
    assert.equal(nextXStatus(pg({ phase: 'Failed' }), [m('Running'), m('Running')], now), undefined);
  });
});

test('a PodGroup update counts for coscheduling only when what it reads changed', () => {
  const base = { minMember: 2, minResources: { cpu: '2' }, scheduleTimeoutSeconds: undefined, created: 1 };
  assert.ok(sameGangSpec(base, { ...base, minResources: { cpu: '2' } }));
  assert.ok(!sameGangSpec(base, { ...base, minMember: 3 }));
  assert.ok(!sameGangSpec(base, { ...base, minResources: { cpu: '3' } }));
});

test('gang members: assigned counts bound and assumed members, as the pods come and go', () => {
  const m = new GangMembers();
  const key = 'scheduling.x-k8s.io:ns/g';
  const pod = (uid: string, group: string, extra: { nodeName?: string; phase?: string } = {}) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { uid, name: uid, namespace: 'ns', labels: { 'scheduling.x-k8s.io/pod-group': group } },
    spec: { containers: [], ...(extra.nodeName ? { nodeName: extra.nodeName } : {}) },
    status: { phase: extra.phase ?? 'Pending' },
  });
  m.observe('ADDED', pod('a', 'g'));
  m.observe('ADDED', pod('b', 'g'));
  assert.equal(m.assigned(key), 0);
  m.setAssumed('a', true); // Permit
  m.setAssumed('a', true);
  assert.equal(m.assigned(key), 1);
  m.observe('MODIFIED', pod('a', 'g', { nodeName: 'n1' })); // seen bound: still one
  m.setAssumed('a', false); // a later forget of the assumption leaves it bound
  assert.equal(m.assigned(key), 1);
  m.setAssumed('b', true);
  m.setAssumed('b', false); // unreserved
  assert.equal(m.assigned(key), 1);
  m.setAssumed('b', true);
  m.observe('MODIFIED', pod('b', 'h')); // relabelled while assumed: counts in its new gang
  assert.equal(m.assigned(key), 1);
  assert.equal(m.assigned('scheduling.x-k8s.io:ns/h'), 1);
  m.observe('MODIFIED', pod('a', 'g', { nodeName: 'n1', phase: 'Succeeded' })); // finished: no member
  assert.equal(m.assigned(key), 0);
  m.observe('DELETED', pod('b', 'h'));
  assert.equal(m.assigned('scheduling.x-k8s.io:ns/h'), 0);
  m.setAssumed('gone', true); // no member: ignored
  assert.equal(m.count(key).total, 0);
});
