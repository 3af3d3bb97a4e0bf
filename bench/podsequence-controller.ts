/**
 * The controller under test for bench/podsequence.ts, in its own process (forked with an
 * IPC channel) so that it shares an event loop with neither the API server nor the driver
 * that plays the kubelet.
 *
 *   podsequence-controller.ts <kubeconfig>
 *
 * Installs the PodSequence CRD, starts a runtime Manager (cluster-wide, as `troupe run`
 * does) with `podSequenceControllers()` in lite mode with default options, and says
 * `ready`. On `{ type: 'idle' }` it answers `idle` once its work queue is empty with
 * nothing in flight. On `{ type: 'report' }` it answers with its own count of the requests
 * it sent (by method and code) and of reconciles, which the driver uses to check the API
 * server's figures. On `{ type: 'trace', samples }` it answers where its time went between
 * each sample's Ready event and its release patch (see Trace). The driver ends it by
 * closing the IPC channel.
 */
import { ensurePodSequenceCrd, podSequenceControllers } from '../src/controllers/podsequence/index.ts';
import { Client, type KubeObject, loadKubeConfig, Manager, silentLogger } from '../src/runtime/index.ts';
import { ownReport, serveDriver, untilIdle } from './controller-support.ts';

/** A sample: the pod whose Ready should release `released`. */
export interface TraceSample {
  ready: string;
  released: string;
}

/**
 * Per sample, ms in the controller's clock: `queued` Ready event in its informer → the
 * reconcile that acts on it starts (waiting for the reconcile in flight, then the work
 * queue); `decide` reconcile start → the release patch of `released` sent (cache reads,
 * other sequences, membership, the pure decision, patches sent before it); `patch` that
 * patch's round trip; `statusInFlight` whether a status write of this controller was in
 * flight at the Ready event (the API server busy with it).
 */
export interface Trace {
  type: 'trace';
  queued: number[];
  decide: number[];
  patch: number[];
  statusInFlight: number;
  missing: number;
}

const [kubeconfig] = process.argv.slice(2);
if (!kubeconfig) throw new Error('usage: podsequence-controller.ts <kubeconfig>');
const { kubeConfig } = loadKubeConfig({ kubeconfig });
const mgr = new Manager({ kubeConfig, healthProbeAddress: false, logger: silentLogger() });
await ensurePodSequenceCrd(mgr.client);
const defs = podSequenceControllers();
for (const c of defs) mgr.add(c);

// ---- tracing: timestamps of the events and calls the controller's reconcile makes ----
const readyEvents = new Map<string, number>();
const reconcileStarts: number[] = [];
const patches = new Map<string, [number, number]>();
const statusWrites: [number, number][] = [];
interface PodLike extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}
const isReady = (p: PodLike | undefined) =>
  !!p?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
// Registered before the controller's own handler, so it sees each event first.
(await mgr.cache.informerFor<PodLike>({ apiVersion: 'v1', kind: 'Pod' })).addHandler({
  update: (old, obj) => {
    if (isReady(obj) && !isReady(old)) readyEvents.set(obj.metadata.name ?? '', performance.now());
  },
});
// The reconcile's first step is reading the sequence from the cache.
const cache = mgr.cache;
const get = cache.get.bind(cache);
cache.get = ((kind, name, namespace, opts) => {
  if (kind.kind === 'PodSequence') reconcileStarts.push(performance.now());
  return get(kind, name, namespace, opts);
}) as typeof cache.get;
// Reconciles get a client derived per leadership term (withFence): patch the class.
const proto = Client.prototype;
const timed = <A extends unknown[], R>(
  fn: (this: Client, ...a: A) => Promise<R>,
  record: (t: [number, number], ...a: A) => void,
) =>
  async function (this: Client, ...a: A): Promise<R> {
    const t0 = performance.now();
    try {
      return await fn.apply(this, a);
    } finally {
      record([t0, performance.now()], ...a);
    }
  };
proto.mergePatch = timed(proto.mergePatch, (t, ref) => {
  if (ref.kind === 'Pod') patches.set(ref.metadata.name ?? '', t);
}) as typeof proto.mergePatch;
proto.patchStatus = timed(proto.patchStatus, (t) => statusWrites.push(t)) as typeof proto.patchStatus;

function trace(samples: TraceSample[]): Trace {
  const out: Trace = {
    type: 'trace',
    queued: [],
    decide: [],
    patch: [],
    statusInFlight: 0,
    missing: 0,
  };
  // Status writes are recorded when they end; order them by start.
  const statuses = [...statusWrites].sort((a, b) => a[0] - b[0]);
  for (const s of samples) {
    const e = readyEvents.get(s.ready);
    const p = patches.get(s.released);
    if (e === undefined || p === undefined) {
      out.missing++;
      continue;
    }
    // The reconcile that released the pod is the last to start before its patch was sent.
    let start: number | undefined;
    for (let i = reconcileStarts.length - 1; i >= 0; i--) {
      if (reconcileStarts[i]! <= p[0]) {
        start = reconcileStarts[i];
        break;
      }
    }
    if (start === undefined || start < e) {
      out.missing++;
      continue;
    }
    out.queued.push(start - e);
    out.decide.push(p[0] - start);
    out.patch.push(p[1] - p[0]);
    if (statuses.some(([a, b]) => a <= e && e < b)) out.statusInFlight++;
  }
  return out;
}

await mgr.start();
await mgr.cache.waitForSync();

const names = defs.map((d) => d.name);
await serveDriver(mgr, {
  // Delayed keys are left out: a status write put off by statusUpdateIntervalMs may land
  // during the next tier, as it would on a cluster.
  idle: async () => {
    await untilIdle(mgr, names, { countDelayed: false });
    return { type: 'idle' };
  },
  report: () => ownReport(mgr),
  trace: (msg) => trace(msg.samples as TraceSample[]),
});
