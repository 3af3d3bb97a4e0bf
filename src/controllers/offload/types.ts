/** The Kubernetes shapes burst offloading reads, narrowed from the runtime's loose KubeObject. */
import type {
  Job as BuiltinJob,
  PodSpec as BuiltinPodSpec,
  Container,
  PodStatus,
  PodTemplateSpec,
} from '../../kube/builtin.ts';
import type { KubeObject } from '../../runtime/index.ts';

export type { Container, EnvFromSource, EnvVar } from '../../kube/builtin.ts';
export type { Condition } from '../../kube/conditions.ts';

/** The API server validated these pods and templates: `containers` is always present. */
export type PodSpec = BuiltinPodSpec & { containers: Container[] };

export interface Pod extends KubeObject {
  spec?: PodSpec;
  status?: PodStatus;
}

/** A Job as the API server validated it: its template's `containers` is always present. */
export type Job = BuiltinJob & { spec?: { template?: PodTemplateSpec & { spec?: PodSpec } } };

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
