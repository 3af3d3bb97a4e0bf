import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ClusterState,
  ERR_REASON_AFFINITY_RULES,
  ERR_REASON_ANTI_AFFINITY_RULES,
  ERR_REASON_EXISTING_ANTI_AFFINITY,
  filterInterPodAffinity,
  interPodAffinityScores,
  interPodPreFilter,
  preparePod,
  schedulePod,
} from '../../../src/cluster/scheduler/core/index.ts';
import type { Affinity, Pod } from '../../../src/kube/builtin.ts';
import { message, node, labelled as withLabels, ZONE, zones } from './fixtures.ts';

type Term = NonNullable<
  NonNullable<Affinity['podAffinity']>['requiredDuringSchedulingIgnoredDuringExecution']
>[number];

const HOST = 'kubernetes.io/hostname';

function labelled(
  name: string,
  labels: Record<string, string>,
  affinity?: Affinity,
  opts: { namespace?: string; priority?: number; requests?: Record<string, string> } = {},
): Pod {
  const meta = opts.namespace ? { namespace: opts.namespace } : {};
  return withLabels(name, labels, { affinity, priority: opts.priority }, meta, opts.requests);
}

function term(app: string, topologyKey: string, extra: Partial<Term> = {}): Term {
  return { labelSelector: { matchLabels: { app } }, topologyKey, ...extra };
}

const requireWith = (...terms: Term[]): Affinity => ({
  podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms },
});
const requireApart = (...terms: Term[]): Affinity => ({
  podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms },
});

function verdicts(s: ClusterState, p: Pod): Record<string, string> {
  const st = interPodPreFilter(s, preparePod(p));
  const out: Record<string, string> = {};
  for (const ni of s.nodes) out[ni.name] = (st && filterInterPodAffinity(st, ni)?.reasons[0]) ?? 'ok';
  return out;
}

describe('InterPodAffinity filter', () => {
  test('nothing to check without terms on either side', () => {
    const s = zones();
    s.addPod(labelled('db', { app: 'db' }), 'n1');
    assert.equal(interPodPreFilter(s, preparePod(labelled('p', { app: 'web' }))), undefined);
  });

  test('required affinity: only domains holding a matching pod; unresolvable elsewhere', () => {
    const s = zones();
    s.addPod(labelled('db', { app: 'db' }), 'n3');
    const p = labelled('web', { app: 'web' }, requireWith(term('db', ZONE)));
    assert.deepEqual(verdicts(s, p), {
      n1: ERR_REASON_AFFINITY_RULES,
      n2: ERR_REASON_AFFINITY_RULES,
      n3: 'ok',
      n4: 'ok',
    });
    const st = interPodPreFilter(s, preparePod(p))!;
    assert.equal(filterInterPodAffinity(st, s.getNode('n1')!)?.code, 'UnschedulableAndUnresolvable');
  });

  test('the first pod of a group that wants itself may go anywhere with the topology key', () => {
    const s = zones();
    s.upsertNode(node('bare', { cpu: '8' }));
    const first = labelled(
      'w0',
      { group: 'g' },
      requireWith(term('unused', ZONE, { labelSelector: { matchLabels: { group: 'g' } } })),
    );
    assert.deepEqual(verdicts(s, first), {
      n1: 'ok',
      n2: 'ok',
      n3: 'ok',
      n4: 'ok',
      bare: ERR_REASON_AFFINITY_RULES,
    });
    // A pod that does not match its own terms gets no such pass.
    const stranger = labelled(
      'x',
      { group: 'other' },
      requireWith(term('unused', ZONE, { labelSelector: { matchLabels: { group: 'g' } } })),
    );
    assert.deepEqual(Object.values(verdicts(s, stranger)), Array(5).fill(ERR_REASON_AFFINITY_RULES));
    // Once one member is placed, the rest follow it into its zone.
    s.addPod(first, 'n3');
    const second = labelled('w1', { group: 'g' }, first.spec!.affinity!);
    assert.deepEqual(verdicts(s, second), {
      n1: ERR_REASON_AFFINITY_RULES,
      n2: ERR_REASON_AFFINITY_RULES,
      n3: 'ok',
      n4: 'ok',
      bare: ERR_REASON_AFFINITY_RULES,
    });
  });

  test('required anti-affinity: one worker per node', () => {
    const s = zones();
    const worker = (i: number) => labelled(`w${i}`, { app: 'worker' }, requireApart(term('worker', HOST)));
    s.addPod(worker(0), 'n1');
    s.addPod(worker(1), 'n3');
    const st = interPodPreFilter(s, preparePod(worker(2)))!;
    assert.deepEqual(filterInterPodAffinity(st, s.getNode('n1')!), {
      code: 'Unschedulable',
      plugin: 'InterPodAffinity',
      reasons: [ERR_REASON_ANTI_AFFINITY_RULES],
    });
    assert.equal(filterInterPodAffinity(st, s.getNode('n2')!), undefined);
  });

  test('existing pods’ anti-affinity keeps matching pods out of their domains (symmetry)', () => {
    const s = zones();
    s.addPod(labelled('loner', { app: 'loner' }, requireApart(term('web', ZONE))), 'n1');
    assert.deepEqual(verdicts(s, labelled('web', { app: 'web' })), {
      n1: ERR_REASON_EXISTING_ANTI_AFFINITY,
      n2: ERR_REASON_EXISTING_ANTI_AFFINITY,
      n3: 'ok',
      n4: 'ok',
    });
    assert.deepEqual(Object.values(verdicts(s, labelled('db', { app: 'db' }))), ['ok', 'ok', 'ok', 'ok']);
  });

  test('namespaces and namespaceSelector decide where a term looks', () => {
    const s = zones();
    s.namespaceLabels.set('default', {});
    s.namespaceLabels.set('team-a', { team: 'a' });
    s.namespaceLabels.set('team-b', { team: 'b' });
    s.addPod(labelled('db-a', { app: 'db' }, undefined, { namespace: 'team-a' }), 'n1');
    s.addPod(labelled('db-b', { app: 'db' }, undefined, { namespace: 'team-b' }), 'n3');
    const zonesOf = (t: Term) => {
      const v = verdicts(s, labelled('web', { app: 'web' }, requireWith(t)));
      return Object.keys(v).filter((n) => v[n] === 'ok');
    };
    assert.deepEqual(zonesOf(term('db', ZONE)), [], 'by default only the pod’s own namespace');
    assert.deepEqual(zonesOf(term('db', ZONE, { namespaces: ['team-b'] })), ['n3', 'n4']);
    assert.deepEqual(zonesOf(term('db', ZONE, { namespaceSelector: { matchLabels: { team: 'a' } } })), [
      'n1',
      'n2',
    ]);
    assert.deepEqual(zonesOf(term('db', ZONE, { namespaceSelector: {} })), ['n1', 'n2', 'n3', 'n4']);
    assert.deepEqual(
      zonesOf(
        term('db', ZONE, { namespaces: ['team-b'], namespaceSelector: { matchLabels: { team: 'a' } } }),
      ),
      ['n1', 'n2', 'n3', 'n4'],
    );
  });

  test('an existing pod’s namespaceSelector is matched against the incoming pod’s namespace labels', () => {
    const s = zones();
    s.namespaceLabels.set('prod', { env: 'prod' });
    s.namespaceLabels.set('dev', { env: 'dev' });
    const guard = requireApart(term('web', ZONE, { namespaceSelector: { matchLabels: { env: 'prod' } } }));
    s.addPod(labelled('guard', { app: 'guard' }, guard, { namespace: 'ops' }), 'n1');
    assert.equal(
      verdicts(s, labelled('web', { app: 'web' }, undefined, { namespace: 'prod' })).n1,
      ERR_REASON_EXISTING_ANTI_AFFINITY,
    );
    assert.equal(verdicts(s, labelled('web', { app: 'web' }, undefined, { namespace: 'dev' })).n1, 'ok');
  });

  test('a gang with one worker per node: each assumed worker blocks its node, the extra one gets the message', () => {
    const s = new ClusterState();
    for (const n of ['n1', 'n2', 'n3']) s.upsertNode(node(n, { cpu: '8' }));
    const placed = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const w = labelled(`w${i}`, { app: 'worker' }, requireApart(term('worker', HOST)));
      const r = schedulePod(s, w);
      assert.equal(r.status, 'Scheduled');
      if (r.status !== 'Scheduled') return;
      s.addPod(w, r.nodeName);
      placed.add(r.nodeName);
    }
    assert.equal(placed.size, 3);
    const extra = labelled('w3', { app: 'worker' }, requireApart(term('worker', HOST)));
    assert.equal(
      message(schedulePod(s, extra)),
      `0/3 nodes are available: 3 ${ERR_REASON_ANTI_AFFINITY_RULES}. no new claims to deallocate, ` +
        'preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.',
    );
  });

  test('preemption: an anti-affinity conflict with a lower-priority pod is resolved by evicting it', () => {
    const s = new ClusterState();
    s.upsertNode(node('n1', { cpu: '8' }));
    s.addPod(labelled('batch', { app: 'batch' }, undefined, { priority: 1 }), 'n1');
    s.addPod(labelled('other', { app: 'other' }, undefined, { priority: 1 }), 'n1');
    const r = schedulePod(
      s,
      labelled('svc', { app: 'svc' }, requireApart(term('batch', HOST)), { priority: 100 }),
    );
    assert.equal(r.status, 'Unschedulable');
    if (r.status !== 'Unschedulable') return;
    assert.equal(r.nominatedNodeName, 'n1');
    assert.deepEqual(
      r.victims?.map((v) => v.key),
      ['default/batch'],
    );
  });

  test('preemption does not try to create a missing affinity match', () => {
    const s = new ClusterState();
    s.upsertNode(node('n1', { cpu: '8' }));
    s.addPod(labelled('low', { app: 'low' }, undefined, { priority: 1 }), 'n1');
    const r = schedulePod(s, labelled('p', { app: 'web' }, requireWith(term('db', HOST)), { priority: 100 }));
    assert.equal(
      message(r),
      `0/1 nodes are available: 1 ${ERR_REASON_AFFINITY_RULES}. no new claims to deallocate, ` +
        'preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
    );
  });
});

describe('InterPodAffinity score', () => {
  function scores(p: Pod, setup: (s: ClusterState) => void): number[] | undefined {
    const s = new ClusterState();
    s.upsertNode(node('n1', { cpu: '8' }, { labels: { [ZONE]: 'a' } }));
    s.upsertNode(node('n3', { cpu: '8' }, { labels: { [ZONE]: 'b' } }));
    s.upsertNode(node('n4', { cpu: '8' }, { labels: { [ZONE]: 'b' } }));
    setup(s);
    return interPodAffinityScores(s, preparePod(p), s.nodes);
  }
  const withDb = (s: ClusterState) => s.addPod(labelled('db', { app: 'db' }), 'n3');
  const preferred = (weight: number, anti = false): Affinity => {
    const terms = {
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight, podAffinityTerm: term('db', ZONE) }],
    };
    return anti ? { podAntiAffinity: terms } : { podAffinity: terms };
  };

  test('preferred affinity pulls towards the matching pod’s domain, anti-affinity pushes away', () => {
    assert.deepEqual(scores(labelled('p', { app: 'web' }, preferred(50)), withDb), [0, 100, 100]);
    assert.deepEqual(scores(labelled('p', { app: 'web' }, preferred(50, true)), withDb), [100, 0, 0]);
  });

  test('placed pods’ terms score the incoming pod: required affinity at weight 1, preferred at theirs', () => {
    const hard = (s: ClusterState) =>
      s.addPod(labelled('db', { app: 'db' }, requireWith(term('web', ZONE))), 'n3');
    assert.deepEqual(scores(labelled('p', { app: 'web' }), hard), [0, 100, 100]);
    const repel = (s: ClusterState) => {
      s.addPod(labelled('db', { app: 'db' }, preferred(10, true)), 'n1');
      s.addPod(
        labelled(
          'cache',
          { app: 'cache' },
          {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                { weight: 30, podAffinityTerm: term('db', HOST) },
              ],
            },
          },
        ),
        'n4',
      );
    };
    // The incoming db pod: zone a −10 (n1); host n4 −30. Min −30, max 0.
    assert.deepEqual(scores(labelled('p', { app: 'db' }), repel), [66, 100, 0]);
  });

  test('nothing to score when no term applies', () => {
    assert.equal(scores(labelled('p', { app: 'web' }), withDb), undefined);
  });
});
