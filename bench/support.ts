/**
 * Bench support: runs `troupe cluster` in a child process (so load generation and the
 * server do not share an event loop) and gives a keep-alive HTTP client for it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

const ROOT = resolve(import.meta.dirname, '..');

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

export async function startClusterProcess(args: string[] = []): Promise<BenchServer> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-bench-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the server process there.
  const prof = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  const child = spawn(
    process.execPath,
    [
      ...prof,
      ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
      '--max-old-space-size=4096',
      join(ROOT, 'src/cli/main.ts'),
      'cluster',
      '--port',
      '0',
      '--kubeconfig-out',
      kubeconfigPath,
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

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
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
