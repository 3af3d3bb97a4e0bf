/**
 * The dashboard's view model: what the server pushes to the page on every change. Plain
 * JSON, already reduced to what the page shows (the browser never sees whole objects), and
 * shared with the front end (`web/`) through a type-only import.
 */

/** How a pod is drawn: one colour per state. */
export type PodState =
  | 'gated'
  | 'pending'
  | 'running'
  | 'ready'
  | 'succeeded'
  | 'failed'
  | 'terminating'
  /** Named by a sequence or group but not in the cluster. */
  | 'missing';

export const POD_STATES: readonly PodState[] = [
  'gated',
  'pending',
  'running',
  'ready',
  'succeeded',
  'failed',
  'terminating',
  'missing',
];

export interface PodCell {
  name: string;
  state: PodState;
  node?: string;
  /** Why it is not further along (an unschedulable message, a waiting reason). */
  detail?: string;
}

export type StateCounts = Partial<Record<PodState, number>>;

/** One kind the dashboard can show and whether it can, in this cluster. */
export interface KindStatus {
  /** `PodSequence`, `AppWrapper`, ... */
  kind: string;
  apiVersion: string;
  status: 'shown' | 'not-installed' | 'forbidden' | 'starting';
}

export interface ResourceUse {
  /** `cpu`, `memory`, `nvidia.com/gpu`, `pods`. */
  resource: string;
  /** Requested (or used) and available, in the resource's display unit (cores, GiB, count). */
  used: number;
  total: number;
  /** `1.5 / 4`, `3.2Gi / 16Gi`. */
  text: string;
}

export interface NodeView {
  name: string;
  ready: boolean;
  unschedulable: boolean;
  /** The node that stands for a remote provider (RunPod's virtual node). */
  virtual: boolean;
  taints: string[];
  /** cpu, memory, GPUs and pods: requested by the pods bound to the node vs allocatable. */
  resources: ResourceUse[];
  gpus?: ResourceUse;
  podCount: number;
}

export interface StuckPod {
  namespace: string;
  name: string;
  state: PodState;
  reason: string;
  message: string;
  since?: string;
}

export interface PodSummary {
  total: number;
  byState: StateCounts;
  byNamespace: { namespace: string; total: number; byState: StateCounts }[];
  /** Pods that wait to be scheduled or have failed, most recent first (at most 50). */
  stuck: StuckPod[];
}

export interface ConditionView {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface PodGroupView {
  namespace: string;
  name: string;
  /** `PodGroup` when a PodGroup object exists; `label` for pods grouped by label only. */
  source: 'PodGroup' | 'label';
  phase: string;
  reason?: string;
  message?: string;
  minMember?: number;
  /** The gang-ready label has been set on its members. */
  gangReady: boolean;
  members: PodCell[];
  counts: StateCounts;
  restarts?: number;
  conditions: ConditionView[];
}

export type TierState = 'done' | 'current' | 'waiting' | 'failed';

export interface TierView {
  index: number;
  name: string;
  state: TierState;
  pods: PodCell[];
  ready: number;
  total: number;
  /** When the tier's first pod was scheduled (it was released and placed). */
  startedAt?: string;
  /** When its last pod became Ready, once every pod is (or has finished). */
  readyAt?: string;
}

export interface NodeProgressView {
  node: string;
  currentIndex: number;
  phase: string;
  readyInCurrent: number;
  /** Per tier, the pods of this node. */
  tiers: PodCell[][];
}

export interface TimelineEntry {
  time: string;
  type: string;
  reason: string;
  message: string;
  count: number;
}

export interface SequenceView {
  namespace: string;
  name: string;
  scope: 'Cluster' | 'Node';
  phase: string;
  message?: string;
  currentIndex: number;
  totalGroups: number;
  tiers: TierView[];
  /** What the current tier waits for, in words. */
  waitingFor: string[];
  /** When the current tier is released, while the previous tier's waitDuration runs. */
  waitingUntil?: string;
  /** Node scope: progress per node. */
  nodes?: NodeProgressView[];
  /** The controller's Events about the sequence, oldest first. */
  timeline: TimelineEntry[];
  conditions: ConditionView[];
}

export interface QuotaView {
  flavor: string;
  resource: string;
  used: number;
  nominal: number;
  text: string;
}

export interface ClusterQueueView {
  name: string;
  strategy: string;
  cohort?: string;
  quotas: QuotaView[];
  pending: number;
  admitted: number;
}

export interface LocalQueueView {
  namespace: string;
  name: string;
  clusterQueue: string;
  pending: number;
  admitted: number;
}

export type WorkloadState = 'pending' | 'quota-reserved' | 'admitted' | 'finished' | 'evicted' | 'inactive';

export interface WorkloadView {
  namespace: string;
  name: string;
  queue?: string;
  clusterQueue?: string;
  owner?: string;
  state: WorkloadState;
  /** 1-based position among the pending workloads of its ClusterQueue. */
  position?: number;
  priority: number;
  message?: string;
}

export interface QueuesView {
  clusterQueues: ClusterQueueView[];
  localQueues: LocalQueueView[];
  workloads: WorkloadView[];
}

export interface AppWrapperView {
  namespace: string;
  name: string;
  phase: string;
  queue?: string;
  suspended: boolean;
  components: number;
  conditions: ConditionView[];
  retries: number;
  workload?: { name: string; state: WorkloadState; position?: number; clusterQueue?: string };
}

export interface OffloadView {
  namespace: string;
  job: string;
  /** Launching, Offloaded, Completed, Failed, Local or Watching (managed, not offloaded). */
  state: string;
  reason?: string;
  provider?: string;
  remotePodId?: string;
  gpuType?: string;
  costPerHour?: number;
  startedAt?: string;
  finishedAt?: string;
  /** Cost per hour times the hours the remote pod has run (until now, or until it finished). */
  spend?: number;
  virtualPod?: { name: string; state: PodState };
  error?: string;
  exitCode?: string;
}

export interface Snapshot {
  /** Server time the snapshot was built (RFC 3339). */
  generatedAt: string;
  /** The namespace the manager is limited to, if any. */
  namespace?: string;
  kinds: KindStatus[];
  nodes?: { items: NodeView[]; omitted: number };
  pods?: PodSummary;
  podGroups?: { items: PodGroupView[]; omitted: number };
  sequences?: { items: SequenceView[]; omitted: number };
  queues?: QueuesView;
  appWrappers?: { items: AppWrapperView[]; omitted: number };
  offloads?: { items: OffloadView[]; omitted: number; totalSpend: number; hourlyCost: number };
  /** The capabilities' tables (their `troupe status` sections) that no section above shows. */
  tables?: TableView[];
}

/** A capability's `troupe status` section as a table: one row per object it manages. */
export interface TableView {
  key: string;
  title: string;
  /** After NAMESPACE and NAME; a `phase` column is drawn as a badge. */
  columns: { header: string; phase?: boolean }[];
  rows: { namespace: string; name: string; cells: string[] }[];
  omitted: number;
}
