/**
 * Bench support: runs `troupe cluster` in a child process (so load generation and the
 * server do not share an event loop), gives a keep-alive HTTP client for it and the small
 * helpers the drivers share (flags, percentiles, bounded concurrency, in-process batches).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import pLimit from 'p-limit';
import { parse } from 'yaml';

const ROOT = resolve(import.meta.dirname, '..');

/** The value after `--name` on the command line, or `fallback`. */
export function flag(name: string, fallback: string): string {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
}

/** Node flags for a child process: BENCH_CPU_PROF=<dir> has it write a V8 CPU profile there. */
export function cpuProfileFlags(): string[] {
  return process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
}

export interface BenchServer {
  url: string;
  token: string;
  ca: string;
  kubeconfigPath: string;
  child: ChildProcess;
  stop(): Promise<void>;
  rssBytes(): Promise<number>;
  cpuSeconds(): Promise<number>;
}

export interface BenchClusterOptions {
  /** Keep the state in SQLite in this directory (default: a fresh temporary one, memory only). */
  dataDir?: string;
  /** Store on disk (the default of `troupe cluster`) rather than `--ephemeral`. */
  durable?: boolean;
  /** Run another checkout's `troupe cluster` (a tree before a change, for same-run comparisons). */
  root?: string;
  /** A command the server runs under, with its arguments (`valgrind --tool=callgrind …`). */
  wrapper?: string[];
  /** Node flags for the server before the script (`--single-threaded`). */
  nodeFlags?: string[];
}

export async function startClusterProcess(
  args: string[] = [],
  opts: BenchClusterOptions = {},
): Promise<BenchServer> {
  const dir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'troupe-bench-')));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const root = opts.root ? resolve(opts.root) : ROOT;
  const hasDataDir = existsSync(join(root, 'src/cluster/state'));
  const wrapper = opts.wrapper ?? [];
  const child = spawn(
    wrapper[0] ?? process.execPath,
    [
      ...(wrapper.length > 0 ? [...wrapper.slice(1), process.execPath] : []),
      ...(opts.nodeFlags ?? []),
      ...cpuProfileFlags(),
      ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
      '--max-old-space-size=4096',
      join(root, 'src/cli/main.ts'),
      'cluster',
      '--port',
      '0',
      '--kubeconfig-out',
      kubeconfigPath,
      // Each bench server its own directory: never the checkout's .troupe/ of a running instance.
      // A tree from before the data directory existed keeps its cluster in memory anyway.
      ...(hasDataDir ? ['--data-dir', dir, ...(opts.durable ? [] : ['--ephemeral'])] : []),
      ...args,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Press Ctrl+C')) res();
    });
    child.once('exit', (code) => rej(new Error(`cluster exited early with ${code}`)));
  });
  const kc = parse(await readFile(kubeconfigPath, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { token: string } }[];
  };
  const pid = child.pid!;
  const stat = async () => (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return {
    url: kc.clusters[0]!.cluster.server,
    token: kc.users[0]!.user.token,
    ca: Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString(),
    kubeconfigPath,
    child,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
    rssBytes: async () => {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
    },
    cpuSeconds: async () => {
      const f = await stat();
      // utime and stime (fields 14 and 15 of /proc/pid/stat, counted after the comm field).
      return (Number(f[11]) + Number(f[12])) / 100;
    },
  };
}

export class Http {
  private readonly agent: Agent;
  private readonly base: URL;
  private readonly token: string;
  private readonly ca: string;
  constructor(server: { url: string; token: string; ca: string }) {
    this.base = new URL(server.url);
    this.token = server.token;
    this.ca = server.ca;
    this.agent = new Agent({ keepAlive: true, maxSockets: 64, ca: server.ca });
  }

  send(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<{ status: number; text: string }> {
    return new Promise((res, rej) => {
      const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const r = request(
        {
          host: this.base.hostname,
          port: this.base.port,
          path,
          method,
          agent: this.agent,
          headers: {
            Authorization: `Bearer ${this.token}`,
            'Content-Type': contentType,
            Accept: 'application/json',
          },
        },
        (resp) => {
          const chunks: Buffer[] = [];
          resp.on('data', (c: Buffer) => chunks.push(c));
          resp.on('end', () => res({ status: resp.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
          resp.on('error', rej);
        },
      );
      r.on('error', rej);
      r.end(payload);
    });
  }

  /** Opens a watch and calls back per line; returns a stop function. */
  watch(path: string, onLine: (line: string) => void): () => void {
    const r = request(
      {
        host: this.base.hostname,
        port: this.base.port,
        path,
        method: 'GET',
        agent: false,
        ca: this.ca,
        headers: { Authorization: `Bearer ${this.token}` },
      },
      (resp) => {
        let buf = '';
        resp.setEncoding('utf8');
        resp.on('data', (d: string) => {
          buf += d;
          for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
            onLine(buf.slice(0, i));
            buf = buf.slice(i + 1);
          }
        });
        resp.on('error', () => {});
      },
    );
    r.on('error', () => {});
    r.end();
    return () => r.destroy();
  }

  close(): void {
    this.agent.destroy();
  }
}

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
  await pLimit(limit).map(items, fn);
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

/**
 * Calls `create(i)` for i in [0, count), `batch` calls at a time, yielding to the event loop
 * between batches as objects arriving over HTTP would (for an in-process client).
 */
export async function createInBatches(
  count: number,
  batch: number,
  create: (i: number) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < count; i += batch) {
    const calls: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(count, i + batch); j++) calls.push(create(j));
    await Promise.all(calls);
    await yieldLoop();
  }
}

/**
 * Exits the process with `report()` once `progress()` has not moved for `ms`: a stall (pods
 * that cannot fit, say) is reported rather than waited on forever. Returns the stop function.
 */
export function exitOnStall(progress: () => number, ms: number, report: () => void): () => void {
  let last = -1;
  const timer = setInterval(() => {
    const now = progress();
    if (now !== last) {
      last = now;
      return;
    }
    report();
    process.exit(1);
  }, ms);
  return () => clearInterval(timer);
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** p50, p99 and count of unsorted samples. */
export function percentiles(samples: number[]): { p50: number; p99: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), n: s.length };
}

export function machine(): string {
  const c = cpus();
  return `${c.length} × ${c[0]?.model ?? 'unknown CPU'}, Node ${process.version}`;
}

export function pod(name: string, labels: Record<string, string> = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'bench', ...labels } },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'registry.k8s.io/pause:3.10',
          resources: { requests: { cpu: '10m', memory: '16Mi' } },
        },
      ],
    },
  };
}
