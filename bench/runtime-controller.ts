/**
 * The controller under test for bench/runtime.ts, run in its own process (forked with an
 * IPC channel) so its RSS is the controller's alone and its event loop is not the driver's.
 *
 *   runtime-controller.ts rss <kubeconfig> <default|compact|slim>
 *     A Manager with one controller on Pods. Reports memory once the cache has synced
 *     and every initial key has been reconciled, after forced GCs.
 *   runtime-controller.ts latency <kubeconfig> <namespace>
 *     A Manager scoped to <namespace> with a controller that acks ConfigMaps labelled
 *     bench=1: annotation bench/seq=N gets bench/ack=N. Reports, on request, the time from
 *     its informer handing it the event to the ack PATCH being answered.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import {
  type ControllerDefinition,
  type KindRef,
  type KubeObject,
  loadKubeConfig,
  Manager,
  type Transform,
} from '../src/runtime/index.ts';

export interface MemoryReport {
  type: 'memory';
  objects: number;
  syncMs: number;
  reconciled: number;
  rss: number;
  peakRss: number;
  /** Resident pages of mapped files (the node binary, shared libraries). */
  fileRss: number;
  /** Resident pages of glibc's brk heap: native allocations (buffers, V8 side tables). */
  mallocRss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  baselineHeapUsed: number;
  baselineRss: number;
  avgCachedJsonBytes: number;
  /** V8 heap spaces: name → [committed, used] bytes. */
  spaces: Record<string, [number, number]>;
  snapshot?: string;
}

export interface LatencyReport {
  type: 'latency';
  /** Informer handler call → ack PATCH answered, ms, one per acked seq. */
  inProcess: number[];
}

type Message = { type: 'ready' } | MemoryReport | LatencyReport;

const POD: KindRef = { apiVersion: 'v1', kind: 'Pod' };
const CONFIG_MAP: KindRef = { apiVersion: 'v1', kind: 'ConfigMap' };

const send = (m: Message) => process.send!(m);

function gcHard(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  // Several passes: the first can leave weak/finalizable garbage for the next one.
  for (let i = 0; i < 4; i++) gc();
}

function peakRss(): number {
  const status = readFileSync('/proc/self/status', 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

function smapsBreakdown(): { fileRss: number; mallocRss: number } {
  let fileRss = 0;
  let mallocRss = 0;
  let name = '';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (header) {
      // A non-zero inode means a mapped file.
      name = header[1] !== '0' ? 'file' : header[2] === '[heap]' ? 'malloc' : '';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss) continue;
    if (name === 'file') fileRss += Number(rss[1]) * 1024;
    else if (name === 'malloc') mallocRss += Number(rss[1]) * 1024;
  }
  return { fileRss, mallocRss };
}

interface PodShape extends KubeObject {
  spec?: { nodeName?: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

/**
 * What the bench's pod controller reads: identity and the metadata every controller may
 * need (labels, annotations, owners, finalizers, deletion), spec.nodeName, status.phase
 * and the type/status of each condition. Its `slim` transform keeps exactly that, which
 * is what a per-kind transform in a real controller would do.
 */
export const slimPod: Transform = (obj) => {
  const pod = obj as PodShape;
  const m = pod.metadata;
  const meta: KubeObject['metadata'] = {
    name: m.name,
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
  };
  if (m.labels) meta.labels = m.labels;
  if (m.annotations) meta.annotations = m.annotations;
  if (m.ownerReferences) meta.ownerReferences = m.ownerReferences;
  if (m.finalizers) meta.finalizers = m.finalizers;
  if (m.deletionTimestamp) meta.deletionTimestamp = m.deletionTimestamp;
  const slim: PodShape = { apiVersion: pod.apiVersion, kind: pod.kind, metadata: meta };
  if (pod.spec?.nodeName) slim.spec = { nodeName: pod.spec.nodeName };
  const st = pod.status;
  if (st) {
    slim.status = { phase: st.phase };
    if (st.conditions) {
      slim.status.conditions = st.conditions.map((c) => ({ type: c.type, status: c.status }));
    }
  }
  return slim;
};

// Values repeated across objects (images, tolerations, condition reasons, namespaces) are
// shared instead of held once per object. Bounded, so a stream of unique values cannot
// grow it without limit: once full, new values are simply not interned.
const INTERN_MAX = 50_000;
const INTERN_MAX_LENGTH = 256;
const interned = new Map<string, string>();

function intern(value: string): string {
  if (value.length > INTERN_MAX_LENGTH) return value;
  const hit = interned.get(value);
  if (hit !== undefined) return hit;
  if (interned.size < INTERN_MAX) interned.set(value, value);
  return value;
}

function internAll(value: unknown): unknown {
  if (typeof value === 'string') return intern(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = internAll(value[i]);
  } else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    // Assigning a string over a string keeps the object's shape (and fast properties).
    for (const k in o) o[k] = internAll(o[k]);
  }
  return value;
}

/** Per-object unique values, not worth a pool entry. */
const UNIQUE_META = new Set(['name', 'uid', 'resourceVersion', 'creationTimestamp', 'generateName']);

/**
 * Keeps every field the default transform keeps, but (1) rebuilds metadata as a fresh
 * object: the default transform's `delete metadata.managedFields` switches V8 to
 * dictionary-mode properties for it (~380 B more per object), and (2) interns repeated
 * string values. What the runtime's own default transform could do for every kind.
 */
export const compactObject: Transform = (obj) => {
  const meta: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj.metadata)) {
    if (v === undefined || k === 'managedFields') continue;
    meta[k] = UNIQUE_META.has(k) ? v : internAll(v);
  }
  obj.metadata = meta as KubeObject['metadata'];
  for (const k in obj) if (k !== 'metadata') (obj as Record<string, unknown>)[k] = internAll(obj[k]);
  return obj;
};

export type PodTransform = 'default' | 'compact' | 'slim';

function podController(transform: PodTransform, counts: { reconciled: number }): ControllerDefinition {
  const fn = transform === 'slim' ? slimPod : transform === 'compact' ? compactObject : undefined;
  return {
    name: 'bench-pods',
    for: POD,
    transforms: fn ? [{ kind: POD, fn }] : undefined,
    maxConcurrentReconciles: 4,
    async reconcile(_key, ctx) {
      // Reads what slimPod keeps, so both variants do the same work.
      const pod = await ctx.cache.get<PodShape>(POD, ctx.name, ctx.namespace);
      if (!pod) return;
      const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status;
      if (pod.metadata.labels?.app === 'bench' && (pod.spec?.nodeName || scheduled || pod.status?.phase)) {
        counts.reconciled++;
      }
    },
  };
}

async function runRss(kubeconfig: string, transform: PodTransform): Promise<void> {
  gcHard();
  const baselineHeapUsed = process.memoryUsage().heapUsed;
  const baselineRss = process.memoryUsage().rss;
  const { kubeConfig } = loadKubeConfig({ kubeconfig });
  const mgr = new Manager({ kubeConfig, healthProbeAddress: false });
  const counts = { reconciled: 0 };
  mgr.add(podController(transform, counts));
  const t0 = performance.now();
  await mgr.start();
  await mgr.cache.waitForSync();
  const syncMs = performance.now() - t0;
  const informer = await mgr.cache.informerFor(POD);
  const runner = mgr.getController('bench-pods')!;
  // Steady state: every key the initial list enqueued has been reconciled.
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const q = runner.workQueue;
      if (mgr.running && q && q.len() === 0 && q.inFlight() === 0 && q.delayedLen() === 0) {
        clearInterval(timer);
        resolve();
      }
    }, 50);
  });
  const settle = Number(process.env.BENCH_SETTLE_MS ?? 0);
  if (settle) await new Promise((r) => setTimeout(r, settle));
  gcHard();
  const mem = process.memoryUsage();
  let jsonBytes = 0;
  let sampled = 0;
  for (const obj of informer.store.values()) {
    jsonBytes += JSON.stringify(obj).length;
    if (++sampled === 1000) break;
  }
  let snapshot: string | undefined;
  const dir = process.env.BENCH_HEAP_SNAPSHOT;
  if (dir)
    snapshot = writeHeapSnapshot(join(dir, `controller-${transform}-${informer.store.size}.heapsnapshot`));
  send({
    type: 'memory',
    objects: informer.store.size,
    syncMs,
    reconciled: counts.reconciled,
    rss: mem.rss,
    peakRss: peakRss(),
    ...smapsBreakdown(),
    heapUsed: mem.heapUsed,
    heapTotal: mem.heapTotal,
    external: mem.external,
    baselineHeapUsed,
    baselineRss,
    avgCachedJsonBytes: sampled ? jsonBytes / sampled : 0,
    spaces: Object.fromEntries(
      getHeapSpaceStatistics().map((s) => [s.space_name, [s.physical_space_size, s.space_used_size]]),
    ),
    snapshot,
  });
  await stopOnDisconnect(mgr);
}

async function runLatency(kubeconfig: string, namespace: string): Promise<void> {
  const { kubeConfig } = loadKubeConfig({ kubeconfig });
  const mgr = new Manager({ kubeConfig, namespace, healthProbeAddress: false });
  const observed = new Map<string, number>();
  const inProcess: number[] = [];
  // Registered before the controller's own handler, so it runs first for each event.
  const informer = await mgr.cache.informerFor(CONFIG_MAP);
  informer.addHandler({
    update: (_old, obj) => {
      const seq = obj.metadata.annotations?.['bench/seq'];
      if (seq && !observed.has(seq) && obj.metadata.annotations?.['bench/ack'] !== seq) {
        observed.set(seq, performance.now());
      }
    },
  });
  mgr.add({
    name: 'bench-ack',
    for: CONFIG_MAP,
    predicates: [(e) => e.obj.metadata.labels?.bench === '1'],
    async reconcile(_key, ctx) {
      const cm = await ctx.cache.get(CONFIG_MAP, ctx.name, ctx.namespace);
      const seq = cm?.metadata.annotations?.['bench/seq'];
      if (!cm || !seq || cm.metadata.annotations?.['bench/ack'] === seq) return;
      await ctx.client.mergePatch(cm, { metadata: { annotations: { 'bench/ack': seq } } });
      const seen = observed.get(seq);
      if (seen !== undefined) inProcess.push(performance.now() - seen);
      observed.delete(seq);
    },
  });
  await mgr.start();
  await mgr.cache.waitForSync();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (mgr.running) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  process.on('message', (m: { type?: string }) => {
    if (m.type === 'report') send({ type: 'latency', inProcess: inProcess.splice(0) });
  });
  send({ type: 'ready' });
  await stopOnDisconnect(mgr);
}

/** The driver ends the run by closing the IPC channel. */
async function stopOnDisconnect(mgr: Manager): Promise<void> {
  await new Promise<void>((resolve) => process.once('disconnect', resolve));
  await mgr.stop();
  process.exit(0);
}

const [mode, kubeconfig, arg] = process.argv.slice(2);
if (!kubeconfig || !arg) throw new Error('usage: runtime-controller.ts rss|latency <kubeconfig> <arg>');
if (mode === 'rss') {
  if (arg !== 'default' && arg !== 'compact' && arg !== 'slim') throw new Error(`unknown transform ${arg}`);
  await runRss(kubeconfig, arg);
} else if (mode === 'latency') await runLatency(kubeconfig, arg);
else throw new Error(`unknown mode ${mode}`);
