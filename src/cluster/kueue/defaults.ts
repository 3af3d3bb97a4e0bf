/**
 * The queue setup of the AppWrapper seed's `deploy-kueue` step: a `default-flavor`
 * ResourceFlavor, a `cluster-queue` ClusterQueue admitting every namespace with a nominal
 * quota of 4 CPUs, and a `user-queue` LocalQueue in `default`. samples/kueue-default-queues.yaml
 * holds the same objects for `kubectl apply`.
 */

import type { KubeObject } from '../apiserver/types.ts';
import type { Gvr } from '../client.ts';
import { KGVR, KUEUE_API_VERSION } from './api.ts';

export interface DefaultQueuesOptions {
  /** Namespace of the LocalQueue (default `default`). */
  namespace?: string;
  /** CPU quota of the ClusterQueue (default 4). */
  cpu?: string | number;
  /** Other resources to cover with their quota, e.g. { memory: '16Gi', pods: 100 }. */
  resources?: Record<string, string | number>;
  queueingStrategy?: 'StrictFIFO' | 'BestEffortFIFO';
}

export const DEFAULT_FLAVOR = 'default-flavor';
export const DEFAULT_CLUSTER_QUEUE = 'cluster-queue';
export const DEFAULT_USER_QUEUE = 'user-queue';

export function defaultQueueObjects(opts: DefaultQueuesOptions = {}): [Gvr, KubeObject][] {
  const quotas: Record<string, string | number> = { cpu: opts.cpu ?? 4, ...(opts.resources ?? {}) };
  return [
    [
      KGVR.resourceFlavors,
      { apiVersion: KUEUE_API_VERSION, kind: 'ResourceFlavor', metadata: { name: DEFAULT_FLAVOR } },
    ],
    [
      KGVR.clusterQueues,
      {
        apiVersion: KUEUE_API_VERSION,
        kind: 'ClusterQueue',
        metadata: { name: DEFAULT_CLUSTER_QUEUE },
        spec: {
          namespaceSelector: {},
          queueingStrategy: opts.queueingStrategy ?? 'BestEffortFIFO',
          resourceGroups: [
            {
              coveredResources: Object.keys(quotas),
              flavors: [
                {
                  name: DEFAULT_FLAVOR,
                  resources: Object.entries(quotas).map(([name, nominalQuota]) => ({ name, nominalQuota })),
                },
              ],
            },
          ],
        },
      },
    ],
    [
      KGVR.localQueues,
      {
        apiVersion: KUEUE_API_VERSION,
        kind: 'LocalQueue',
        metadata: { name: DEFAULT_USER_QUEUE, namespace: opts.namespace ?? 'default' },
        spec: { clusterQueue: DEFAULT_CLUSTER_QUEUE },
      },
    ],
  ];
}
