/**
 * The Kubernetes objects a scenario's gangs become under a policy: the same manifests a user
 * would apply (PodGroups, Jobs, StatefulSets, AppWrappers, PodSequences with gated pods),
 * labelled so the collector can tell which gang each pod belongs to. Pure data: the
 * harness creates them through the API server at each gang's arrival time.
 */

import { formatGoDuration } from '../kube/duration.ts';
import type { Gang, Policy, Scenario } from './scenario.ts';

type Json = Record<string, unknown>;

export interface ResourceRef {
  group: string;
  version: string;
  resource: string;
}

export interface SimObject {
  gvr: ResourceRef;
  /** Empty for cluster-scoped objects. */
  namespace: string;
  object: Json & { metadata: { name: string; namespace?: string; [k: string]: unknown } };
}

/** Where every gang lives. */
export const SIM_NAMESPACE = 'sim';
/** The label that ties each pod to its gang (the name in the scenario). */
export const GANG_LABEL = 'troupe.dev/sim-gang';
/** The LocalQueue jobs join under a policy with `queues: true` (and AppWrappers always). */
export const SIM_QUEUE = 'sim';
export const GPU = 'nvidia.com/gpu';

const TROUPE_PODGROUP_LABEL = 'podgroup.jhwagner.github.io/name';
const XPODGROUP_LABEL = 'scheduling.x-k8s.io/pod-group';
const QUEUE_LABEL = 'kueue.x-k8s.io/queue-name';
const SEQUENCE_GATE = 'podsequence.example.com/sequence-gate';

const R = {
  namespaces: { group: '', version: 'v1', resource: 'namespaces' },
  pods: { group: '', version: 'v1', resource: 'pods' },
  priorityClasses: { group: 'scheduling.k8s.io', version: 'v1', resource: 'priorityclasses' },
  jobs: { group: 'batch', version: 'v1', resource: 'jobs' },
  statefulsets: { group: 'apps', version: 'v1', resource: 'statefulsets' },
  podGroups: { group: 'scheduling.incubator.k8s.io', version: 'v1alpha1', resource: 'podgroups' },
  xPodGroups: { group: 'scheduling.x-k8s.io', version: 'v1alpha1', resource: 'podgroups' },
  appWrappers: { group: 'workload.codeflare.dev', version: 'v1beta2', resource: 'appwrappers' },
  podSequences: { group: 'scheduling.example.com', version: 'v1alpha1', resource: 'podsequences' },
  resourceFlavors: { group: 'kueue.x-k8s.io', version: 'v1beta2', resource: 'resourceflavors' },
  clusterQueues: { group: 'kueue.x-k8s.io', version: 'v1beta2', resource: 'clusterqueues' },
  localQueues: { group: 'kueue.x-k8s.io', version: 'v1beta2', resource: 'localqueues' },
} as const satisfies Record<string, ResourceRef>;

export const SIM_RESOURCES = R;

export function priorityClassName(p: number): string {
  return p < 0 ? `sim-priority-minus-${-p}` : `sim-priority-${p}`;
}

/**
 * What exists before the first arrival: the namespace, a PriorityClass per priority the trace
 * uses, and a Kueue queue whose quota is the whole cluster (`quota`: total allocatable per
 * resource), so queueing orders admission without shrinking the cluster.
 */
export function setupObjects(scenario: Scenario, quota: Record<string, number>): SimObject[] {
  const out: SimObject[] = [
    {
      gvr: R.namespaces,
      namespace: '',
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SIM_NAMESPACE } },
    },
  ];
  const priorities = [...new Set(scenario.gangs.map((g) => g.priority))]
    .filter((p) => p !== 0)
    .sort((a, b) => a - b);
  for (const p of priorities) {
    out.push({
      gvr: R.priorityClasses,
      namespace: '',
      object: {
        apiVersion: 'scheduling.k8s.io/v1',
        kind: 'PriorityClass',
        metadata: { name: priorityClassName(p) },
        value: p,
        description: `troupe simulate: gangs of priority ${p}`,
      },
    });
  }
  const needsQueue =
    scenario.policies.some((p) => p.queues) || scenario.gangs.some((g) => g.kind === 'AppWrapper');
  if (needsQueue) {
    const resources = Object.entries(quota)
      .filter(([name]) => name === 'cpu' || name === 'memory' || name === GPU)
      .map(([name, n]) => ({ name, nominalQuota: name === 'memory' ? `${Math.floor(n / 2 ** 20)}Mi` : n }));
    out.push(
      {
        gvr: R.resourceFlavors,
        namespace: '',
        object: {
          apiVersion: 'kueue.x-k8s.io/v1beta2',
          kind: 'ResourceFlavor',
          metadata: { name: 'sim-flavor' },
        },
      },
      {
        gvr: R.clusterQueues,
        namespace: '',
        object: {
          apiVersion: 'kueue.x-k8s.io/v1beta2',
          kind: 'ClusterQueue',
          metadata: { name: 'sim-cluster-queue' },
          spec: {
            namespaceSelector: {},
            queueingStrategy: 'BestEffortFIFO',
            resourceGroups: [
              {
                coveredResources: resources.map((r) => r.name),
                flavors: [{ name: 'sim-flavor', resources }],
              },
            ],
          },
        },
      },
      {
        gvr: R.localQueues,
        namespace: SIM_NAMESPACE,
        object: {
          apiVersion: 'kueue.x-k8s.io/v1beta2',
          kind: 'LocalQueue',
          metadata: { name: SIM_QUEUE, namespace: SIM_NAMESPACE },
          spec: { clusterQueue: 'sim-cluster-queue' },
        },
      },
    );
  }
  return out;
}

/** The objects of one gang under one policy, in the order to create them. */
export function gangObjects(g: Gang, policy: Policy): SimObject[] {
  const out: SimObject[] = [];
  const ns = SIM_NAMESPACE;
  if (g.podGroup === 'troupe') {
    out.push({
      gvr: R.podGroups,
      namespace: ns,
      object: {
        apiVersion: 'scheduling.incubator.k8s.io/v1alpha1',
        kind: 'PodGroup',
        metadata: { name: g.name, namespace: ns },
        spec: {
          minMember: g.size,
          ...(policy.deadlockPolicy
            ? { deadlockPolicy: { action: 'Restart', ...policy.deadlockPolicy } }
            : {}),
        },
      },
    });
  } else if (g.podGroup === 'scheduler-plugins') {
    out.push({
      gvr: R.xPodGroups,
      namespace: ns,
      object: {
        apiVersion: 'scheduling.x-k8s.io/v1alpha1',
        kind: 'PodGroup',
        metadata: { name: g.name, namespace: ns },
        spec: { minMember: g.size },
      },
    });
  }
  const queued = g.kind === 'AppWrapper' || (policy.queues && g.kind === 'Job');
  const offloaded = policy.offload !== undefined && g.kind === 'Job';
  switch (g.kind) {
    case 'Job':
      out.push({ gvr: R.jobs, namespace: ns, object: job(g, queued, offloaded) });
      break;
    case 'AppWrapper':
      out.push({
        gvr: R.appWrappers,
        namespace: ns,
        object: {
          apiVersion: 'workload.codeflare.dev/v1beta2',
          kind: 'AppWrapper',
          metadata: { name: g.name, namespace: ns, labels: { [QUEUE_LABEL]: SIM_QUEUE } },
          spec: {
            suspend: true,
            components: [{ template: jobTemplate(g) }],
          },
        },
      });
      break;
    case 'StatefulSet':
      out.push({
        gvr: R.statefulsets,
        namespace: ns,
        object: {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          metadata: { name: g.name, namespace: ns },
          spec: {
            serviceName: g.name,
            replicas: g.size,
            podManagementPolicy: policy.podManagementPolicy ?? (g.orderedReady ? 'OrderedReady' : 'Parallel'),
            selector: { matchLabels: { [GANG_LABEL]: g.name } },
            template: podTemplate(g, 'Always'),
          },
        },
      });
      break;
    case 'Pods':
      for (let i = 0; i < g.size; i++) out.push(pod(g, `${g.name}-${i}`, g.startupSeconds, []));
      break;
    case 'PodSequence': {
      const tiers = g.tiers ?? [];
      const names = tiers.map((t) => Array.from({ length: t.size }, (_, i) => `${g.name}-${t.name}-${i}`));
      out.push({
        gvr: R.podSequences,
        namespace: ns,
        object: {
          apiVersion: 'scheduling.example.com/v1alpha1',
          kind: 'PodSequence',
          metadata: { name: g.name, namespace: ns },
          spec: { scope: 'Cluster', podGroups: tiers.map((t, i) => ({ name: t.name, pods: names[i] })) },
        },
      });
      tiers.forEach((t, i) => {
        for (const name of names[i]!) out.push(pod(g, name, t.readySeconds, [{ name: SEQUENCE_GATE }]));
      });
      break;
    }
  }
  return out;
}

function gangLabels(g: Gang): Record<string, string> {
  const labels: Record<string, string> = { [GANG_LABEL]: g.name };
  if (g.podGroup === 'troupe') labels[TROUPE_PODGROUP_LABEL] = g.name;
  if (g.podGroup === 'scheduler-plugins') labels[XPODGROUP_LABEL] = g.name;
  return labels;
}

/** The simulated kubelet's run-duration and exit-code annotations (src/cluster/kubelet/runtime.ts). */
function runAnnotations(g: Gang): Record<string, string> {
  if (g.fail) {
    return {
      'troupe.dev/run-duration': formatGoDuration(g.fail.afterMs),
      'troupe.dev/exit-code': String(g.fail.exitCode),
    };
  }
  // A StatefulSet's members run until the harness deletes it `duration` after the gang runs.
  if (g.durationMs !== undefined && g.kind !== 'StatefulSet') {
    return { 'troupe.dev/run-duration': formatGoDuration(g.durationMs) };
  }
  return {};
}

function container(g: Gang, readySeconds: number): Json {
  const requests: Record<string, string> = { cpu: g.cpu, memory: g.memory };
  if (g.gpus > 0) requests[GPU] = String(g.gpus);
  // The work, as a command too: an offloaded Job's remote pod runs the container's command
  // (the RunPod stand-in plays `sleep`), not the simulated kubelet's annotations.
  const work = g.fail
    ? ['sh', '-c', `sleep ${g.fail.afterMs / 1000}; exit ${g.fail.exitCode}`]
    : g.durationMs !== undefined && g.kind !== 'StatefulSet'
      ? ['sleep', String(g.durationMs / 1000)]
      : undefined;
  return {
    name: 'main',
    image: 'troupe.dev/simulated',
    ...(work ? { command: work } : {}),
    resources: { requests, limits: { ...requests } },
    ...(readySeconds > 0
      ? {
          readinessProbe: {
            exec: { command: ['true'] },
            initialDelaySeconds: readySeconds,
            periodSeconds: 1,
          },
        }
      : {}),
  };
}

function podSpec(g: Gang, restartPolicy: string, readySeconds: number): Json {
  return {
    restartPolicy,
    terminationGracePeriodSeconds: 0,
    ...(g.priority !== 0 ? { priorityClassName: priorityClassName(g.priority) } : {}),
    containers: [container(g, readySeconds)],
  };
}

function podTemplate(g: Gang, restartPolicy: string): Json {
  return {
    metadata: { labels: gangLabels(g), annotations: runAnnotations(g) },
    spec: podSpec(g, restartPolicy, g.startupSeconds),
  };
}

function jobTemplate(g: Gang): Json {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: g.name, labels: { [GANG_LABEL]: g.name } },
    spec: {
      parallelism: g.size,
      completions: g.size,
      // A gang told to fail fails at once; any other retries as Kubernetes' default allows
      // (a deadlock restart deletes members, which the Job controller counts as failures),
      // and members evicted by preemption are recreated without counting
      // (podFailurePolicy Ignore on DisruptionTarget, as Kubernetes recommends).
      backoffLimit: g.fail ? 0 : 6,
      podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
      template: podTemplate(g, 'Never'),
    },
  };
}

function job(g: Gang, queued: boolean, offloaded: boolean): SimObject['object'] {
  const t = jobTemplate(g) as { spec: Json };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: g.name,
      namespace: SIM_NAMESPACE,
      labels: { [GANG_LABEL]: g.name, ...(queued ? { [QUEUE_LABEL]: SIM_QUEUE } : {}) },
      annotations: offloaded ? { 'runpod.io/managed': 'true' } : {},
    },
    // Queued Jobs start suspended, as Kueue's webhook would make them.
    spec: { ...t.spec, ...(queued ? { suspend: true } : {}) },
  };
}

function pod(g: Gang, name: string, readySeconds: number, gates: Json[]): SimObject {
  return {
    gvr: R.pods,
    namespace: SIM_NAMESPACE,
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: SIM_NAMESPACE, labels: gangLabels(g), annotations: runAnnotations(g) },
      spec: { ...podSpec(g, 'Never', readySeconds), ...(gates.length > 0 ? { schedulingGates: gates } : {}) },
    },
  };
}
