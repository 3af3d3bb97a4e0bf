/**
 * The built-in kinds' shapes, once: type-only imports of `kubernetes-models` (generated from
 * Kubernetes' OpenAPI), made loose as the cache and the API hold objects (`Loose<T>` below),
 * so the partial objects code and fixtures build (and enum values a newer server may send)
 * still typecheck, while field names and nesting come from Kubernetes itself.
 */

import type { IDaemonSetSpec } from 'kubernetes-models/apps/v1/DaemonSetSpec';
import type { IDaemonSetStatus } from 'kubernetes-models/apps/v1/DaemonSetStatus';
import type { IDeploymentCondition } from 'kubernetes-models/apps/v1/DeploymentCondition';
import type { IDeploymentSpec } from 'kubernetes-models/apps/v1/DeploymentSpec';
import type { IDeploymentStatus } from 'kubernetes-models/apps/v1/DeploymentStatus';
import type { IReplicaSetCondition } from 'kubernetes-models/apps/v1/ReplicaSetCondition';
import type { IReplicaSetSpec } from 'kubernetes-models/apps/v1/ReplicaSetSpec';
import type { IReplicaSetStatus } from 'kubernetes-models/apps/v1/ReplicaSetStatus';
import type { IStatefulSetSpec } from 'kubernetes-models/apps/v1/StatefulSetSpec';
import type { IStatefulSetStatus } from 'kubernetes-models/apps/v1/StatefulSetStatus';
import type { ICronJobSpec } from 'kubernetes-models/batch/v1/CronJobSpec';
import type { ICronJobStatus } from 'kubernetes-models/batch/v1/CronJobStatus';
import type { IJobCondition } from 'kubernetes-models/batch/v1/JobCondition';
import type { IJobSpec } from 'kubernetes-models/batch/v1/JobSpec';
import type { IJobStatus } from 'kubernetes-models/batch/v1/JobStatus';
import type { IAffinity } from 'kubernetes-models/v1/Affinity';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IContainerStatus } from 'kubernetes-models/v1/ContainerStatus';
import type { IEnvFromSource } from 'kubernetes-models/v1/EnvFromSource';
import type { IEnvVar } from 'kubernetes-models/v1/EnvVar';
import type { INodeAffinity } from 'kubernetes-models/v1/NodeAffinity';
import type { INodeSelectorRequirement } from 'kubernetes-models/v1/NodeSelectorRequirement';
import type { INodeSelectorTerm } from 'kubernetes-models/v1/NodeSelectorTerm';
import type { INodeSpec } from 'kubernetes-models/v1/NodeSpec';
import type { INodeStatus } from 'kubernetes-models/v1/NodeStatus';
import type { IPodAffinity } from 'kubernetes-models/v1/PodAffinity';
import type { IPodAffinityTerm } from 'kubernetes-models/v1/PodAffinityTerm';
import type { IPodCondition } from 'kubernetes-models/v1/PodCondition';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IPodStatus } from 'kubernetes-models/v1/PodStatus';
import type { IPodTemplateSpec } from 'kubernetes-models/v1/PodTemplateSpec';
import type { IPreferredSchedulingTerm } from 'kubernetes-models/v1/PreferredSchedulingTerm';
import type { IResourceRequirements } from 'kubernetes-models/v1/ResourceRequirements';
import type { IServiceStatus } from 'kubernetes-models/v1/ServiceStatus';
import type { ITaint } from 'kubernetes-models/v1/Taint';
import type { IToleration } from 'kubernetes-models/v1/Toleration';
import type { ITopologySpreadConstraint } from 'kubernetes-models/v1/TopologySpreadConstraint';
import type { IWeightedPodAffinityTerm } from 'kubernetes-models/v1/WeightedPodAffinityTerm';
import type { KubeObject } from './object.ts';

/**
 * Kubernetes' shape made loose: objects and lists may be absent at every depth (code and
 * fixtures build partial objects), while an item that is present carries the scalar fields
 * Kubernetes requires of it (a Taint's key and effect, a container's name, a condition's
 * type and status); string enums are widened to `string`.
 */
export type Loose<T> = T extends string
  ? string
  : T extends number | boolean
    ? T
    : T extends readonly (infer U)[]
      ? Loose<U>[]
      : T extends object
        ? string extends keyof T
          ? Record<string, Loose<T[keyof T]>> // a map (labels, resource quantities)
          : Flat<
              { [K in RequiredScalar<T>]: Loose<T[K]> } & {
                [K in Exclude<keyof T, RequiredScalar<T>>]?: Loose<T[K]>;
              }
            >
        : T;

/** The keys of T that Kubernetes requires and whose values are scalars. */
type RequiredScalar<T> = {
  [K in keyof T]-?: object extends Pick<T, K> ? never : T[K] extends string | number | boolean ? K : never;
}[keyof T];

type Flat<T> = { [K in keyof T]: T[K] };

export type PodSpec = Loose<IPodSpec>;
export type Container = Loose<IContainer>;
export type EnvVar = Loose<IEnvVar>;
export type EnvFromSource = Loose<IEnvFromSource>;
export type ResourceRequirements = Loose<IResourceRequirements>;
/** Resource name to quantity (`cpu: '500m'`, `pods: 110`), as requests, limits and allocatable hold them. */
export type ResourceList = NonNullable<ResourceRequirements['requests']>;
export type Affinity = Loose<IAffinity>;
export type NodeAffinity = Loose<INodeAffinity>;
export type PreferredSchedulingTerm = Loose<IPreferredSchedulingTerm>;
export type PodAffinity = Loose<IPodAffinity>;
export type PodAffinityTerm = Loose<IPodAffinityTerm>;
export type WeightedPodAffinityTerm = Loose<IWeightedPodAffinityTerm>;
export type TopologySpreadConstraint = Loose<ITopologySpreadConstraint>;
/** meta/v1 LabelSelector (reached through a field: the apimachinery package is not a direct dependency). */
export type LabelSelector = NonNullable<PodAffinityTerm['labelSelector']>;
export type LabelSelectorRequirement = NonNullable<LabelSelector['matchExpressions']>[number];
/**
 * meta/v1 Condition, the conditions of API-convention kinds (Kueue's Workload, ...): type,
 * status, reason, message and lastTransitionTime always set. Reached through ServiceStatus,
 * which holds a list of them, as the apimachinery package is not a direct dependency.
 */
export type MetaCondition = NonNullable<Loose<IServiceStatus>['conditions']>[number];
export type PodStatus = Loose<IPodStatus>;
export type PodCondition = Loose<IPodCondition>;
export type ContainerStatus = Loose<IContainerStatus>;
export type NodeSpec = Loose<INodeSpec>;
export type NodeStatus = Loose<INodeStatus>;
export type NodeSelectorTerm = Loose<INodeSelectorTerm>;
export type NodeSelectorRequirement = Loose<INodeSelectorRequirement>;
export type Taint = Loose<ITaint>;
export type Toleration = Loose<IToleration>;
export type PodTemplateSpec = Loose<IPodTemplateSpec>;
export type JobSpec = Loose<IJobSpec>;
export type JobStatus = Loose<IJobStatus>;
export type JobCondition = Loose<IJobCondition>;
export type CronJobSpec = Loose<ICronJobSpec>;
export type CronJobStatus = Loose<ICronJobStatus>;
export type DeploymentSpec = Loose<IDeploymentSpec>;
export type DeploymentStatus = Loose<IDeploymentStatus>;
export type DeploymentCondition = Loose<IDeploymentCondition>;
export type ReplicaSetSpec = Loose<IReplicaSetSpec>;
export type ReplicaSetStatus = Loose<IReplicaSetStatus>;
export type ReplicaSetCondition = Loose<IReplicaSetCondition>;
export type StatefulSetSpec = Loose<IStatefulSetSpec>;
export type StatefulSetStatus = Loose<IStatefulSetStatus>;
export type DaemonSetSpec = Loose<IDaemonSetSpec>;
export type DaemonSetStatus = Loose<IDaemonSetStatus>;

/** A Pod as the cache holds it: any stored object, with Kubernetes' Pod fields. */
export interface Pod extends KubeObject {
  spec?: PodSpec;
  status?: PodStatus;
}

/** A Node as the cache holds it. */
export interface Node extends KubeObject {
  spec?: NodeSpec;
  status?: NodeStatus;
}

/** batch/v1 Job. */
export interface Job extends KubeObject {
  spec?: JobSpec;
  status?: JobStatus;
}

/** batch/v1 CronJob. */
export interface CronJob extends KubeObject {
  spec?: CronJobSpec;
  status?: CronJobStatus;
}

/** apps/v1 Deployment. */
export interface Deployment extends KubeObject {
  spec?: DeploymentSpec;
  status?: DeploymentStatus;
}

/** apps/v1 ReplicaSet. */
export interface ReplicaSet extends KubeObject {
  spec?: ReplicaSetSpec;
  status?: ReplicaSetStatus;
}

/** apps/v1 StatefulSet. */
export interface StatefulSet extends KubeObject {
  spec?: StatefulSetSpec;
  status?: StatefulSetStatus;
}

/** apps/v1 DaemonSet. */
export interface DaemonSet extends KubeObject {
  spec?: DaemonSetSpec;
  status?: DaemonSetStatus;
}
