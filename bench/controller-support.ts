/**
 * Controller benches: runs a capability's controllers in a child process of their own (so the
 * controller shares an event loop with neither the API server nor the driver that plays the
 * kubelet), both sides of the IPC protocol such a child speaks, and the API server's request
 * counters the drivers attribute writes with.
 *
 * Driver side: `ControllerProcess.start({ module, controllers, crds, options }, kubeconfig)`
 * forks this file; `ControllerProcess.fork(script, ...)` forks a bench's own child (one that
 * needs hooks of its own, such as bench/podsequence-controller.ts). `idle()`, `report()`,
 * `ask()` and `stop()` talk to it over IPC.
 *
 * Child side (this file run as a script): installs the CRDs that `crds` (an export of
 * `module`) returns, waits until the API server serves them, starts a runtime Manager
 * (cluster-wide, silent, no probe server) with the controllers `controllers(options)`
 * returns, and serves the driver (`serveDriver`): says `ready`; on `idle` answers once every
 * controller's work queue has been empty with nothing in flight for a few checks in a row;
 * on `report` with its own request and reconcile counters and CPU time. Closing the IPC
 * channel stops it.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  type ControllerDefinition,
  type KubeObject,
  loadKubeConfig,
  Manager,
  silentLogger,
  sleep,
} from '../src/runtime/index.ts';
import { type BenchServer, cpuProfileFlags, type Http } from './support.ts';

// ---- driver side ------------------------------------------------------------------

/** What to run in the child: exports of one module. */
export interface ControllerSpec {
  /** Absolute path of the module (for example src/controllers/podgroup/index.ts). */
  module: string;
  /** Export called with `options`, returning ControllerDefinition[]. */
  controllers: string;
  /** Export called without arguments, returning the CRD manifests to install first. */
  crds?: string;
  options?: unknown;
}

export interface ControllerReport {
  type: 'report';
  /** `METHOD code` → requests the child sent, from its rest_client_requests_total. */
  requests: Record<string, number>;
  /** result → reconciles, from controller_runtime_reconcile_total. */
  reconciles: Record<string, number>;
  /** Seconds of CPU the child used so far. */
  cpuSeconds: number;
}

/** A message either way over the IPC channel: its type, and whatever that type carries. */
interface IpcMessage {
  type: string;
  [key: string]: unknown;
}

const SELF = fileURLToPath(import.meta.url);

export class ControllerProcess {
  readonly child: ChildProcess;

  private constructor(child: ChildProcess) {
    this.child = child;
  }

  /** Forks this file's child side with `spec` and resolves once its manager has synced. */
  static async start(spec: ControllerSpec, kubeconfig: string): Promise<ControllerProcess> {
    const p = ControllerProcess.fork(
      SELF,
      [kubeconfig, JSON.stringify(spec)],
      [
        // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the controller there too.
        ...cpuProfileFlags(),
        '--max-old-space-size=4096',
      ],
    );
    await p.next('ready');
    return p;
  }

  /** Forks `script` with an IPC channel; what it says first (`ready`, a report) is the caller's to await. */
  static fork(script: string, args: string[], execArgv: string[]): ControllerProcess {
    return new ControllerProcess(
      fork(script, args, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
  }

  /** The child's next message of `type`; rejects if it exits first. */
  next<T>(type: string): Promise<T> {
    const child = this.child;
    return new Promise((resolve, reject) => {
      const onMessage = (m: { type?: string }) => {
        if (m.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m as T);
      };
      const onExit = (code: number | null) => reject(new Error(`controller exited with ${code}`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  }

  /** Sends `message` and resolves with the child's answer, a message of type `answer`. */
  async ask<T>(message: IpcMessage, answer: string = message.type): Promise<T> {
    const answered = this.next<T>(answer);
    this.child.send(message);
    return answered;
  }

  async idle(): Promise<void> {
    await this.ask({ type: 'idle' });
  }

  report(): Promise<ControllerReport> {
    return this.ask<ControllerReport>({ type: 'report' });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    if (this.child.connected) this.child.disconnect();
    else this.child.kill('SIGTERM');
    await exited;
  }
}

/** Sum of a report's counters whose key passes `pred`. */
export function sumOf(counters: Record<string, number>, pred: (key: string) => boolean = () => true): number {
  return Object.entries(counters).reduce((s, [k, v]) => s + (pred(k) ? v : 0), 0);
}

/** `verb resource[/subresource] code` → count, from the API server's apiserver_request_total. */
export type RequestCounts = Map<string, number>;

/**
 * Reads apiserver_request_total from /metrics. The exposition format is simple enough and
 * only this one counter is needed, so a regular expression does rather than a parser
 * dependency.
 */
export async function requestCounts(http: Http): Promise<RequestCounts> {
  const r = await http.send('GET', '/metrics');
  if (r.status !== 200) throw new Error(`/metrics: ${r.status}`);
  const out: RequestCounts = new Map();
  for (const m of r.text.matchAll(/^apiserver_request_total\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    const res = labels.subresource ? `${labels.resource}/${labels.subresource}` : labels.resource;
    out.set(`${labels.verb} ${res} ${labels.code}`, Number(m[2]));
  }
  return out;
}

/** Requests counted between two readings whose key matches `verb resource code` (a `*` part matches anything). */
export function countBetween(before: RequestCounts, after: RequestCounts, pattern: string): number {
  const want = pattern.split(' ');
  let n = 0;
  for (const [key, v] of after) {
    const parts = key.split(' ');
    if (want.every((w, i) => w === '*' || w === parts[i])) n += v - (before.get(key) ?? 0);
  }
  return n;
}

/**
 * Writes to pods themselves (not their status) between two readings, by HTTP code, less the
 * floor's release or label PATCHes (`floorPatches`: code → count, which the driver counts
 * itself). The drivers write pods only by CREATE and through the status subresource
 * otherwise, so what is left is the controller's. Verbs as kube-apiserver counts them.
 */
export function controllerPodWrites(
  before: RequestCounts,
  after: RequestCounts,
  floorPatches: Map<number, number>,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const [key, v] of after) {
    const [verb, resource, code] = key.split(' ');
    if (resource !== 'pods' || !['PATCH', 'UPDATE', 'APPLY', 'DELETE'].includes(verb!)) continue;
    let n = v - (before.get(key) ?? 0);
    if (verb === 'PATCH') n -= floorPatches.get(Number(code)) ?? 0;
    if (n !== 0) out.set(code!, (out.get(code!) ?? 0) + n);
  }
  return out;
}

/** The API server's request counters, the controller's own report and the server's CPU, read once the controller is idle. */
export interface Totals {
  requests: RequestCounts;
  controller: ControllerReport;
  serverCpu: number;
}

export async function totals(http: Http, server: BenchServer, ctrl: ControllerProcess): Promise<Totals> {
  await ctrl.idle();
  return {
    requests: await requestCounts(http),
    controller: await ctrl.report(),
    serverCpu: await server.cpuSeconds(),
  };
}

// ---- child side ---------------------------------------------------------------------

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
}

interface CrdManifest extends KubeObject {
  spec: { group: string; names: { kind: string }; versions: { name: string; served?: boolean }[] };
}

/**
 * Resolves once the work queues of the controllers `names` have been empty, with nothing in
 * flight, for a few checks in a row; with `countDelayed`, keys waiting out a delay are work too.
 */
export async function untilIdle(
  mgr: Manager,
  names: string[],
  { countDelayed }: { countDelayed: boolean },
): Promise<void> {
  const queues = names.map((name) => mgr.getController(name)?.workQueue);
  let quiet = 0;
  while (quiet < 3) {
    await sleep(10);
    const busy = queues.some(
      (q) => !q || q.len() > 0 || q.inFlight() > 0 || (countDelayed && q.delayedLen() > 0),
    );
    quiet = busy ? 0 : quiet + 1;
  }
}

/** This process's own request and reconcile counters and CPU time, from the manager's metrics. */
export async function ownReport(mgr: Manager): Promise<ControllerReport> {
  const values = async (name: string): Promise<MetricValue[]> => {
    const m = mgr.metrics.registry.getSingleMetric(name);
    return m ? ((await m.get()).values as MetricValue[]) : [];
  };
  const requests: Record<string, number> = {};
  for (const v of await values('rest_client_requests_total')) {
    const key = `${v.labels.method} ${v.labels.code}`;
    requests[key] = (requests[key] ?? 0) + v.value;
  }
  const reconciles: Record<string, number> = {};
  for (const v of await values('controller_runtime_reconcile_total')) {
    const key = String(v.labels.result);
    reconciles[key] = (reconciles[key] ?? 0) + v.value;
  }
  const cpu = process.cpuUsage();
  return { type: 'report', requests, reconciles, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

/**
 * The child's side once its manager is running: answers each message whose type `answers`
 * has with what that returns, says `ready`, and when the driver closes the channel stops the
 * manager and exits.
 */
export async function serveDriver(
  mgr: Manager,
  answers: Record<string, (msg: IpcMessage) => object | Promise<object>>,
): Promise<void> {
  process.on('message', (msg: IpcMessage) => {
    const answer = Object.hasOwn(answers, msg.type) ? answers[msg.type] : undefined;
    if (answer) void Promise.resolve(answer(msg)).then((m) => process.send!(m));
  });
  process.send!({ type: 'ready' });
  await stopOnDisconnect(mgr);
}

/** The driver ends a child by closing the IPC channel. */
export async function stopOnDisconnect(mgr: Manager): Promise<void> {
  await new Promise<void>((resolve) => process.once('disconnect', resolve));
  await mgr.stop();
  process.exit(0);
}

async function runChild(kubeconfig: string, spec: ControllerSpec): Promise<void> {
  const mod = (await import(pathToFileURL(spec.module).href)) as Record<string, unknown>;
  const { kubeConfig } = loadKubeConfig({ kubeconfig });
  const mgr = new Manager({ kubeConfig, healthProbeAddress: false, logger: silentLogger() });
  if (spec.crds) {
    const crds = (mod[spec.crds] as () => CrdManifest[])();
    for (const crd of crds) await mgr.client.apply(crd, { force: true });
    // The informers need every kind served when the manager starts.
    const deadline = Date.now() + 30_000;
    for (const crd of crds) {
      const version = crd.spec.versions.find((v) => v.served !== false)!.name;
      const kind = { apiVersion: `${crd.spec.group}/${version}`, kind: crd.spec.names.kind };
      for (;;) {
        try {
          await mgr.client.list(kind, { limit: 1 });
          break;
        } catch (err) {
          if (Date.now() > deadline) throw err;
          await sleep(50);
        }
      }
    }
  }
  const defs = (mod[spec.controllers] as (o: unknown) => ControllerDefinition[])(spec.options);
  for (const d of defs) mgr.add(d);
  await mgr.start();
  await mgr.cache.waitForSync();
  const names = defs.map((d) => d.name);
  await serveDriver(mgr, {
    idle: async () => {
      await untilIdle(mgr, names, { countDelayed: true });
      return { type: 'idle' };
    },
    report: () => ownReport(mgr),
  });
}

if (process.argv[1] === SELF) {
  const [kubeconfig, specJson] = process.argv.slice(2);
  if (!kubeconfig || !specJson || !process.send) {
    throw new Error('controller-support.ts is forked by ControllerProcess.start, not run by hand');
  }
  await runChild(kubeconfig, JSON.parse(specJson) as ControllerSpec);
}
