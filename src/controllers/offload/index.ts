/**
 * Burst offloading of GPU Jobs (the seed's runpod-controller, done on RunPod's REST v2):
 * managed Jobs that wait too long run remotely, represented in the cluster by a virtual
 * node and a virtual pod, and their remote pods are terminated when the Jobs finish or go.
 *
 * ```ts
 * const offload = createOffload({ maxGpuPrice: 0.5 });          // key from RUNPOD_KEY
 * for (const c of offload.controllers) manager.add(c);
 * for (const [name, check] of offload.readyChecks) manager.addReadyzCheck(name, check);
 * // manager: healthProbeAddress = offload.options.healthServerAddress
 * // Or to another Kubernetes cluster, its kubeconfig in a Secret (key `kubeconfig`):
 * createOffload({ remoteClusterSecret: 'kube-system/gpu-cluster' });
 * ```
 */
import type { Clock } from '../../lib/clock.ts';
import type { Check, ControllerDefinition } from '../../runtime/index.ts';
import { ClusterProvider } from './cluster-provider.ts';
import { offloadController } from './controller.ts';
import { type OffloadOptions, resolveOffloadOptions } from './options.ts';
import type { OffloadProvider } from './provider.ts';
import { RunPodProvider } from './runpod.ts';

export { ClusterProvider, type ClusterProviderOptions, REMOTE_LABELS } from './cluster-provider.ts';
export { SWEEP_KEY } from './controller.ts';
export * as OffloadKeys from './keys.ts';
export {
  type CloudType,
  DEFAULT_OFFLOAD_OPTIONS,
  DEFAULT_RUNPOD_BASE_URL,
  type OffloadOptions,
  resolveOffloadOptions,
} from './options.ts';
export {
  type LaunchHooks,
  type LaunchLimits,
  type LaunchOutcome,
  type OffloadProvider,
  ProviderError,
} from './provider.ts';
export { RunPodProvider, type RunPodProviderOptions } from './runpod.ts';
export type { RemotePod } from './types.ts';

export interface Offload {
  controllers: ControllerDefinition[];
  /** `[name, check]` pairs for the manager's /readyz: ready when the provider answers with a configured key. */
  readyChecks: [string, Check][];
  options: OffloadOptions;
  provider: OffloadProvider;
  /** Stops background log watchers (they also stop with the controllers). */
  stop(): void;
}

export interface CreateOffloadDeps {
  /** Another provider (tests); default: the cluster provider with `remoteClusterSecret`, else RunPod REST v2. */
  provider?: OffloadProvider;
  env?: Record<string, string | undefined>;
  /** Default the real clock. */
  clock?: Clock;
}

/** Everything burst offloading registers on a manager. Throws on invalid options. */
export function createOffload(partial: Partial<OffloadOptions> = {}, deps: CreateOffloadDeps = {}): Offload {
  const options = resolveOffloadOptions(partial, deps.env ?? process.env);
  const provider =
    deps.provider ??
    (options.remoteClusterSecret
      ? new ClusterProvider({
          secret: options.remoteClusterSecret,
          clusterName: options.clusterName,
          timeoutMs: options.requestTimeout * 1000,
          clock: deps.clock,
        })
      : new RunPodProvider({
          baseUrl: options.runpodBaseUrl,
          apiKey: options.runpodKey,
          clusterName: options.clusterName,
          timeoutMs: options.requestTimeout * 1000,
          clock: deps.clock,
        }));
  const c = offloadController({ options, provider, clock: deps.clock });
  return { controllers: c.controllers, readyChecks: c.readyChecks, options, provider, stop: c.stop };
}

/** The offload controllers alone (`offload`, `offload-node`). */
export function offloadControllers(
  partial: Partial<OffloadOptions> = {},
  deps: CreateOffloadDeps = {},
): ControllerDefinition[] {
  return createOffload(partial, deps).controllers;
}
