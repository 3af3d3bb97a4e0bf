/**
 * `troupe explain <kind>/<name>`: why a troupe object (or a pod) is where it is, in a few
 * readable lines. Each capability explains its own kinds and adds its lines about a pod
 * (`explain` of its Capability), from the same code its controller decides with, so the CLI
 * and the controller cannot disagree. Exit 2 for a bad argument, 1 when the object (or its
 * kind) is not there or the cluster cannot be read.
 */

import { Command } from 'commander';
import type { Capability, ExplainKind, ExplainReader } from '../controllers/capabilities.ts';
import { podProgress } from '../kube/pod.ts';
import type { KindRef, KubeObject } from '../runtime/index.ts';
import { capabilities } from './capabilities.ts';
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

const POD: KindRef = { apiVersion: 'v1', kind: 'Pod' };

/**
 * What `troupe explain` explains: the pod (every capability adds its lines) and each
 * capability's kinds. The capability whose pod lines lead is listed first, then the pod.
 */
export interface Explained {
  kind: KindRef;
  names: string[];
  usage: string;
  /** Absent for the pod, which explainPod composes. */
  provider?: ExplainKind;
}

export function explainKinds(all: Capability[]): Explained[] {
  const ordered = [...all.filter((c) => c.explain?.pod?.lead), ...all.filter((c) => !c.explain?.pod?.lead)];
  const pod: Explained = { kind: POD, names: ['pod', 'pods', 'po'], usage: 'pod' };
  const out: Explained[] = [];
  let podListed = false;
  for (const cap of ordered) {
    for (const k of cap.explain?.kinds ?? [])
      out.push({ kind: k.kind, names: k.names, usage: k.usage, provider: k });
    if (!podListed && cap.explain?.pod?.lead) {
      out.push(pod);
      podListed = true;
    }
  }
  if (!podListed) out.unshift(pod);
  return out;
}

function usage(kinds: Explained[]): string {
  const names = kinds.map((k) => k.usage);
  return `expected <kind>/<name>, where kind is ${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/** `kind/name` to what explains it and a name; CliError (exit 2) when it is not one. */
export function parseRef(
  ref: string,
  kinds: Explained[] = explainKinds(capabilities()),
): { kind: Explained; name: string } {
  const USAGE = usage(kinds);
  const slash = ref.indexOf('/');
  if (slash <= 0 || slash === ref.length - 1)
    throw new CliError(`"${ref}" is not an object reference: ${USAGE}`, EXIT_USAGE);
  const alias = ref.slice(0, slash).toLowerCase();
  // Accept kubectl's fully qualified form too (podgroups.scheduling.incubator.k8s.io/x).
  const find = (a: string) => kinds.find((k) => k.names.includes(a));
  const kind = find(alias) ?? find(alias.split('.')[0]!);
  if (!kind) throw new CliError(`unknown kind "${ref.slice(0, slash)}": ${USAGE}`, EXIT_USAGE);
  const name = ref.slice(slash + 1);
  if (name.includes('/')) throw new CliError(`"${ref}" has more than one "/": ${USAGE}`, EXIT_USAGE);
  return { kind, name };
}

async function getOrFail(
  s: ClusterSession,
  kind: KindRef,
  name: string,
  namespace: string,
): Promise<KubeObject> {
  let obj: KubeObject | undefined;
  try {
    // Resolve the kind first: tryGet would read a 404 from discovery as "object not found".
    await s.client.mapper.resourceFor(kind);
    obj = await s.client.tryGet(kind, name, namespace);
  } catch (err) {
    if (isNotInstalled(err))
      throw new CliError(
        `${kind.kind} is not installed in this cluster (no ${kind.apiVersion} API)`,
        EXIT_FAILURE,
      );
    throw new CliError(connectionProblem(err, s.server) ?? String(err), EXIT_FAILURE);
  }
  if (!obj) throw new CliError(`${kind.kind} ${namespace}/${name} not found`, EXIT_FAILURE);
  return obj;
}

/** The cluster as a capability's explanation reads it. */
function readerFor(s: ClusterSession, p: Painter): ExplainReader {
  return {
    get: (kind, name, namespace) => s.client.tryGet(kind, name, namespace),
    // Lists that are context, not the subject: unreadable ones (forbidden) count as absent.
    list: async (kind, namespace, labelSelector) => {
      try {
        return await listIfServed(s, kind, namespace, labelSelector);
      } catch {
        return undefined;
      }
    },
    paint: { bold: (text) => p.paint('bold', text), phase: (text) => p.phase(text) },
  };
}

/** A pod: the leading capability's lines, the pod's own progress, then the others' lines. */
export async function explainPod(all: Capability[], r: ExplainReader, pod: KubeObject): Promise<string> {
  const lines: string[] = [];
  for (const cap of all) if (cap.explain?.pod?.lead) lines.push(...(await cap.explain.pod.lines(r, pod)));
  lines.push(`Progress: ${podProgress(pod)}`);
  for (const cap of all)
    if (cap.explain?.pod && !cap.explain.pod.lead) lines.push(...(await cap.explain.pod.lines(r, pod)));
  return lines.join('\n');
}

interface ExplainFlags {
  kubeconfig?: string;
  namespace?: string;
}

export function explainCommand(): Command {
  const all = capabilities();
  const kinds = explainKinds(all);
  const cmd = new Command('explain')
    .description(
      `Explain why an object is where it is and what it waits for (${kinds.map((k) => k.kind.kind).join(', ')})`,
    )
    .argument('<kind/name>', kinds.map((k) => `${k.names[0]}/NAME`).join(', '))
    .option('--kubeconfig <file>', 'kubeconfig to use (default: $KUBECONFIG, in-cluster, ~/.kube/config)')
    .option('-n, --namespace <namespace>', "the object's namespace (default: the context's, else default)")
    .addHelpText(
      'after',
      '\nExamples:\n  troupe explain podseq/db-init -n prod\n  troupe explain pod/web-0\n\n' +
        'Exit status: 0 when explained, 1 when the object is not found or the cluster cannot be read, 2 on a bad argument.',
    )
    .action((ref: string, flags: ExplainFlags) =>
      runReporting(async () => {
        const { kind, name } = parseRef(ref, kinds);
        const session = await openCluster(flags.kubeconfig);
        try {
          const namespace = flags.namespace || session.namespace || 'default';
          const r = readerFor(session, painterFor(process.stdout));
          const obj = await getOrFail(session, kind.kind, name, namespace);
          const text = kind.provider ? await kind.provider.explain(r, obj) : await explainPod(all, r, obj);
          process.stdout.write(`${text}\n`);
        } finally {
          await session.close();
        }
      }),
    );
  return usageErrorsExit2(cmd);
}
