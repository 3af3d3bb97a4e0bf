/**
 * The virtual clock through the real path: the embedded cluster and troupe's manager in one
 * process on one VirtualClock, talking over HTTPS with the official client, as `troupe
 * simulate` runs them. A simulated hour of a small cluster runs in a few wall seconds, in the
 * right order; the same seed gives the same events in the same order; a component that never
 * answers is named in a StallError instead of hanging the run.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { test } from 'node:test';
import type { BuiltManager } from '../../src/cli/manager.ts';
import type { KubeObject } from '../../src/cluster/apiserver/types.ts';
import { GVR } from '../../src/cluster/client.ts';
import { type EmbeddedCluster, startEmbeddedCluster } from '../../src/cluster/index.ts';
import { endSimulation, runUntil, StallError, startSimulation } from '../../src/lib/virtual-clock.ts';
import { startQuietManager } from '../support/in-process-manager.ts';

const MIN = 60_000;

type Obj = {
  metadata: { name?: string; namespace?: string; annotations?: Record<string, string> };
  status?: Record<string, unknown>;
};

const runFor = (duration: string) => ({ annotations: { 'troupe.dev/run-duration': duration } });
const container = [{ name: 'main', image: 'busybox' }];

function pod(name: string, duration: string, gated = false) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', ...runFor(duration) },
    spec: {
      restartPolicy: 'Never',
      containers: container,
      ...(gated ? { schedulingGates: [{ name: 'podsequence.example.com/sequence-gate' }] } : {}),
    },
  };
}

interface Simulation {
  start: number;
  /** `+<minutes> <kind> <name> <what>`: phases of pods, Job conditions, Events, in commit order. */
  trace: string[];
  wallMs: number;
}

/**
 * A small cluster's hour: bare pods with run durations, a Job of two sequential pods, a
 * CronJob every 15 minutes, and a PodSequence whose second tier waits 10 minutes.
 */
async function simulateHour(seed: number): Promise<Simulation> {
  const clock = startSimulation({ seed });
  let cluster: EmbeddedCluster | undefined;
  let built: BuiltManager | undefined;
  const trace: string[] = [];
  try {
    cluster = await startEmbeddedCluster({ clock, nodes: 2, port: 0 });
    const { client } = cluster;
    const start = clock.now();
    const at = () => `+${((clock.now() - start) / MIN).toFixed(2)}`;
    const phases = new Map<string, unknown>();
    client.watch(GVR.pods, (type, o) => {
      const p = o as Obj;
      const phase = type === 'DELETED' ? 'Deleted' : p.status?.phase;
      if (phases.get(p.metadata.name!) === phase) return;
      phases.set(p.metadata.name!, phase);
      trace.push(`${at()} Pod ${p.metadata.name} ${String(phase)}`);
    });
    client.watch(GVR.jobs, (_type, o) => {
      const j = o as Obj;
      const done = (j.status?.conditions as { type: string; status: string }[] | undefined)?.find(
        (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
      );
      const key = `job ${j.metadata.name}`;
      if (!done || phases.get(key)) return;
      phases.set(key, done.type);
      trace.push(`${at()} Job ${j.metadata.name} ${done.type}`);
    });
    client.watch(GVR.events, (type, o) => {
      const e = o as Obj & {
        reason?: string;
        regarding?: { name?: string };
        involvedObject?: { name?: string };
      };
      if (type !== 'ADDED') return;
      trace.push(`${at()} Event ${e.involvedObject?.name ?? e.regarding?.name} ${e.reason}`);
    });

    built = await startQuietManager(cluster.server.kubeconfig, clock, [
      '--controllers=podsequence,podgroup',
      '--log-level=error',
    ]);

    await client.create(GVR.pods, pod('short', '5m'));
    await client.create(GVR.pods, pod('long', '40m'));
    await client.create(GVR.jobs, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'train', namespace: 'default' },
      spec: {
        completions: 2,
        parallelism: 1,
        template: { metadata: runFor('10m'), spec: { restartPolicy: 'Never', containers: container } },
      },
    });
    await client.create(GVR.cronjobs, {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'tick', namespace: 'default' },
      spec: {
        schedule: '*/15 * * * *',
        jobTemplate: {
          spec: {
            template: { metadata: runFor('1m'), spec: { restartPolicy: 'Never', containers: container } },
          },
        },
      },
    });
    await client.create(GVR.pods, pod('db', '30m', true));
    await client.create(GVR.pods, pod('app', '5m', true));
    await built.manager.client.create({
      apiVersion: 'scheduling.example.com/v1alpha1',
      kind: 'PodSequence',
      metadata: { name: 'seq', namespace: 'default' },
      spec: {
        scope: 'Cluster',
        podGroups: [
          { name: 'db', pods: ['db'], waitDuration: '10m' },
          { name: 'app', pods: ['app'] },
        ],
      },
    });
    const run = await runUntil(clock, start + 60 * MIN, { stallMs: 20_000 });
    assert.equal(run.outcome, 'reached');
    assert.equal(clock.now(), start + 60 * MIN);
    return { start, trace, wallMs: run.wallMs };
  } finally {
    await built?.stop();
    await cluster?.stop();
    endSimulation();
  }
}

/** The minute (from the start) of the first trace line matching `re`. */
function minuteOf(trace: string[], re: RegExp): number {
  const line = trace.find((l) => re.test(l));
  assert.ok(line, `no trace line matches ${re}:\n${trace.join('\n')}`);
  return Number(line.slice(1, line.indexOf(' ')));
}

let first: Simulation | undefined;

test('a simulated hour of a small cluster runs on virtual time, in order', async (t) => {
  first = await simulateHour(7);
  const { trace } = first;
  t.diagnostic(
    `simulated 60 min in ${Math.round(first.wallMs)} ms of wall time (${trace.length} trace lines)`,
  );
  // Pods run for their durations, on virtual time.
  assert.equal(minuteOf(trace, /Pod short Succeeded/), 5);
  assert.equal(minuteOf(trace, /Pod long Succeeded/), 40);
  // The Job's two pods run one after the other: complete after 20 minutes.
  assert.equal(minuteOf(trace, /Job train Complete/), 20);
  // The CronJob starts a Job every 15 minutes, each done a minute later.
  const ticks = trace
    .filter((l) => / Job tick-\d+ Complete/.test(l))
    .map((l) => Number(l.slice(1, l.indexOf(' '))));
  assert.deepEqual(ticks.slice(0, 3), [16, 31, 46]);
  // The PodSequence releases its second tier 10 minutes after the first is Ready.
  const dbRunning = minuteOf(trace, /Pod db Running/);
  const appRunning = minuteOf(trace, /Pod app Running/);
  assert.ok(appRunning >= dbRunning + 10, `app ran at +${appRunning}, db at +${dbRunning}`);
  assert.ok(appRunning < dbRunning + 11, `app ran at +${appRunning}, db at +${dbRunning}`);
  assert.equal(minuteOf(trace, /Pod app Succeeded/), appRunning + 5);
});

test('the same seed gives the same events in the same order', async () => {
  assert.ok(first, 'the first simulation ran');
  const again = await simulateHour(7);
  assert.deepEqual(again.trace, first.trace);
});

test('a component that never answers is named in a StallError, not a hang', async () => {
  const clock = startSimulation({ seed: 1 });
  let cluster: EmbeddedCluster | undefined;
  // A webhook that accepts connections and never answers (not even the TLS handshake).
  const sockets: Socket[] = [];
  const silent: Server = createServer((socket) => sockets.push(socket));
  let outcome: unknown;
  let write: Promise<unknown> | undefined;
  try {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    cluster = await startEmbeddedCluster({ clock, nodes: 1, port: 0 });
    await cluster.client.create(
      { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' },
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'silent' },
        webhooks: [
          {
            name: 'silent.example.com',
            clientConfig: { url: `https://127.0.0.1:${port}/validate` },
            rules: [
              { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] },
            ],
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            timeoutSeconds: 30,
            failurePolicy: 'Ignore',
          },
        ],
      },
    );
    write = cluster.client
      .as('tester')
      .create(
        { group: '', version: 'v1', resource: 'configmaps' },
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'stuck', namespace: 'default' },
        },
      )
      .catch((err: unknown) => err);
    outcome = await runUntil(clock, clock.now() + 60 * MIN, { stallMs: 300 }).catch((err: unknown) => err);
  } finally {
    for (const socket of sockets) socket.destroy();
    silent.close();
    await write;
    await cluster?.stop();
    endSimulation();
  }
  assert.ok(outcome instanceof StallError, `expected a StallError, got ${String(outcome)}`);
  const names = outcome.holders.map(([who]) => who);
  assert.ok(names.includes('apiserver webhook silent.example.com'), names.join(', '));
  assert.ok(names.includes('tester'), names.join(', '));
  assert.match(outcome.message, /virtual clock stalled at 2026-01-01T00:00:00\.000Z/);
});

test('nodes renewing their Leases every 10 simulated minutes stay Ready for a simulated day; events: false writes no data-plane Events', async () => {
  const clock = startSimulation({ seed: 3 });
  let cluster: EmbeddedCluster | undefined;
  const notReady: string[] = [];
  let leases: { spec?: { leaseDurationSeconds?: number; renewTime?: string } }[] = [];
  let outcome: Awaited<ReturnType<typeof runUntil>> | undefined;
  let start = 0;
  let phase: unknown;
  let events = -1;
  try {
    cluster = await startEmbeddedCluster({
      clock,
      nodes: 3,
      port: 0,
      nodeLeaseRenewIntervalMs: 10 * MIN,
      events: false,
    });
    await cluster.client.create(GVR.pods, pod('batch', '5h'));
    start = clock.now();
    cluster.client.watch(GVR.nodes, (_type, n) => {
      const status = n.status as { conditions?: { type: string; status: string }[] } | undefined;
      const ready = status?.conditions?.find((c) => c.type === 'Ready');
      if (ready && ready.status !== 'True')
        notReady.push(`${n.metadata.name} at ${new Date(clock.now()).toISOString()}`);
    });
    outcome = await runUntil(clock, start + 24 * 60 * MIN, { stallMs: 20_000 });
    leases = cluster.client.list<KubeObject & (typeof leases)[number]>(GVR.leases, 'kube-node-lease');
    phase = cluster.client.get<KubeObject & Obj>(GVR.pods, 'default', 'batch')?.status?.phase;
    events = cluster.client.list(GVR.events).length;
  } finally {
    await cluster?.stop();
    endSimulation();
  }
  assert.equal(outcome?.outcome, 'reached');
  assert.deepEqual(notReady, []);
  assert.equal(phase, 'Succeeded');
  assert.equal(events, 0);
  assert.equal(leases.length, 3);
  for (const lease of leases) {
    assert.equal(lease.spec?.leaseDurationSeconds, 2400);
    const age = start + 24 * 60 * MIN - Date.parse(lease.spec?.renewTime ?? '');
    assert.ok(age >= 0 && age <= 11 * MIN, `renewed ${age / MIN} min before the end`);
  }
});
