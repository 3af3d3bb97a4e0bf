/**
 * Objects kube-apiserver makes for itself at start, beyond namespaces and RBAC:
 * - the two system PriorityClasses (pkg/registry/scheduling/rest/storage_scheduling.go's
 *   post-start hook, values from pkg/apis/scheduling: SystemCriticalPriority = 2e9);
 * - the local APIServices kube-aggregator registers for every built-in group version
 *   (pkg/controlplane/apiserver/aggregator.go, apiVersionPriorities), always Available;
 * - the ComponentStatuses `kubectl get componentstatuses` reads (pkg/registry/core/
 *   componentstatus/rest.go probes the scheduler, controller-manager and etcd; here the
 *   simulated components are healthy whenever the server answers).
 * Each object is created only when missing, so a restart on stored state keeps what is there.
 */
import type { Api } from '../api.ts';
import { ApiError } from '../errors.ts';
import type { KubeObject } from '../types.ts';

export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

export const SYSTEM_PRIORITY_CLASSES: KubeObject[] = [
  {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: 'system-node-critical' },
    value: SYSTEM_CRITICAL_PRIORITY + 1000,
    description: 'Used for system critical pods that must not be moved from their current node.',
    preemptionPolicy: 'PreemptLowerPriority',
  },
  {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: 'system-cluster-critical' },
    value: SYSTEM_CRITICAL_PRIORITY,
    description:
      'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
    preemptionPolicy: 'PreemptLowerPriority',
  },
];

/** kube-aggregator's group priorities for the built-in groups (higher is preferred). */
const GROUP_PRIORITY: Record<string, number> = {
  '': 18000,
  apps: 17800,
  'events.k8s.io': 17750,
  'authentication.k8s.io': 17700,
  'authorization.k8s.io': 17600,
  autoscaling: 17500,
  batch: 17400,
  'certificates.k8s.io': 17300,
  'networking.k8s.io': 17200,
  policy: 17100,
  'rbac.authorization.k8s.io': 17000,
  'storage.k8s.io': 16800,
  'admissionregistration.k8s.io': 16700,
  'scheduling.k8s.io': 16600,
  'coordination.k8s.io': 16500,
  'apiextensions.k8s.io': 16400,
  'node.k8s.io': 16300,
  'discovery.k8s.io': 16200,
  'flowcontrol.apiserver.k8s.io': 16100,
  'apiregistration.k8s.io': 18000,
};

function localApiServices(api: Api, createdAt: string): KubeObject[] {
  const out: KubeObject[] = [];
  for (const group of api.registry.groups()) {
    const groupPriority = GROUP_PRIORITY[group];
    if (groupPriority === undefined) continue;
    for (const version of api.registry.versions(group)) {
      out.push({
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        metadata: {
          name: `${version}.${group}`,
          labels: { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' },
        },
        spec: {
          ...(group ? { group } : {}),
          version,
          groupPriorityMinimum: groupPriority,
          versionPriority: version === 'v2' ? 30 : 15,
        },
        status: {
          conditions: [
            {
              type: 'Available',
              status: 'True',
              lastTransitionTime: createdAt,
              reason: 'Local',
              message: 'Local APIServices are always available',
            },
          ],
        },
      });
    }
  }
  return out;
}

const COMPONENTS: Array<[name: string, message: string]> = [
  ['scheduler', 'ok'],
  ['controller-manager', 'ok'],
  ['etcd-0', 'ok'],
];

async function ensure(api: Api, group: string, resource: string, obj: KubeObject): Promise<void> {
  const version = obj.apiVersion.includes('/') ? obj.apiVersion.split('/')[1]! : obj.apiVersion;
  const rt = api.registry.get(group, version, resource);
  if (!rt || api.tryGet(rt, '', obj.metadata.name!)) return;
  const status = obj.status;
  try {
    await api.create(rt, '', obj, { user: 'system:apiserver' });
  } catch (err) {
    if (err instanceof ApiError && err.status.code === 409) return;
    throw err;
  }
  // Status is the server's own: set through /status as the aggregator's controller does.
  if (status !== undefined && rt.subresources.includes('status')) {
    await api.updateWith(
      rt,
      '',
      obj.metadata.name!,
      { user: 'system:apiserver', subresource: 'status' },
      (cur) => ({
        ...cur,
        status,
      }),
      false,
    );
  }
}

export async function bootstrapSystemObjects(api: Api): Promise<void> {
  for (const pc of SYSTEM_PRIORITY_CLASSES) await ensure(api, 'scheduling.k8s.io', 'priorityclasses', pc);
  const now = new Date(api.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  for (const svc of localApiServices(api, now))
    await ensure(api, 'apiregistration.k8s.io', 'apiservices', svc);
  for (const [name, message] of COMPONENTS) {
    await ensure(api, '', 'componentstatuses', {
      apiVersion: 'v1',
      kind: 'ComponentStatus',
      metadata: { name },
      conditions: [{ type: 'Healthy', status: 'True', message }],
    });
  }
}
