/**
 * PodSequences: tiers (the spec's podGroups) as columns, their pods as cells, the current
 * tier and what it waits for, progress per node for node scope, and the controller's Events
 * as a timeline. Tier membership is resolved from the spec the way the controller does
 * (explicit names or a label selector, in `spec.namespace` or the sequence's namespace);
 * progress comes from the status the controller writes.
 */

import { type LabelSelectorObject, type Selector, selectorFromObject } from '../../kube/labels.ts';
import type { KubeObject } from '../../runtime/index.ts';
import type {
  NodeProgressView,
  PodCell,
  SequenceView,
  TierState,
  TierView,
  TimelineEntry,
} from '../view-model.ts';
import { conditionViews, str } from './conditions.ts';
import { missingCell, type Pod, podCell } from './pods.ts';

export interface SequenceObject extends KubeObject {
  spec?: {
    podGroups?: { name?: string; pods?: string[]; podSelector?: LabelSelectorObject }[];
    scope?: string;
    namespace?: string;
  };
  status?: {
    phase?: string;
    currentIndex?: number;
    message?: string;
    waitingUntil?: string;
    nodeStatus?: {
      nodeName: string;
      currentIndex: number;
      readyPodsInCurrentGroup?: number;
      phase?: string;
      conditions?: { type?: string; message?: string }[];
    }[];
    conditions?: unknown[];
  };
}

/** An events.k8s.io/v1 Event. */
export interface EventObject extends KubeObject {
  regarding?: { kind?: string; name?: string; namespace?: string; uid?: string };
  reason?: string;
  note?: string;
  type?: string;
  eventTime?: string | null;
  series?: { count?: number; lastObservedTime?: string } | null;
  deprecatedCount?: number;
  deprecatedFirstTimestamp?: string | null;
  deprecatedLastTimestamp?: string | null;
}

const SEQUENCE_LIMIT = 100;
const TIMELINE_LIMIT = 100;
const WAITING_LIMIT = 8;
const UNASSIGNED = '(no node yet)';

/** The node a pod runs on or, while gated, the one node its sequence pinned it to. */
export function pinnedNode(pod: Pod): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const spec = pod.spec as {
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: {
          nodeSelectorTerms?: { matchFields?: { key: string; operator: string; values?: string[] }[] }[];
        } | null;
      } | null;
    } | null;
    nodeSelector?: Record<string, string>;
  };
  const terms =
    spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms && terms.length === 1) {
    const f = terms[0]?.matchFields?.find((m) => m.key === 'metadata.name' && m.operator === 'In');
    if (f?.values?.length === 1) return f.values[0];
  }
  return spec.nodeSelector?.['kubernetes.io/hostname'];
}

function safeSelector(sel: LabelSelectorObject | undefined): Selector | undefined {
  try {
    return sel ? selectorFromObject(sel) : undefined;
  } catch {
    return undefined;
  }
}

function eventTime(e: EventObject): string {
  return (
    str(e.series?.lastObservedTime) ??
    str(e.eventTime) ??
    str(e.deprecatedLastTimestamp) ??
    str(e.deprecatedFirstTimestamp) ??
    e.metadata.creationTimestamp ??
    ''
  );
}

export function timeline(seq: SequenceObject, events: readonly EventObject[]): TimelineEntry[] {
  const uid = seq.metadata.uid;
  const out: TimelineEntry[] = [];
  for (const e of events) {
    const inv = e.regarding;
    if (inv?.kind !== 'PodSequence') continue;
    if (inv.name !== seq.metadata.name || (inv.namespace ?? '') !== (seq.metadata.namespace ?? '')) continue;
    if (uid && inv.uid && inv.uid !== uid) continue;
    out.push({
      time: eventTime(e),
      type: e.type ?? 'Normal',
      reason: e.reason ?? '',
      message: e.note ?? '',
      count: e.series?.count ?? e.deprecatedCount ?? 1,
    });
  }
  const second = (t: string) => t.slice(0, 19);
  out.sort(
    (a, b) =>
      second(a.time).localeCompare(second(b.time)) ||
      (CAUSAL_RANK[a.reason] ?? 1) - (CAUSAL_RANK[b.reason] ?? 1) ||
      a.time.localeCompare(b.time),
  );
  return causesFirst(out).slice(-TIMELINE_LIMIT);
}

/**
 * A cluster-scope GroupReady ("…; releasing group X") is written with the status write that
 * follows the release it caused, which under load can trail that release by more than the
 * second that CAUSAL_RANK orders within. Show it before the first release of group X: cause
 * before effect, whatever the clocks say.
 */
function causesFirst(entries: TimelineEntry[]): TimelineEntry[] {
  const out = [...entries];
  for (let i = 0; i < out.length; i++) {
    if (out[i]!.reason !== 'GroupReady') continue;
    const next = /; releasing group (.+)$/.exec(out[i]!.message)?.[1];
    if (!next) continue;
    const first = out.findIndex((e) => e.reason === 'Released' && e.message.includes(`of group ${next} `));
    if (first >= 0 && first < i) out.splice(first, 0, ...out.splice(i, 1));
  }
  return out;
}

/**
 * A tier's start (its first pod scheduled) and, once every pod is Ready or done, its ready
 * time (the last pod's Ready transition; for a finished pod, its Ready or finish time).
 */
function tierTimes(
  members: readonly { pod?: Pod }[],
  allReady: boolean,
): { startedAt?: string; readyAt?: string } {
  const times = (type: string) =>
    members
      .map(
        (m) =>
          m.pod?.status?.conditions?.find((c) => c.type === type && c.status === 'True')?.lastTransitionTime,
      )
      .map((t) => str(t));
  const scheduled = times('PodScheduled').filter((t): t is string => !!t);
  const out: { startedAt?: string; readyAt?: string } = {};
  if (scheduled.length > 0) out.startedAt = scheduled.sort()[0];
  if (allReady) {
    const ready = members.map(
      (m) =>
        str(m.pod?.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime) ??
        str(
          m.pod?.status?.conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.lastTransitionTime,
        ),
    );
    if (ready.every((t) => t)) out.readyAt = (ready as string[]).sort().at(-1);
  }
  return out;
}

/**
 * Order of events at the same second (what the page shows): an observation before the
 * action it causes. The controller records a release when it sends it and the GroupReady
 * that caused it with the status write that follows, a few milliseconds later.
 */
const CAUSAL_RANK: Record<string, number> = { GroupReady: 0, Waiting: 1, Released: 2 };

function describeWaiting(cell: PodCell, where?: string): string {
  const at = where ? ` on ${where}` : '';
  return `${cell.name}${at}: ${cell.state}${cell.detail ? ` (${cell.detail})` : ''}`;
}

function limitList(items: string[]): string[] {
  if (items.length <= WAITING_LIMIT) return items;
  return [...items.slice(0, WAITING_LIMIT), `and ${items.length - WAITING_LIMIT} more`];
}

export function sequenceView(
  seq: SequenceObject,
  podsByNs: Map<string, Pod[]>,
  events: readonly EventObject[],
): SequenceView {
  const ns = seq.spec?.namespace || seq.metadata.namespace || '';
  const nsPods = podsByNs.get(ns) ?? [];
  const byName = new Map(nsPods.map((p) => [p.metadata.name ?? '', p]));
  const groups = seq.spec?.podGroups ?? [];
  const scope = seq.spec?.scope === 'Node' ? 'Node' : 'Cluster';
  const phase = seq.status?.phase ?? 'Pending';
  const completed = phase === 'Completed';
  const currentIndex = Math.max(0, Math.min(seq.status?.currentIndex ?? 0, groups.length));

  // Members of each tier: pods (present or missing) in spec order.
  const tierPods: { pod?: Pod; cell: PodCell }[][] = groups.map((g) => {
    if (g.pods && g.pods.length > 0) {
      return g.pods.map((name) => {
        const pod = byName.get(name);
        return pod ? { pod, cell: podCell(pod) } : { cell: missingCell(name) };
      });
    }
    const sel = safeSelector(g.podSelector);
    if (!sel) return [];
    return nsPods
      .filter((p) => sel.matches(p.metadata.labels))
      .map((pod) => ({ pod, cell: podCell(pod) }))
      .sort((a, b) => a.cell.name.localeCompare(b.cell.name));
  });

  // Node scope: progress per node, from status and from where the pods are.
  let nodes: NodeProgressView[] | undefined;
  if (scope === 'Node') {
    const rows = new Map<string, NodeProgressView>();
    for (const s of seq.status?.nodeStatus ?? []) {
      rows.set(s.nodeName, {
        node: s.nodeName,
        currentIndex: s.currentIndex,
        phase: s.phase ?? 'Pending',
        readyInCurrent: s.readyPodsInCurrentGroup ?? 0,
        tiers: groups.map(() => []),
      });
    }
    tierPods.forEach((members, k) => {
      for (const { pod, cell } of members) {
        const node = (pod && pinnedNode(pod)) || UNASSIGNED;
        let row = rows.get(node);
        if (!row) {
          row = { node, currentIndex: 0, phase: 'Pending', readyInCurrent: 0, tiers: groups.map(() => []) };
          rows.set(node, row);
        }
        row.tiers[k]!.push(cell);
      }
    });
    nodes = [...rows.values()].sort((a, b) => a.node.localeCompare(b.node));
  }

  const tierState = (k: number): TierState => {
    if (completed) return 'done';
    const current: TierState = phase === 'Failed' ? 'failed' : 'current';
    const rows = (nodes ?? []).filter((n) => n.node !== UNASSIGNED);
    if (scope === 'Cluster' || rows.length === 0) {
      if (k < currentIndex) return 'done';
      return k === currentIndex ? current : 'waiting';
    }
    // Node scope: each node moves on its own, so a tier is done once every node is past it.
    if (rows.every((n) => n.phase === 'Completed' || n.currentIndex > k)) return 'done';
    if (rows.some((n) => n.phase !== 'Completed' && n.currentIndex === k)) return current;
    return k < currentIndex ? 'done' : 'waiting';
  };

  const tiers: TierView[] = groups.map((g, k) => {
    const cells = tierPods[k]!.map((m) => m.cell);
    const ready = cells.filter((c) => c.state === 'ready' || c.state === 'succeeded').length;
    const view: TierView = {
      index: k,
      name: g.name || `Group ${k + 1}`,
      state: tierState(k),
      pods: cells,
      ready,
      total: cells.length,
    };
    Object.assign(view, tierTimes(tierPods[k]!, ready === cells.length && cells.length > 0));
    return view;
  });

  const waitingFor: string[] = [];
  const waitingUntil = seq.status?.waitingUntil;
  if (!completed) {
    if (scope === 'Cluster' && waitingUntil && currentIndex > 0) {
      // The tier is held by the previous tier's waitDuration, not by its own pods.
      const prev = groups[currentIndex - 1];
      waitingFor.push(`${prev?.name || `Group ${currentIndex}`}'s waitDuration: released at ${waitingUntil}`);
    } else if (scope === 'Cluster') {
      for (const c of tiers[currentIndex]?.pods ?? []) {
        if (c.state !== 'ready' && c.state !== 'succeeded') waitingFor.push(describeWaiting(c));
      }
    } else {
      for (const row of nodes ?? []) {
        if (row.phase === 'Completed') continue;
        const cells = row.tiers[row.currentIndex] ?? [];
        for (const c of cells) {
          if (c.state !== 'ready' && c.state !== 'succeeded') waitingFor.push(describeWaiting(c, row.node));
        }
        // Every pod of the node's tier is Ready and the node is not done: the tier's
        // waitDuration holds the next one there; the node's condition says until when.
        const held = cells.length > 0 && cells.every((c) => c.state === 'ready' || c.state === 'succeeded');
        const entry = seq.status?.nodeStatus?.find((s) => s.nodeName === row.node);
        const said = entry?.conditions?.find((c) => c.type === 'Completed')?.message ?? '';
        if (held && waitingUntil && said.includes('waitDuration'))
          waitingFor.push(`node ${row.node}: ${said.replace(/^Waiting for /, '')}`);
      }
    }
  }

  const view: SequenceView = {
    namespace: seq.metadata.namespace ?? '',
    name: seq.metadata.name ?? '',
    scope,
    phase,
    currentIndex,
    totalGroups: groups.length,
    tiers,
    waitingFor: limitList(waitingFor),
    timeline: timeline(seq, events),
    conditions: conditionViews(seq.status?.conditions),
  };
  if (seq.status?.message) view.message = seq.status.message;
  if (waitingUntil && !completed) view.waitingUntil = waitingUntil;
  if (nodes) view.nodes = nodes;
  return view;
}

export function sequencesView(
  seqs: readonly SequenceObject[],
  pods: readonly Pod[],
  events: readonly EventObject[],
): { items: SequenceView[]; omitted: number } {
  const podsByNs = new Map<string, Pod[]>();
  for (const p of pods) {
    const ns = p.metadata.namespace ?? '';
    const list = podsByNs.get(ns) ?? [];
    list.push(p);
    podsByNs.set(ns, list);
  }
  const sorted = [...seqs].sort(
    (a, b) =>
      (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') ||
      (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
  return {
    items: sorted.slice(0, SEQUENCE_LIMIT).map((s) => sequenceView(s, podsByNs, events)),
    omitted: Math.max(0, sorted.length - SEQUENCE_LIMIT),
  };
}
