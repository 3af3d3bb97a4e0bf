import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ClusterState,
  ERR_REASON_SPREAD,
  ERR_REASON_SPREAD_MISSING_LABEL,
  filterTopologySpread,
  preparePod,
  schedulePod,
  spreadPreFilter,
  topologySpreadScores,
} from '../../../src/cluster/scheduler/core/index.ts';
import type { Pod, PodSpec, TopologySpreadConstraint } from '../../../src/kube/builtin.ts';
import { labelled, message, node, pod, ZONE, zones } from './fixtures.ts';

function zoneSpread(extra: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint {
  return {
    maxSkew: 1,
    topologyKey: ZONE,
    whenUnsatisfiable: 'DoNotSchedule',
    labelSelector: { matchLabels: { app: 'web' } },
    ...extra,
  };
}

function web(name: string, extra: Record<string, string> = {}): Pod {
  return labelled(name, { app: 'web', ...extra });
}

/** Filter verdict per node: the reason, or 'ok'. */
function verdicts(s: ClusterState, p: Pod): Record<string, string> {
  const st = spreadPreFilter(s, preparePod(p));
  assert.ok(st, 'the pod has DoNotSchedule constraints');
  const out: Record<string, string> = {};
  for (const ni of s.nodes) out[ni.name] = filterTopologySpread(st, ni)?.reasons[0] ?? 'ok';
  return out;
}

describe('PodTopologySpread filter', () => {
  test('a domain may exceed the global minimum by at most maxSkew, counting the pod itself', () => {
    const s = zones();
    s.addPod(web('w1'), 'n1');
    s.addPod(web('w2'), 'n2');
    s.addPod(web('w3'), 'n3');
    s.addPod(labelled('other', { app: 'db' }), 'n4');
    assert.deepEqual(
      verdicts(s, labelled('new', { app: 'web' }, { topologySpreadConstraints: [zoneSpread()] })),
      {
        n1: ERR_REASON_SPREAD,
        n2: ERR_REASON_SPREAD,
        n3: 'ok',
        n4: 'ok',
      },
    );
    // A pod the selector does not match does not add to its domain's count.
    const outsider = labelled('x', { app: 'db' }, { topologySpreadConstraints: [zoneSpread()] });
    assert.deepEqual(Object.values(verdicts(s, outsider)), ['ok', 'ok', 'ok', 'ok']);
  });

  test('nodes without the topology key are unresolvable, with the missing-label wording', () => {
    const s = zones();
    s.upsertNode(node('bare', { cpu: '8' }));
    const p = labelled('p', { app: 'web' }, { topologySpreadConstraints: [zoneSpread()] });
    const st = spreadPreFilter(s, preparePod(p))!;
    assert.deepEqual(filterTopologySpread(st, s.getNode('bare')!), {
      code: 'UnschedulableAndUnresolvable',
      plugin: 'PodTopologySpread',
      reasons: [ERR_REASON_SPREAD_MISSING_LABEL],
    });
    assert.equal(ERR_REASON_SPREAD_MISSING_LABEL, `${ERR_REASON_SPREAD} (missing required label)`);
    assert.equal(filterTopologySpread(st, s.getNode('n1')!), undefined);
  });

  test('minDomains: fewer eligible domains than asked makes the global minimum 0', () => {
    const s = zones();
    s.addPod(web('w1'), 'n1');
    s.addPod(web('w2'), 'n3');
    const two = labelled('p', { app: 'web' }, { topologySpreadConstraints: [zoneSpread({ minDomains: 2 })] });
    assert.deepEqual(Object.values(verdicts(s, two)), ['ok', 'ok', 'ok', 'ok']);
    const three = labelled(
      'p',
      { app: 'web' },
      { topologySpreadConstraints: [zoneSpread({ minDomains: 3 })] },
    );
    assert.deepEqual(Object.values(verdicts(s, three)), Array(4).fill(ERR_REASON_SPREAD));
    assert.equal(
      message(schedulePod(s, three)),
      `0/4 nodes are available: 4 ${ERR_REASON_SPREAD}. no new claims to deallocate, ` +
        'preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.',
    );
  });

  test('nodeAffinityPolicy: Honor (default) leaves domains the pod cannot use out of the minimum', () => {
    const s = new ClusterState();
    s.upsertNode(node('hdd', { cpu: '8' }, { labels: { [ZONE]: 'a', disk: 'hdd' } }));
    s.upsertNode(node('ssd-b', { cpu: '8' }, { labels: { [ZONE]: 'b', disk: 'ssd' } }));
    s.upsertNode(node('ssd-c', { cpu: '8' }, { labels: { [ZONE]: 'c', disk: 'ssd' } }));
    s.addPod(web('w1'), 'ssd-b');
    s.addPod(web('w2'), 'ssd-c');
    const spec = (policy?: string): Partial<PodSpec> => ({
      nodeSelector: { disk: 'ssd' },
      topologySpreadConstraints: [zoneSpread(policy ? { nodeAffinityPolicy: policy } : {})],
    });
    assert.equal(schedulePod(s, labelled('honor', { app: 'web' }, spec())).status, 'Scheduled');
    const ignore = verdicts(s, labelled('ignore', { app: 'web' }, spec('Ignore')));
    assert.equal(ignore['ssd-b'], ERR_REASON_SPREAD, 'empty zone a now sets the minimum to 0');
    assert.equal(ignore['ssd-c'], ERR_REASON_SPREAD);
  });

  test('nodeTaintsPolicy: Honor leaves domains of untolerated tainted nodes out; Ignore (default) keeps them', () => {
    const s = new ClusterState();
    s.upsertNode(
      node(
        'tainted',
        { cpu: '8' },
        { labels: { [ZONE]: 'a' }, taints: [{ key: 'x', effect: 'NoSchedule' }] },
      ),
    );
    s.upsertNode(node('b', { cpu: '8' }, { labels: { [ZONE]: 'b' } }));
    s.upsertNode(node('c', { cpu: '8' }, { labels: { [ZONE]: 'c' } }));
    s.addPod(web('w1'), 'b');
    s.addPod(web('w2'), 'c');
    const ignore = verdicts(s, labelled('p', { app: 'web' }, { topologySpreadConstraints: [zoneSpread()] }));
    assert.deepEqual([ignore.b, ignore.c], [ERR_REASON_SPREAD, ERR_REASON_SPREAD]);
    const honor = verdicts(
      s,
      labelled(
        'p',
        { app: 'web' },
        { topologySpreadConstraints: [zoneSpread({ nodeTaintsPolicy: 'Honor' })] },
      ),
    );
    assert.deepEqual([honor.b, honor.c], ['ok', 'ok']);
  });

  test('matchLabelKeys narrows the count to pods sharing the incoming pod’s values', () => {
    const s = zones();
    s.addPod(web('old-1', { 'pod-template-hash': 'v1' }), 'n1');
    s.addPod(web('old-2', { 'pod-template-hash': 'v1' }), 'n2');
    const p = (keys?: string[]) =>
      labelled(
        'new',
        { app: 'web', 'pod-template-hash': 'v2' },
        { topologySpreadConstraints: [zoneSpread(keys ? { matchLabelKeys: keys } : {})] },
      );
    assert.equal(verdicts(s, p()).n1, ERR_REASON_SPREAD);
    assert.deepEqual(Object.values(verdicts(s, p(['pod-template-hash']))), ['ok', 'ok', 'ok', 'ok']);
  });

  test('terminating pods and pods of other namespaces do not count', () => {
    const s = zones();
    s.addPod(web('leaving', {}), 'n1');
    s.addPod(labelled('leaving-2', { app: 'web' }, {}, { deletionTimestamp: '2025-01-01T00:00:00Z' }), 'n1');
    s.addPod(labelled('elsewhere', { app: 'web' }, {}, { namespace: 'other' }), 'n1');
    const v = verdicts(s, labelled('p', { app: 'web' }, { topologySpreadConstraints: [zoneSpread()] }));
    // Only one pod counts in zone a: 1 + 1 − 0 = 2 > 1 there, zone b is empty.
    assert.deepEqual(v, { n1: ERR_REASON_SPREAD, n2: ERR_REASON_SPREAD, n3: 'ok', n4: 'ok' });
    s.removePod(s.nodes[0]!.pods.keys().next().value!);
    assert.deepEqual(
      Object.values(
        verdicts(s, labelled('p', { app: 'web' }, { topologySpreadConstraints: [zoneSpread()] })),
      ),
      ['ok', 'ok', 'ok', 'ok'],
    );
  });

  test('pods the scheduler assumed count: a batch spreads evenly over the zones', () => {
    const s = zones();
    const placed: Record<string, number> = { a: 0, b: 0 };
    for (let i = 0; i < 6; i++) {
      const p = labelled(`w${i}`, { app: 'web' }, { topologySpreadConstraints: [zoneSpread()] });
      const r = schedulePod(s, p);
      assert.equal(r.status, 'Scheduled');
      if (r.status !== 'Scheduled') return;
      s.addPod(p, r.nodeName);
      placed[s.getNode(r.nodeName)!.labels[ZONE]!]!++;
      assert.ok(Math.abs(placed.a! - placed.b!) <= 1);
    }
    assert.deepEqual(placed, { a: 3, b: 3 });
  });

  test('preemption: evicting lower-priority pods can fix the skew', () => {
    const s = new ClusterState();
    s.upsertNode(node('n1', { cpu: '4' }));
    s.upsertNode(node('n2', { cpu: '1' }));
    s.addPod(labelled('low-1', { app: 'web' }, { priority: 1 }), 'n1');
    s.addPod(labelled('low-2', { app: 'web' }, { priority: 1 }), 'n1');
    s.addPod(pod('full', { cpu: '1' }, { priority: 1000 }), 'n2');
    const p = labelled(
      'urgent',
      { app: 'web' },
      { priority: 100, topologySpreadConstraints: [zoneSpread({ topologyKey: 'kubernetes.io/hostname' })] },
      {},
      { cpu: '500m' },
    );
    const r = schedulePod(s, p);
    assert.equal(r.status, 'Unschedulable');
    if (r.status !== 'Unschedulable') return;
    assert.equal(r.nominatedNodeName, 'n1');
    assert.deepEqual(r.victims?.map((v) => v.key).sort(), ['default/low-1', 'default/low-2']);
    assert.equal(r.error.message, `0/2 nodes are available: 1 Insufficient cpu, 1 ${ERR_REASON_SPREAD}.`);
    // The dry run restored the counts it borrowed: a second attempt decides the same.
    const again = schedulePod(s, p);
    assert.equal(again.status === 'Unschedulable' && again.victims?.length, 2);
  });
});

describe('PodTopologySpread score', () => {
  /** n1 and n2 in zone a, n3 in zone b; two web pods on n1. */
  function scored(p: Pod, setup?: (s: ClusterState) => void): number[] | undefined {
    const s = new ClusterState();
    s.upsertNode(node('n1', { cpu: '8' }, { labels: { [ZONE]: 'a' } }));
    s.upsertNode(node('n2', { cpu: '8' }, { labels: { [ZONE]: 'a' } }));
    s.upsertNode(node('n3', { cpu: '8' }, { labels: { [ZONE]: 'b' } }));
    s.addPod(web('w1'), 'n1');
    s.addPod(web('w2'), 'n1');
    setup?.(s);
    return topologySpreadScores(s, preparePod(p), s.nodes);
  }
  const soft = (key: string): Partial<PodSpec> => ({
    topologySpreadConstraints: [zoneSpread({ topologyKey: key, whenUnsatisfiable: 'ScheduleAnyway' })],
  });

  test('ScheduleAnyway over zones: counts weighted by log(domains + 2), emptiest domain 100', () => {
    // Raw: zone a = round(2 × ln 4) = 3 for n1 and n2, zone b = 0; normalised 100 × (3 + 0 − raw) / 3.
    assert.deepEqual(scored(labelled('p', { app: 'web' }, soft(ZONE))), [0, 0, 100]);
  });

  test('ScheduleAnyway over hostnames counts per node', () => {
    assert.deepEqual(scored(labelled('p', { app: 'web' }, soft('kubernetes.io/hostname'))), [0, 100, 100]);
  });

  test('DoNotSchedule constraints and pods with no owner or Service have nothing to score', () => {
    assert.equal(
      scored(labelled('p', { app: 'web' }, { topologySpreadConstraints: [zoneSpread()] })),
      undefined,
    );
    assert.equal(scored(labelled('p', { app: 'web' })), undefined);
  });

  test('system defaults for a ReplicaSet’s pod: hostname (maxSkew 3) and zone (maxSkew 5)', () => {
    const owned = labelled(
      'p',
      { app: 'web' },
      {},
      {
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'rs-uid', controller: true },
        ],
      },
    );
    // Unknown owner: no selector, no default constraints.
    assert.equal(scored(owned), undefined);
    // hostname weight ln 5, zone weight ln 4: raw n1 = 2·ln5 + 2 + 2·ln4 + 4 ≈ 12, n2 ≈ 9, n3 = 6.
    const withRs = (s: ClusterState) =>
      s.workloads.setOwner('ReplicaSet', 'default', 'web-1', { matchLabels: { app: 'web' } });
    assert.deepEqual(scored(owned, withRs), [50, 75, 100]);
    // A Service selecting the pod gives the same selector without an owner.
    const svc = (s: ClusterState) => s.workloads.setService('default', 'web', { app: 'web' });
    assert.deepEqual(scored(labelled('p', { app: 'web' }), svc), [50, 75, 100]);
    // Constraints of its own replace the defaults.
    assert.deepEqual(scored({ ...owned, spec: { ...owned.spec, ...soft(ZONE) } }, withRs), [0, 0, 100]);
  });

  test('system defaults still spread by hostname over nodes without a zone label', () => {
    const s = new ClusterState();
    for (const n of ['n1', 'n2']) s.upsertNode(node(n, { cpu: '8' }));
    s.addPod(web('w1'), 'n1');
    s.workloads.setService('default', 'web', { app: 'web' });
    const scores = topologySpreadScores(s, preparePod(labelled('p', { app: 'web' })), s.nodes);
    assert.ok(scores && scores[1]! > scores[0]!, `${scores}`);
  });
});
