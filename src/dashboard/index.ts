/**
 * The live dashboard: a read-only web page served next to the manager, built from the
 * manager's Cache alone (what any Kubernetes client could see), pushed to the browser over
 * server-sent events whenever the cluster changes.
 *
 *   const dash = await startDashboard({ manager, address: '127.0.0.1:0' });
 *   console.log(`dashboard: ${dash.url}`);   // carries the token
 *   ...
 *   await dash.stop();
 */

import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { Cache, KubeObject, Logger, RestClient, RestMapper } from '../runtime/index.ts';
import { loadAssets } from './assets.ts';
import { SnapshotHub } from './hub.ts';
import { type DashboardTable, type WatchedKind, watchedKindOf } from './kinds.ts';
import { DashboardServer } from './server.ts';
import { buildSnapshot } from './snapshot.ts';
import { DashboardSource } from './source.ts';

export type { DashboardTable } from './kinds.ts';
export type { Snapshot } from './view-model.ts';

export interface DashboardOptions {
  /** The manager whose cache, REST client and mapper the dashboard reads through (a Manager fits). */
  manager: { cache: Cache; rest: RestClient; mapper: RestMapper; log: Logger };
  /** `host:port`, `[v6]:port` or `:port` (every interface). Default `127.0.0.1:0` (loopback, any free port). */
  address?: string;
  /** The access token; a random one when absent. */
  token?: string;
  logger?: Logger;
  /** Shortest time between two pushes (ms), default 250. */
  minIntervalMs?: number;
  /**
   * The capabilities' tables (their `troupe status` sections; the CLI passes them), shown
   * when the page has no section of its own for them, and the CRDs serving their kinds.
   */
  tables?: readonly DashboardTable[];
  crds?: readonly KubeObject[];
}

export interface DashboardHandle {
  /** Where to open the page, token included. */
  url: string;
  /** The same without the token. */
  baseUrl: string;
  host: string;
  port: number;
  token: string;
  stop(): Promise<void>;
}

/** Splits a bind address. An empty host means every interface. */
export function parseAddress(address: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(address.trim()) ?? /^()()(\d+)$/.exec(address.trim());
  if (!m) throw new Error(`--dashboard-address: "${address}" is not host:port`);
  const port = Number(m[3]);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--dashboard-address: bad port in "${address}"`);
  return { host: m[1] ?? m[2] ?? '', port };
}

function urlHost(host: string): string {
  if (host === '' || host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return isIP(host) === 6 ? `[${host}]` : host;
}

export async function startDashboard(opts: DashboardOptions): Promise<DashboardHandle> {
  const log = (opts.logger ?? opts.manager.log).child({ component: 'dashboard' });
  const { host, port } = parseAddress(opts.address ?? '127.0.0.1:0');
  const token = opts.token || randomBytes(24).toString('base64url');
  const assets = await loadAssets();
  const tables: DashboardTable[] = [];
  const extraKinds: WatchedKind[] = [];
  for (const t of opts.tables ?? []) {
    const kind = watchedKindOf(t.kind, opts.crds ?? []);
    if (!kind) {
      log.warn(
        { table: t.key, kind: t.kind.kind },
        'dashboard: no CRD serves the kind of this table; not shown',
      );
      continue;
    }
    tables.push(t);
    extraKinds.push(kind);
  }
  const hub = new SnapshotHub(() => buildSnapshot(source.observed(), new Date(), tables), {
    minIntervalMs: opts.minIntervalMs,
  });
  const source = new DashboardSource({
    cache: opts.manager.cache,
    rest: opts.manager.rest,
    mapper: opts.manager.mapper,
    log,
    onChange: () => hub.invalidate(),
    extraKinds,
  });
  const server = new DashboardServer({ host, port, token, assets, hub, log });
  await server.listen();
  // Kinds are discovered in the background: the page shows them as they become readable.
  source.start().catch((err) => log.error({ err }, 'dashboard: could not follow the cluster'));
  const baseUrl = `http://${urlHost(host)}:${server.port}/`;
  log.info({ url: baseUrl }, 'dashboard serving');
  return {
    url: `${baseUrl}?token=${encodeURIComponent(token)}`,
    baseUrl,
    host,
    port: server.port,
    token,
    async stop() {
      source.stop();
      hub.close();
      await server.close();
    },
  };
}
