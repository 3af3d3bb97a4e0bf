/**
 * `troupe explain podgroups.scheduling.x-k8s.io/<name>`, and its line in `troupe explain
 * pod/<name>`: scheduler-plugins' PodGroup, which troupe does not reconcile (the podgroup
 * controller of scheduler-plugins, or the embedded cluster's under --gang-scheduling, writes
 * its status) but whose gang users ask about as they ask about troupe's. Read as any client
 * reads it: the PodGroup, and its members by the `scheduling.x-k8s.io/pod-group` label. Why it
 * is pending comes from what the scheduler wrote on the members: their PodScheduled=False
 * messages (the coscheduling plugin's verdict on the gang, or the filters' on the pod).
 */

import {
  X_POD_GROUP_LABEL,
  X_PODGROUP_GROUP,
  type XPodGroup,
} from '../../apis/scheduling.x-k8s.io/v1alpha1.ts';
import type { PodSpec, PodStatus } from '../../kube/builtin.ts';
import { findCondition } from '../../kube/conditions.ts';
import { podProgress } from '../../kube/pod.ts';
import type { KubeObject } from '../../runtime/index.ts';
import type { ExplainKind, ExplainReader } from '../capability.ts';

const POD = { apiVersion: 'v1', kind: 'Pod' };
export const X_PODGROUP_KIND = { apiVersion: `${X_PODGROUP_GROUP}/v1alpha1`, kind: 'PodGroup' };

type Member = KubeObject & { spec?: PodSpec; status?: PodStatus };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Phases in which the gang has what it needs (or is done): nothing to say about waiting. */
const SETTLED = new Set(['Running', 'Finished', 'Failed']);

/** Why the gang is not running: too few pods, the scheduler's verdicts, members starting. */
function whyWaiting(pg: XPodGroup, members: Member[]): string[] {
  // As the scheduler reads it (the CRD's minimum is 1).
  const min = pg.spec?.minMember ?? 1;
  const live = members.filter((m) => !m.metadata.deletionTimestamp);
  const lines: string[] = [];
  if (live.length < min)
    lines.push(
      `    ${plural(min - live.length, 'more member pod')} needed: ${live.length} of minMember ${min} exist (pods labelled ${X_POD_GROUP_LABEL}=${pg.metadata.name})`,
    );
  const verdicts = new Map<string, number>();
  let unseen = 0;
  let starting = 0;
  let gated = 0;
  for (const m of live) {
    if ((m.status?.phase ?? 'Pending') !== 'Pending') continue;
    if (m.spec?.nodeName) starting++;
    else if ((m.spec?.schedulingGates?.length ?? 0) > 0) gated++;
    else {
      const c = findCondition(m.status?.conditions, 'PodScheduled');
      if (c?.status === 'False' && c.message) verdicts.set(c.message, (verdicts.get(c.message) ?? 0) + 1);
      else unseen++;
    }
  }
  // The plugin's verdict on a gang is the same on every member: said once, with its count.
  for (const [message, n] of verdicts) lines.push(`    the scheduler, on ${plural(n, 'member')}: ${message}`);
  if (gated > 0) lines.push(`    ${plural(gated, 'member')} held by scheduling gates`);
  // Members held in Permit carry nothing either: the scheduler writes no verdict while it waits.
  if (unseen > 0)
    lines.push(
      `    ${plural(unseen, 'member')} without a verdict yet: in the scheduler's queue, or placed and held until minMember are`,
    );
  if (starting > 0) lines.push(`    ${plural(starting, 'member')} placed, containers starting`);
  return lines;
}

export const xPodGroupExplainKind: ExplainKind = {
  kind: X_PODGROUP_KIND,
  // kubectl's qualified names: `podgroup`/`pg` name troupe's own PodGroup.
  names: [`podgroups.${X_PODGROUP_GROUP}`, `podgroup.${X_PODGROUP_GROUP}`],
  usage: `podgroups.${X_PODGROUP_GROUP}`,
  explain: async (r, obj) => {
    const pg = obj as XPodGroup;
    const name = pg.metadata.name ?? '';
    const namespace = pg.metadata.namespace ?? 'default';
    const p = r.paint;
    const st = pg.status ?? {};
    const min = pg.spec?.minMember ?? 1;
    const members =
      (await r.list<Member>(POD, namespace, `${X_POD_GROUP_LABEL}=${name}`))?.sort((a, b) =>
        (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
      ) ?? [];
    const lines = [
      p.bold(
        `PodGroup ${namespace}/${name} (${X_PODGROUP_GROUP}): ${st.phase ? p.phase(st.phase) : 'no status'}`,
      ),
      `  needs ${plural(min, 'member')} running; ${st.running ?? 0} running, ${st.succeeded ?? 0} succeeded, ${st.failed ?? 0} failed`,
    ];
    if (!st.phase)
      lines.push(
        "  its status is written by scheduler-plugins' podgroup controller (troupe up/cluster --gang-scheduling runs one)",
      );
    const spec = pg.spec ?? {};
    if (spec.minResources)
      lines.push(
        `  minResources ${Object.entries(spec.minResources)
          .map(([k, v]) => `${k}=${v}`)
          .join(', ')}`,
      );
    if (spec.scheduleTimeoutSeconds) lines.push(`  scheduleTimeoutSeconds ${spec.scheduleTimeoutSeconds}`);
    if (st.occupiedBy) lines.push(`  occupied by ${st.occupiedBy}`);
    if (!SETTLED.has(st.phase ?? '')) {
      const why = whyWaiting(pg, members);
      if (why.length > 0) lines.push('  Waiting:', ...why);
    }
    lines.push(`  Members (${members.length}):`);
    if (members.length === 0) lines.push(`    none: no pod is labelled ${X_POD_GROUP_LABEL}=${name}`);
    for (const m of members) lines.push(`    ${m.metadata.name}: ${podProgress(m)}`);
    return lines.join('\n');
  },
};

/** The line of `troupe explain pod/<name>` for a pod labelled into a scheduler-plugins PodGroup. */
export async function xPodGroupLines(r: ExplainReader, pod: KubeObject): Promise<string[]> {
  const group = pod.metadata.labels?.[X_POD_GROUP_LABEL];
  if (!group) return [];
  const namespace = pod.metadata.namespace ?? 'default';
  const pg = await r.get<XPodGroup>(X_PODGROUP_KIND, group, namespace).catch(() => undefined);
  const what = `PodGroup ${namespace}/${group} (${X_PODGROUP_GROUP})`;
  if (!pg) return [`${what}: named by the pod but not found`];
  return [
    `${what}: ${pg.status?.phase ?? 'no status'}, ${pg.status?.running ?? 0}/${pg.spec?.minMember ?? 1} running`,
  ];
}
