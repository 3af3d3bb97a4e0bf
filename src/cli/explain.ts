/**
 * `troupe explain <kind>/<name>`: why a troupe object (or a pod) is where it is, in a few
 * readable lines. PodSequence and Pod reuse the sequence controller's own explanation, so the
 * CLI and the controller cannot disagree. Exit 2 for a bad argument, 1 when the object (or
 * its kind) is not there or the cluster cannot be read.
 */

import { Command } from 'commander';
import { PODSEQUENCE, type PodSequence } from '../apis/scheduling.example.com/v1alpha1.ts';
import {
  PODGROUP_KIND,
  type PodGroup,
  type PodObject,
} from '../apis/scheduling.incubator.k8s.io/v1alpha1.ts';
import {
  type AppWrapper,
  AW_KIND,
  AW_LABEL,
  QUEUE_NAME_LABEL,
} from '../apis/workload.codeflare.dev/v1beta2.ts';
import * as OFFLOAD from '../controllers/offload/keys.ts';
import { claimOf } from '../controllers/podgroup/membership.ts';
import { explainPod, explainSequence } from '../controllers/podsequence/index.ts';
import type { Node, Pod } from '../controllers/podsequence/objects.ts';
import type { KindRef, KubeObject } from '../runtime/index.ts';
import { explainJob } from './explain-job.ts';
import { queueLines } from './explain-queue.ts';
import {
  CliError,
  connectionProblem,
  EXIT_FAILURE,
  EXIT_USAGE,
  type Painter,
  painterFor,
  runReporting,
  usageErrorsExit2,
} from './output.ts';
import { type ClusterSession, isNotInstalled, listIfServed, openCluster } from './status.ts';

export type ExplainKind = 'PodSequence' | 'Pod' | 'PodGroup' | 'AppWrapper' | 'Job';

const ALIASES: Record<string, ExplainKind> = {
  podsequence: 'PodSequence',
  podsequences: 'PodSequence',
  podseq: 'PodSequence',
  podseqs: 'PodSequence',
  pod: 'Pod',
  pods: 'Pod',
  po: 'Pod',
  podgroup: 'PodGroup',
  podgroups: 'PodGroup',
  pg: 'PodGroup',
  appwrapper: 'AppWrapper',
  appwrappers: 'AppWrapper',
  aw: 'AppWrapper',
  job: 'Job',
  jobs: 'Job',
};

const KINDS: Record<ExplainKind, KindRef> = {
  PodSequence: PODSEQUENCE,
  Pod: { apiVersion: 'v1', kind: 'Pod' },
  PodGroup: PODGROUP_KIND,
  AppWrapper: AW_KIND,
  Job: { apiVersion: 'batch/v1', kind: 'Job' },
};

const USAGE =
  'expected <kind>/<name>, where kind is podsequence (podseq), pod, podgroup (pg), appwrapper (aw) or job';

/** `kind/name` to a kind and a name; CliError (exit 2) when it is not one. */
export function parseRef(ref: string): { kind: ExplainKind; name: string } {
  const slash = ref.indexOf('/');
  if (slash <= 0 || slash === ref.length - 1)
    throw new CliError(`"${ref}" is not an object reference: ${USAGE}`, EXIT_USAGE);
  const alias = ref.slice(0, slash).toLowerCase();
  // Accept kubectl's fully qualified form too (podgroups.scheduling.incubator.k8s.io/x).
  const kind = ALIASES[alias] ?? ALIASES[alias.split('.')[0]!];
  if (!kind) throw new CliError(`unknown kind "${ref.slice(0, slash)}": ${USAGE}`, EXIT_USAGE);
  const name = ref.slice(slash + 1);
  if (name.includes('/')) throw new CliError(`"${ref}" has more than one "/": ${USAGE}`, EXIT_USAGE);
  return { kind, name };
}

async function getOrFail<T extends KubeObject>(
  s: ClusterSession,
  kind: ExplainKind,
  name: string,
  namespace: string,
): Promise<T> {
  let obj: T | undefined;
  try {
    // Resolve the kind first: tryGet would read a 404 from discovery as "object not found".
    await s.client.mapper.resourceFor(KINDS[kind]);
    obj = await s.client.tryGet<T>(KINDS[kind], name, namespace);
  } catch (err) {
    if (isNotInstalled(err))
      throw new CliError(
        `${kind} is not installed in this cluster (no ${KINDS[kind].apiVersion} API)`,
        EXIT_FAILURE,
      );
    throw new CliError(connectionProblem(err, s.server) ?? String(err), EXIT_FAILURE);
  }
  if (!obj) throw new CliError(`${kind} ${namespace}/${name} not found`, EXIT_FAILURE);
  return obj;
}

/** Lists that are context, not the subject: unreadable ones (forbidden) count as empty. */
async function contextList<T extends KubeObject>(
  s: ClusterSession,
  kind: KindRef,
  namespace?: string,
  labelSelector?: string,
): Promise<T[] | undefined> {
  try {
    return await listIfServed<T>(s, kind, namespace, labelSelector);
  } catch {
    return undefined;
  }
}

const NODE: KindRef = { apiVersion: 'v1', kind: 'Node' };

function condition(pod: PodObject, type: string) {
  return pod.status?.conditions?.find((c) => c.type === type);
}

/** One line on a pod's own progress: gated, unschedulable, starting, running, finished. */
export function podProgress(pod: PodObject): string {
  const phase = pod.status?.phase ?? 'Pending';
  const node = pod.spec?.nodeName;
  const gates = (pod.spec?.schedulingGates ?? []).map((g) => g.name);
  if (pod.metadata.deletionTimestamp) return `${phase}, being deleted`;
  if (phase === 'Pending') {
    if (gates.length > 0) return `Pending: held by scheduling gate ${gates.join(', ')}`;
    const scheduled = condition(pod, 'PodScheduled');
    if (!node && scheduled?.status === 'False')
      return `Pending: not scheduled (${scheduled.reason ?? 'Unschedulable'}${scheduled.message ? `: ${scheduled.message}` : ''})`;
    if (!node) return 'Pending: waiting for the scheduler';
    return `Pending on node ${node}: containers starting`;
  }
  if (phase === 'Running') {
    const ready = condition(pod, 'Ready')?.status === 'True';
    return `Running on node ${node ?? '?'}, ${ready ? 'ready' : 'not ready'}`;
  }
  return `${phase}${pod.status?.reason ? ` (${pod.status.reason})` : ''}${node ? ` on node ${node}` : ''}`;
}

function conditionLines(
  conds: { type: string; status: string; reason?: string; message?: string }[] | undefined,
  p: Painter,
): string[] {
  return (conds ?? []).map(
    (c) =>
      `    ${c.type}: ${p.phase(c.status)}${c.reason ? ` (${c.reason})` : ''}${c.message ? ` ${c.message}` : ''}`,
  );
}

export async function explainPodGroupText(
  s: ClusterSession,
  name: string,
  namespace: string,
  p: Painter,
): Promise<string> {
  const pg = await getOrFail<PodGroup>(s, 'PodGroup', name, namespace);
  const st = pg.status ?? {};
  const phase = st.state?.phase ?? 'Pending';
  const min = pg.spec?.minMember ?? 1;
  const running = st.running ?? 0;
  const pods = ((await contextList<PodObject>(s, KINDS.Pod, namespace)) ?? []).filter(
    (pod) => claimOf(pod).group === name,
  );
  const lines = [
    p.paint('bold', `PodGroup ${namespace}/${name}: ${phase}`) +
      (st.state?.reason ? ` (${st.state.reason})` : '') +
      (st.state?.message ? `: ${st.state.message}` : ''),
    `  needs ${min} member${min === 1 ? '' : 's'} running; ${running} running, ${st.succeeded ?? 0} succeeded, ${st.failed ?? 0} failed${st.restarts ? `, restarted ${st.restarts} time${st.restarts === 1 ? '' : 's'}` : ''}`,
  ];
  if (phase !== 'Running' && phase !== 'Completed' && running < min)
    lines.push(`  waiting for ${min - running} more running member${min - running === 1 ? '' : 's'}`);
  if (pg.spec?.queue) lines.push(`  queue ${pg.spec.queue}`);
  if ((st.conditions ?? []).length > 0) lines.push('  Conditions:', ...conditionLines(st.conditions, p));
  lines.push(`  Members (${pods.length}):`);
  if (pods.length === 0) lines.push('    none: no pod carries the group label or annotation yet');
  for (const pod of pods.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '')))
    lines.push(`    ${pod.metadata.name}: ${podProgress(pod)}`);
  return lines.join('\n');
}

export async function explainAppWrapperText(
  s: ClusterSession,
  name: string,
  namespace: string,
  p: Painter,
): Promise<string> {
  const aw = await getOrFail<AppWrapper>(s, 'AppWrapper', name, namespace);
  const st = aw.status ?? {};
  const phase = st.phase || (aw.spec?.suspend ? 'Suspended' : 'Pending');
  const queue = aw.metadata.labels?.[QUEUE_NAME_LABEL];
  const lines = [
    p.paint('bold', `AppWrapper ${namespace}/${name}: ${phase}`) +
      (queue ? `, queue ${queue}` : ', no queue') +
      (aw.spec?.suspend ? ', suspended (waiting for admission)' : '') +
      (st.resettingCount ? `, reset ${st.resettingCount} time${st.resettingCount === 1 ? '' : 's'}` : ''),
  ];
  lines.push(...(await queueLines(s, aw)));
  if ((st.conditions ?? []).length > 0) lines.push('  Conditions:', ...conditionLines(st.conditions, p));
  const components = aw.spec?.components ?? [];
  lines.push(`  Components (${components.length}):`);
  components.forEach((c, i) => {
    const cs = st.componentStatus?.[i];
    const t = c.template as { apiVersion?: string; kind?: string; metadata?: { name?: string } };
    // The controller writes empty strings until it has deployed the component.
    const kind = cs?.kind || t.kind || '?';
    const cname = cs?.name || t.metadata?.name || '?';
    const podSets = cs?.podSets ?? c.podSets ?? [];
    const expected = podSets.reduce((n, ps) => n + (ps.replicas ?? 1), 0);
    const deployed = cs?.conditions?.find((x) => x.type === 'ResourcesDeployed');
    lines.push(
      `    ${i + 1}. ${kind} ${cname}${podSets.length > 0 ? `, ${expected} pod${expected === 1 ? '' : 's'} expected` : ''}${deployed ? `, deployed: ${deployed.status}` : cs ? '' : ', not deployed'}`,
    );
  });
  const pods = await contextList<PodObject>(s, KINDS.Pod, namespace, `${AW_LABEL}=${name}`);
  if (pods && pods.length > 0) {
    const byPhase = new Map<string, number>();
    for (const pod of pods)
      byPhase.set(pod.status?.phase ?? 'Pending', (byPhase.get(pod.status?.phase ?? 'Pending') ?? 0) + 1);
    lines.push(`  Pods: ${[...byPhase].map(([ph, n]) => `${n} ${ph}`).join(', ')}`);
  }
  return lines.join('\n');
}

export async function explainJobText(s: ClusterSession, name: string, namespace: string): Promise<string> {
  const job = await getOrFail<KubeObject>(s, 'Job', name, namespace);
  const stand = await contextList<KubeObject>(s, KINDS.Pod, namespace, `${OFFLOAD.JOB_NAME_LABEL}=${name}`);
  return explainJob(
    job,
    stand?.find((p) => p.metadata.annotations?.[OFFLOAD.EXTERNAL] === 'true'),
  );
}

export async function explainSequenceText(
  s: ClusterSession,
  name: string,
  namespace: string,
): Promise<string> {
  const seq = await getOrFail<PodSequence>(s, 'PodSequence', name, namespace);
  const podNamespace = seq.spec?.namespace || namespace;
  const [pods, nodes, sequences] = await Promise.all([
    contextList<Pod>(s, KINDS.Pod, podNamespace),
    contextList<Node>(s, NODE),
    contextList<PodSequence>(s, PODSEQUENCE),
  ]);
  return explainSequence({ seq, pods: pods ?? [], nodes, sequences: sequences ?? [seq] });
}

export async function explainPodText(s: ClusterSession, name: string, namespace: string): Promise<string> {
  const pod = await getOrFail<Pod & PodObject>(s, 'Pod', name, namespace);
  const [pods, nodes, sequences] = await Promise.all([
    contextList<Pod>(s, KINDS.Pod, namespace),
    contextList<Node>(s, NODE),
    contextList<PodSequence>(s, PODSEQUENCE),
  ]);
  const lines = [explainPod(pod, { sequences: sequences ?? [], pods: pods ?? [pod], nodes })];
  lines.push(`Progress: ${podProgress(pod)}`);
  const group = claimOf(pod).group;
  if (group) {
    const pg = await s.client.tryGet<PodGroup>(PODGROUP_KIND, group, namespace).catch(() => undefined);
    lines.push(
      pg
        ? `PodGroup ${namespace}/${group}: ${pg.status?.state?.phase ?? 'Pending'}, ${pg.status?.running ?? 0}/${pg.spec?.minMember ?? 1} running${pg.status?.state?.reason ? ` (${pg.status.state.reason})` : ''}`
        : `PodGroup ${namespace}/${group}: named by the pod but not found`,
    );
  }
  const wrapper = pod.metadata.labels?.[AW_LABEL];
  if (wrapper) {
    const aw = await s.client.tryGet<AppWrapper>(AW_KIND, wrapper, namespace).catch(() => undefined);
    lines.push(`AppWrapper ${namespace}/${wrapper}: ${aw ? aw.status?.phase || 'Pending' : 'not found'}`);
  }
  const remote = pod.metadata.annotations?.[OFFLOAD.POD_ID];
  if (remote)
    lines.push(
      `Offloaded: remote pod ${remote}${pod.metadata.annotations?.[OFFLOAD.REMOTE_STATUS] ? `, ${pod.metadata.annotations[OFFLOAD.REMOTE_STATUS]}` : ''}`,
    );
  return lines.join('\n');
}

interface ExplainFlags {
  kubeconfig?: string;
  namespace?: string;
}

export function explainCommand(): Command {
  const cmd = new Command('explain')
    .description(
      'Explain why a PodSequence, Pod, PodGroup or AppWrapper is where it is, or why a Job was offloaded or not',
    )
    .argument('<kind/name>', 'podsequence/NAME, pod/NAME, podgroup/NAME, appwrapper/NAME or job/NAME')
    .option('--kubeconfig <file>', 'kubeconfig to use (default: $KUBECONFIG, in-cluster, ~/.kube/config)')
    .option('-n, --namespace <namespace>', "the object's namespace (default: the context's, else default)")
    .addHelpText(
      'after',
      '\nExamples:\n  troupe explain podseq/db-init -n prod\n  troupe explain pod/web-0\n\n' +
        'Exit status: 0 when explained, 1 when the object is not found or the cluster cannot be read, 2 on a bad argument.',
    )
    .action((ref: string, flags: ExplainFlags) =>
      runReporting(async () => {
        const { kind, name } = parseRef(ref);
        const session = await openCluster(flags.kubeconfig);
        try {
          const namespace = flags.namespace || session.namespace || 'default';
          const p = painterFor(process.stdout);
          const text =
            kind === 'PodSequence'
              ? await explainSequenceText(session, name, namespace)
              : kind === 'Pod'
                ? await explainPodText(session, name, namespace)
                : kind === 'PodGroup'
                  ? await explainPodGroupText(session, name, namespace, p)
                  : kind === 'AppWrapper'
                    ? await explainAppWrapperText(session, name, namespace, p)
                    : await explainJobText(session, name, namespace);
          process.stdout.write(`${text}\n`);
        } finally {
          await session.close();
        }
      }),
    );
  return usageErrorsExit2(cmd);
}
