/**
 * Randomized sequences (cluster and node scope, explicit names and selectors, pinned and
 * free pods) run to completion while the controller is killed at random moments and the
 * API server fails requests, cuts watches and expires resourceVersions. An order checker
 * sees every pod event and fails on any release before the predecessors were Ready; every
 * pod must be released by exactly one successful API write.
 */

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { PodGroup, PodSequence } from '../../../src/apis/scheduling.example.com/v1alpha1.ts';
import { GVR } from '../../../src/cluster/client.ts';
import type { Node, Pod } from '../../../src/controllers/podsequence/objects.ts';
import { isSequenceTaint } from '../../../src/controllers/podsequence/taints.ts';
import { seededRandom } from '../../support/random.ts';
import { waitFor } from '../../support/wait.ts';
import { gatedPod, type Harness, OrderChecker, PODSEQ_GVR, startHarness } from './harness.ts';

const NODES = ['node-a', 'node-b', 'node-c'];
const SEED = Number(process.env.PODSEQ_SEED ?? Date.now() % 1_000_000);

interface Scenario {
  seq: PodSequence;
  pods: Pod[];
}

function scenario(rand: () => number, id: number, namespace: string): Scenario {
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const scope = rand() < 0.5 ? 'Cluster' : 'Node';
  const groups: PodGroup[] = [];
  const pods: Pod[] = [];
  const count = int(2, 5);
  let pinnedSoFar = true;
  for (let k = 0; k < count; k++) {
    const bySelector = rand() < 0.5;
    const label = `g${k}`;
    // Node scope: DaemonSet-like groups (one pod pinned per node) first, then free pods,
    // so that every group can complete.
    const pinned = scope === 'Node' && pinnedSoFar && (k === 0 || rand() < 0.6);
    if (!pinned) pinnedSoFar = false;
    const names: string[] = [];
    const n = pinned ? NODES.length : int(1, 4);
    for (let i = 0; i < n; i++) {
      const name = `s${id}-g${k}-p${i}`;
      names.push(name);
      pods.push(
        gatedPod(name, {
          namespace,
          labels: { seq: `s${id}`, tier: label },
          pinned: pinned ? NODES[i] : undefined,
        }),
      );
    }
    groups.push(
      bySelector
        ? { name: label, podSelector: { matchLabels: { seq: `s${id}`, tier: label } } }
        : { name: label, pods: names },
    );
  }
  const seq: PodSequence = {
    apiVersion: 'scheduling.example.com/v1alpha1',
    kind: 'PodSequence',
    metadata: { name: `s${id}`, namespace },
    spec: { scope, podGroups: groups },
  };
  return { seq, pods };
}

let h: Harness;
before(async () => {
  h = await startHarness({ nodes: NODES, autoReadyMs: 60 });
});
after(() => h?.close());

test(`random sequences under restarts and API faults stay in order (seed ${SEED})`, async (t) => {
  const rand = seededRandom(SEED);
  for (let round = 0; round < 4; round++) {
    const mode = round % 2 === 0 ? 'lite' : 'full';
    const stats = await runRound(rand, `chaos-${round}`, mode);
    t.diagnostic(`round ${round} (${mode}): restarts ${stats.restarts}, fault periods ${stats.faulty}`);
  }
});

async function runRound(
  rand: () => number,
  ns: string,
  mode: 'lite' | 'full',
): Promise<{ restarts: number; faulty: number }> {
  const opts = { maxConcurrentReconciles: 3, mode };
  await h.cluster.create(GVR.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const scenarios = Array.from({ length: 6 }, (_, i) => scenario(rand, i, ns));
  const checkers = scenarios.map((s) => new OrderChecker(h.cluster, s.seq));
  // Every pod exists before any can be released, so a group never gains a member the
  // controller's cache may not have seen when it judges the group Ready.
  for (const s of scenarios) for (const p of s.pods) await h.cluster.create(GVR.pods, p);
  const firstRequest = h.requests.length;
  await h.stopController();
  await h.startController(opts);
  for (const s of scenarios) await h.cluster.create(PODSEQ_GVR, s.seq);

  const phaseOf = (s: Scenario) =>
    (h.cluster.get(PODSEQ_GVR, ns, s.seq.metadata.name!) as PodSequence | undefined)?.status;
  const allDone = () => scenarios.every((s) => phaseOf(s)?.phase === 'Completed');
  const deadline = Date.now() + 90_000;
  let restarts = 0;
  let faulty = 0;
  for (let step = 0; !allDone() && Date.now() < deadline; step++) {
    await new Promise((r) => setTimeout(r, 20 + rand() * 150));
    const roll = step === 0 ? 0 : rand();
    if (roll < 0.3) {
      await h.stopController(true);
      restarts++;
      await new Promise((r) => setTimeout(r, rand() * 100));
      await h.startController(opts);
    } else if (roll < 0.5) {
      faulty++;
      h.server.faults.configure({
        errorRate: 0.15,
        watchCutMs: 150 + Math.floor(rand() * 300),
        expireMs: 700,
      });
    } else if (roll < 0.65) {
      h.server.faults.configure({});
    }
  }
  h.server.faults.configure({});
  await waitFor('every sequence Completed', () => allDone(), { timeoutMs: 30_000 }).catch((err) => {
    const states = scenarios.map(
      (s) => `${s.seq.metadata.name} (${s.seq.spec.scope}): ${phaseOf(s)?.phase} ${phaseOf(s)?.message}`,
    );
    throw new Error(`${(err as Error).message} (seed ${SEED})\n${states.join('\n')}`);
  });

  for (const c of checkers) c.stop();
  const violations = checkers.flatMap((c) => c.violations);
  assert.deepEqual(violations, [], `seed ${SEED}`);
  assert.ok(restarts > 0, 'the controller was killed at least once');
  const released = checkers.flatMap((c) => c.releases.map((r) => r.pod)).sort();
  const all = scenarios.flatMap((s) => s.pods.map((p) => p.metadata.name!)).sort();
  assert.deepEqual(released, all, 'each pod released exactly once');
  const writes = new Map<string, number>();
  for (const r of h.requests.slice(firstRequest)) {
    if (r.method === 'PATCH' && r.code === 200 && r.path.startsWith(`/api/v1/namespaces/${ns}/pods/`)) {
      const name = r.path.split('/')[6]!;
      writes.set(name, (writes.get(name) ?? 0) + 1);
    }
  }
  assert.deepEqual(
    [...writes].filter(([, count]) => count !== 1),
    [],
    `exactly one successful write per released pod (seed ${SEED})`,
  );
  assert.equal(writes.size, all.length);
  // Deleting the sequences lifts every taint they put on nodes (full mode), then lets them
  // go; sequences of a lite round must not live on into a full one either.
  for (const s of scenarios) await h.cluster.delete(PODSEQ_GVR, ns, s.seq.metadata.name!);
  const ours = (key: string) => scenarios.some((s) => isSequenceTaint(key, ns, s.seq.metadata.name!));
  const leftTaints = () =>
    NODES.flatMap((n) =>
      ((h.cluster.get(GVR.nodes, '', n) as Node | undefined)?.spec?.taints ?? [])
        .filter((t) => ours(t.key))
        .map((t) => `${n}: ${t.key}`),
    );
  await waitFor(
    'sequences gone and nodes untainted',
    () =>
      scenarios.every((s) => !h.cluster.get(PODSEQ_GVR, ns, s.seq.metadata.name!)) &&
      leftTaints().length === 0,
    { timeoutMs: 30_000 },
  ).catch((err) => {
    const left = scenarios
      .map((s) => h.cluster.get(PODSEQ_GVR, ns, s.seq.metadata.name!) as PodSequence | undefined)
      .filter((s) => s)
      .map(
        (s) =>
          `${s!.metadata.name} finalizers=${s!.metadata.finalizers} deleting=${!!s!.metadata.deletionTimestamp}`,
      );
    throw new Error(
      `${(err as Error).message} (seed ${SEED})\n${left.join('\n')}\n${leftTaints().join('\n')}`,
    );
  });
  return { restarts, faulty };
}
