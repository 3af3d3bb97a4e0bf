/**
 * The controller in a runtime Manager against the embedded API server over HTTP, with the
 * test standing in for the kubelet (binding released pods and reporting readiness), and an
 * order checker watching every pod event.
 */

import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { PodSequence } from '../../../src/apis/scheduling.example.com/v1alpha1.ts';
import { GVR } from '../../../src/cluster/client.ts';
import type { Pod } from '../../../src/controllers/podsequence/objects.ts';
import { waitFor } from '../../support/wait.ts';
import { gatedPod, type Harness, OrderChecker, PODSEQ_GVR, startHarness } from './harness.ts';

let h: Harness;
let ns = 0;
const checkers: OrderChecker[] = [];

before(async () => {
  h = await startHarness();
  await h.startController();
});
after(() => h?.close());
afterEach(() => {
  for (const c of checkers.splice(0)) {
    c.stop();
    assert.deepEqual(c.violations, [], 'no pod may be released before its predecessors are Ready');
  }
  assert.deepEqual(h.kubelet.failures, []);
});

async function namespace(): Promise<string> {
  const name = `ps-${++ns}`;
  await h.cluster.create(GVR.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

function seqObject(name: string, namespace: string, spec: PodSequence['spec']): PodSequence {
  return {
    apiVersion: 'scheduling.example.com/v1alpha1',
    kind: 'PodSequence',
    metadata: { name, namespace },
    spec,
  };
}

async function createSequence(seq: PodSequence): Promise<OrderChecker> {
  const checker = new OrderChecker(h.cluster, seq);
  checkers.push(checker);
  await h.cluster.create(PODSEQ_GVR, seq);
  return checker;
}

const getPod = (namespace: string, name: string) =>
  h.cluster.get(GVR.pods, namespace, name) as Pod | undefined;
const getSeq = (namespace: string, name: string) =>
  h.cluster.get(PODSEQ_GVR, namespace, name) as PodSequence | undefined;
const gated = (namespace: string, name: string) =>
  (getPod(namespace, name)?.spec?.schedulingGates ?? []).length > 0;
const released = (namespace: string, name: string) =>
  getPod(namespace, name) !== undefined && !gated(namespace, name);

describe('cluster scope', () => {
  test('the README basic example: one pod at a time', async () => {
    const n = await namespace();
    await createSequence(
      seqObject('example-sequence', n, {
        podGroups: [
          { name: 'Pod 1', pods: ['pod-1'] },
          { name: 'Pod 2', pods: ['pod-2'] },
          { name: 'Pod 3', pods: ['pod-3'] },
        ],
      }),
    );
    for (const p of ['pod-1', 'pod-2', 'pod-3'])
      await h.cluster.create(GVR.pods, gatedPod(p, { namespace: n }));
    await waitFor('pod-1 released', () => released(n, 'pod-1'));
    const s1 = await waitFor(
      'status InProgress',
      () =>
        getSeq(n, 'example-sequence')?.status?.phase === 'InProgress' &&
        getSeq(n, 'example-sequence')!.status,
    );
    assert.equal(s1.currentIndex, 0);
    assert.ok(gated(n, 'pod-2') && gated(n, 'pod-3'));
    await h.kubelet.ready('pod-1', n);
    await waitFor('pod-2 released', () => released(n, 'pod-2'));
    assert.ok(gated(n, 'pod-3'));
    await h.kubelet.ready('pod-2', n);
    await waitFor('pod-3 released', () => released(n, 'pod-3'));
    await h.kubelet.ready('pod-3', n);
    const done = await waitFor(
      'Completed',
      () =>
        getSeq(n, 'example-sequence')?.status?.phase === 'Completed' && getSeq(n, 'example-sequence')!.status,
    );
    assert.equal(done.currentIndex, 3);
    assert.deepEqual(done.processedPods, ['pod-1', 'pod-2', 'pod-3']);
    assert.equal(done.observedGeneration, 1);
  });

  test('tiers of several pods: released together, one patch per pod, only our gate removed', async () => {
    const n = await namespace();
    const before = h.requests.length;
    await createSequence(
      seqObject('podgroups-example', n, {
        scope: 'Cluster',
        podGroups: [
          { name: 'Database Layer', pods: ['pod-1', 'pod-2'] },
          { name: 'Application Layer', pods: ['pod-3', 'pod-4'] },
          { name: 'Frontend Layer', pods: ['pod-5'] },
        ],
      }),
    );
    const other = 'other.example.com/hold';
    for (const p of ['pod-1', 'pod-2', 'pod-3', 'pod-4', 'pod-5']) {
      const pod = gatedPod(p, { namespace: n });
      if (p === 'pod-3') pod.spec!.schedulingGates!.push({ name: other });
      await h.cluster.create(GVR.pods, pod);
    }
    await waitFor('database layer released', () => released(n, 'pod-1') && released(n, 'pod-2'));
    assert.ok(gated(n, 'pod-3') && gated(n, 'pod-4') && gated(n, 'pod-5'));
    await h.kubelet.ready('pod-1', n);
    const mid = await waitFor(
      '1/2 ready',
      () =>
        getSeq(n, 'podgroups-example')?.status?.readyPodsInCurrentGroup === 1 &&
        getSeq(n, 'podgroups-example')!.status,
    );
    assert.deepEqual(mid.currentGroupPods, ['pod-1', 'pod-2']);
    assert.equal(mid.currentGroupReady, '1/2');
    assert.ok(gated(n, 'pod-3') && gated(n, 'pod-4'));
    await h.kubelet.ready('pod-2', n);
    await waitFor(
      'application layer released',
      () =>
        released(n, 'pod-4') &&
        !getPod(n, 'pod-3')!.spec!.schedulingGates!.some((g) => g.name.startsWith('podsequence')) &&
        // The status write follows the release patches; wait for it rather than race it.
        getSeq(n, 'podgroups-example')?.status?.currentIndex === 1,
    );
    assert.deepEqual(
      getPod(n, 'pod-3')!.spec!.schedulingGates,
      [{ name: other }],
      'only the sequence gate is removed',
    );
    assert.ok(gated(n, 'pod-5'));
    const s2 = getSeq(n, 'podgroups-example')!.status!;
    assert.equal(s2.currentIndex, 1);
    assert.deepEqual(s2.processedPods, ['pod-1', 'pod-2']);
    await h.kubelet.ready('pod-4', n);
    // pod-3 is still held by the other gate: the frontend waits for it.
    await h.kubelet.setStatus(n, 'pod-3', {});
    await h.cluster.patch(GVR.pods, n, 'pod-3', 'merge', { spec: { schedulingGates: null } });
    await waitFor('pod-3 bound', () => getPod(n, 'pod-3')?.spec?.nodeName);
    assert.ok(gated(n, 'pod-5'));
    await h.kubelet.ready('pod-3', n);
    await waitFor('frontend released', () => released(n, 'pod-5'));
    await h.kubelet.ready('pod-5', n);
    await waitFor('Completed', () => getSeq(n, 'podgroups-example')?.status?.phase === 'Completed');
    const podPatches = h.requests
      .slice(before)
      .filter((r) => r.method === 'PATCH' && r.path.startsWith(`/api/v1/namespaces/${n}/pods/`));
    assert.equal(
      podPatches.length,
      5,
      `one patch per released pod: ${podPatches.map((r) => r.path).join(', ')}`,
    );
  });

  test('run-to-completion pods count as done (database-init example)', async () => {
    const n = await namespace();
    const gate = 'podsequence.example.com/db-init-gate';
    await createSequence(
      seqObject('database-init-sequence', n, {
        podGroups: [
          { name: 'Initialize Schema', pods: ['init-db'] },
          { name: 'Start Database', pods: ['database'] },
          { name: 'Run Migrations', pods: ['migrate'] },
          { name: 'Start Application', pods: ['app'] },
        ],
        schedulingGateName: gate,
      }),
    );
    for (const p of ['init-db', 'database', 'migrate', 'app'])
      await h.cluster.create(GVR.pods, gatedPod(p, { namespace: n, gate }));
    await waitFor('init-db released', () => released(n, 'init-db'));
    await h.kubelet.succeed('init-db', n);
    await waitFor('database released', () => released(n, 'database'));
    await h.kubelet.ready('database', n);
    await waitFor('migrate released', () => released(n, 'migrate'));
    assert.ok(gated(n, 'app'));
    await h.kubelet.succeed('migrate', n);
    await waitFor('app released', () => released(n, 'app'));
    await h.kubelet.ready('app', n);
    await waitFor('Completed', () => getSeq(n, 'database-init-sequence')?.status?.phase === 'Completed');
  });

  test('selectors: an empty group blocks, new pods join, events say what happens', async () => {
    const n = await namespace();
    await createSequence(
      seqObject('sel', n, {
        podGroups: [
          { name: 'DB', podSelector: { matchLabels: { app: 'db' } } },
          { name: 'Web', podSelector: { matchLabels: { app: 'web' } } },
        ],
      }),
    );
    await h.cluster.create(GVR.pods, gatedPod('web-1', { namespace: n, labels: { app: 'web' } }));
    const pending = await waitFor(
      'Pending',
      () => getSeq(n, 'sel')?.status?.phase === 'Pending' && getSeq(n, 'sel')!.status,
    );
    assert.match(pending.message!, /no pod in namespace ps-\d+ matches app=db/);
    await h.cluster.create(GVR.pods, gatedPod('db-1', { namespace: n, labels: { app: 'db' } }));
    await waitFor('db-1 released', () => released(n, 'db-1'));
    await h.kubelet.ready('db-1', n);
    await waitFor('web-1 released', () => released(n, 'web-1'));
    await h.kubelet.ready('web-1', n);
    await waitFor('Completed', () => getSeq(n, 'sel')?.status?.phase === 'Completed');
    // A replica added later to the completed first group holds new pods of the second.
    await h.cluster.create(GVR.pods, gatedPod('db-2', { namespace: n, labels: { app: 'db' } }));
    await waitFor('db-2 released', () => released(n, 'db-2'));
    await h.cluster.create(GVR.pods, gatedPod('web-2', { namespace: n, labels: { app: 'web' } }));
    await waitFor('back InProgress', () => getSeq(n, 'sel')?.status?.phase === 'InProgress');
    assert.ok(gated(n, 'web-2'));
    await h.kubelet.ready('db-2', n);
    await waitFor('web-2 released', () => released(n, 'web-2'));
    const events = await waitFor('events', () => {
      const list = h.cluster.list(
        { group: 'events.k8s.io', version: 'v1', resource: 'events' },
        n,
      ) as unknown as { reason: string; note: string }[];
      const reasons = new Set(list.map((e) => e.reason));
      return ['Released', 'GroupReady', 'Completed'].every((r) => reasons.has(r)) && list;
    });
    assert.ok(
      events.some(
        (e) =>
          e.reason === 'Released' &&
          /Released 1 pod of group 'DB' \(1\/2\) because it is the first group: db-1/.test(e.note),
      ),
    );
  });

  test('an invalid sequence is Failed, with an event, and releases nothing', async () => {
    const n = await namespace();
    const checker = await createSequence(
      seqObject('dup', n, { podGroups: [{ pods: ['a'] }, { pods: ['a', 'b'] }] }),
    );
    await h.cluster.create(GVR.pods, gatedPod('a', { namespace: n }));
    const s = await waitFor(
      'Failed',
      () => getSeq(n, 'dup')?.status?.phase === 'Failed' && getSeq(n, 'dup')!.status,
    );
    assert.match(s.message!, /pod a is listed in two groups/);
    await waitFor('InvalidSpec event', () =>
      (
        h.cluster.list({ group: 'events.k8s.io', version: 'v1', resource: 'events' }, n) as unknown as {
          reason: string;
        }[]
      ).some((e) => e.reason === 'InvalidSpec'),
    );
    assert.ok(gated(n, 'a'));
    // Fixing the spec resumes the sequence, and observedGeneration follows.
    checker.update(seqObject('dup', n, { podGroups: [{ pods: ['a'] }, { pods: ['b'] }] }));
    await h.cluster.patch(PODSEQ_GVR, n, 'dup', 'merge', {
      spec: { podGroups: [{ pods: ['a'] }, { pods: ['b'] }] },
    });
    await waitFor('a released', () => released(n, 'a'));
    const fixed = await waitFor(
      'generation 2 observed',
      () => getSeq(n, 'dup')?.status?.observedGeneration === 2 && getSeq(n, 'dup')!.status,
    );
    assert.notEqual(fixed.phase, 'Failed');
  });
});

describe('node scope (lite mode)', () => {
  test('pinned pods progress per node; pods without a node are narrowed to ready nodes', async () => {
    const n = await namespace();
    const seq = seqObject('csi-driver-sequence', n, {
      scope: 'Node',
      podGroups: [
        { name: 'CSI Driver', podSelector: { matchLabels: { app: 'csi-driver', component: 'node' } } },
        { name: 'Application Pods', podSelector: { matchLabels: { app: 'my-app' } } },
      ],
    });
    await createSequence(seq);
    const driver = { app: 'csi-driver', component: 'node' };
    await h.cluster.create(GVR.pods, gatedPod('csi-a', { namespace: n, labels: driver, pinned: 'node-a' }));
    await h.cluster.create(GVR.pods, gatedPod('csi-b', { namespace: n, labels: driver, pinned: 'node-b' }));
    await h.cluster.create(
      GVR.pods,
      gatedPod('app-b', { namespace: n, labels: { app: 'my-app' }, pinned: 'node-b' }),
    );
    await h.cluster.create(GVR.pods, gatedPod('my-app-x', { namespace: n, labels: { app: 'my-app' } }));
    await waitFor('drivers released', () => released(n, 'csi-a') && released(n, 'csi-b'));
    await h.kubelet.ready('csi-a', n);
    const x = await waitFor(
      'my-app-x released to node-a',
      () => released(n, 'my-app-x') && getPod(n, 'my-app-x'),
    );
    assert.deepEqual(
      x.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms,
      [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-a'] }] }],
    );
    await waitFor('my-app-x bound to node-a', () => getPod(n, 'my-app-x')?.spec?.nodeName === 'node-a');
    assert.ok(gated(n, 'app-b'), 'node-b has no Ready driver yet');
    // Per-node progress is written within statusUpdateIntervalMs of the release.
    const steps = (): string =>
      JSON.stringify(
        getSeq(n, 'csi-driver-sequence')?.status?.nodeStatus?.map((s) => [s.nodeName, s.currentIndex]),
      );
    await waitFor(
      'node-a one step ahead in the status',
      () =>
        steps() ===
        JSON.stringify([
          ['node-a', 1],
          ['node-b', 0],
        ]),
    );
    await h.kubelet.ready('csi-b', n);
    await waitFor('app-b released', () => released(n, 'app-b'));
    await h.kubelet.ready('app-b', n);
    await h.kubelet.ready('my-app-x', n);
    const done = await waitFor(
      'Completed',
      () =>
        getSeq(n, 'csi-driver-sequence')?.status?.phase === 'Completed' &&
        getSeq(n, 'csi-driver-sequence')!.status,
    );
    assert.deepEqual(
      done.nodeStatus!.map((s) => [s.nodeName, s.currentIndex, s.phase]),
      [
        ['node-a', 2, 'Completed'],
        ['node-b', 2, 'Completed'],
      ],
    );
    // A new node joins: its driver first, then its app.
    await h.cluster.create(GVR.pods, gatedPod('csi-c', { namespace: n, labels: driver, pinned: 'node-c' }));
    await h.cluster.create(
      GVR.pods,
      gatedPod('app-c', { namespace: n, labels: { app: 'my-app' }, pinned: 'node-c' }),
    );
    await waitFor('csi-c released', () => released(n, 'csi-c'));
    assert.ok(gated(n, 'app-c'));
    await h.kubelet.ready('csi-c', n);
    await waitFor('app-c released', () => released(n, 'app-c'));
  });

  test('waitDuration holds the next group on a node after its group is Ready there, shown in the status', async () => {
    const n = await namespace();
    const checker = await createSequence(
      seqObject('waits', n, {
        scope: 'Node',
        podGroups: [
          { name: 'agent', pods: ['agent-a'], waitDuration: '3s' },
          { name: 'app', pods: ['app-a'] },
        ],
      }),
    );
    await h.cluster.create(GVR.pods, gatedPod('agent-a', { namespace: n, pinned: 'node-a' }));
    await h.cluster.create(GVR.pods, gatedPod('app-a', { namespace: n, pinned: 'node-a' }));
    await waitFor('agent-a released', () => released(n, 'agent-a'));
    // The kubelet's Ready transition, to the second as the API server's clock writes it.
    const readyAt = `${new Date().toISOString().slice(0, 19)}Z`;
    await h.kubelet.setStatus(n, 'agent-a', {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: readyAt }],
    });
    const until = new Date(Date.parse(readyAt) + 3_000).toISOString().replace('.000Z', 'Z');
    const waiting = await waitFor(
      'the wait in the status',
      () => getSeq(n, 'waits')?.status?.waitingUntil === until && getSeq(n, 'waits')!.status,
    );
    assert.match(
      waiting.nodeStatus!.find((s) => s.nodeName === 'node-a')!.conditions![0]!.message!,
      /released on this node at .*waitDuration of 'agent'/,
    );
    // Released by the controller's own clock (no pod event comes after the Ready one).
    await waitFor('app-a released once the wait has passed', () => released(n, 'app-a'), {
      timeoutMs: 15_000,
    });
    const appRelease = checker.releases.find((r) => r.pod === 'app-a');
    assert.ok(
      appRelease && appRelease.at >= Date.parse(until),
      'app-a was not released before the wait ended',
    );
  });

  test('a tier meant per node spreads over the nodes as they become ready, not onto the first', async () => {
    const n = await namespace();
    const seq = seqObject('spread', n, {
      scope: 'Node',
      podGroups: [
        { name: 'agent', podSelector: { matchLabels: { app: 'agent' } } },
        { name: 'app', podSelector: { matchLabels: { app: 'app' } } },
      ],
    });
    await createSequence(seq);
    const nodes = ['node-a', 'node-b', 'node-c'];
    for (const node of nodes)
      await h.cluster.create(
        GVR.pods,
        gatedPod(`agent-${node}`, { namespace: n, labels: { app: 'agent' }, pinned: node }),
      );
    const apps = ['app-1', 'app-2', 'app-3'];
    for (const name of apps)
      await h.cluster.create(GVR.pods, gatedPod(name, { namespace: n, labels: { app: 'app' } }));
    await waitFor('agents released', () => nodes.every((node) => released(n, `agent-${node}`)));
    const placed = () => apps.map((a) => getPod(n, a)?.spec?.nodeName).filter((x) => x !== undefined);
    // Each agent becomes Ready in turn; each time one app pod is released, to the newly ready
    // node. The release pass sends every patch it decided before the kubelet binds any of
    // them, so once a pod is bound the others' gates say what that pass decided.
    for (const [i, node] of nodes.entries()) {
      await h.kubelet.ready(`agent-${node}`, n);
      await waitFor(`an app pod bound to ${node}`, () => placed().includes(node));
      assert.equal(apps.filter((a) => gated(n, a)).length, apps.length - i - 1, `released after ${node}`);
    }
    assert.deepEqual(placed().sort(), nodes);
    for (const a of apps) await h.kubelet.ready(a, n);
    await waitFor('Completed', () => getSeq(n, 'spread')?.status?.phase === 'Completed');
  });
});

describe('safety', () => {
  test('a sequence edited while the controller is down never releases on the old spec', async () => {
    const n = await namespace();
    const checker = await createSequence(
      seqObject('edit', n, { podGroups: [{ pods: ['a'] }, { pods: ['b'] }, { pods: ['c'] }] }),
    );
    for (const p of ['a', 'b', 'c']) await h.cluster.create(GVR.pods, gatedPod(p, { namespace: n }));
    await waitFor('a released', () => released(n, 'a'));
    await h.stopController();
    // c moves before b; a is Ready: the restarted controller must release c, not b.
    checker.update(seqObject('edit', n, { podGroups: [{ pods: ['a'] }, { pods: ['c'] }, { pods: ['b'] }] }));
    await h.cluster.patch(PODSEQ_GVR, n, 'edit', 'merge', {
      spec: { podGroups: [{ pods: ['a'] }, { pods: ['c'] }, { pods: ['b'] }] },
    });
    await h.kubelet.ready('a', n);
    await h.startController();
    await waitFor('c released', () => released(n, 'c'));
    assert.ok(gated(n, 'b'));
    await h.kubelet.ready('c', n);
    await waitFor('b released', () => released(n, 'b'));
  });

  test('deleting a sequence mid-way leaves its gated pods gated', async () => {
    const n = await namespace();
    await createSequence(seqObject('del', n, { podGroups: [{ pods: ['a'] }, { pods: ['b'] }] }));
    for (const p of ['a', 'b']) await h.cluster.create(GVR.pods, gatedPod(p, { namespace: n }));
    await waitFor('a released', () => released(n, 'a'));
    await h.cluster.delete(PODSEQ_GVR, n, 'del');
    await h.kubelet.ready('a', n);
    // Something else that reconciles this namespace proves the controller had its chance.
    await createSequence(seqObject('probe', n, { podGroups: [{ pods: ['p'] }] }));
    await h.cluster.create(GVR.pods, gatedPod('p', { namespace: n }));
    await waitFor('probe released', () => released(n, 'p'));
    assert.ok(gated(n, 'b'));
  });
});
