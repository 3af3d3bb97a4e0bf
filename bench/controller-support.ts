/**
 * Controller benches: runs a capability's controllers in a child process of their own (so the
 * controller shares an event loop with neither the API server nor the driver that plays the
 * kubelet), plus the small driver-side helpers every controller bench needs.
 *
 * Driver side: `ControllerProcess.start({ module, controllers, crds, options }, kubeconfig)`
 * forks this file; `idle()`, `report()` and `stop()` talk to it over IPC.
 *
 * Child side (this file run as a script): installs the CRDs that `crds` (an export of
 * `module`) returns, waits until the API server serves them, starts a runtime Manager
 * (cluster-wide, silent, no probe server) with the controllers `controllers(options)`
 * returns, and says `ready`. On `idle` it answers once every controller's work queue has
 * been empty with nothing in flight for a few checks in a row; on `report` with its own
 * request and reconcile counters and CPU time. Closing the IPC channel stops it.
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
import type { Http } from './support.ts';

// ---- driver side ------------------------------------------------------------------

export async function expectStatus(
  p: Promise<{ status: number; text: string }>,
  ok: number[],
  what: string,
): Promise<{ status: number; text: string }> {
  const r = await p;
  if (!ok.includes(r.status)) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 300)}`);
  return r;
}

/** Runs `fn` over `items` with at most `limit` calls in flight. */
export async function eachLimited<T>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export async function createNamespace(http: Http, name: string): Promise<void> {
  await expectStatus(
    http.send('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
    [201],
    `namespace ${name}`,
  );
}

/** The resourceVersion of a list of `path`: a watch from it sees everything created after. */
export async function listRv(http: Http, path: string): Promise<string> {
  const r = await expectStatus(http.send('GET', `${path}?limit=1`), [200], `list ${path}`);
  return (JSON.parse(r.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
}

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

const SELF = fileURLToPath(import.meta.url);

export class ControllerProcess {
  readonly child: ChildProcess;

  private constructor(child: ChildProcess) {
    this.child = child;
  }

  /** Forks the child and resolves once its manager has synced. */
  static async start(spec: ControllerSpec, kubeconfig: string): Promise<ControllerProcess> {
    // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the controller there too.
    const prof = process.env.BENCH_CPU_PROF
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
      : [];
    const child = fork(SELF, [kubeconfig, JSON.stringify(spec)], {
      execArgv: [...prof, '--max-old-space-size=4096'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const p = new ControllerProcess(child);
    await p.next('ready');
    return p;
  }

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

  async idle(): Promise<void> {
    const answered = this.next('idle');
    this.child.send({ type: 'idle' });
    await answered;
  }

  async report(): Promise<ControllerReport> {
    const answered = this.next<ControllerReport>('report');
    this.child.send({ type: 'report' });
    return answered;
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

// ---- child side ---------------------------------------------------------------------

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
}

interface CrdManifest extends KubeObject {
  spec: { group: string; names: { kind: string }; versions: { name: string; served?: boolean }[] };
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

  const values = async (name: string): Promise<MetricValue[]> => {
    const m = mgr.metrics.registry.getSingleMetric(name);
    return m ? ((await m.get()).values as MetricValue[]) : [];
  };
  const idle = async () => {
    const queues = defs.map((d) => mgr.getController(d.name)?.workQueue);
    let quiet = 0;
    while (quiet < 3) {
      await sleep(10);
      const busy = queues.some((q) => !q || q.len() > 0 || q.inFlight() > 0 || q.delayedLen() > 0);
      quiet = busy ? 0 : quiet + 1;
    }
  };
  process.on('message', (msg: { type?: string }) => {
    if (msg.type === 'idle') {
      void idle().then(() => process.send!({ type: 'idle' }));
    } else if (msg.type === 'report') {
      void (async () => {
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
        const report: ControllerReport = {
          type: 'report',
          requests,
          reconciles,
          cpuSeconds: (cpu.user + cpu.system) / 1e6,
        };
        process.send!(report);
      })();
    }
  });
  process.send!({ type: 'ready' });
  await new Promise<void>((resolve) => process.once('disconnect', resolve));
  await mgr.stop();
  process.exit(0);
}

if (process.argv[1] === SELF) {
  const [kubeconfig, specJson] = process.argv.slice(2);
  if (!kubeconfig || !specJson || !process.send) {
    throw new Error('controller-support.ts is forked by ControllerProcess.start, not run by hand');
  }
  await runChild(kubeconfig, JSON.parse(specJson) as ControllerSpec);
}
