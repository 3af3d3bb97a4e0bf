/**
 * What the dashboard reads, and the public keys it understands. The dashboard does not
 * import the controllers (it sees only what any Kubernetes client sees); the labels and
 * annotations of each capability come from its API definition in src/apis, the published
 * contract. Object shapes stay the dashboard's own and loose: it renders whatever is in the
 * cluster, partial or not.
 */

import type { KindRef, KubeObject } from '../runtime/index.ts';

export interface WatchedKind extends KindRef {
  /** The CRD that serves the kind; built-in kinds have none. */
  crd?: string;
  /** Resource name and group, for the permission check. */
  resource: string;
  group: string;
  namespaced: boolean;
  /** Informer field selector (only a subset of the kind is needed). */
  fieldSelector?: string;
}

type Scope = 'Namespaced' | 'Cluster';

/** A kind by group (empty for the core group), version and plural; scope as a CRD's spec.scope. */
function watchedKind(
  group: string,
  version: string,
  kind: string,
  resource: string,
  scope: Scope,
): WatchedKind {
  return {
    apiVersion: group ? `${group}/${version}` : version,
    kind,
    resource,
    group,
    namespaced: scope === 'Namespaced',
  };
}

/** A kind served by a CRD, whose name follows from the group and plural. */
function customKind(
  group: string,
  version: string,
  kind: string,
  resource: string,
  scope: Scope,
): WatchedKind {
  return { ...watchedKind(group, version, kind, resource, scope), crd: `${resource}.${group}` };
}

export const NODE = watchedKind('', 'v1', 'Node', 'nodes', 'Cluster');
export const POD = watchedKind('', 'v1', 'Pod', 'pods', 'Namespaced');
export const JOB = watchedKind('batch', 'v1', 'Job', 'jobs', 'Namespaced');
/** Only the Events about PodSequences (troupe records events.k8s.io/v1 Events): the sequence timeline. */
export const SEQUENCE_EVENT: WatchedKind = {
  ...watchedKind('events.k8s.io', 'v1', 'Event', 'events', 'Namespaced'),
  fieldSelector: 'regarding.kind=PodSequence',
};
export const POD_GROUP = customKind(
  'scheduling.incubator.k8s.io',
  'v1alpha1',
  'PodGroup',
  'podgroups',
  'Namespaced',
);
export const POD_SEQUENCE = customKind(
  'scheduling.example.com',
  'v1alpha1',
  'PodSequence',
  'podsequences',
  'Namespaced',
);
export const APP_WRAPPER = customKind(
  'workload.codeflare.dev',
  'v1beta2',
  'AppWrapper',
  'appwrappers',
  'Namespaced',
);
export const CLUSTER_QUEUE = customKind(
  'kueue.x-k8s.io',
  'v1beta2',
  'ClusterQueue',
  'clusterqueues',
  'Cluster',
);
export const LOCAL_QUEUE = customKind('kueue.x-k8s.io', 'v1beta2', 'LocalQueue', 'localqueues', 'Namespaced');
export const WORKLOAD = customKind('kueue.x-k8s.io', 'v1beta2', 'Workload', 'workloads', 'Namespaced');

export const ALL_KINDS: readonly WatchedKind[] = [
  NODE,
  POD,
  JOB,
  POD_GROUP,
  POD_SEQUENCE,
  SEQUENCE_EVENT,
  APP_WRAPPER,
  CLUSTER_QUEUE,
  LOCAL_QUEUE,
  WORKLOAD,
];

/**
 * A table a capability adds to the page (its `troupe status` section: StatusView of
 * src/controllers/capability.ts, which the CLI passes in; the dashboard does not import the
 * controllers). Pages a richer section of their own for some of them (sections()).
 */
export interface DashboardTable {
  key: string;
  title: string;
  kind: KindRef;
  select?(obj: KubeObject): boolean;
  row(obj: KubeObject): Record<string, string | number>;
  columns: {
    header: string;
    cell(row: { namespace: string; name: string } & Record<string, string | number>): string;
    phase?: boolean;
  }[];
}

/**
 * The kind a table shows, as the dashboard watches it: a kind above, or a custom kind served
 * by one of `crds`; undefined when neither knows it.
 */
export function watchedKindOf(kind: KindRef, crds: readonly KubeObject[]): WatchedKind | undefined {
  const known = ALL_KINDS.find(
    (k) => k.apiVersion === kind.apiVersion && k.kind === kind.kind && !k.fieldSelector,
  );
  if (known) return known;
  const [group, version] = kind.apiVersion.split('/');
  if (!group || !version) return undefined;
  for (const crd of crds) {
    const spec = crd.spec as
      | {
          group?: string;
          scope?: string;
          names?: { kind?: string; plural?: string };
          versions?: { name: string }[];
        }
      | undefined;
    if (!spec || spec.group !== group || spec.names?.kind !== kind.kind || !spec.names.plural) continue;
    if (!spec.versions?.some((v) => v.name === version)) continue;
    return {
      ...kind,
      crd: crd.metadata.name,
      resource: spec.names.plural,
      group,
      namespaced: spec.scope !== 'Cluster',
    };
  }
  return undefined;
}

export const CRD_KIND: KindRef = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' };

export { DEFAULT_GATE as DEFAULT_SEQUENCE_GATE } from '../apis/scheduling.example.com/v1alpha1.ts';
// The capabilities' published labels and annotations, from their API definitions.
export {
  GROUP_ANNOTATION,
  GROUP_LABEL,
  READY_LABEL as GROUP_READY_LABEL,
} from '../apis/scheduling.incubator.k8s.io/v1alpha1.ts';

/** Kueue: the queue a job joins. */
export const QUEUE_NAME_LABEL = 'kueue.x-k8s.io/queue-name';

/** Burst offloading (runpod-controller) and troupe's own offload state, on Jobs and virtual pods. */
export const Offload = {
  managed: 'runpod.io/managed',
  podId: 'runpod.io/pod-id',
  costPerHr: 'runpod.io/cost-per-hr',
  state: 'runpod.io/offload-state',
  reason: 'runpod.io/offload-reason',
  error: 'runpod.io/offload-error',
  exitCode: 'runpod.io/exit-code',
  gpuType: 'runpod.io/gpu-type',
  provider: 'runpod.io/provider',
  remoteStartedAt: 'runpod.io/remote-started-at',
  jobNameLabel: 'runpod.io/job-name',
  virtualLabel: 'runpod.io/virtual',
  virtualNode: 'runpod-virtual-node',
} as const;
