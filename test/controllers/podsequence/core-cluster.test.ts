import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_GATE, RELEASED_BY_ANNOTATION } from '../../../src/apis/scheduling.example.com/v1alpha1.ts';
import { decide } from '../../../src/controllers/podsequence/core.ts';
import { resolveOptions } from '../../../src/controllers/podsequence/options.ts';
import { resolveSpec } from '../../../src/controllers/podsequence/spec.ts';
import { groups, input, names, pod, sequence } from './fixtures.ts';

const tiers = () => sequence({ podGroups: groups(['pod-1', 'pod-2'], ['pod-3', 'pod-4'], ['pod-5']) });

describe('cluster scope, tier by tier', () => {
  test('releases every pod of the first group at once and nothing else', () => {
    const pods = ['pod-1', 'pod-2', 'pod-3', 'pod-4', 'pod-5'].map((n) => pod(n));
    const plan = decide(input(tiers(), pods));
    assert.deepEqual(names(plan.releases), ['pod-1', 'pod-2']);
    assert.equal(plan.status.phase, 'InProgress');
    assert.equal(plan.status.currentIndex, 0);
    assert.deepEqual(plan.status.currentGroupPods, ['pod-1', 'pod-2']);
    assert.equal(plan.status.readyPodsInCurrentGroup, 0);
    assert.deepEqual(plan.status.processedPods, []);
    assert.equal(plan.status.progress, '1/3');
    assert.equal(plan.status.currentGroupName, 'G1');
    assert.equal(plan.status.currentGroupReady, '0/2');
  });

  test('waits while one pod of the group is not Ready', () => {
    const pods = [
      pod('pod-1', { state: 'ready' }),
      pod('pod-2', { state: 'scheduled' }),
      pod('pod-3'),
      pod('pod-4'),
      pod('pod-5'),
    ];
    const plan = decide(input(tiers(), pods));
    assert.deepEqual(plan.releases, []);
    assert.equal(plan.status.readyPodsInCurrentGroup, 1);
    assert.match(
      plan.status.message!,
      /Waiting for group 'G1' \(1\/3\): 1\/2 pods Ready; pod-2 Running, not Ready/,
    );
  });

  test('releases the next group once every pod of the current one is Ready', () => {
    const pods = [
      pod('pod-1', { state: 'ready' }),
      pod('pod-2', { state: 'ready' }),
      pod('pod-3'),
      pod('pod-4'),
      pod('pod-5'),
    ];
    const plan = decide(input(tiers(), pods));
    assert.deepEqual(names(plan.releases), ['pod-3', 'pod-4']);
    assert.equal(plan.status.currentIndex, 1);
    assert.deepEqual(plan.status.processedPods, ['pod-1', 'pod-2']);
    assert.equal(plan.status.progress, '2/3');
  });

  test('a later group also needs every earlier group still Ready', () => {
    const pods = [
      pod('pod-1', { state: 'scheduled' }),
      pod('pod-2', { state: 'ready' }),
      pod('pod-3', { state: 'ready', releasedBy: 'default/seq' }),
      pod('pod-4', { state: 'ready', releasedBy: 'default/seq' }),
      pod('pod-5'),
    ];
    const plan = decide(input(tiers(), pods));
    assert.deepEqual(plan.releases, []);
    assert.equal(plan.status.currentIndex, 0);
    assert.equal(plan.status.phase, 'InProgress', 'pods released by the sequence are not escapes');
  });

  test('completes when every group is Ready, and counts Succeeded pods as done', () => {
    const pods = [
      pod('pod-1', { state: 'succeeded' }),
      pod('pod-2', { state: 'ready' }),
      pod('pod-3', { state: 'ready' }),
      pod('pod-4', { state: 'ready' }),
      pod('pod-5', { state: 'ready' }),
    ];
    const plan = decide(input(tiers(), pods));
    assert.equal(plan.status.phase, 'Completed');
    assert.equal(plan.status.currentIndex, 3);
    assert.equal(plan.status.progress, '3/3');
    assert.deepEqual(plan.status.processedPods, ['pod-1', 'pod-2', 'pod-3', 'pod-4', 'pod-5']);
    assert.deepEqual(plan.status.currentGroupPods, []);
    assert.match(plan.status.message!, /All 3 groups are Ready \(5 pods\)/);
    assert.ok(plan.events.some((e) => e.reason === 'Completed'));
  });

  test('sets observedGeneration and the conditions', () => {
    const seq = tiers();
    seq.metadata.generation = 7;
    const plan = decide(input(seq, [pod('pod-1')]));
    assert.equal(plan.status.observedGeneration, 7);
    const types = plan.status.conditions!.map((c) => `${c.type}=${c.status}`);
    assert.deepEqual(types, ['SpecValid=True', 'PodsFound=False', 'Completed=False']);
    assert.ok(plan.status.conditions!.every((c) => c.observedGeneration === 7 && c.lastTransitionTime));
  });
});

describe('releasing', () => {
  test('removes only this sequence gate, in one merge patch per pod carrying the resourceVersion', () => {
    const p = pod('pod-1', { gates: ['other.example.com/gate', DEFAULT_GATE] });
    const plan = decide(input(sequence({ podGroups: groups(['pod-1']) }), [p]));
    assert.equal(plan.releases.length, 1);
    assert.deepEqual(plan.releases[0]!.patch, {
      metadata: {
        resourceVersion: p.metadata.resourceVersion,
        annotations: { [RELEASED_BY_ANNOTATION]: 'default/seq' },
      },
      spec: { schedulingGates: [{ name: 'other.example.com/gate' }] },
    });
  });

  test('clears the list when ours was the only gate', () => {
    const plan = decide(input(sequence({ podGroups: groups(['pod-1']) }), [pod('pod-1')]));
    assert.equal((plan.releases[0]!.patch.spec as { schedulingGates: unknown }).schedulingGates, null);
  });

  test('honours schedulingGateName and ignores pods gated by another gate only', () => {
    const gate = 'podsequence.example.com/db-init-gate';
    const seq = sequence({ podGroups: groups(['init-db'], ['database']), schedulingGateName: gate });
    const plan = decide(input(seq, [pod('init-db', { gates: [gate] }), pod('database', { gates: [gate] })]));
    assert.deepEqual(names(plan.releases), ['init-db']);
    const other = decide(input(seq, [pod('init-db'), pod('database')]));
    assert.deepEqual(other.releases, [], 'the default gate is not ours here');
  });

  test('does not release a pod being deleted', () => {
    const plan = decide(
      input(sequence({ podGroups: groups(['pod-1']) }), [pod('pod-1', { terminating: true })]),
    );
    assert.deepEqual(plan.releases, []);
  });

  test('releases present pods of a group while a named pod is missing, and waits for it', () => {
    const seq = sequence({ podGroups: groups(['pod-1', 'pod-2'], ['pod-3']) });
    const plan = decide(input(seq, [pod('pod-1'), pod('pod-3')]));
    assert.deepEqual(names(plan.releases), ['pod-1']);
    assert.equal(plan.status.phase, 'InProgress');
    assert.match(plan.status.message!, /pod-2 not found in namespace default/);
    assert.deepEqual(plan.status.currentGroupPods, ['pod-1', 'pod-2']);
    assert.ok(
      !plan.events.some((e) => e.type === 'Warning'),
      'a pod missing for a moment is not a warning yet',
    );
  });
});

describe('missing pods', () => {
  const seq = () => sequence({ podGroups: groups(['pod-1'], ['pod-2']) });

  test('is Pending while the first group has no pod', () => {
    const plan = decide(input(seq(), []));
    assert.equal(plan.status.phase, 'Pending');
    assert.match(
      plan.status.message!,
      /Waiting for group 'G1' \(1\/2\): 0\/1 pods Ready; pod-1 not found in namespace default/,
    );
  });

  test('fails once a named pod is missing past the grace period, and requeues until then', () => {
    const first = decide(input(seq(), []));
    assert.ok(first.requeueAfterMs && first.requeueAfterMs > 30_000 && first.requeueAfterMs <= 31_000);
    const s = seq();
    s.status = first.status;
    const later = decide(input(s, [], { now: new Date(Date.parse('2026-06-01T12:00:00Z') + 31_000) }));
    assert.equal(later.status.phase, 'Failed');
    assert.match(later.status.message!, /Pod pod-1 not found in namespace default for more than 30s/);
    assert.ok(later.events.some((e) => e.reason === 'PodNotFound' && e.type === 'Warning'));
  });

  test('recovers when the pod appears', () => {
    const s = seq();
    s.status = decide(input(s, [], { now: new Date('2026-06-01T11:00:00Z') })).status;
    const failed = decide(input(s, []));
    assert.equal(failed.status.phase, 'Failed');
    s.status = failed.status;
    const back = decide(input(s, [pod('pod-1')]));
    assert.equal(back.status.phase, 'InProgress');
    assert.deepEqual(names(back.releases), ['pod-1']);
  });
});

describe('selectors', () => {
  const seq = () =>
    sequence({
      podGroups: [
        { name: 'DB', podSelector: { matchLabels: { app: 'db' } } },
        {
          name: 'App',
          podSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] },
        },
      ],
    });

  test('selects by labels, and an empty group blocks the next', () => {
    const plan = decide(input(seq(), [pod('web-1', { labels: { app: 'web' } })]));
    assert.deepEqual(plan.releases, []);
    assert.equal(plan.status.phase, 'Pending');
    assert.match(plan.status.message!, /no pod in namespace default matches app=db/);
  });

  test('releases the next group when every selected pod is Ready', () => {
    const plan = decide(
      input(seq(), [
        pod('db-1', { labels: { app: 'db' }, state: 'ready' }),
        pod('web-1', { labels: { app: 'web' } }),
        pod('api-1', { labels: { app: 'api' } }),
        pod('other', { labels: { app: 'other' } }),
      ]),
    );
    assert.deepEqual(names(plan.releases), ['api-1', 'web-1']);
  });

  test('a failed pod replaced by its controller is left out; all failed fails the sequence', () => {
    const replaced = decide(
      input(seq(), [
        pod('db-old', { labels: { app: 'db' }, state: 'failed' }),
        pod('db-new', { labels: { app: 'db' }, state: 'ready' }),
        pod('web-1', { labels: { app: 'web' } }),
      ]),
    );
    assert.deepEqual(names(replaced.releases), ['web-1']);
    const dead = decide(
      input(seq(), [
        pod('db-old', { labels: { app: 'db' }, state: 'failed' }),
        pod('web-1', { labels: { app: 'web' } }),
      ]),
    );
    assert.deepEqual(dead.releases, []);
    assert.equal(dead.status.phase, 'Failed');
    assert.match(dead.status.message!, /Pod db-old \(group 'DB' \(1\/2\)\) failed/);
  });

  test('only pods of the sequence namespace count', () => {
    const plan = decide(input(seq(), [pod('db-1', { labels: { app: 'db' }, namespace: 'elsewhere' })]));
    assert.deepEqual(plan.releases, []);
    assert.equal(plan.status.phase, 'Pending');
  });
});

describe('failures and conflicts', () => {
  test('a named pod that failed fails the sequence and holds later groups', () => {
    const seq = sequence({ podGroups: groups(['pod-1'], ['pod-2']) });
    const plan = decide(input(seq, [pod('pod-1', { state: 'failed' }), pod('pod-2')]));
    assert.deepEqual(plan.releases, []);
    assert.equal(plan.status.phase, 'Failed');
    assert.ok(plan.events.some((e) => e.reason === 'PodFailed' && e.type === 'Warning'));
  });

  test('a pod of a later group that runs without the gate is reported', () => {
    const seq = sequence({ podGroups: groups(['pod-1'], ['pod-2']) });
    const plan = decide(
      input(seq, [pod('pod-1', { state: 'scheduled' }), pod('pod-2', { state: 'scheduled' })]),
    );
    assert.equal(plan.status.phase, 'Failed');
    assert.match(
      plan.status.message!,
      /pod-2 \(group 'G2' \(2\/2\)\) started before its group's turn: it does not carry the scheduling gate/,
    );
  });

  test('a pod selected by two groups is not released', () => {
    const seq = sequence({
      podGroups: [
        { name: 'A', podSelector: { matchLabels: { tier: 'a' } } },
        { name: 'B', podSelector: { matchLabels: { role: 'x' } } },
      ],
    });
    const plan = decide(
      input(seq, [
        pod('both', { labels: { tier: 'a', role: 'x' } }),
        pod('a-only', { labels: { tier: 'a' } }),
      ]),
    );
    assert.deepEqual(names(plan.releases), ['a-only']);
    assert.equal(plan.status.phase, 'Failed');
    assert.match(plan.status.message!, /both \(selected by 2 groups \('A', 'B'\)\)/);
  });

  test('two sequences sharing a gate over one pod: neither releases it', () => {
    const mine = sequence({ podGroups: groups(['pod-1']) }, 'mine');
    const theirs = sequence({ podGroups: groups(['pod-1']) }, 'theirs');
    const others = [{ key: 'default/theirs', spec: resolveSpec(theirs, DEFAULT_GATE) }];
    const plan = decide(input(mine, [pod('pod-1')], { others }));
    assert.deepEqual(plan.releases, []);
    assert.match(plan.status.message!, /also sequenced by PodSequence default\/theirs/);
    const distinct = [
      {
        key: 'default/theirs',
        spec: resolveSpec(
          { ...theirs, spec: { ...theirs.spec, schedulingGateName: 'x.io/g' } },
          DEFAULT_GATE,
        ),
      },
    ];
    assert.equal(decide(input(mine, [pod('pod-1')], { others: distinct })).releases.length, 1);
  });
});

describe('invalid specs are Failed and release nothing', () => {
  const cases: [string, Parameters<typeof sequence>[0], RegExp][] = [
    ['no groups', { podGroups: [] }, /at least one group/],
    [
      'both',
      { podGroups: [{ pods: ['a'], podSelector: { matchLabels: { a: 'b' } } }] },
      /either pods or podSelector, not both/,
    ],
    ['neither', { podGroups: [{ name: 'x' }] }, /one of pods or podSelector is required/],
    ['duplicate across groups', { podGroups: groups(['a'], ['a']) }, /pod a is listed in two groups/],
    [
      'bad gate',
      { podGroups: groups(['a']), schedulingGateName: 'not a gate!' },
      /schedulingGateName "not a gate!" is not a valid qualified name/,
    ],
    [
      'bad scope',
      { podGroups: groups(['a']), scope: 'Zone' as never },
      /spec.scope must be "Cluster" or "Node"/,
    ],
    ['empty selector', { podGroups: [{ podSelector: {} }] }, /podSelector is empty/],
    [
      'bad operator',
      { podGroups: [{ podSelector: { matchExpressions: [{ key: 'a', operator: 'Near', values: ['b'] }] } }] },
      /invalid podSelector/,
    ],
  ];
  for (const [what, spec, re] of cases) {
    test(what, () => {
      const plan = decide(input(sequence(spec), [pod('a')]));
      assert.deepEqual(plan.releases, []);
      assert.equal(plan.status.phase, 'Failed');
      assert.match(plan.status.message!, re);
      assert.ok(plan.events.some((e) => e.reason === 'InvalidSpec' && e.type === 'Warning'));
      const valid = plan.status.conditions!.find((c) => c.type === 'SpecValid');
      assert.equal(valid?.status, 'False');
    });
  }
});

describe('events', () => {
  test('GroupReady when the index moves, Released per group', () => {
    const seq = tiers();
    const first = decide(input(seq, [pod('pod-1'), pod('pod-2'), pod('pod-3'), pod('pod-4'), pod('pod-5')]));
    const released = first.events.find((e) => e.reason === 'Released');
    assert.match(
      released!.note,
      /Released 2 pods of group 'G1' \(1\/3\) because it is the first group: pod-1, pod-2/,
    );
    seq.status = first.status;
    const next = decide(
      input(seq, [
        pod('pod-1', { state: 'ready' }),
        pod('pod-2', { state: 'ready' }),
        pod('pod-3'),
        pod('pod-4'),
        pod('pod-5'),
      ]),
    );
    assert.ok(
      next.events.some(
        (e) => e.reason === 'GroupReady' && /Group 'G1' \(1\/3\) is Ready; releasing group 'G2'/.test(e.note),
      ),
    );
  });

  test('no repeated warning while the failure is unchanged', () => {
    const seq = sequence({ podGroups: groups(['pod-1'], ['pod-2']) });
    const first = decide(input(seq, [pod('pod-1', { state: 'failed' }), pod('pod-2')]));
    seq.status = first.status;
    const again = decide(input(seq, [pod('pod-1', { state: 'failed' }), pod('pod-2')]));
    assert.deepEqual(again.events, []);
  });
});

test('status lists are capped', () => {
  const many = Array.from({ length: 30 }, (_, i) => `p-${String(i).padStart(2, '0')}`);
  const seq = sequence({ podGroups: [{ pods: many }, { pods: ['last'] }] });
  const plan = decide(
    input(seq, [...many.map((n) => pod(n, { state: 'ready' })), pod('last')], {
      options: resolveOptions({ maxListedPods: 10 }),
    }),
  );
  assert.equal(plan.status.processedPods!.length, 10);
});
