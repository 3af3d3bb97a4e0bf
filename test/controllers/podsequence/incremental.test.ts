/**
 * The controller's incremental paths decide exactly as a fresh pass would: the membership
 * tracker fed pod events one by one against one built from scratch, the decision with the
 * per-node memo kept between passes against one without, over random event histories
 * (pods appearing, changing labels, nodes, gates and readiness, failing and going away).
 * Also the two pieces of shell policy that keep writes down: status pacing and release
 * expectations. Histories come from a seeded generator, so a failure names a seed that reproduces it.
 */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PodSequence, PodSequenceStatus } from '../../../src/apis/scheduling.example.com/v1alpha1.ts';
import { DEFAULT_GATE } from '../../../src/apis/scheduling.example.com/v1alpha1.ts';
import { statusWriteDelay } from '../../../src/controllers/podsequence/controller.ts';
import { DecisionMemo, decide, decideReleases } from '../../../src/controllers/podsequence/core.ts';
import { ReleaseExpectations } from '../../../src/controllers/podsequence/expectations.ts';
import { MembershipTracker } from '../../../src/controllers/podsequence/membership.ts';
import type { Pod } from '../../../src/controllers/podsequence/objects.ts';
import { resolveSpec } from '../../../src/controllers/podsequence/spec.ts';
import { seededRandom } from '../../support/random.ts';
import { input, node, type PodOpts, pod, sequence } from './fixtures.ts';

const STATES: PodOpts['state'][] = ['gated', 'released', 'scheduled', 'ready', 'succeeded', 'failed'];
const TIERS = ['a', 'b', 'c'];

function randomPod(r: () => number, name: string): Pod {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const o: PodOpts = { state: pick(STATES), labels: { tier: pick(TIERS) } };
  if (r() < 0.2) o.labels!.extra = 'yes';
  const where = r();
  if (where < 0.4) o.pinned = `node-${Math.floor(r() * 4)}`;
  else if (where < 0.6 && o.state !== 'gated') o.node = `node-${Math.floor(r() * 4)}`;
  if (r() < 0.1) o.terminating = true;
  return pod(name, o);
}

/** Sequences over the same pods: selectors (one overlapping), explicit names, both scopes. */
function sequences(): PodSequence[] {
  const selectorGroups = [
    { name: 'A', podSelector: { matchLabels: { tier: 'a' } } },
    { name: 'B', podSelector: { matchLabels: { tier: 'b' } } },
    { name: 'C', podSelector: { matchExpressions: [{ key: 'extra', operator: 'Exists' as const }] } },
    { name: 'D', podSelector: { matchLabels: { tier: 'c' } } },
  ];
  const named = [{ pods: ['p0', 'p1', 'p2'] }, { pods: ['p3', 'p4', 'missing'] }, { pods: ['p5', 'p6'] }];
  return [
    sequence({ podGroups: selectorGroups }, 'cluster-selectors'),
    sequence({ scope: 'Node', podGroups: selectorGroups }, 'node-selectors'),
    sequence({ podGroups: named }, 'cluster-names'),
    sequence({ scope: 'Node', podGroups: named }, 'node-names'),
  ];
}

/** A random history of pod events over at most 12 pod names. */
function* history(
  seed: number,
  steps: number,
): Generator<{ pods: Map<string, Pod>; event: 'upsert' | 'remove'; name: string }> {
  const r = seededRandom(seed);
  const pods = new Map<string, Pod>();
  for (let i = 0; i < steps; i++) {
    const name = `p${Math.floor(r() * 12)}`;
    if (pods.has(name) && r() < 0.15) {
      pods.delete(name);
      yield { pods, event: 'remove', name };
    } else {
      pods.set(name, randomPod(r, name));
      yield { pods, event: 'upsert', name };
    }
  }
}

function membershipView(t: MembershipTracker) {
  const m = t.membership();
  const names = (ps: readonly Pod[]) => ps.map((p) => p.metadata.name);
  const view = {
    groups: m.groups.map((g) => ({
      members: names(g.members),
      missing: [...g.missing],
      ignoredFailed: names(g.ignoredFailed),
    })),
    groupOf: [...m.groupOf].sort(),
    conflicts: [...m.conflicts].sort(),
  };
  if (t.spec.scope !== 'Node') return view;
  const placement = t.placement();
  return {
    ...view,
    nodes: [...placement.nodes.values()]
      .filter((p) => p.byGroup.some((g) => g.length > 0))
      .map((p) => [p.node, p.byGroup.map(names)])
      .sort(),
    unplaced: placement.unplaced.map(names),
  };
}

describe('MembershipTracker', () => {
  test('fed events one by one, it matches a tracker built from scratch at every step', () => {
    for (const seq of sequences()) {
      const spec = resolveSpec(seq, DEFAULT_GATE);
      for (let seed = 1; seed <= 25; seed++) {
        const live = new MembershipTracker(spec);
        let step = 0;
        for (const { pods, event, name } of history(seed, 60)) {
          if (event === 'upsert') live.upsert(pods.get(name)!);
          else live.remove(name);
          step++;
          const fresh = new MembershipTracker(spec, [], pods.values());
          assert.deepEqual(
            membershipView(live),
            membershipView(fresh),
            `${seq.metadata.name}, seed ${seed}, step ${step}`,
          );
        }
      }
    }
  });

  test('untouched groups and nodes keep their objects; touched ones are rebuilt', () => {
    const spec = resolveSpec(sequences()[1]!, DEFAULT_GATE);
    const a = pod('a', { labels: { tier: 'a' }, pinned: 'node-1', state: 'ready' });
    const b = pod('b', { labels: { tier: 'b' }, pinned: 'node-2' });
    const t = new MembershipTracker(spec, [], [a, b]);
    const before = t.membership();
    const nodesBefore = new Map(t.placement().nodes);
    t.upsert(pod('b', { labels: { tier: 'b' }, pinned: 'node-2', state: 'ready' }));
    const after = t.membership();
    const nodesAfter = t.placement().nodes;
    assert.equal(after.groups[0], before.groups[0], 'group A untouched');
    assert.notEqual(after.groups[1], before.groups[1], 'group B rebuilt');
    assert.equal(nodesAfter.get('node-1'), nodesBefore.get('node-1'), 'node-1 untouched');
    assert.notEqual(nodesAfter.get('node-2'), nodesBefore.get('node-2'), 'node-2 rebuilt');
  });
});

describe('decision on a live tracker and the per-node memo', () => {
  test('decides as a fresh pass does, pass after pass, also as the written status moves on', () => {
    const now = new Date('2026-11-23T00:00:00Z');
    for (const seq of sequences()) {
      const spec = resolveSpec(seq, DEFAULT_GATE);
      for (let seed = 1; seed <= 25; seed++) {
        const tracker = new MembershipTracker(spec);
        const memo = new DecisionMemo();
        let status: PodSequenceStatus | undefined;
        let step = 0;
        for (const { pods, event, name } of history(seed, 60)) {
          if (event === 'upsert') tracker.upsert(pods.get(name)!);
          else tracker.remove(name);
          step++;
          const at = { ...seq, status };
          const withMemo = decide({ ...input(at, [], { now }), tracker, memo });
          const fresh = decide(input(at, [...pods.values()], { now }));
          const what = `${seq.metadata.name}, seed ${seed}, step ${step}`;
          assert.deepEqual(withMemo.status, fresh.status, what);
          assert.deepEqual(withMemo.releases, fresh.releases, what);
          assert.deepEqual(withMemo.events, fresh.events, what);
          // Every other pass the status is written, as the controller's pacing may do; it
          // comes back as new objects (the server's answer, then the cache's copy).
          if (step % 2 === 0) status = structuredClone(withMemo.status);
        }
      }
    }
  });

  test('full mode: as nodes come and go, and when only the releases of a pass are taken', () => {
    const now = new Date('2026-11-23T00:00:00Z');
    const nodeSeqs = sequences().filter((s) => s.spec.scope === 'Node');
    for (const seq of nodeSeqs) {
      const spec = resolveSpec(seq, DEFAULT_GATE);
      for (let seed = 1; seed <= 25; seed++) {
        const r = seededRandom(seed * 7919);
        const tracker = new MembershipTracker(spec);
        const memo = new DecisionMemo();
        let status: PodSequenceStatus | undefined;
        let step = 0;
        let nodes = [node('node-0')];
        for (const { pods, event, name } of history(seed, 60)) {
          if (event === 'upsert') tracker.upsert(pods.get(name)!);
          else tracker.remove(name);
          step++;
          if (r() < 0.15) nodes = [0, 1, 2, 3, 4].filter(() => r() < 0.8).map((i) => node(`node-${i}`));
          const at = { ...seq, status };
          const what = `${seq.metadata.name}, seed ${seed}, step ${step}`;
          const decision = decideReleases({ ...input(at, [], { now, nodes }), tracker, memo });
          const fresh = decide(input(at, [...pods.values()], { now, nodes }));
          assert.deepEqual(decision.releases, fresh.releases, what);
          assert.deepEqual(decision.taints, fresh.taints, what);
          // The shell may stop after the releases (a failed patch, a cancelled reconcile).
          if (r() < 0.3) continue;
          const withMemo = decision.plan();
          assert.deepEqual(withMemo.status, fresh.status, what);
          assert.deepEqual(withMemo.events, fresh.events, what);
          assert.deepEqual(withMemo.nodes, fresh.nodes, what);
          if (r() < 0.15) status = structuredClone(withMemo.status);
        }
      }
    }
  });
});

describe('status pacing', () => {
  const base: PodSequenceStatus = {
    phase: 'InProgress',
    currentIndex: 1,
    observedGeneration: 1,
    conditions: [
      { type: 'Completed', status: 'False', reason: 'InProgress', message: 'm', lastTransitionTime: '' },
    ],
  };

  test('progress-only changes wait for the interval; phase, generation and condition changes do not', () => {
    const progress = { ...base, currentIndex: 2, message: 'later' };
    assert.equal(statusWriteDelay(base, progress, 1_000, 1_200, 1_000), 800);
    assert.equal(statusWriteDelay(base, progress, 1_000, 2_500, 1_000), 0, 'interval over');
    assert.equal(statusWriteDelay(base, { ...base, phase: 'Completed' }, 1_000, 1_200, 1_000), 0);
    assert.equal(statusWriteDelay(base, { ...base, observedGeneration: 2 }, 1_000, 1_200, 1_000), 0);
    const flipped = { ...base, conditions: [{ ...base.conditions![0]!, status: 'True' }] };
    assert.equal(statusWriteDelay(base, flipped, 1_000, 1_200, 1_000), 0);
  });

  test('the first write, an unknown last write and a zero interval go at once', () => {
    assert.equal(statusWriteDelay(undefined, base, 1_000, 1_200, 1_000), 0);
    assert.equal(statusWriteDelay(base, { ...base, currentIndex: 2 }, undefined, 1_200, 1_000), 0);
    assert.equal(statusWriteDelay(base, { ...base, currentIndex: 2 }, 1_000, 1_200, 0), 0);
  });
});

describe('release expectations', () => {
  test('a release is pending while the pod stays at the version it was sent from, until it expires', () => {
    let now = 0;
    const e = new ReleaseExpectations();
    assert.equal(e.pending('ns/a', '5', now), false);
    e.expect('ns/a', '5', now);
    assert.equal(e.pending('ns/a', '5', now), true, 'the cache still shows the gated pod');
    assert.equal(e.pending('ns/b', '5', now), false, 'another pod');
    now = 31_000;
    assert.equal(e.pending('ns/a', '5', now), false, 'expired: a lost event cannot hold it back');
    e.expect('ns/a', '5', now);
    assert.equal(e.pending('ns/a', '6', now), false, 'the pod moved on');
    assert.equal(e.size, 0, 'and is forgotten');
  });
});
