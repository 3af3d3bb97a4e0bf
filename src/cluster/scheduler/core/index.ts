/** The scheduler's pure core: cluster accounting, filters, scores and one scheduling cycle. */

export { type CompiledNodeAffinity, compileNodeAffinity, compileTerm, type NodeMatcher } from './affinity.ts';
export { ClusterState, NodeInfo, type PodEntry, podEntry, podStartTime } from './cluster-state.ts';
export {
  type CycleState,
  ERR_REASON_AFFINITY,
  ERR_REASON_AFFINITY_CONFLICT,
  ERR_REASON_NODE_NAME,
  ERR_REASON_TAINT_GENERIC,
  ERR_REASON_UNSCHEDULABLE,
  type FilterOptions,
  type FilterStatus,
  filterNodeAffinity,
  filterNodeName,
  filterNodeResourcesFit,
  filterNodeUnschedulable,
  filterTaintToleration,
  fitsRequest,
  type PreparedPod,
  preparePod,
  runFilters,
  type StatusCode,
} from './filters.ts';
export { FitError, NO_NODES_AVAILABLE } from './fit-error.ts';
export {
  ERR_REASON_AFFINITY_RULES,
  ERR_REASON_ANTI_AFFINITY_RULES,
  ERR_REASON_EXISTING_ANTI_AFFINITY,
  filterInterPodAffinity,
  type InterPodFilterState,
  interPodPreFilter,
} from './inter-pod-filter.ts';
export { interPodAffinityScores } from './inter-pod-score.ts';
export { quantityMilliValue, quantityValue } from './quantity.ts';
export {
  computePodRequests,
  DEFAULT_MEMORY_REQUEST,
  DEFAULT_MILLI_CPU_REQUEST,
  isScalarResourceName,
  type PodRequests,
  type Resources,
} from './requests.ts';
export type { ExtraPlugins } from './schedule.ts';
export {
  MESSAGES_1_33,
  MESSAGES_1_35,
  type MessageStyle,
  numFeasibleNodesToFind,
  type Scheduled,
  type ScheduleOptions,
  type ScheduleResult,
  schedulePod,
  selectHost,
  type Unschedulable,
} from './schedule.ts';
export {
  balancedAllocationScore,
  DEFAULT_SCORING_RESOURCES,
  leastRequestedScore,
  MAX_NODE_SCORE,
  mostRequestedScore,
  normalizeScores,
  type PluginWeights,
  pluginWeights,
  type ResourceWeight,
  resourceFitScore,
  type ScoringOptions,
  scoreNodes,
} from './score.ts';
export {
  ERR_REASON_SPREAD,
  ERR_REASON_SPREAD_MISSING_LABEL,
  filterTopologySpread,
  type SpreadFilterState,
  spreadPreFilter,
} from './spread-filter.ts';
export { topologySpreadScores } from './spread-score.ts';
export { firstUntoleratedTaint, toleratesTaint, tolerationsTolerate, UNSCHEDULABLE_TAINT } from './taints.ts';
export type { OwnerKind } from './workload-selectors.ts';
