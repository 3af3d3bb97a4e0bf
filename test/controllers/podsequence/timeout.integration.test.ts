/**
 * A group's `timeout` through the controller: the embedded cluster and troupe's manager on
 * one VirtualClock (as `troupe simulate` runs them), so the five-minute timeouts pass in
 * wall seconds. Two sequences whose first group can never become Ready (its pod asks for a
 * node label no node has): under `timeoutPolicy: Fail` the sequence turns Failed and its next
 * group stays gated; under `Continue` the next group is released anyway. Either way the
 * controller wakes at the deadline (it requeued for it: nothing else changes), and the
 * GroupTimeout Warning is written through the API.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PodSequence } from '../../../src/apis/scheduling.example.com/v1alpha1.ts';
import type { BuiltManager } from '../../../src/cli/manager.ts';
import { GVR } from '../../../src/cluster/client.ts';
import { type EmbeddedCluster, startEmbeddedCluster } from '../../../src/cluster/index.ts';
import type { Pod } from '../../../src/controllers/podsequence/objects.ts';
import { endSimulation, runUntil, startSimulation } from '../../../src/lib/virtual-clock.ts';
import { startQuietManager } from '../../support/in-process-manager.ts';
import { PODSEQ_GVR } from './harness.ts';

const MIN = 60_000;
const GATE = 'podsequence.example.com/sequence-gate';

/** A gated pod; `stuck` pods ask for a node label no node has, so they never run. */
function pod(name: string, stuck = false) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      schedulingGates: [{ name: GATE }],
      containers: [{ name: 'main', image: 'busybox' }],
      ...(stuck ? { nodeSelector: { 'example.com/no-such-node': 'true' } } : {}),
    },
  };
}

function sequence(name: string, first: string, second: string, timeoutPolicy: 'Fail' | 'Continue') {
  return {
    apiVersion: 'scheduling.example.com/v1alpha1',
    kind: 'PodSequence',
    metadata: { name, namespace: 'default' },
    spec: {
      podGroups: [
        { name: 'Warmup', pods: [first], timeout: '5m', timeoutPolicy },
        { name: 'Main', pods: [second] },
      ],
    },
  };
}

interface Seen {
  /** Virtual time each GroupTimeout event was created, by the sequence it is about. */
  timeoutEvents: Map<string, { at: number; type: string; message: string }>;
  /** Virtual time each pod first ran. */
  running: Map<string, number>;
  fail?: PodSequence;
  cont?: PodSequence;
  pods: Map<string, Pod>;
}

test('a group not Ready within its timeout: Fail fails the sequence, Continue releases the next group, at the deadline', async (t) => {
  const clock = startSimulation({ seed: 3 });
  let cluster: EmbeddedCluster | undefined;
  let built: BuiltManager | undefined;
  const seen: Seen = { timeoutEvents: new Map(), running: new Map(), pods: new Map() };
  let outcome: string | undefined;
  try {
    cluster = await startEmbeddedCluster({ clock, nodes: 1, port: 0 });
    const { client } = cluster;
    client.watch(GVR.events, (type, o) => {
      const e = o as {
        reason?: string;
        type?: string;
        message?: string;
        note?: string;
        involvedObject?: { name?: string };
        regarding?: { name?: string };
      };
      const about = e.involvedObject?.name ?? e.regarding?.name ?? '';
      if (type === 'ADDED' && e.reason === 'GroupTimeout' && !seen.timeoutEvents.has(about))
        seen.timeoutEvents.set(about, {
          at: clock.now(),
          type: e.type ?? '',
          message: e.message ?? e.note ?? '',
        });
    });
    client.watch(GVR.pods, (_type, o) => {
      const p = o as Pod;
      if (p.status?.phase === 'Running' && !seen.running.has(p.metadata.name!))
        seen.running.set(p.metadata.name!, clock.now());
    });
    built = await startQuietManager(cluster.server.kubeconfig, clock, [
      '--controllers=podsequence',
      '--log-level=error',
    ]);

    const start = clock.now();
    for (const p of [pod('warm-f', true), pod('main-f'), pod('warm-c', true), pod('main-c')])
      await client.create(GVR.pods, p);
    await built.manager.client.create(sequence('timeout-fail', 'warm-f', 'main-f', 'Fail'));
    await built.manager.client.create(sequence('timeout-continue', 'warm-c', 'main-c', 'Continue'));
    outcome = (await runUntil(clock, start + 10 * MIN, { stallMs: 20_000 })).outcome;
    seen.fail = client.get(PODSEQ_GVR, 'default', 'timeout-fail') as PodSequence;
    seen.cont = client.get(PODSEQ_GVR, 'default', 'timeout-continue') as PodSequence;
    for (const name of ['warm-f', 'main-f', 'warm-c', 'main-c'])
      seen.pods.set(name, client.get(GVR.pods, 'default', name) as Pod);
  } finally {
    await built?.stop();
    await cluster?.stop();
    endSimulation();
  }
  assert.equal(outcome, 'reached');
  const gates = (name: string) => (seen.pods.get(name)?.spec?.schedulingGates ?? []).map((g) => g.name);
  // The deadline: the sequence's creation (to the second, as the API server records it) + 5m.
  const deadline = (seq: PodSequence | undefined) => Date.parse(seq!.metadata.creationTimestamp!) + 5 * MIN;

  // Fail: Failed at the deadline, the next group still gated.
  const failEvent = seen.timeoutEvents.get('timeout-fail');
  assert.ok(failEvent, 'a GroupTimeout event for timeout-fail');
  assert.equal(failEvent.type, 'Warning');
  assert.match(failEvent.message, /^Group 'Warmup' \(1\/2\) was not Ready within its timeout of 5m0s/);
  const failLate = failEvent.at - deadline(seen.fail);
  assert.ok(failLate >= 0 && failLate < 2_000, `woken at the deadline (${failLate} ms after it)`);
  assert.equal(seen.fail?.status?.phase, 'Failed');
  assert.match(
    seen.fail?.status?.message ?? '',
    /^Group 'Warmup' \(1\/2\) was not Ready within its timeout of 5m0s/,
  );
  assert.deepEqual(gates('main-f'), [GATE], 'nothing more is released');
  assert.equal(seen.running.has('main-f'), false);

  // Continue: the next group released at the deadline and runs; the group is reported.
  const contEvent = seen.timeoutEvents.get('timeout-continue');
  assert.ok(contEvent, 'a GroupTimeout event for timeout-continue');
  assert.equal(contEvent.type, 'Warning');
  assert.match(
    contEvent.message,
    /^Group 'Warmup' \(1\/2\) was not Ready within its timeout of 5m0s; releasing group 'Main' \(2\/2\) anyway \(timeoutPolicy Continue\)/,
  );
  const contLate = contEvent.at - deadline(seen.cont);
  t.diagnostic(`GroupTimeout events ${failLate} ms and ${contLate} ms after the deadlines`);
  assert.ok(contLate >= 0 && contLate < 2_000, `woken at the deadline (${contLate} ms after it)`);
  assert.notEqual(seen.cont?.status?.phase, 'Failed');
  assert.deepEqual(seen.cont?.status?.timedOutGroups, ['Warmup']);
  assert.deepEqual(gates('main-c'), [], 'the next group was released');
  const ran = seen.running.get('main-c');
  assert.ok(ran !== undefined && ran >= deadline(seen.cont), 'main-c ran, after the deadline');
  assert.deepEqual(gates('warm-c'), [], 'the timed-out group itself was released at the start');
});
