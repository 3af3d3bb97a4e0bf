/**
 * The in-cluster representation of offloaded work (pure builders): the virtual node that
 * hosts virtual pods (tainted so nothing else lands there, tolerated by virtual pods) and
 * the virtual pod of a Job. The virtual pod is owned by the Job, carries the Job's
 * selector labels and the Job controller's tracking finalizer, so the built-in Job
 * controller counts it as the Job's active pod: it creates no local pod while the remote
 * one runs, and ends the Job Complete or Failed from the virtual pod's final phase.
 */
import { validateLabelValue } from '../../kube/labels.ts';
import type { KubeObject } from '../../runtime/index.ts';
import * as K from './keys.ts';
import type { Job, Pod } from './types.ts';
import { virtualPodName } from './workload.ts';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** How often the virtual node's Lease and Ready heartbeat are renewed (as a kubelet does). */
export const NODE_HEARTBEAT_MS = 10_000;

export function virtualNode(name: string, provider: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        [K.VIRTUAL_LABEL]: 'true',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/role': 'agent',
        type: 'virtual-kubelet',
      },
      annotations: { 'troupe.dev/offload-provider': provider },
    },
    spec: { taints: [{ key: K.VIRTUAL_LABEL, value: 'true', effect: 'NoSchedule' }] },
  };
}

export function virtualNodeStatus(ready: boolean, message: string, now: string): Record<string, unknown> {
  const big = { cpu: '1000', memory: '4Ti', pods: '1000', 'nvidia.com/gpu': '1000', 'amd.com/gpu': '1000' };
  return {
    capacity: big,
    allocatable: big,
    conditions: [
      {
        type: 'Ready',
        status: ready ? 'True' : 'False',
        reason: ready ? 'ProviderReady' : 'ProviderUnavailable',
        message,
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      },
    ],
    addresses: [{ type: 'Hostname', address: K.VIRTUAL_NODE_NAME }],
    nodeInfo: {
      kubeletVersion: 'v1.32.0-troupe-offload',
      operatingSystem: 'linux',
      architecture: 'amd64',
      containerRuntimeVersion: 'runpod://v2',
      kernelVersion: '',
      osImage: 'RunPod',
      machineID: '',
      systemUUID: '',
      bootID: '',
      kubeProxyVersion: '',
    },
  };
}

export function nodeLease(name: string, renewTime: string): KubeObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: NODE_LEASE_NAMESPACE },
    spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime },
  };
}

export interface VirtualPodInfo {
  provider: string;
  /** Absent while the launch is under way (the virtual pod then only claims the Job's slot). */
  remoteId?: string;
  costPerHr?: number;
  gpuTypeId?: string;
  remoteStatus?: string;
}

/**
 * The `runpod.io/pod-id` label of a linked virtual pod. A provider id that is not a valid
 * label value (none of RunPod's is) is kept in the annotation only.
 */
export function podIdLabel(remoteId: string | undefined): Record<string, string> {
  return remoteId && !validateLabelValue(remoteId) ? { [K.POD_ID]: remoteId } : {};
}

/**
 * The virtual pod standing for a Job's remote pod (its status is written separately).
 * It is created before the remote pod, unlinked, to take the Job's active slot; the
 * remote pod's id is added once it exists.
 */
export function virtualPod(job: Job, info: VirtualPodInfo): Pod {
  const tpl = job.spec?.template;
  const c = tpl?.spec?.containers[0];
  const name = job.metadata.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: virtualPodName(job),
      namespace: job.metadata.namespace,
      labels: {
        ...(tpl?.metadata?.labels ?? {}),
        ...(job.spec?.selector?.matchLabels ?? {}),
        [K.MANAGED]: 'true',
        [K.JOB_NAME_LABEL]: name,
        ...podIdLabel(info.remoteId),
      },
      annotations: {
        // What the upstream controller's CreateVirtualPod puts on it (users select on them).
        [K.EXTERNAL]: 'true',
        [K.JOB_NAME_LABEL]: name,
        [K.PROVIDER]: info.provider,
        ...(info.remoteId ? { [K.POD_ID]: info.remoteId } : {}),
        ...(info.costPerHr !== undefined ? { [K.COST_PER_HR]: String(info.costPerHr) } : {}),
        ...(info.remoteStatus ? { [K.REMOTE_STATUS]: info.remoteStatus } : {}),
        ...(info.gpuTypeId ? { [K.GPU_TYPE]: info.gpuTypeId } : {}),
      },
      ownerReferences: [
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          name,
          uid: job.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      finalizers: [K.JOB_TRACKING_FINALIZER],
    },
    spec: {
      nodeName: K.VIRTUAL_NODE_NAME,
      restartPolicy: 'Never',
      nodeSelector: { [K.VIRTUAL_LABEL]: 'true' },
      tolerations: [
        { key: K.VIRTUAL_LABEL, operator: 'Exists', effect: 'NoSchedule' },
        // The remote pod keeps running when troupe is away; its stand-in must stay too.
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
      ],
      containers: [
        {
          name: c?.name ?? 'runpod',
          image: c?.image ?? 'runpod',
          ...(c?.command ? { command: c.command } : {}),
          ...(c?.args ? { args: c.args } : {}),
          ...(c?.resources ? { resources: c.resources } : {}),
        },
      ],
    },
  };
}
