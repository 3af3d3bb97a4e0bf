/**
 * Pod groups: every PodGroup object with its members, plus groups formed by the gang label
 * alone (pods labelled `podgroup.jhwagner.github.io/name` without a PodGroup object).
 */

import type { KubeObject } from '../../runtime/index.ts';
import { GROUP_ANNOTATION, GROUP_LABEL, GROUP_READY_LABEL } from '../kinds.ts';
import type { ConditionView, PodGroupView } from '../view-model.ts';
import { conditionViews } from './conditions.ts';
import { countStates, type Pod, podCell } from './pods.ts';

export interface PodGroupObject extends KubeObject {
  spec?: { minMember?: number };
  status?: {
    /** The status design's shape (troupe writes this). */
    state?: { phase?: string; reason?: string; message?: string };
    /** scheduler-plugins' and Volcano's shape. */
    phase?: string;
    restarts?: number;
    conditions?: ConditionView[];
  };
}

const GROUP_LIMIT = 200;

function groupOf(pod: Pod): string | undefined {
  return pod.metadata.labels?.[GROUP_LABEL] || pod.metadata.annotations?.[GROUP_ANNOTATION] || undefined;
}

export function podGroupsView(
  groups: readonly PodGroupObject[],
  pods: readonly Pod[],
): { items: PodGroupView[]; omitted: number } {
  const members = new Map<string, Pod[]>();
  for (const pod of pods) {
    const g = groupOf(pod);
    if (!g) continue;
    const key = `${pod.metadata.namespace ?? ''}/${g}`;
    const list = members.get(key) ?? [];
    list.push(pod);
    members.set(key, list);
  }
  const views: PodGroupView[] = [];
  const seen = new Set<string>();
  for (const group of groups) {
    const key = `${group.metadata.namespace ?? ''}/${group.metadata.name ?? ''}`;
    seen.add(key);
    const pods = members.get(key) ?? [];
    const cells = pods.map(podCell).sort((a, b) => a.name.localeCompare(b.name));
    const state = group.status?.state;
    const view: PodGroupView = {
      namespace: group.metadata.namespace ?? '',
      name: group.metadata.name ?? '',
      source: 'PodGroup',
      phase: state?.phase ?? group.status?.phase ?? 'Unknown',
      gangReady: pods.length > 0 && pods.every((p) => p.metadata.labels?.[GROUP_READY_LABEL] === 'true'),
      members: cells,
      counts: countStates(cells),
      conditions: conditionViews(group.status?.conditions),
    };
    if (state?.reason) view.reason = state.reason;
    if (state?.message) view.message = state.message;
    if (typeof group.spec?.minMember === 'number') view.minMember = group.spec.minMember;
    if (typeof group.status?.restarts === 'number') view.restarts = group.status.restarts;
    views.push(view);
  }
  for (const [key, pods] of members) {
    if (seen.has(key)) continue;
    const [namespace = '', name = ''] = key.split('/');
    const cells = pods.map(podCell).sort((a, b) => a.name.localeCompare(b.name));
    const counts = countStates(cells);
    const running = (counts.running ?? 0) + (counts.ready ?? 0) + (counts.succeeded ?? 0);
    views.push({
      namespace,
      name,
      source: 'label',
      phase: running === cells.length ? 'Running' : 'Pending',
      gangReady: pods.every((p) => p.metadata.labels?.[GROUP_READY_LABEL] === 'true'),
      members: cells,
      counts,
      conditions: [],
    });
  }
  views.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  return { items: views.slice(0, GROUP_LIMIT), omitted: Math.max(0, views.length - GROUP_LIMIT) };
}
