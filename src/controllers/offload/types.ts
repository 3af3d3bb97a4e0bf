/** The Kubernetes shapes burst offloading reads, narrowed from the runtime's loose KubeObject. */
import type { KubeObject } from '../../runtime/index.ts';

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
    resourceFieldRef?: { resource: string };
  };
}

export interface EnvFromSource {
  prefix?: string;
  secretRef?: { name: string; optional?: boolean };
  configMapRef?: { name: string; optional?: boolean };
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: unknown[];
  ports?: { containerPort: number; protocol?: string }[];
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: { name: string }[];
  imagePullSecrets?: { name: string }[];
  restartPolicy?: string;
  nodeName?: string;
  tolerations?: unknown[];
  nodeSelector?: Record<string, string>;
}

export interface Pod extends KubeObject {
  spec?: PodSpec;
  status?: {
    phase?: string;
    conditions?: Condition[];
    reason?: string;
    message?: string;
    startTime?: string;
    containerStatuses?: unknown[];
  };
}

export interface Job extends KubeObject {
  spec?: {
    parallelism?: number;
    completions?: number;
    completionMode?: string;
    suspend?: boolean;
    managedBy?: string;
    podReplacementPolicy?: string;
    selector?: { matchLabels?: Record<string, string> };
    template?: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec?: PodSpec;
    };
  };
  status?: {
    conditions?: Condition[];
    active?: number;
    succeeded?: number;
    failed?: number;
    startTime?: string;
  };
}

/** A remote pod as every provider reports it. */
export interface RemotePod {
  id: string;
  name: string;
  /** RunPod's status vocabulary (the cluster provider maps its pod phases onto it). */
  status: 'PROVISIONING' | 'STARTING' | 'RUNNING' | 'EXITED' | 'ERROR' | 'TERMINATED';
  costPerHr: number;
  gpuTypeId?: string;
  /** When the container last started (RunPod restarts it whenever it exits). */
  startedAt: string | null;
  createdAt?: string;
  /** Tags linking the pod to its cluster, namespace and Job. */
  tags: Partial<Record<'cluster' | 'namespace' | 'job' | 'jobUid' | 'marker', string>>;
  /** Exit code, where the provider can see one (another cluster can; RunPod cannot). */
  exitCode?: number;
}
