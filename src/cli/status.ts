/**
 * `troupe status`: one screen of what troupe manages in a cluster (pod groups, sequences,
 * AppWrappers, offloaded Jobs: each capability's status sections), read through the API. Kinds whose CRD is not installed are
 * left out; failing to reach or authenticate to the cluster exits 1.
 */

import { Command, Option } from 'commander';
import { capabilities } from '../controllers/capabilities.ts';
import type { StatusRow, StatusView } from '../controllers/capability.ts';
import {
  Client,
  isNoKindMatch,
  isNotFound,
  type KindRef,
  type KubeObject,
  loadKubeConfig,
} from '../runtime/index.ts';
import {
  CliError,
  connectionProblem,
  EXIT_FAILURE,
  EXIT_USAGE,
  type Painter,
  painterFor,
  runReporting,
  table,
  usageErrorsExit2,
} from './output.ts';

export interface ClusterSession {
  client: Client;
  server: string;
  /** The kubeconfig context's namespace, if it names one. */
  namespace: string | undefined;
  close(): Promise<void>;
}

/**
 * A client for one command, checked against the server (GET /version) so that an unreachable
 * cluster or rejected credentials become one clear CliError instead of a stack trace.
 */
export async function openCluster(kubeconfig: string | undefined): Promise<ClusterSession> {
  let loaded: ReturnType<typeof loadKubeConfig>;
  try {
    loaded = loadKubeConfig({ kubeconfig });
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err), EXIT_FAILURE);
  }
  const server = loaded.kubeConfig.getCurrentCluster()?.server ?? '(unknown server)';
  // A CLI should answer quickly: few retries and a short timeout, unlike the manager.
  const client = Client.fromKubeConfig(loaded.kubeConfig, { timeoutMs: 15_000, maxRetries: 1 });
  const close = () => client.rest.close(1_000);
  try {
    await client.rest.request({ method: 'GET', path: '/version' });
  } catch (err) {
    await close();
    throw new CliError(connectionProblem(err, server, loaded.origin) ?? describe(err), EXIT_FAILURE);
  }
  return { client, server, namespace: loaded.namespace, close };
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A CRD that is not installed shows as a 404 on discovery or as a kind discovery did not list. */
export function isNotInstalled(err: unknown): boolean {
  return isNotFound(err) || isNoKindMatch(err);
}

/** Every object of a kind (matching `labelSelector`, if given), or undefined when the kind is not served. */
export async function listIfServed<T extends KubeObject>(
  s: ClusterSession,
  kind: KindRef,
  namespace: string | undefined,
  labelSelector?: string,
): Promise<T[] | undefined> {
  try {
    return (await s.client.listAll<T>(kind, { namespace, labelSelector })).items;
  } catch (err) {
    if (isNotInstalled(err)) return undefined;
    throw new CliError(connectionProblem(err, s.server) ?? describe(err), EXIT_FAILURE);
  }
}

/**
 * The summary: `server`, `namespace`, then one list of rows per section of the capabilities
 * (src/controllers/capabilities.ts), under the section's key; a section is absent when its
 * kind is not served (its CRD is not installed).
 */
export type StatusReport = { server: string; namespace: string | null } & { [section: string]: unknown };

const byKey = (a: { namespace: string; name: string }, b: { namespace: string; name: string }) =>
  a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);

/** Every capability's status sections, in the list's order. */
function statusViews(): StatusView[] {
  return capabilities().flatMap((c) => c.status ?? []);
}

export async function collectStatus(s: ClusterSession, namespace: string | undefined): Promise<StatusReport> {
  const views = statusViews();
  const lists = await Promise.all(views.map((v) => listIfServed<KubeObject>(s, v.kind, namespace)));
  const report: StatusReport = { server: s.server, namespace: namespace ?? null };
  views.forEach((v, i) => {
    const objs = lists[i];
    if (!objs) return;
    report[v.key] = objs
      .filter((o) => !v.select || v.select(o))
      .map(
        (o): StatusRow => ({
          namespace: o.metadata.namespace ?? '',
          name: o.metadata.name ?? '',
          ...v.row(o),
        }),
      )
      .sort(byKey);
  });
  return report;
}

/** The report as text: a section per installed kind, a namespace column unless one was chosen. */
export function renderStatus(r: StatusReport, p: Painter): string {
  const all = r.namespace === null;
  const out: string[] = [
    `${p.paint('bold', 'Cluster')} ${r.server}  ${p.paint('dim', all ? 'all namespaces' : `namespace ${r.namespace}`)}`,
  ];
  let any = false;
  for (const v of statusViews()) {
    const rows = r[v.key] as StatusRow[] | undefined;
    if (rows === undefined) continue;
    any = true;
    const header = [...(all ? ['NAMESPACE'] : []), 'NAME', ...v.columns.map((c) => c.header)];
    const cells = rows.map((row) => [
      ...(all ? [row.namespace, row.name] : [row.name]),
      ...v.columns.map((c) => (c.phase ? p.phase(c.cell(row)) : c.cell(row))),
    ]);
    out.push('', `${p.paint('bold', v.title)} (${rows.length})`);
    out.push(rows.length === 0 ? p.paint('dim', '  none') : table(header, cells, p));
  }
  if (!any) out.push('', p.paint('dim', 'No troupe kinds are installed in this cluster.'));
  return `${out.join('\n')}\n`;
}

interface StatusFlags {
  kubeconfig?: string;
  namespace?: string;
  output?: 'json' | 'text';
}

export function statusCommand(): Command {
  const cmd = new Command('status')
    .description('Summarise pod groups, sequences, AppWrappers and offloaded Jobs in a cluster')
    .option('--kubeconfig <file>', 'kubeconfig to use (default: $KUBECONFIG, in-cluster, ~/.kube/config)')
    .option('-n, --namespace <namespace>', 'only this namespace (default: all namespaces)')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .addHelpText(
      'after',
      '\nExit status: 0 when the cluster was read, 1 when it could not be reached or read, 2 on a bad flag.',
    )
    .action((flags: StatusFlags) =>
      runReporting(async () => {
        if (flags.namespace === '') throw new CliError('--namespace must not be empty', EXIT_USAGE);
        const session = await openCluster(flags.kubeconfig);
        try {
          const stderr = painterFor(process.stderr);
          // A hint of progress on a terminal only; erased before the summary prints.
          if (stderr.colour) process.stderr.write(stderr.paint('dim', `reading ${session.server}…`));
          let report: StatusReport;
          try {
            report = await collectStatus(session, flags.namespace);
          } finally {
            if (stderr.colour) process.stderr.write('\r\x1b[K');
          }
          if (flags.output === 'json') process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
          else process.stdout.write(renderStatus(report, painterFor(process.stdout)));
        } finally {
          await session.close();
        }
      }),
    );
  return usageErrorsExit2(cmd);
}
