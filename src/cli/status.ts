/**
 * `troupe status`: one screen of what troupe manages in a cluster (pod groups, sequences,
 * AppWrappers, offloaded Jobs), read through the API. Kinds whose CRD is not installed are
 * left out; failing to reach or authenticate to the cluster exits 1.
 */

import { Command, Option } from 'commander';
import {
  Client,
  isNoKindMatch,
  isNotFound,
  type KindRef,
  type KubeObject,
  loadKubeConfig,
} from '../runtime/index.ts';
import { AW_KIND, QUEUE_NAME_LABEL } from '../apis/workload.codeflare.dev/v1beta2.ts';
import * as OFFLOAD from '../controllers/offload/keys.ts';
import { PODGROUP_KIND, type PodGroup } from '../apis/scheduling.incubator.k8s.io/v1alpha1.ts';
import { PODSEQUENCE, type PodSequence } from '../apis/scheduling.example.com/v1alpha1.ts';
import type { AppWrapper } from '../apis/workload.codeflare.dev/v1beta2.ts';
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

const JOB_KIND: KindRef = { apiVersion: 'batch/v1', kind: 'Job' };

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

export interface GroupRow {
  namespace: string;
  name: string;
  phase: string;
  running: number;
  minMember: number;
  reason: string;
}
export interface SequenceRow {
  namespace: string;
  name: string;
  phase: string;
  /** The current tier: its name, or its 1-based position. */
  tier: string;
  /** `current/total` tiers. */
  progress: string;
  /** Ready pods (cluster scope) or done nodes (node scope) of the current tier. */
  ready: string;
}
export interface AppWrapperRow {
  namespace: string;
  name: string;
  phase: string;
  queue: string;
}
export interface OffloadRow {
  namespace: string;
  name: string;
  state: string;
  remotePod: string;
  provider: string;
  costPerHr: string;
}

/** The summary; a kind is absent when its CRD is not installed. */
export interface StatusReport {
  server: string;
  namespace: string | null;
  podGroups?: GroupRow[];
  sequences?: SequenceRow[];
  appWrappers?: AppWrapperRow[];
  offloads?: OffloadRow[];
}

const nsName = (o: KubeObject) => ({ namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '' });
const byKey = (a: { namespace: string; name: string }, b: { namespace: string; name: string }) =>
  a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);

export async function collectStatus(s: ClusterSession, namespace: string | undefined): Promise<StatusReport> {
  const [groups, sequences, wrappers, jobs] = await Promise.all([
    listIfServed<PodGroup>(s, PODGROUP_KIND, namespace),
    listIfServed<PodSequence>(s, PODSEQUENCE, namespace),
    listIfServed<AppWrapper>(s, AW_KIND, namespace),
    listIfServed<KubeObject>(s, JOB_KIND, namespace),
  ]);
  const report: StatusReport = { server: s.server, namespace: namespace ?? null };
  if (groups)
    report.podGroups = groups
      .map((g) => ({
        ...nsName(g),
        phase: g.status?.state?.phase ?? 'Pending',
        running: g.status?.running ?? 0,
        minMember: g.spec?.minMember ?? 1,
        reason: g.status?.state?.reason ?? '',
      }))
      .sort(byKey);
  if (sequences)
    report.sequences = sequences
      .map((q) => {
        const st = q.status ?? {};
        const total = st.totalGroups ?? q.spec?.podGroups?.length ?? 0;
        const index = st.currentIndex ?? 0;
        return {
          ...nsName(q),
          phase: st.phase ?? 'Pending',
          tier:
            st.phase === 'Completed'
              ? '-'
              : (st.currentGroupName ?? q.spec?.podGroups?.[index]?.name ?? `${index + 1}`),
          progress: st.progress ?? `${Math.min(index + 1, total)}/${total}`,
          ready: st.currentGroupReady ?? `${st.readyPodsInCurrentGroup ?? 0}`,
        };
      })
      .sort(byKey);
  if (wrappers)
    report.appWrappers = wrappers
      .map((w) => ({
        ...nsName(w),
        phase: w.status?.phase || (w.spec?.suspend ? 'Suspended' : 'Pending'),
        queue: w.metadata.labels?.[QUEUE_NAME_LABEL] ?? '',
      }))
      .sort(byKey);
  if (jobs)
    report.offloads = jobs
      .filter((j) => j.metadata.annotations?.[OFFLOAD.MANAGED]?.toLowerCase() === 'true')
      .map((j) => {
        const a = j.metadata.annotations ?? {};
        return {
          ...nsName(j),
          state: a[OFFLOAD.STATE] ?? 'Watching',
          remotePod: a[OFFLOAD.POD_ID] ?? '',
          provider: a[OFFLOAD.PROVIDER] ?? '',
          costPerHr: a[OFFLOAD.COST_PER_HR] ?? '',
        };
      })
      .sort(byKey);
  return report;
}

/** The report as text: a section per installed kind, a namespace column unless one was chosen. */
export function renderStatus(r: StatusReport, p: Painter): string {
  const all = r.namespace === null;
  const lead = (row: { namespace: string; name: string }) => (all ? [row.namespace, row.name] : [row.name]);
  const head = (...rest: string[]) => [...(all ? ['NAMESPACE'] : []), 'NAME', ...rest];
  const out: string[] = [
    `${p.paint('bold', 'Cluster')} ${r.server}  ${p.paint('dim', all ? 'all namespaces' : `namespace ${r.namespace}`)}`,
  ];
  const section = (title: string, rows: string[][] | undefined, header: string[]) => {
    if (rows === undefined) return;
    out.push('', `${p.paint('bold', title)} (${rows.length})`);
    out.push(rows.length === 0 ? p.paint('dim', '  none') : table(header, rows, p));
  };
  section(
    'Pod groups',
    r.podGroups?.map((g) => [...lead(g), p.phase(g.phase), `${g.running}/${g.minMember}`, g.reason || '-']),
    head('PHASE', 'RUNNING/MIN', 'REASON'),
  );
  section(
    'Sequences',
    r.sequences?.map((q) => [...lead(q), p.phase(q.phase), q.tier, q.progress, q.ready || '-']),
    head('PHASE', 'TIER', 'PROGRESS', 'READY'),
  );
  section(
    'AppWrappers',
    r.appWrappers?.map((w) => [...lead(w), p.phase(w.phase), w.queue || '-']),
    head('PHASE', 'QUEUE'),
  );
  section(
    'Offloads',
    r.offloads?.map((o) => [
      ...lead(o),
      p.phase(o.state),
      o.remotePod || '-',
      o.provider || '-',
      o.costPerHr ? `$${o.costPerHr}/h` : '-',
    ]),
    head('STATE', 'REMOTE POD', 'PROVIDER', 'COST'),
  );
  if (!r.podGroups && !r.sequences && !r.appWrappers && !r.offloads)
    out.push('', p.paint('dim', 'No troupe kinds are installed in this cluster.'));
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
