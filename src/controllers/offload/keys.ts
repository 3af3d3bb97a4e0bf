/**
 * The annotation, label and finalizer keys of burst offloading. The first block is the
 * seed's contract, kept verbatim; the rest is troupe's own state, kept on the objects so a
 * restarted controller (or another replica) knows everything this one knew.
 */

// ---- the seed's contract --------------------------------------------------
/** On a Job: troupe may offload it. Also set as a label on offloaded Jobs and their virtual pods. */
export const MANAGED = 'runpod.io/managed';
/** On a Job: offload it now. */
export const OFFLOAD = 'runpod.io/offload';
/** On a Job: minimum GPU memory in GB. */
export const REQUIRED_GPU_MEMORY = 'runpod.io/required-gpu-memory';
/** Written on an offloaded Job. */
export const OFFLOADED = 'runpod.io/offloaded';
/** The remote pod's id: annotation on the Job and its virtual pod, and label on the virtual pod (as upstream). */
export const POD_ID = 'runpod.io/pod-id';
/** On a virtual pod, as the upstream controller writes it: the pod stands for a remote one. */
export const EXTERNAL = 'runpod.io/external';
/** The remote pod's cost in USD per hour, on the Job and on its virtual pod. */
export const COST_PER_HR = 'runpod.io/cost-per-hr';
/** Optional on a Job: SECURE (default) or COMMUNITY. */
export const CLOUD_TYPE = 'runpod.io/cloud-type';
/** Optional on a Job: RunPod container registry credential id for a private image. */
export const REGISTRY_AUTH = 'runpod.io/container-registry-auth-id';
/** The seed's virtual node and the node label its virtual pods select. */
export const VIRTUAL_NODE_NAME = 'runpod-virtual-node';
export const VIRTUAL_LABEL = 'runpod.io/virtual';

// ---- troupe's state -------------------------------------------------------
/** On a Job: where the offload stands (Launching, Offloaded, Completed, Failed, Local). */
export const STATE = 'runpod.io/offload-state';
/** On a Job: why it was offloaded (Requested, PendingTooLong, TooManyPending). */
export const REASON = 'runpod.io/offload-reason';
/**
 * On a Job being launched: epoch ms the last remote create was sent. A create that timed
 * out may still land; until twice the request timeout has passed, a retry looks for its
 * pod instead of creating another.
 */
export const CREATE_SENT_AT = 'runpod.io/create-sent-at';
/**
 * On a Job a passing refusal kept local (NoCapacity, Budget, Payment, Unresolved): epoch ms
 * before which it is not offloaded again (the next resync), so a refusal is not retried in
 * a loop.
 */
export const RETRY_AT = 'runpod.io/offload-retry-at';
/** On a Job: the last offload error; a permanent one keeps the Job local until removed. */
export const ERROR = 'runpod.io/offload-error';
/** On a Job: the error class (Invalid, Unexpressible, Unauthorized, Rejected, NoCapacity, Payment, Budget). */
export const ERROR_CLASS = 'runpod.io/offload-error-class';
/** On a Job and its virtual pod: the remote exit code. */
export const EXIT_CODE = 'runpod.io/exit-code';
/** On a Job and its virtual pod: the GPU type the remote pod runs on. */
export const GPU_TYPE = 'runpod.io/gpu-type';
/** On a Job and its virtual pod: the provider (runpod, cluster/<name>). */
export const PROVIDER = 'runpod.io/provider';
/** On a virtual pod: the remote status last seen. */
export const REMOTE_STATUS = 'runpod.io/remote-status';
/** On a virtual pod: the remote container's first start, epoch ms (a later one means it restarted). */
export const REMOTE_STARTED_AT = 'runpod.io/remote-started-at';
/** On a virtual pod: the exit code was not observable and was assumed. */
export const EXIT_CODE_ASSUMED = 'runpod.io/exit-code-assumed';
/** On a virtual pod: the remote pod has been terminated. */
export const REMOTE_TERMINATED = 'runpod.io/remote-terminated';
/**
 * On a virtual pod: the owning Job's name, as an annotation (the upstream controller's) and
 * as a label (troupe's, for `kubectl get pods -l`).
 */
export const JOB_NAME_LABEL = 'runpod.io/job-name';
/** On an offloaded Job: removed only once its remote pod is terminated. */
export const CLEANUP_FINALIZER = 'runpod.io/offload-cleanup';
/** The Job controller's pod finalizer: virtual pods carry it so the Job controller counts them. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

// ---- tags on the remote pod (RunPod env) ----------------------------------
export const TAG_CLUSTER = 'TROUPE_CLUSTER';
export const TAG_NAMESPACE = 'TROUPE_NAMESPACE';
export const TAG_JOB = 'TROUPE_JOB';
export const TAG_JOB_UID = 'TROUPE_JOB_UID';
export const TAG_EXIT_MARKER = 'TROUPE_EXIT_MARKER';
