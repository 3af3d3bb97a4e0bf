/**
 * Burst offloading's flags of `troupe run`/`up`: the RunPod controller seed's, verbatim, and
 * troupe's own; and the options they make.
 */

import type { CapabilityFlag, CapabilityValues } from '../capability.ts';
import type { OffloadOptions } from './options.ts';

export const OFFLOAD_FLAGS: CapabilityFlag[] = [
  {
    flag: '--reconcile-interval <seconds>',
    description: 'offload: periodic resync of managed Jobs',
    value: 'positive',
    default: 30,
  },
  {
    flag: '--pending-job-threshold <n>',
    description: 'offload: offload when more managed Jobs than this are pending',
    value: 'non-negative-int',
    default: 1,
  },
  {
    flag: '--max-pending-time <seconds>',
    description: 'offload: offload a Job pending longer than this (0: at once)',
    value: 'non-negative',
    default: 0,
  },
  {
    flag: '--max-gpu-price <usd>',
    description: 'offload: highest hourly GPU price to rent',
    value: 'positive',
    default: 0.5,
  },
  {
    flag: '--max-hourly-spend <usd>',
    description: 'offload: cap on the summed hourly price of running remote pods (0: no cap)',
    value: 'non-negative',
    default: 0,
  },
  {
    flag: '--runpod-base-url <url>',
    description: 'offload: RunPod REST v2 endpoint (the API key comes from RUNPOD_KEY)',
  },
  {
    flag: '--remote-cluster-secret <ns/name>',
    description:
      'offload to a second Kubernetes cluster instead of RunPod: a Secret whose key `kubeconfig` reaches it',
  },
];

/**
 * The options the values make. `healthServerAddress` is the seed's alias of the manager's
 * probe address (a manager flag); `runpodKey` is not a flag (RUNPOD_KEY), but `troupe up`
 * passes the stand-in's.
 */
export function offloadOptionsFrom(values: CapabilityValues): Partial<OffloadOptions> {
  const keys = [
    'reconcileInterval',
    'pendingJobThreshold',
    'maxPendingTime',
    'maxGpuPrice',
    'maxHourlySpend',
    'runpodBaseUrl',
    'remoteClusterSecret',
    'healthServerAddress',
    'runpodKey',
  ] as const;
  const out: Record<string, unknown> = {};
  // Empty strings are unset flags (an empty TROUPE_ variable), as before.
  for (const k of keys) if (values[k] !== undefined && values[k] !== '') out[k] = values[k];
  return out as Partial<OffloadOptions>;
}
