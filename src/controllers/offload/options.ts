/**
 * Options of burst offloading: the seed's flags with the seed's defaults, plus troupe's own.
 */

import { isDNS1123Label } from '../../kube/labels.ts';

export type CloudType = 'SECURE' | 'COMMUNITY';

export interface OffloadOptions {
  /** `--kubeconfig` (used by the CLI to build the manager; not read here). */
  kubeconfig?: string;
  /** `--reconcile-interval`, seconds (default 30): only a resync; decisions follow watch events at once. */
  reconcileInterval: number;
  /** `--pending-job-threshold` (default 1): more pending managed Jobs than this offloads the excess. */
  pendingJobThreshold: number;
  /** `--max-pending-time`, seconds (default 0): a managed Job pending longer than this is offloaded. */
  maxPendingTime: number;
  /** `--max-gpu-price`, USD per hour (default 0.5) for one remote pod. */
  maxGpuPrice: number;
  /** `--health-server-address` (default :8080): the manager's probe address, wired by the CLI. */
  healthServerAddress: string;
  /** RunPod API key (default: env RUNPOD_KEY). */
  runpodKey?: string;
  /** RunPod REST v2 base URL (default https://api.runpod.io/v2). */
  runpodBaseUrl: string;
  /** Spending cap in USD per hour across every offloaded Job (0 = none). */
  maxHourlySpend: number;
  /** Name of this cluster, tagged on every remote pod; clusters sharing an account need distinct names. */
  clusterName: string;
  /** Default cloud tier (a Job's `runpod.io/cloud-type` overrides it). */
  cloud: CloudType;
  /** How often an offloaded Job's remote pod is polled, seconds (default 5). */
  statusPollInterval: number;
  /** Per-request timeout towards the provider, seconds (default 15). */
  requestTimeout: number;
  /** Container disk in GB when the Job requests no ephemeral storage (default 20). */
  defaultDiskGb: number;
  /** Offload to another Kubernetes cluster instead of RunPod: its kubeconfig Secret `namespace/name` (key `kubeconfig`). */
  remoteClusterSecret?: string;
}

export const DEFAULT_RUNPOD_BASE_URL = 'https://api.runpod.io/v2';

export const DEFAULT_OFFLOAD_OPTIONS: Readonly<OffloadOptions> = Object.freeze({
  reconcileInterval: 30,
  pendingJobThreshold: 1,
  maxPendingTime: 0,
  maxGpuPrice: 0.5,
  healthServerAddress: ':8080',
  runpodBaseUrl: DEFAULT_RUNPOD_BASE_URL,
  maxHourlySpend: 0,
  clusterName: 'troupe',
  cloud: 'SECURE' as CloudType,
  statusPollInterval: 5,
  requestTimeout: 15,
  defaultDiskGb: 20,
});

/**
 * Fills defaults (the key from `RUNPOD_KEY`) and rejects impossible values, so bad flags
 * fail at start with a clear message instead of misbehaving later.
 */
export function resolveOffloadOptions(
  partial: Partial<OffloadOptions> = {},
  env: Record<string, string | undefined> = process.env,
): OffloadOptions {
  const o: OffloadOptions = { ...DEFAULT_OFFLOAD_OPTIONS, ...stripUndefined(partial) };
  if (o.runpodKey === undefined && env.RUNPOD_KEY) o.runpodKey = env.RUNPOD_KEY;
  const errors: string[] = [];
  const nonNegative = (name: string, v: number) => {
    if (!Number.isFinite(v) || v < 0) errors.push(`${name} must be a non-negative number, got ${v}`);
  };
  nonNegative('reconcile-interval', o.reconcileInterval);
  nonNegative('max-pending-time', o.maxPendingTime);
  nonNegative('max-gpu-price', o.maxGpuPrice);
  nonNegative('max-hourly-spend', o.maxHourlySpend);
  if (!Number.isInteger(o.pendingJobThreshold) || o.pendingJobThreshold < 0) {
    errors.push(`pending-job-threshold must be a non-negative integer, got ${o.pendingJobThreshold}`);
  }
  if (!(o.reconcileInterval > 0)) errors.push('reconcile-interval must be positive');
  if (!(o.statusPollInterval > 0)) errors.push('status-poll-interval must be positive');
  if (!(o.requestTimeout > 0)) errors.push('request-timeout must be positive');
  if (o.cloud !== 'SECURE' && o.cloud !== 'COMMUNITY')
    errors.push(`cloud must be SECURE or COMMUNITY, got ${o.cloud}`);
  try {
    const u = new URL(o.runpodBaseUrl);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('scheme');
  } catch {
    errors.push(`runpod base URL is not an http(s) URL: ${o.runpodBaseUrl}`);
  }
  if (!isDNS1123Label(o.clusterName)) {
    errors.push(`cluster name must be a DNS label, got ${o.clusterName}`);
  }
  if (errors.length) throw new Error(`invalid offload options: ${errors.join('; ')}`);
  o.runpodBaseUrl = o.runpodBaseUrl.replace(/\/+$/, '');
  return o;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
