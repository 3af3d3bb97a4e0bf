/**
 * The podgroup controller against the bare embedded API server, over HTTP: the test plays
 * scheduler and kubelet by writing pod status, so every observation is exact.
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  AUTO_CREATED_ANNOTATION,
  GROUP_ANNOTATION,
  GROUP_LABEL,
  PODGROUP_KIND,
  type PodGroup,
  READY_LABEL,
} from '../../../src/controllers/podgroup/index.ts';
import { isInvalid, type KubeObject } from '../../../src/runtime/index.ts';
import { waitFor } from '../../support/wait.ts';
import { type Env, eventsFor, getPodGroup, POD, startBareEnv, waitForPhase } from './harness.ts';

interface PodSpecOpts {
  group?: string;
  annotation?: string;
  node?: string;
  owner?: { kind: string; name: string; uid: string };
}

function podManifest(ns: string, name: string, o: PodSpecOpts = {}): KubeObject {
  const labels: Record<string, string> = {};
  if (o.group) labels[GROUP_LABEL] = o.group;
  const annotations: Record<string, string> = {};
  if (o.annotation) annotations[GROUP_ANNOTATION] = o.annotation;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ns,
      labels,
      annotations,
      ...(o.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', ...o.owner, controller: true }] } : {}),
    },
    spec: { ...(o.node ? { nodeName: o.node } : {}), containers: [{ name: 'worker', image: 'fake-image' }] },
  };
}

describe('podgroup controller on the bare API server', () => {
  let env: Env;
  before(async () => {
    env = await startBareEnv({ formationWindowMs: 100 });
  });
  after(async () => {
    await env?.stop();
  });

  const setStatus = (ns: string, name: string, status: Record<string, unknown>) =>
    env.client.patchStatus({ ...POD, metadata: { name, namespace: ns } }, { status });
  const running = (ns: string, name: string) => setStatus(ns, name, { phase: 'Running' });
  const unschedulable = (ns: string, name: string, message: string) =>
    setStatus(ns, name, {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }],
    });
  const reconciles = async () => {
    const m = await env.manager.metrics.reconcileTotal.get();
    return m.values.filter((v) => v.labels.controller === 'podgroup').reduce((a, v) => a + v.value, 0);
  };
  const getPod = (ns: string, name: string) => env.client.get(POD, name, ns);
  const createGroup = (ns: string, name: string, spec: PodGroup['spec']) =>
    env.client.create({ ...PODGROUP_KIND, metadata: { name, namespace: ns }, spec });
  /** Creates members of `group` on node-a and reports each Running. */
  const runMembers = async (ns: string, group: string, names: string[]) => {
    for (const n of names) {
      await env.client.create(podManifest(ns, n, { group, node: 'node-a' }));
      await running(ns, n);
    }
  };
  /** A PodGroup `gang` of minMember 2 whose members a and b run. */
  const runningGang = async (ns: string) => {
    await createGroup(ns, 'gang', { minMember: 2 });
    await runMembers(ns, 'gang', ['a', 'b']);
    await waitForPhase(env.client, ns, 'gang', 'Running');
  };
  const isReady = async (ns: string, name: string) =>
    (await getPod(ns, name)).metadata.labels?.[READY_LABEL] === 'true';

  test('the seed rule: ready labels only once every member runs, one label patch per pod, an auto-created PodGroup', async () => {
    const ns = await env.namespace();
    for (const n of ['worker-1', 'worker-2', 'worker-3']) {
      await env.client.create(podManifest(ns, n, { group: 'training-job-1', node: 'node-a' }));
    }
    await running(ns, 'worker-1');
    await running(ns, 'worker-2');
    const pending = await waitForPhase(env.client, ns, 'training-job-1', 'Pending');
    assert.equal(pending.metadata.annotations?.[AUTO_CREATED_ANNOTATION], 'true');
    assert.equal(pending.spec?.minMember, undefined);
    await waitFor(
      'counts to show two running',
      async () => (await getPodGroup(env.client, ns, 'training-job-1'))?.status?.running === 2,
    );
    assert.equal(await isReady(ns, 'worker-1'), false);
    assert.equal(await isReady(ns, 'worker-2'), false);

    await running(ns, 'worker-3');
    const pg = await waitForPhase(env.client, ns, 'training-job-1', 'Running', 'MembersRunning');
    await waitFor('every member labelled ready', async () => {
      for (const n of ['worker-1', 'worker-2', 'worker-3']) if (!(await isReady(ns, n))) return false;
      return true;
    });
    assert.equal(pg.status?.state?.message, '3 of 3 members running or succeeded');
    assert.equal(pg.status?.conditions?.find((c) => c.type === 'GangReady')?.status, 'True');

    const podPatches = env.requests.filter(
      (r) =>
        r.method === 'PATCH' &&
        r.path.startsWith(`/api/v1/namespaces/${ns}/pods/`) &&
        !r.path.endsWith('/status'),
    );
    assert.deepEqual(
      podPatches.map((r) => r.path).sort(),
      ['worker-1', 'worker-2', 'worker-3'].map((n) => `/api/v1/namespaces/${ns}/pods/${n}`),
    );

    const events = await waitFor('phase transition events', async () => {
      const evs = await eventsFor(env.client, ns, 'PodGroup', 'training-job-1');
      return evs.some((e) => e.reason === 'MembersRunning') ? evs : undefined;
    });
    const running3 = events.find((e) => e.reason === 'MembersRunning');
    assert.equal(running3?.type, 'Normal');
    assert.equal(running3?.note, 'Pending → Running: 3 of 3 members running or succeeded');
    assert.equal(running3?.action, 'PhaseTransition');
  });

  test('a late member is labelled when it runs; a settled group is not rewritten', async () => {
    const ns = await env.namespace();
    await runningGang(ns);
    await waitFor('a and b ready', async () => (await isReady(ns, 'a')) && (await isReady(ns, 'b')));
    await env.client.create(podManifest(ns, 'c', { group: 'gang', node: 'node-a' }));
    await waitFor('status to count c', async () => {
      const pg = await getPodGroup(env.client, ns, 'gang');
      return pg?.status?.running === 2 && pg.status.state?.phase === 'Running';
    });
    assert.equal(await isReady(ns, 'c'), false);
    await running(ns, 'c');
    await waitFor('c ready', () => isReady(ns, 'c'));
    const settled = await waitFor('running count 3', async () => {
      const pg = await getPodGroup(env.client, ns, 'gang');
      return pg?.status?.running === 3 ? pg : undefined;
    });
    // Nothing changes now: further reconciles (a pod relabel wakes the group) must not write.
    const before = await reconciles();
    await env.client.mergePatch(
      { ...POD, metadata: { name: 'a', namespace: ns } },
      { metadata: { labels: { unrelated: 'x' } } },
    );
    const rv = settled.metadata.resourceVersion;
    await waitFor('the controller to reconcile after the relabel', async () => {
      const ctl = env.manager.getController('podgroup');
      return (await reconciles()) > before && ctl?.workQueue?.len() === 0 && ctl.workQueue.inFlight() === 0;
    });
    assert.equal((await getPodGroup(env.client, ns, 'gang'))?.metadata.resourceVersion, rv);
  });

  test('Running → Recovering (PodDeleted) on graceful deletion, then Running when the replacement runs', async () => {
    const ns = await env.namespace();
    await runningGang(ns);
    await env.client.delete({ ...POD, metadata: { name: 'b', namespace: ns } });
    const rec = await waitForPhase(env.client, ns, 'gang', 'Recovering', 'PodDeleted');
    assert.equal(
      rec.status?.state?.message,
      '1 member being deleted; 1 of 2 required members running or succeeded',
    );
    await env.client.create(podManifest(ns, 'b2', { group: 'gang', node: 'node-a' }));
    await running(ns, 'b2');
    await waitForPhase(env.client, ns, 'gang', 'Running');
    await waitFor('b2 ready', () => isReady(ns, 'b2'));
  });

  test('partly placed, the rest unschedulable: Unschedulable with the scheduler message', async () => {
    const ns = await env.namespace();
    await createGroup(ns, 'gang', { minMember: 2 });
    await runMembers(ns, 'gang', ['a']);
    await env.client.create(podManifest(ns, 'b', { group: 'gang' }));
    const msg = '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.';
    await unschedulable(ns, 'b', msg);
    const pg = await waitForPhase(env.client, ns, 'gang', 'Unschedulable', 'NotEnoughResources');
    assert.equal(
      pg.status?.state?.message,
      `1 member cannot be scheduled: ${msg}; 1 of 2 required members running or succeeded`,
    );
    const cond = pg.status?.conditions?.find((c) => c.type === 'Unschedulable');
    assert.equal(cond?.status, 'True');
    const ev = await waitFor('a Warning event', async () =>
      (await eventsFor(env.client, ns, 'PodGroup', 'gang')).find((e) => e.reason === 'NotEnoughResources'),
    );
    assert.equal(ev.type, 'Warning');
    assert.equal(await isReady(ns, 'a'), false);
  });

  test('the deadlock policy restarts a stuck group by deleting its controller-owned members', async () => {
    const ns = await env.namespace();
    await createGroup(ns, 'gang', { minMember: 2, deadlockPolicy: { action: 'Restart', timeoutSeconds: 1 } });
    const owner = { kind: 'StatefulSet', name: 'gang', uid: '00000000-0000-0000-0000-000000000001' };
    await env.client.create(podManifest(ns, 'a', { group: 'gang', node: 'node-a', owner }));
    await running(ns, 'a');
    await env.client.create(podManifest(ns, 'b', { group: 'gang', owner }));
    await unschedulable(ns, 'b', 'Insufficient nvidia.com/gpu');
    await waitForPhase(env.client, ns, 'gang', 'Unschedulable');
    const restarted = await waitFor('the restart to be recorded', async () => {
      const pg = await getPodGroup(env.client, ns, 'gang');
      return pg?.status?.restarts === 1 ? pg : undefined;
    });
    assert.ok(restarted.status?.lastRestartTime);
    // b was never placed: deleted at once; a is on a node: terminating until its kubelet confirms.
    await waitFor('b deleted', async () => !(await env.client.tryGet(POD, 'b', ns)));
    const a = await getPod(ns, 'a');
    assert.ok(a.metadata.deletionTimestamp, 'a is terminating');
    const ev = await waitFor('the restart event', async () =>
      (await eventsFor(env.client, ns, 'PodGroup', 'gang')).find((e) => e.reason === 'DeadlockRestart'),
    );
    assert.match(
      String(ev.note),
      /deleting 2 members so their controllers recreate them \(restart 1; next timeout 2s\)/,
    );
    // The kubelet confirms; with nothing placed any more the group is Pending again.
    await env.client.delete({ ...POD, metadata: { name: 'a', namespace: ns } }, { gracePeriodSeconds: 0 });
    await waitForPhase(env.client, ns, 'gang', 'Pending', 'NotEnoughTasks');
  });

  test('bad input: the CRD rejects a negative or fractional minMember', async () => {
    const ns = await env.namespace();
    for (const minMember of [-1, 2.5, 'three']) {
      await assert.rejects(
        env.client.create({
          ...PODGROUP_KIND,
          metadata: { name: 'bad', namespace: ns },
          spec: { minMember },
        }),
        (err: unknown) => isInvalid(err) && /minMember/.test((err as Error).message),
        `minMember ${JSON.stringify(minMember)}`,
      );
    }
  });

  test('bad input: pods that name two groups are counted by label and reported on both', async () => {
    const ns = await env.namespace();
    await env.client.create(podManifest(ns, 'torn', { group: 'x', annotation: 'y', node: 'node-a' }));
    await env.client.create(podManifest(ns, 'y1', { annotation: 'y', node: 'node-a' }));
    await createGroup(ns, 'y', {});
    await running(ns, 'torn');
    await running(ns, 'y1');
    const x = await waitForPhase(env.client, ns, 'x', 'Running');
    assert.equal(x.status?.running, 1);
    assert.equal(x.status?.conditions?.find((c) => c.type === 'MembershipConflict')?.status, 'True');
    const y = await waitForPhase(env.client, ns, 'y', 'Running');
    assert.equal(y.status?.running, 1);
    assert.match(y.status?.conditions?.find((c) => c.type === 'MembershipConflict')?.message ?? '', /torn/);
    const ev = await waitFor('a warning on the pod', async () =>
      (await eventsFor(env.client, ns, 'Pod', 'torn')).find((e) => e.reason === 'GroupConflict'),
    );
    assert.equal(ev.type, 'Warning');
    await waitFor('y1 ready', () => isReady(ns, 'y1'));
    await waitFor('torn ready', () => isReady(ns, 'torn'));
  });

  test('bad input: a group label that cannot name a PodGroup still gets ready labels, and a warning', async () => {
    const ns = await env.namespace();
    await runMembers(ns, 'Team_A', ['a', 'b']);
    await waitFor('both ready', async () => (await isReady(ns, 'a')) && (await isReady(ns, 'b')));
    const ev = await waitFor('a warning on the pod', async () =>
      (await eventsFor(env.client, ns, 'Pod', 'a')).find((e) => e.reason === 'InvalidGroupName'),
    );
    assert.equal(ev.type, 'Warning');
    assert.equal((await env.client.list(PODGROUP_KIND, { namespace: ns })).items.length, 0);
  });

  test('kubectl get pg prints phase, minMember, running and age', async () => {
    const ns = await env.namespace();
    await createGroup(ns, 'gang', { minMember: 1 });
    await runMembers(ns, 'gang', ['a']);
    await waitForPhase(env.client, ns, 'gang', 'Running');
    const stdout = await env.kubectl(['get', 'pg', '-n', ns]);
    const [header, row] = stdout.trim().split('\n');
    assert.deepEqual(header?.split(/\s+/), ['NAME', 'PHASE', 'MINMEMBER', 'RUNNING', 'AGE']);
    assert.deepEqual(row?.split(/\s+/).slice(0, 4), ['gang', 'Running', '1', '1']);
  });

  test('with auto-creation off, labelled groups get labels but no PodGroup', async () => {
    const off = await startBareEnv({ autoCreate: false, formationWindowMs: 0 });
    try {
      const ns = await off.namespace();
      await off.client.create(podManifest(ns, 'a', { group: 'solo', node: 'node-a' }));
      await off.client.patchStatus(
        { ...POD, metadata: { name: 'a', namespace: ns } },
        { status: { phase: 'Running' } },
      );
      await waitFor(
        'a ready',
        async () => (await off.client.get(POD, 'a', ns)).metadata.labels?.[READY_LABEL] === 'true',
      );
      assert.equal(await off.client.tryGet<PodGroup>(PODGROUP_KIND, 'solo', ns), undefined);
    } finally {
      await off.stop();
    }
  });
});
