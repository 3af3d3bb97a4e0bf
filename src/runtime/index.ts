/** The troupe controller runtime: everything a controller or the CLI needs, from one import. */

export { Backoff, type BackoffOptions, backoffDelay } from '../lib/backoff.ts';
export { type Clock, isoNow, ManualClock, realClock, sleep, type TimerHandle } from '../lib/clock.ts';
export {
  defaultControllerRateLimiter,
  ItemExponentialRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
  TokenBucketRateLimiter,
} from '../lib/ratelimiter.ts';
export { WorkQueue, type WorkQueueMetrics, type WorkQueueOptions } from '../lib/workqueue.ts';
export { Cache, type CacheListOptions, type CacheOptions, type InformerScope } from './cache.ts';
export { generateServingCert, readCertDir, type ServingCert, watchCertDir } from './certs.ts';
export {
  Client,
  type ConflictRetryOptions,
  type DeleteOptions,
  FencedError,
  FIELD_MANAGER,
  type JsonPatchOp,
  type ListOptions,
  type PatchOptions,
  type PatchType,
  retryOnConflict,
  type WriteOptions,
} from './client.ts';
export {
  kubeConfigFromString,
  type LoadedKubeConfig,
  type LoadKubeConfigOptions,
  loadKubeConfig,
} from './config.ts';
export {
  annotationsChanged,
  anyOf,
  type ControllerDefinition,
  ControllerRunner,
  enqueueByLabel,
  enqueueConst,
  enqueueObject,
  enqueueOwner,
  generationChanged,
  type IndexSpec,
  labelsChanged,
  type MapFunc,
  type Predicate,
  type ReconcileContext,
  type ReconcileResult,
  type ReconcileReturn,
  resourceVersionChanged,
  type WatchEvent,
  type WatchSpec,
} from './controller.ts';
export { type InstallCrdsOptions, installCrds } from './crds.ts';
export {
  type CacheGaugeOptions,
  type CacheView,
  cacheGauge,
  countBy,
  counter,
  histogram,
  type MetricsContext,
} from './custom-metrics.ts';
export {
  ApiError,
  isAlreadyExists,
  isApiError,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNoKindMatch,
  isNotFound,
  isTerminal,
  isTooManyRequests,
  NoKindMatchError,
  type Status,
  TerminalError,
} from './errors.ts';
export {
  EventRecorder,
  type EventRecorderOptions,
  type EventType,
  microTime,
  type ObjectReference,
} from './events.ts';
export { type Check, HealthServer, type HealthServerOptions } from './health.ts';
export { type EventHandler, type HandlerRegistration, Informer, type InformerOptions } from './informer.ts';
export { defaultIdentity, type LeaderElectionOptions, LeaderElector, type Lease } from './leader.ts';
export { createLogger, type LogFormat, type Logger, type LogOptions, silentLogger } from './log.ts';
export { type LeaderElectionConfig, Manager, type ManagerOptions, stopOnSignals } from './manager.ts';
export { RuntimeMetrics } from './metrics.ts';
export {
  AlreadyOwnedError,
  addFinalizer,
  getControllerOf,
  hasFinalizer,
  isBeingDeleted,
  isControlledBy,
  removeFinalizer,
  removeOwnerReference,
  setControllerReference,
  setOwnerReference,
} from './objects.ts';
export { OwnWrites } from './own-writes.ts';
export { type ResourceInfo, RestMapper } from './resources.ts';
export { RestClient, type RestClientOptions } from './rest.ts';
export {
  type IndexFunc,
  indexByLabel,
  indexByNamespace,
  indexByNodeName,
  indexByOwnerUid,
  labelIndexName,
  NAMESPACE_INDEX,
  NODE_NAME_INDEX,
  OWNER_UID_INDEX,
  Store,
} from './store.ts';
export { composeTransforms, LAST_APPLIED_ANNOTATION, stripForCache, type Transform } from './transform.ts';
export {
  type KindRef,
  type KubeObject,
  keyOf,
  type ListResult,
  type ManagedFieldsEntry,
  type ObjectMeta,
  type ObjectRef,
  type OwnerReference,
  objectKey,
  parseKey,
} from './types.ts';
export {
  type AdmissionHandler,
  type AdmissionRequest,
  type AdmissionResponse,
  allowed,
  denied,
  patched,
  WebhookServer,
  type WebhookServerOptions,
} from './webhook.ts';
