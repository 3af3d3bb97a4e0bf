/**
 * The linked message tables and the (apiVersion, kind) → top-level message mapping: the
 * kinds whose protobuf bodies the server accepts.
 */
import { AUTHENTICATION, AUTHORIZATION, RBAC } from './messages/access.ts';
import { CERTIFICATES } from './messages/certificates.ts';
import { CORE } from './messages/core.ts';
import { META } from './messages/meta.ts';
import { NETWORKING } from './messages/networking.ts';
import { POLICY, SCHEDULING } from './messages/policy.ts';
import { APPS, AUTOSCALING, BATCH } from './messages/workloads.ts';
import { linkMessages, type MessageDesc, parsePackage } from './schema.ts';

export const MESSAGES: ReadonlyMap<string, MessageDesc> = linkMessages([
  ...parsePackage('meta', META),
  ...parsePackage('core', CORE),
  ...parsePackage('apps', APPS),
  ...parsePackage('batch', BATCH),
  ...parsePackage('autoscaling', AUTOSCALING),
  ...parsePackage('networking', NETWORKING),
  ...parsePackage('rbac', RBAC),
  ...parsePackage('authz', AUTHORIZATION),
  ...parsePackage('authn', AUTHENTICATION),
  ...parsePackage('policy', POLICY),
  ...parsePackage('scheduling', SCHEDULING),
  ...parsePackage('certificates', CERTIFICATES),
]);

const KINDS_BY_GROUP_VERSION: Record<string, Record<string, string>> = {
  v1: {
    Namespace: 'core.Namespace',
    ServiceAccount: 'core.ServiceAccount',
    ConfigMap: 'core.ConfigMap',
    Secret: 'core.Secret',
    Service: 'core.Service',
    Pod: 'core.Pod',
    PodTemplate: 'core.PodTemplate',
    Binding: 'core.Binding',
    ResourceQuota: 'core.ResourceQuota',
    LimitRange: 'core.LimitRange',
    PersistentVolumeClaim: 'core.PersistentVolumeClaim',
  },
  'apps/v1': { Deployment: 'apps.Deployment', ReplicaSet: 'apps.ReplicaSet', DaemonSet: 'apps.DaemonSet' },
  'batch/v1': { Job: 'batch.Job', CronJob: 'batch.CronJob' },
  // kubectl autoscale creates autoscaling/v1 objects.
  'autoscaling/v1': { HorizontalPodAutoscaler: 'autoscaling.HorizontalPodAutoscaler' },
  'networking.k8s.io/v1': { Ingress: 'networking.Ingress' },
  'rbac.authorization.k8s.io/v1': {
    Role: 'rbac.Role',
    ClusterRole: 'rbac.ClusterRole',
    RoleBinding: 'rbac.RoleBinding',
    ClusterRoleBinding: 'rbac.ClusterRoleBinding',
  },
  'authorization.k8s.io/v1': {
    SelfSubjectAccessReview: 'authz.SelfSubjectAccessReview',
    SubjectAccessReview: 'authz.SubjectAccessReview',
    LocalSubjectAccessReview: 'authz.LocalSubjectAccessReview',
    SelfSubjectRulesReview: 'authz.SelfSubjectRulesReview',
  },
  'authentication.k8s.io/v1': {
    TokenRequest: 'authn.TokenRequest',
    TokenReview: 'authn.TokenReview',
    SelfSubjectReview: 'authn.SelfSubjectReview',
  },
  'policy/v1': { PodDisruptionBudget: 'policy.PodDisruptionBudget', Eviction: 'policy.Eviction' },
  // kubectl drain still speaks policy/v1beta1 to servers that do not list policy/v1.
  'policy/v1beta1': { Eviction: 'policy.Eviction' },
  'scheduling.k8s.io/v1': { PriorityClass: 'scheduling.PriorityClass' },
  'certificates.k8s.io/v1': { CertificateSigningRequest: 'certificates.CertificateSigningRequest' },
};

/** The top-level message for a kind, or undefined when the server cannot decode it. */
export function messageForKind(apiVersion: string, kind: string): MessageDesc | undefined {
  // client-go registers DeleteOptions in every group version it talks to.
  const name = kind === 'DeleteOptions' ? 'meta.DeleteOptions' : KINDS_BY_GROUP_VERSION[apiVersion]?.[kind];
  return name === undefined ? undefined : MESSAGES.get(name);
}

/** Every (apiVersion, kind) pair with a decoder, DeleteOptions aside. */
export function supportedKinds(): { apiVersion: string; kind: string }[] {
  return Object.entries(KINDS_BY_GROUP_VERSION).flatMap(([apiVersion, kinds]) =>
    Object.keys(kinds).map((kind) => ({ apiVersion, kind })),
  );
}
