/**
 * One round of the crash test of the SQLite store: random creates, updates and deletes of
 * ConfigMaps over HTTPS against a `troupe cluster` process on a data directory, a SIGKILL at a
 * random moment, a restart, and a check that every acknowledged write is there and nothing is
 * half there. Used by bench/persistence.ts (1,000 writes x 20) and by the test suite (smaller).
 *
 * Each name has at most one write in flight, so after the restart a name may hold exactly its
 * last acknowledged state or the state of the write in flight when the process died; every
 * stored value carries its own checksum, so a torn object would show.
 */
import { createHash } from 'node:crypto';
import { seededRandom } from '../test/support/random.ts';
import { createNamespace, Http, startClusterProcess } from './support.ts';

/** What a name holds: a value, or nothing (never created or deleted). */
type State = string | undefined;

export interface CrashRoundResult {
  attempted: number;
  acknowledged: number;
  /** Writes whose outcome the kill left unknown. */
  inFlight: number;
  /** Problems found; empty when the round passed. */
  violations: string[];
  /** Last resourceVersion acknowledged before the kill, and the first one written after. */
  rvBefore: number;
  rvAfter: number;
}

const NS = 'crash';

export async function crashRound(opts: {
  seed: number;
  writes: number;
  dataDir: string;
}): Promise<CrashRoundResult> {
  const random = seededRandom(opts.seed);
  const server = await startClusterProcess(['--no-data-plane'], { dataDir: opts.dataDir, durable: true });
  const exited = new Promise((r) => server.child.once('exit', r));
  const http = new Http(server);
  const acked = new Map<string, State>();
  const inFlight = new Map<string, State>();
  let attempted = 0;
  let acknowledged = 0;
  let rvBefore = 0;
  const killAfter = Math.floor(random() * opts.writes);
  let killed = false;
  await createNamespace(http, NS);
  const names = Array.from({ length: Math.max(20, Math.floor(opts.writes / 5)) }, (_, i) => `cm-${i}`);
  // Sizes from a few bytes to ~40 KB, so some objects span several SQLite pages.
  const value = () => 'x'.repeat(Math.floor(random() ** 3 * 40_000)) + String(random());
  const body = (name: string, v: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: NS },
    data: { v, sum: checksum(v) },
  });
  const kill = () => {
    if (killed) return;
    killed = true;
    server.child.kill('SIGKILL');
  };
  const one = async (): Promise<void> => {
    const free = names.filter((n) => !inFlight.has(n));
    const name = free[Math.floor(random() * free.length)]!;
    const current = acked.get(name);
    const v = value();
    let target: State;
    let send: Promise<{ status: number; text: string }>;
    const path = `/api/v1/namespaces/${NS}/configmaps`;
    if (current === undefined) {
      target = v;
      send = http.send('POST', path, body(name, v));
    } else if (random() < 0.2) {
      target = undefined;
      send = http.send('DELETE', `${path}/${name}`);
    } else {
      target = v;
      send = http.send('PUT', `${path}/${name}`, body(name, v));
    }
    attempted++;
    inFlight.set(name, target);
    let r: { status: number; text: string };
    try {
      r = await send;
    } catch {
      return; // killed while in flight: its outcome is unknown, and it stays in inFlight
    }
    if (r.status >= 300) throw new Error(`write ${name}: ${r.status} ${r.text.slice(0, 200)}`);
    inFlight.delete(name);
    acked.set(name, target);
    acknowledged++;
    const rv = Number(
      (JSON.parse(r.text) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion,
    );
    if (rv > rvBefore) rvBefore = rv;
    if (acknowledged >= killAfter) kill();
  };
  const worker = async () => {
    while (!killed && attempted < opts.writes) await one();
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  kill();
  await exited;
  http.close();

  const again = await startClusterProcess(['--no-data-plane'], { dataDir: opts.dataDir, durable: true });
  const http2 = new Http(again);
  const violations: string[] = [];
  let rvAfter = 0;
  try {
    const list = await http2.send('GET', `/api/v1/namespaces/${NS}/configmaps`);
    const items = (
      JSON.parse(list.text) as { items: { metadata: { name: string }; data?: Record<string, string> }[] }
    ).items;
    const found = new Map(items.map((i) => [i.metadata.name, i.data ?? {}]));
    for (const name of names) {
      const data = found.get(name);
      if (data && data.sum !== checksum(data.v ?? ''))
        violations.push(`${name}: half-written (checksum mismatch)`);
      const actual: State = data?.v;
      const allowed: State[] = [acked.get(name)];
      if (inFlight.has(name)) allowed.push(inFlight.get(name));
      if (!allowed.includes(actual)) {
        violations.push(
          `${name}: holds ${describe(actual)}, expected ${allowed.map(describe).join(' or ')} (acknowledged write lost or unacknowledged one invented)`,
        );
      }
    }
    const probe = await http2.send('POST', `/api/v1/namespaces/${NS}/configmaps`, body('after-restart', 'x'));
    rvAfter = Number(
      (JSON.parse(probe.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion,
    );
    if (!(rvAfter > rvBefore)) violations.push(`resourceVersion went back: ${rvAfter} after ${rvBefore}`);
  } finally {
    http2.close();
    await again.stop();
  }
  return { attempted, acknowledged, inFlight: inFlight.size, violations, rvBefore, rvAfter };
}

function checksum(v: string): string {
  return createHash('sha256').update(v).digest('hex').slice(0, 16);
}

function describe(s: State): string {
  return s === undefined ? 'nothing' : `a value of ${s.length} chars (${checksum(s)})`;
}
