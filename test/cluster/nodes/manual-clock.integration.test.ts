import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { GVR } from '../../../src/cluster/client.ts';
import {
  type NodesHandle,
  type NodesOptions,
  parseNodeConfig,
  startNodes,
} from '../../../src/cluster/nodes/index.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { waitFor } from '../../support/wait.ts';
import { condition, getPod, type Harness, podObj, startHarness } from '../scheduler/harness.ts';

const CONFIG = parseNodeConfig(`
pools:
  - name: cpu
    namePrefix: node
    count: 2
    capacity: {cpu: 16, memory: 64Gi}
`);

const taintIds = (n: KubeObject | undefined) =>
  ((n?.spec as { taints?: { key: string; effect: string }[] } | undefined)?.taints ?? []).map(
    (t) => `${t.key}:${t.effect}`,
  );

/**
 * The simulated nodes' timers (lease renewal, health monitor, taint eviction) run on the
 * injected Clock: on a ManualClock nothing happens until the test moves time. A file of its
 * own, so the other node tests' real-time runs never share a process with a stopped clock.
 */
describe('simulated nodes on a ManualClock', () => {
  let h: Harness;
  let nodes: NodesHandle | undefined;

  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await nodes?.stop();
    nodes = undefined;
    await h.close();
  });

  const start = async (opts: NodesOptions) => {
    nodes = await startNodes(h.client.as('system:node-simulator'), CONFIG, opts);
    return nodes;
  };
  const node = (name: string) => h.client.get(GVR.nodes, '', name);

  test('a lease is renewed only when the clock passes the renew interval', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    await start({ clock });
    const renewTime = () =>
      (h.client.get(GVR.leases, 'kube-node-lease', 'node-1')!.spec as { renewTime: string }).renewTime;
    assert.equal(renewTime(), '2030-01-01T00:00:00.000000Z');
    // The renew interval is 10 s less up to 4 % jitter, checked once a second: the first
    // renewal falls on the tick at 10 s.
    clock.advance(10_000);
    await waitFor("lease renewed at the clock's time", () => renewTime() === '2030-01-01T00:00:10.000000Z');
  });

  test('taint eviction fires when the clock passes tolerationSeconds', async () => {
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    await start({ clock });
    const minute = [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 },
    ];
    await h.client.create(GVR.pods, podObj('minute', {}, { nodeName: 'node-0', tolerations: minute }));
    const t0 = clock.now();
    await nodes!.setReady('node-0', false);
    await waitFor('not-ready taint', () =>
      taintIds(node('node-0')).includes('node.kubernetes.io/not-ready:NoExecute'),
    );
    assert.equal(getPod(h.client, 'minute')!.metadata.deletionTimestamp, undefined);
    // Time moves only here, a second per poll, up to twice the toleration.
    const evicted = await waitFor('evicted after 60 s of clock time', () => {
      const p = getPod(h.client, 'minute');
      if (p?.metadata.deletionTimestamp) return p;
      if (clock.now() < t0 + 120_000) clock.advance(1000);
      return undefined;
    });
    assert.equal(condition(evicted, 'DisruptionTarget')?.reason, 'DeletionByTaintManager');
    const seenAt = (clock.now() - t0) / 1000;
    assert.ok(seenAt >= 60, `eviction seen at ${seenAt} s of clock time, before the toleration ran out`);
  });

  test('a node nobody heartbeats goes Unknown after the grace period; a KWOK-annotated one is adopted and outlives it', async () => {
    // On the real clock at a high time scale, a stall of the event loop longer than the
    // scaled grace period could let the monitor see the adopted node's lease stale; here
    // time moves a second per poll, and each renewal is written before the next second.
    const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
    await start({ clock });
    const t0 = clock.now();
    await h.client.create(GVR.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'orphan' } });
    await h.client.create(GVR.nodes, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'kwok-node-0', annotations: { 'kwok.x-k8s.io/node': 'fake' } },
    });
    const tick = () => {
      if (clock.now() < Date.parse('2030-01-01T00:10:00Z')) clock.advance(1000);
    };
    const adopted = await waitFor('adopted node Ready', () => {
      const cur = node('kwok-node-0');
      if (condition(cur, 'Ready')?.status === 'True') return cur;
      tick();
      return undefined;
    });
    assert.equal((adopted.status as { capacity: Record<string, string> }).capacity.cpu, '1k');
    await waitFor('adopted lease', () => h.client.get(GVR.leases, 'kube-node-lease', 'kwok-node-0'));
    await waitFor('orphan Unknown and tainted', () => {
      const cur = node('orphan');
      if (
        condition(cur, 'Ready')?.status === 'Unknown' &&
        taintIds(cur).includes('node.kubernetes.io/unreachable:NoExecute')
      )
        return true;
      tick();
      return undefined;
    });
    assert.ok(
      clock.now() - t0 >= 50_000,
      `Unknown ${(clock.now() - t0) / 1000} s of clock time after it appeared, before the 50 s grace period`,
    );
    // The adopted node outlives the grace period because its lease is renewed.
    assert.equal(condition(node('kwok-node-0'), 'Ready')?.status, 'True');
  });
});
