/**
 * The podgroup controller on the whole embedded cluster: simulated nodes, scheduler, the
 * KWOK-compatible kubelet playing Stages, and the workload controllers. The samples are
 * applied with kubectl, unchanged.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { parseNodeConfig } from '../../../src/cluster/nodes/index.ts';
import {
  GROUP_LABEL,
  PODGROUP_KIND,
  type PodGroup,
  READY_LABEL,
} from '../../../src/controllers/podgroup/index.ts';
import { Informer, type KubeObject } from '../../../src/runtime/index.ts';
import { waitFor } from '../../support/wait.ts';
import { type Env, eventsFor, getPodGroup, POD, startClusterEnv, waitForPhase } from './harness.ts';

const SAMPLES = new URL('../../../config/samples/podgroup/', import.meta.url).pathname;
const EXAMPLES = new URL('../../../examples/', import.meta.url).pathname;
const NODE = { apiVersion: 'v1', kind: 'Node' } as const;

type Pod = KubeObject & { status?: { phase?: string }; spec?: { nodeName?: string } };

const phaseOf = (p: KubeObject) => (p as Pod).status?.phase;
const readyLabel = (p: KubeObject) => p.metadata.labels?.[READY_LABEL] === 'true';

async function pods(env: Env, ns: string, selector?: string): Promise<Pod[]> {
  const list = await env.client.list<Pod>(POD, { namespace: ns, labelSelector: selector });
  return list.items;
}

/** Stages the tests use to play a kubelet that kills a running pod or rejects a new one. */
const TEST_STAGES = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pg-test-kill
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchLabels: {pg-test/kill: "true"}
    matchExpressions:
    - {key: .status.phase, operator: In, values: [Running]}
    - {key: .metadata.deletionTimestamp, operator: DoesNotExist}
  weight: 1
  next:
    statusTemplate: |
      phase: Failed
      reason: Killed
      message: killed by the test
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pg-test-reject
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchLabels: {pg-test/reject: "true"}
    matchExpressions:
    - {key: .spec.nodeName, operator: Exists}
    - {key: .status.phase, operator: In, values: [Pending]}
  weight: 1
  next:
    statusTemplate: |
      phase: Failed
      reason: OutOfnvidia.com/gpu
      message: "Pod was rejected: Node didn't have enough resource: nvidia.com/gpu"
`;

describe('the seed example and the samples on the embedded cluster', () => {
  let env: Env;
  before(async () => {
    env = await startClusterEnv();
  });
  after(async () => {
    await env?.stop();
  });

  test('the podgroup-controller README example with its KWOK Stage, unchanged, runs to completion', async () => {
    const ns = await env.namespace('seed');
    // Every pod state the API server reports, in order, to check the gang rule afterwards.
    const seen = new Map<string, string>();
    let violation: string | undefined;
    const inf = new Informer<Pod>(env.client.rest, env.client.mapper, { kind: POD, namespace: ns });
    inf.addHandler({
      add: (p) => observe(p),
      update: (_o, p) => observe(p),
    });
    const observe = (p: Pod) => {
      seen.set(p.metadata.name ?? '', phaseOf(p) ?? '');
      if (readyLabel(p) && !violation) {
        const notRunning = ['worker-1', 'worker-2', 'worker-3'].filter(
          (n) => !['Running', 'Succeeded'].includes(seen.get(n) ?? ''),
        );
        if (notRunning.length > 0)
          violation = `${p.metadata.name} labelled ready while ${notRunning.join(', ')} not Running`;
      }
    };
    inf.start();
    try {
      await env.kubectl(['apply', '-f', `${SAMPLES}kwok-stage-pod-complete-on-ready.yaml`]);
      await env.kubectl(['apply', '-n', ns, '-f', `${SAMPLES}seed-example.yaml`]);
      const done = await waitFor('every worker Succeeded with the ready label', async () => {
        const ps = await pods(env, ns);
        return ps.length === 3 && ps.every((p) => phaseOf(p) === 'Succeeded' && readyLabel(p))
          ? ps
          : undefined;
      });
      assert.deepEqual(done.map((p) => p.metadata.name).sort(), ['worker-1', 'worker-2', 'worker-3']);
      assert.equal(violation, undefined);
      const pg = await waitForPhase(env.client, ns, 'training-job-1', 'Completed', 'MembersFinished');
      assert.equal(pg.status?.succeeded, 3);
      assert.equal(pg.status?.state?.message, 'every member finished: 3 succeeded, 0 failed');
      const notes = (await eventsFor(env.client, ns, 'PodGroup', 'training-job-1')).map((e) => e.note);
      assert.ok(notes.includes('Pending → Running: 3 of 3 members running or succeeded'), notes.join('\n'));
      assert.ok(
        notes.includes('Running → Completed: every member finished: 3 succeeded, 0 failed'),
        notes.join('\n'),
      );
      // Exactly one label patch per worker.
      const patches = env.requests.filter(
        (r) =>
          r.method === 'PATCH' &&
          /^\/api\/v1\/namespaces\/[^/]+\/pods\/[^/]+$/.test(r.path) &&
          r.path.includes(`/${ns}/`),
      );
      assert.equal(patches.length, 3);
    } finally {
      await inf.stop();
    }
  });

  test('a Job-based gang: released together, completed by the Stage, the PodGroup ends Completed', async () => {
    const ns = await env.namespace('job');
    await env.kubectl(['apply', '-f', `${SAMPLES}kwok-stage-pod-complete-on-ready.yaml`]);
    await env.kubectl(['apply', '-n', ns, '-f', `${SAMPLES}job-gang.yaml`]);
    await waitFor('the Job to complete', async () => {
      const job = await env.client.get({ apiVersion: 'batch/v1', kind: 'Job' }, 'llm-finetune', ns);
      const conds =
        (job.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      return conds.some((c) => c.type === 'Complete' && c.status === 'True');
    });
    const ps = await pods(env, ns, `${GROUP_LABEL}=llm-finetune`);
    assert.equal(ps.length, 4);
    assert.ok(ps.every((p) => readyLabel(p) && phaseOf(p) === 'Succeeded'));
    const pg = await waitForPhase(env.client, ns, 'llm-finetune', 'Completed');
    assert.equal(pg.status?.succeeded, 4);
  });
});

describe('the design transition table on the embedded cluster', () => {
  let env: Env;
  before(async () => {
    env = await startClusterEnv();
    await env.kubectl(['apply', '-f', '-'], TEST_STAGES);
  });
  after(async () => {
    await env?.stop();
  });

  const cordon = async (on: boolean) => {
    for (const n of (await env.client.list(NODE)).items) {
      await env.client.mergePatch(n, { spec: { unschedulable: on } });
    }
  };
  const kill = async (ns: string, p: Pod) => {
    await env.client.mergePatch(p, { metadata: { labels: { 'pg-test/kill': 'true' } } });
    await waitFor(
      `${p.metadata.name} to fail`,
      async () => phaseOf(await env.client.get(POD, p.metadata.name!, ns)) === 'Failed',
    );
  };
  const running = async (ns: string) =>
    (await pods(env, ns, 'app=gang')).filter(
      (p) => phaseOf(p) === 'Running' && !p.metadata.deletionTimestamp,
    );
  /** The PodGroup's phase transition Event whose note starts with `prefix`. */
  const transition = (ns: string, prefix: string) =>
    waitFor(`an event "${prefix}..."`, async () =>
      (await eventsFor(env.client, ns, 'PodGroup', 'gang')).find((e) => String(e.note).startsWith(prefix)),
    );
  const state = (pg: PodGroup) => [
    pg.status?.state?.phase,
    pg.status?.state?.reason,
    pg.status?.state?.message,
  ];

  test('a ReplicaSet gang through Running, Recovering, Unschedulable and Pending', async () => {
    const ns = await env.namespace('table');
    await env.client.create({
      ...PODGROUP_KIND,
      metadata: { name: 'gang', namespace: ns },
      spec: { minMember: 3 },
    });
    await env.client.create({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'gang', namespace: ns },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'gang' } },
        template: {
          metadata: { labels: { app: 'gang', [GROUP_LABEL]: 'gang' } },
          spec: { containers: [{ name: 'worker', image: 'fake-image' }] },
        },
      },
    });

    // Pending → Running: every required member runs; all three are released.
    let pg = await waitForPhase(env.client, ns, 'gang', 'Running');
    assert.deepEqual(state(pg), [
      'Running',
      'MembersRunning',
      '3 of 3 required members running or succeeded',
    ]);
    await waitFor('three ready labels', async () => (await running(ns)).filter(readyLabel).length === 3);

    // Running → Recovering: a member is killed. The ReplicaSet replaces it at once, so the
    // Recovering phase may last only until the next observation: the Event records it.
    await kill(ns, (await running(ns))[0]!);
    const failedEvent = await transition(ns, 'Running → Recovering: ');
    assert.equal(failedEvent.type, 'Warning');
    assert.equal(failedEvent.reason, 'PodFailed');
    assert.match(
      String(failedEvent.note),
      /^Running → Recovering: 1 member failed; [23] of 3 required members running or succeeded$/,
    );

    // Recovering → Running: the ReplicaSet's replacement runs and is released too.
    const rerun = await transition(ns, 'Recovering → Running: ');
    assert.equal(rerun.note, 'Recovering → Running: 3 of 3 required members running or succeeded');
    pg = await waitForPhase(env.client, ns, 'gang', 'Running');
    assert.equal(pg.status?.failed, 1);
    await waitFor(
      'the replacement labelled ready',
      async () => (await running(ns)).filter(readyLabel).length === 3,
    );

    // Running → Recovering: a member is deleted; then Running again with its replacement.
    await env.client.delete((await running(ns))[0]!);
    const deletedEvent = await waitFor('the PodDeleted event', async () =>
      (await eventsFor(env.client, ns, 'PodGroup', 'gang')).find((e) => e.reason === 'PodDeleted'),
    );
    assert.match(
      String(deletedEvent.note),
      /^Running → Recovering: (1 member being deleted|1 running member deleted|members were deleted); [0-9] of 3 required members running or succeeded$/,
    );
    await waitFor('Running again with three released members', async () => {
      const g = await getPodGroup(env.client, ns, 'gang');
      return g?.status?.state?.phase === 'Running' && (await running(ns)).filter(readyLabel).length === 3;
    });

    // Recovering → Unschedulable: nodes cordoned, a member killed, its replacement cannot be placed.
    await cordon(true);
    try {
      await kill(ns, (await running(ns))[0]!);
      pg = await waitForPhase(env.client, ns, 'gang', 'Unschedulable', 'NotEnoughResources');
      assert.match(
        pg.status?.state?.message ?? '',
        /^1 member cannot be scheduled: 0\/3 nodes are available: 3 node\(s\) were unschedulable\..*; 2 of 3 required members running or succeeded$/,
      );
      const notes = (await eventsFor(env.client, ns, 'PodGroup', 'gang')).map((e) => String(e.note));
      assert.ok(
        notes.some((n) => n.startsWith('Running → Recovering: 1 member failed')),
        notes.join('\n'),
      );
      assert.ok(
        notes.some((n) => n.startsWith('Recovering → Unschedulable: 1 member cannot be scheduled')),
        notes.join('\n'),
      );
    } finally {
      await cordon(false);
    }

    // Unschedulable → Running: the missing member gets placed and runs.
    pg = await waitForPhase(env.client, ns, 'gang', 'Running');
    assert.deepEqual(state(pg), [
      'Running',
      'MembersRunning',
      '3 of 3 required members running or succeeded',
    ]);
    assert.ok(
      (await eventsFor(env.client, ns, 'PodGroup', 'gang')).some((e) =>
        String(e.note).startsWith('Unschedulable → Running'),
      ),
    );

    // Unschedulable → Pending: stuck again, then every pod of the group is deleted.
    await cordon(true);
    try {
      await kill(ns, (await running(ns))[0]!);
      await waitForPhase(env.client, ns, 'gang', 'Unschedulable');
      await env.client.delete({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'gang', namespace: ns },
      });
      for (const p of await pods(env, ns, 'app=gang')) await env.client.delete(p);
      // Pods go one by one (the pending one at once, the placed ones once their kubelet has
      // stopped them): the group is Pending as soon as nothing is placed, then empties.
      await waitForPhase(env.client, ns, 'gang', 'Pending');
      pg = await waitFor('every member gone', async () => {
        const g = await getPodGroup(env.client, ns, 'gang');
        return g?.status?.state?.message === '0 of 3 required members exist' ? g : undefined;
      });
      assert.deepEqual(state(pg), ['Pending', 'NotEnoughTasks', '0 of 3 required members exist']);
      assert.ok(
        (await eventsFor(env.client, ns, 'PodGroup', 'gang')).some((e) =>
          String(e.note).startsWith('Unschedulable → Pending: '),
        ),
      );
    } finally {
      await cordon(false);
    }
  });

  test('Pending → Recovering: part of the group runs, the kubelet rejects the rest', async () => {
    const ns = await env.namespace('reject');
    await env.client.create({
      ...PODGROUP_KIND,
      metadata: { name: 'gang', namespace: ns },
      spec: { minMember: 3 },
    });
    await waitForPhase(env.client, ns, 'gang', 'Pending', 'NotEnoughTasks');
    const member = (name: string, reject: boolean): KubeObject => ({
      ...POD,
      metadata: {
        name,
        namespace: ns,
        labels: { [GROUP_LABEL]: 'gang', ...(reject ? { 'pg-test/reject': 'true' } : {}) },
        // Keeps the kubelet from starting the pod the test Stage rejects.
        annotations: reject ? { 'pod-ready.stage.kwok.x-k8s.io/delay': '1h' } : {},
      },
      spec: { containers: [{ name: 'worker', image: 'fake-image' }] },
    });
    await env.client.create(member('a', false));
    await env.client.create(member('b', false));
    await waitFor(
      'a and b running',
      async () => (await pods(env, ns)).filter((p) => phaseOf(p) === 'Running').length === 2,
    );
    await env.client.create(member('c', true));
    const pg = await waitForPhase(env.client, ns, 'gang', 'Recovering', 'PodFailed');
    assert.equal(pg.status?.state?.message, '1 member failed; 2 of 3 required members running or succeeded');
    const notes = (await eventsFor(env.client, ns, 'PodGroup', 'gang')).map((e) => String(e.note));
    assert.ok(
      notes.includes('Pending → Recovering: 1 member failed; 2 of 3 required members running or succeeded'),
      notes.join('\n'),
    );
    assert.ok(!notes.some((n) => n.includes('→ Running')), 'never Running');
    assert.equal((await pods(env, ns)).filter(readyLabel).length, 0);
  });
});

describe('the deadlock demonstration', () => {
  let env: Env;
  before(async () => {
    const nodes = parseNodeConfig(readFileSync(`${EXAMPLES}deadlock/nodes.yaml`, 'utf8'));
    env = await startClusterEnv({}, { nodes });
  });
  after(async () => {
    await env?.stop();
  });

  test('two gangs deadlock on four GPUs; the deadlock policy makes the younger one give way', async () => {
    const ns = await env.namespace('deadlock');
    await env.kubectl(['apply', '-n', ns, '-f', `${EXAMPLES}deadlock/gangs.yaml`]);
    for (const g of ['gang-a', 'gang-b']) {
      const pg = await waitForPhase(env.client, ns, g, 'Unschedulable', 'NotEnoughResources', 30_000);
      assert.equal(pg.status?.running, 2);
      assert.match(
        pg.status?.state?.message ?? '',
        /^1 member cannot be scheduled: 0\/2 nodes are available: 2 Insufficient nvidia\.com\/gpu\..*; 2 of 3 required members running or succeeded$/,
      );
    }
    const table = await env.kubectl(['get', 'pg', '-n', ns]);
    const rows = table
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(/\s+/).slice(0, 4));
    assert.deepEqual(rows, [
      ['gang-a', 'Unschedulable', '3', '2'],
      ['gang-b', 'Unschedulable', '3', '2'],
    ]);
    assert.equal((await pods(env, ns)).filter(readyLabel).length, 0, 'neither gang is released');

    await env.kubectl(['apply', '-n', ns, '-f', `${EXAMPLES}deadlock/break-deadlock.yaml`]);
    const a = await waitForPhase(env.client, ns, 'gang-a', 'Running', 'MembersRunning', 40_000);
    assert.equal(a.status?.restarts, undefined, 'gang-a never restarted');
    await waitFor(
      'gang-a released',
      async () => (await pods(env, ns, 'app=gang-a')).filter(readyLabel).length === 3,
    );
    const b = await getPodGroup(env.client, ns, 'gang-b');
    assert.ok((b?.status?.restarts ?? 0) >= 1);
    const restart = (await eventsFor(env.client, ns, 'PodGroup', 'gang-b')).find(
      (e) => e.reason === 'DeadlockRestart',
    );
    assert.match(
      String(restart?.note),
      /with 2 of 3 members placed: deleting 3 members so their controllers recreate them \(restart 1; next timeout 20s\)/,
    );
  });
});
