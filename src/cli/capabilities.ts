/**
 * The capabilities troupe runs, each a set of controllers plus the CRDs it needs
 * installed. `--controllers` selects by capability name or controller name.
 */
import {
  type AppWrapperConfigInput,
  appWrapperControllers,
  appWrapperCrdManifests,
  appWrapperWebhookConfigurations,
  registerAppWrapperWebhooks,
} from '../controllers/appwrapper/index.ts';
import { createOffload, type OffloadOptions } from '../controllers/offload/index.ts';
import { podGroupControllers, podGroupCrdManifests } from '../controllers/podgroup/index.ts';
import {
  type PodSequenceOptions,
  podSequenceControllers,
  podSequenceCrd,
  podSequenceWebhookConfiguration,
  registerPodSequenceWebhooks,
} from '../controllers/podsequence/index.ts';
import type { Check, ControllerDefinition, Manager } from '../runtime/index.ts';

type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; [k: string]: unknown };
  [k: string]: unknown;
};

export interface Capability {
  name: string;
  summary: string;
  controllers: ControllerDefinition[];
  /** CRDs the controllers read or write; `troupe up` installs them. */
  crds: Manifest[];
  readyChecks?: [string, Check][];
  /**
   * Why the capability cannot do its work yet (no credentials), or undefined when it can.
   * Such a capability's ready checks count only when the user asked for it by name.
   */
  unconfigured?(): string | undefined;
  /** Admission webhooks served by the manager's webhook server. */
  webhooks?: {
    register(manager: Manager): void;
    /** The webhook configurations pointing the API server at `url` (embedded mode registers them). */
    configurations(url: string, caBundle: string): Manifest[];
  };
  stop?(): void | Promise<void>;
}

export interface CapabilityOptions {
  offload?: Partial<OffloadOptions>;
  podsequence?: PodSequenceOptions;
  /** Serve the AppWrapper defaulting/validating webhooks (embedded mode registers them). */
  appwrapperWebhooks?: boolean;
  /** Upstream AppWrapper's configuration (`--appwrapper-config`), for the controller and its webhooks. */
  appwrapper?: AppWrapperConfigInput;
}

/** Names of the capabilities, for tools that list them (install manifests). */
export function capabilityNames(): string[] {
  return capabilities().map((c) => c.name);
}

/** Builds every capability; cheap, nothing starts until the manager does. */
export function capabilities(opts: CapabilityOptions = {}): Capability[] {
  const offload = createOffload(opts.offload);
  const podsequence = opts.podsequence ?? {};
  return [
    {
      name: 'podgroup',
      summary: 'gang readiness labels and PodGroup lifecycle status',
      controllers: podGroupControllers(),
      crds: podGroupCrdManifests() as Manifest[],
    },
    {
      name: 'podsequence',
      summary: 'ordered startup of pod tiers through scheduling gates',
      controllers: podSequenceControllers(podsequence),
      crds: [podSequenceCrd as Manifest],
      // Full mode's webhook injects the tolerations of per-node tier taints.
      ...(podsequence.mode === 'full'
        ? {
            webhooks: {
              register: (m: Manager) => registerPodSequenceWebhooks(m, podsequence),
              configurations: (url: string, caBundle: string) => [
                podSequenceWebhookConfiguration({
                  name: 'troupe-podsequence-webhook',
                  url,
                  caBundle,
                }) as Manifest,
              ],
            },
          }
        : {}),
    },
    {
      name: 'appwrapper',
      summary: 'bundles of resources admitted as one unit through Kueue',
      controllers: appWrapperControllers(opts.appwrapper),
      crds: appWrapperCrdManifests() as Manifest[],
      ...(opts.appwrapperWebhooks
        ? {
            webhooks: {
              register: (m: Manager) => registerAppWrapperWebhooks(m.webhooks!, m.client, opts.appwrapper),
              configurations: (url: string, caBundle: string) =>
                appWrapperWebhookConfigurations({ url, caBundle }) as Manifest[],
            },
          }
        : {}),
    },
    {
      name: 'offload',
      summary: 'burst offloading of GPU Jobs to RunPod',
      controllers: offload.controllers,
      crds: [],
      readyChecks: offload.readyChecks,
      unconfigured: () =>
        offload.provider.configured()
          ? undefined
          : 'no provider credentials are configured (set RUNPOD_KEY, or --remote-cluster-secret)',
      stop: () => offload.stop(),
    },
  ];
}

/** Resolves `--controllers` (`*`, capability names or controller names, comma-separated). */
export function selectControllers(
  all: Capability[],
  selector: string,
): { capabilities: Capability[]; controllers: ControllerDefinition[] } {
  const wanted = selector
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const everything = wanted.length === 0 || wanted.includes('*');
  const chosen: Capability[] = [];
  const controllers: ControllerDefinition[] = [];
  const unknown = new Set(wanted.filter((w) => w !== '*'));
  for (const cap of all) {
    const take =
      everything || wanted.includes(cap.name)
        ? cap.controllers
        : cap.controllers.filter((d) => wanted.includes(d.name));
    unknown.delete(cap.name);
    for (const d of cap.controllers) unknown.delete(d.name);
    if (take.length > 0) {
      chosen.push(cap);
      controllers.push(...take);
    }
  }
  if (unknown.size > 0) {
    const names = all.flatMap((c) => [c.name, ...c.controllers.map((d) => d.name)]);
    throw new Error(
      `--controllers: unknown controller(s) ${[...unknown].join(', ')}; known: ${[...new Set(names)].join(', ')}`,
    );
  }
  return { capabilities: chosen, controllers };
}

/** Whether `--controllers` names the capability or one of its controllers (not only `*`). */
export function askedByName(cap: Capability, selector: string): boolean {
  const wanted = selector.split(',').map((s) => s.trim());
  return wanted.includes(cap.name) || cap.controllers.some((d) => wanted.includes(d.name));
}
