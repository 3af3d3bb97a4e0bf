/**
 * The Kueue stand-in of the embedded cluster (kueue.x-k8s.io/v1beta2): Kueue's CRDs, and
 * Kueue's part for AppWrappers and batch/v1 Jobs. See docs/kueue-standin.md.
 */

export {
  assignFlavors,
  hasQuotaReservation,
  isAdmitted,
  isFinished,
  queueCounts,
  type ScheduleResult,
  type Snapshot,
  schedule,
} from './admission.ts';
export {
  type ClusterQueue,
  DEFAULT_LOCAL_QUEUE,
  JOB_UID_LABEL,
  KGVR,
  KUEUE_API_VERSION,
  KUEUE_GROUP,
  type LocalQueue,
  PODSET_LABEL,
  QUEUE_NAME_LABEL,
  RESOURCE_IN_USE_FINALIZER,
  type ResourceFlavor,
  type Workload,
  WorkloadConditions,
} from './api.ts';
export { ensureKueueCRDs, kueueCRDs } from './crds.ts';
export {
  DEFAULT_CLUSTER_QUEUE,
  DEFAULT_FLAVOR,
  DEFAULT_USER_QUEUE,
  type DefaultQueuesOptions,
  defaultQueueObjects,
} from './defaults.ts';
export { appWrapperAdapter, batchJobAdapter, type JobAdapter } from './jobs.ts';
export { appWrapperPodSets, jobPodSets } from './podsets.ts';
export { type Integration, KUEUE_USER, type KueueOptions, type KueueStandIn, startKueue } from './standin.ts';
export { workloadName } from './workloads.ts';
