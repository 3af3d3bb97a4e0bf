/**
 * `troupe explain aw/<name>`: the AppWrapper's phase, conditions and components, and why a
 * suspended one is not admitted, in Kueue's own words: the queue label (or the namespace's
 * LocalQueue "default" Kueue falls back to), and the QuotaReserved condition of the Workload
 * Kueue made for it, with what to do about it. Also the AppWrapper line of `explain pod/<name>`.
 */
import {
  type AppWrapper,
  AW_KIND,
  AW_LABEL,
  QUEUE_NAME_LABEL,
} from '../../apis/workload.codeflare.dev/v1beta2.ts';
import type { Condition } from '../../kube/conditions.ts';
import type { KindRef, KubeObject } from '../../runtime/index.ts';
import { type CapabilityExplain, conditionLines, type ExplainReader } from '../capability.ts';

// Kueue serves v1beta2 since 0.15 and v1beta1 before: whichever the cluster serves.
const VERSIONS = ['kueue.x-k8s.io/v1beta2', 'kueue.x-k8s.io/v1beta1'];

/** The objects of a Kueue kind in the namespace, in the first version served; undefined without Kueue. */
async function kueueList(
  r: ExplainReader,
  kind: string,
  namespace: string,
): Promise<KubeObject[] | undefined> {
  for (const apiVersion of VERSIONS) {
    const ref: KindRef = { apiVersion, kind };
    const items = await r.list<KubeObject>(ref, namespace);
    if (items) return items;
  }
  return undefined;
}

/** The fix for a reason Kueue gives, when there is a usual one. */
function fixFor(message: string): string | undefined {
  if (/insufficient (unused )?quota/.test(message))
    return "wait for admitted workloads to finish, lower the wrapped resources' requests, or raise the ClusterQueue's nominalQuota (or let it borrow from its cohort)";
  if (/doesn't exist|does not exist|not found/i.test(message))
    return 'create the LocalQueue (and its ClusterQueue), or label the AppWrapper with an existing one';
  if (/inactive|stopped|StopPolicy/i.test(message)) return "set the queue's stopPolicy back to None";
  return undefined;
}

/** Lines on admission, for an AppWrapper Kueue has not admitted (empty once it has). */
async function queueLines(r: ExplainReader, aw: AppWrapper): Promise<string[]> {
  const namespace = aw.metadata.namespace ?? 'default';
  const queue = aw.metadata.labels?.[QUEUE_NAME_LABEL];
  const lines: string[] = [];
  if (!queue) {
    const local = await kueueList(r, 'LocalQueue', namespace);
    const names = (local ?? []).map((q) => q.metadata.name ?? '').filter(Boolean);
    if (names.includes('default')) {
      lines.push(`  Queue: no ${QUEUE_NAME_LABEL} label; Kueue uses the namespace's LocalQueue "default"`);
    } else {
      lines.push(
        `  Queue: no ${QUEUE_NAME_LABEL} label, and ${namespace} has no LocalQueue "default" to fall back to: Kueue will not admit it.`,
        `  Fix: recreate it with the label ${QUEUE_NAME_LABEL}: <queue>${names.length > 0 ? ` (LocalQueues in ${namespace}: ${names.join(', ')})` : `, after creating a LocalQueue in ${namespace}`}`,
      );
      return lines;
    }
  }
  if (!aw.spec?.suspend) return lines;
  const workloads = await kueueList(r, 'Workload', namespace);
  if (workloads === undefined) {
    lines.push('  Kueue: not installed (no Workload API), so nothing will admit it: install Kueue');
    return lines;
  }
  const workload = workloads.find((w) => w.metadata.ownerReferences?.some((o) => o.uid === aw.metadata.uid));
  if (!workload) {
    lines.push(
      `  Kueue: no Workload for it yet (Kueue makes one for an AppWrapper it watches; is Kueue running, and does LocalQueue ${queue ?? 'default'} exist in ${namespace}?)`,
    );
    return lines;
  }
  const conditions = ((workload.status as { conditions?: Condition[] } | undefined)?.conditions ??
    []) as Condition[];
  const reserved = conditions.find((c) => c.type === 'QuotaReserved');
  const admitted = conditions.find((c) => c.type === 'Admitted');
  if (admitted?.status === 'True' || reserved?.status === 'True') {
    lines.push(`  Kueue: Workload ${workload.metadata.name} admitted; the AppWrapper resumes`);
    return lines;
  }
  const message = reserved?.message ?? '';
  lines.push(
    `  Kueue: Workload ${workload.metadata.name} waits${reserved?.reason ? ` (${reserved.reason})` : ''}${message ? `: ${message}` : ''}`,
  );
  const fix = fixFor(message);
  if (fix) lines.push(`  Fix: ${fix}`);
  return lines;
}

const POD = { apiVersion: 'v1', kind: 'Pod' };

async function explainAppWrapper(r: ExplainReader, aw: AppWrapper): Promise<string> {
  const name = aw.metadata.name ?? '';
  const namespace = aw.metadata.namespace ?? 'default';
  const p = r.paint;
  const st = aw.status ?? {};
  const phase = st.phase || (aw.spec?.suspend ? 'Suspended' : 'Pending');
  const queue = aw.metadata.labels?.[QUEUE_NAME_LABEL];
  const lines = [
    p.bold(`AppWrapper ${namespace}/${name}: ${phase}`) +
      (queue ? `, queue ${queue}` : ', no queue') +
      (aw.spec?.suspend ? ', suspended (waiting for admission)' : '') +
      (st.resettingCount ? `, reset ${st.resettingCount} time${st.resettingCount === 1 ? '' : 's'}` : ''),
  ];
  lines.push(...(await queueLines(r, aw)));
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
  const pods = await r.list(POD, namespace, `${AW_LABEL}=${name}`);
  if (pods && pods.length > 0) {
    const byPhase = new Map<string, number>();
    for (const pod of pods) {
      const ph = (pod.status as { phase?: string } | undefined)?.phase ?? 'Pending';
      byPhase.set(ph, (byPhase.get(ph) ?? 0) + 1);
    }
    lines.push(`  Pods: ${[...byPhase].map(([ph, n]) => `${n} ${ph}`).join(', ')}`);
  }
  return lines.join('\n');
}

export const appWrapperExplain: CapabilityExplain = {
  kinds: [
    {
      kind: AW_KIND,
      names: ['appwrapper', 'appwrappers', 'aw'],
      usage: 'appwrapper (aw)',
      explain: (r, obj) => explainAppWrapper(r, obj as AppWrapper),
    },
  ],
  pod: {
    lines: async (r, pod) => {
      const wrapper = pod.metadata.labels?.[AW_LABEL];
      if (!wrapper) return [];
      const namespace = pod.metadata.namespace ?? 'default';
      const aw = await r.get<AppWrapper>(AW_KIND, wrapper, namespace).catch(() => undefined);
      return [`AppWrapper ${namespace}/${wrapper}: ${aw ? aw.status?.phase || 'Pending' : 'not found'}`];
    },
  },
};
