/** AppWrapper objects and pods for the pure-core tests. */

import type { PodObject } from '../../../src/apis/workload.codeflare.dev/v1beta2.ts';
import {
  type AppWrapper,
  type AppWrapperStatus,
  AW_API_VERSION,
  AW_FINALIZER,
  AW_LABEL,
  type AwCondition,
} from '../../../src/apis/workload.codeflare.dev/v1beta2.ts';
import type { KubeObject } from '../../../src/runtime/index.ts';
import { pod as buildPod } from '../../support/objects.ts';

export const T0 = Date.parse('2026-03-01T12:00:00Z');

export function at(ms: number): Date {
  return new Date(T0 + ms);
}

export function iso(ms: number): string {
  return `${new Date(T0 + ms).toISOString().slice(0, 19)}Z`;
}

export function podTemplate(name = 'sample', cpu = '1'): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      restartPolicy: 'Never',
      containers: [
        {
          name: 'busybox',
          image: 'busybox',
          command: ['sh', '-c', 'sleep 5'],
          resources: { requests: { cpu } },
        },
      ],
    },
  };
}

export function jobTemplate(name = 'job', parallelism = 2, completions = 2): Record<string, unknown> {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: {
      parallelism,
      completions,
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '1' } } }],
        },
      },
    },
  };
}

export function appWrapper(
  opts: {
    name?: string;
    components?: AppWrapper['spec']['components'];
    suspend?: boolean;
    status?: AppWrapperStatus;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    finalizer?: boolean;
    deleting?: boolean;
  } = {},
): AppWrapper {
  return {
    apiVersion: AW_API_VERSION,
    kind: 'AppWrapper',
    metadata: {
      name: opts.name ?? 'sample',
      namespace: 'default',
      uid: 'aw-uid-1',
      resourceVersion: '10',
      labels: opts.labels ?? { 'kueue.x-k8s.io/queue-name': 'user-queue' },
      annotations: opts.annotations,
      finalizers: opts.finalizer === false ? undefined : [AW_FINALIZER],
      deletionTimestamp: opts.deleting ? iso(0) : undefined,
    },
    spec: {
      suspend: opts.suspend ?? false,
      components: opts.components ?? [{ template: podTemplate() }],
    },
    status: opts.status,
  };
}

export function cond(
  type: string,
  status: 'True' | 'False' | 'Unknown',
  reason: string,
  sinceMs = 0,
): AwCondition {
  return { type, status, reason, message: '', lastTransitionTime: iso(sinceMs) };
}

/** Status of a running single-Pod AppWrapper deployed at `deployedAt`. */
export function runningStatus(
  opts: { deployedAt?: number; resettingCount?: number; kind?: 'Pod' | 'Job' } = {},
): AppWrapperStatus {
  const kind = opts.kind ?? 'Pod';
  return {
    phase: 'Running',
    resettingCount: opts.resettingCount,
    conditions: [
      cond('QuotaReserved', 'True', 'Resuming', opts.deployedAt ?? 0),
      cond('ResourcesDeployed', 'True', 'Resuming', opts.deployedAt ?? 0),
      cond('PodsReady', 'False', 'Resuming', opts.deployedAt ?? 0),
      cond('Unhealthy', 'False', 'Resuming', opts.deployedAt ?? 0),
    ],
    componentStatus: [
      {
        name: kind === 'Pod' ? 'sample' : 'job',
        kind,
        apiVersion: kind === 'Pod' ? 'v1' : 'batch/v1',
        podSets:
          kind === 'Pod'
            ? [{ replicas: 1, path: 'template' }]
            : [{ replicas: 2, path: 'template.spec.template' }],
        conditions: [cond('ResourcesDeployed', 'True', 'ComponentCreatedSuccessfully', opts.deployedAt ?? 0)],
      },
    ],
  };
}

export function pod(
  name: string,
  phase: string,
  opts: { exitCode?: number; aw?: string; deleting?: boolean } = {},
): PodObject {
  return buildPod<PodObject>(name, {
    uid: `uid-${name}`,
    labels: { [AW_LABEL]: opts.aw ?? 'sample' },
    ...(opts.deleting ? { deletionTimestamp: iso(0) } : {}),
    phase,
    status: {
      containerStatuses:
        opts.exitCode !== undefined
          ? [{ name: 'c', state: { terminated: { exitCode: opts.exitCode } } }]
          : [],
    },
  });
}

/** The deployed component object as the API would return it. */
export function component(
  kind: 'Pod' | 'Job',
  opts: { failed?: boolean; deleting?: boolean; owner?: string } = {},
): KubeObject {
  return {
    apiVersion: kind === 'Pod' ? 'v1' : 'batch/v1',
    kind,
    metadata: {
      name: kind === 'Pod' ? 'sample' : 'job',
      namespace: 'default',
      uid: `uid-component-${kind}`,
      ownerReferences: [
        {
          apiVersion: AW_API_VERSION,
          kind: 'AppWrapper',
          name: 'sample',
          uid: opts.owner ?? 'aw-uid-1',
          controller: true,
        },
      ],
      deletionTimestamp: opts.deleting ? iso(0) : undefined,
    },
    status: opts.failed ? { conditions: [{ type: 'Failed', status: 'True' }] } : {},
  };
}

export function condOf(status: AppWrapperStatus | undefined, type: string): AwCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}
