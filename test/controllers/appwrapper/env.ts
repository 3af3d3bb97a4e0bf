/**
 * An AppWrapper test environment: an API server (bare, or the whole embedded cluster), the
 * AppWrapper CRD, the Kueue stand-in with the seed's queues, and the controller running in a
 * runtime Manager over HTTP (optionally with its admission webhooks registered).
 */

import type { ApiServerHandle } from '../../../src/cluster/apiserver/server.ts';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { ClusterClient, GVR } from '../../../src/cluster/client.ts';
import type { EmbeddedClusterOptions } from '../../../src/cluster/index.ts';
import {
  KGVR,
  type KueueOptions,
  type KueueStandIn,
  startKueue,
  type Workload,
} from '../../../src/cluster/kueue/index.ts';
import {
  type AppWrapperOptions,
  appWrapperController,
  appWrapperCrdManifests,
  appWrapperWebhookConfigurations,
  registerAppWrapperWebhooks,
} from '../../../src/controllers/appwrapper/index.ts';
import { kubeConfigFromString, Manager } from '../../../src/runtime/index.ts';
import { startTestServer } from '../../support/apiserver.ts';
import type { KubectlResult } from '../../support/kubectl.ts';
import { waitFor } from '../../support/wait.ts';
import { podTemplate } from './fixtures.ts';

export { podTemplate };

export const AW = KGVR.appWrappers;

export interface Env {
  server: ApiServerHandle;
  client: ClusterClient;
  manager: Manager;
  kueue: KueueStandIn;
  /** Runs kubectl against the cluster; resolves with its exit code and output. */
  kubectl(args: string[], input?: string): Promise<KubectlResult>;
  stop(): Promise<void>;
}

export interface EnvOptions {
  /** Run on the whole embedded cluster (nodes, scheduler, kubelet, workload controllers). */
  embedded?: boolean;
  /** Options of that embedded cluster (its nodes, for instance). */
  cluster?: EmbeddedClusterOptions;
  webhook?: boolean;
  /** Serve the manager's probes and /metrics on a loopback port. */
  probes?: boolean;
  aw?: AppWrapperOptions;
  kueue?: KueueOptions;
}

export async function startEnv(opts: EnvOptions = {}): Promise<Env> {
  let server: ApiServerHandle;
  let client: ClusterClient;
  let kubectl: Env['kubectl'];
  let stopCluster: () => Promise<void>;
  if (opts.embedded) {
    // Loaded only here, so the bare tests do not load the whole simulated data plane.
    const { startTestCluster } = await import('../../support/cluster.ts');
    const tc = await startTestCluster(opts.cluster);
    server = tc.cluster.server;
    client = tc.cluster.client;
    kubectl = tc.kubectlResult;
    stopCluster = tc.close;
  } else {
    const ts = await startTestServer();
    server = ts.server;
    client = new ClusterClient(server.api, 'system:admin');
    kubectl = ts.kubectlResult;
    stopCluster = ts.close;
  }
  for (const crd of appWrapperCrdManifests()) await client.create(KGVR.crds, crd);
  await waitFor('AppWrapper CRD served', () => client.served(AW));
  const kueue = await startKueue(client, { defaultQueues: true, ...opts.kueue });
  const manager = new Manager({
    kubeConfig: kubeConfigFromString(server.kubeconfig),
    healthProbeAddress: opts.probes ? '127.0.0.1:0' : false,
    webhook: opts.webhook ? { port: 0 } : false,
    gracefulShutdownMs: 2000,
  });
  manager.add(appWrapperController(opts.aw));
  if (opts.webhook) registerAppWrapperWebhooks(manager.webhooks!, manager.client, opts.aw);
  await manager.start();
  if (opts.webhook) {
    const wh = manager.webhooks!;
    for (const cfg of appWrapperWebhookConfigurations({
      url: `https://127.0.0.1:${wh.port}`,
      caBundle: wh.caBundle,
    })) {
      const gvr =
        cfg.kind === 'MutatingWebhookConfiguration'
          ? {
              group: 'admissionregistration.k8s.io',
              version: 'v1',
              resource: 'mutatingwebhookconfigurations',
            }
          : {
              group: 'admissionregistration.k8s.io',
              version: 'v1',
              resource: 'validatingwebhookconfigurations',
            };
      await client.create(gvr, cfg);
    }
  }
  return {
    server,
    client,
    manager,
    kueue,
    kubectl,
    async stop() {
      await manager.stop();
      await kueue.stop();
      await stopCluster();
    },
  };
}

export function getAw(env: Env, name: string, ns = 'default'): KubeObject | undefined {
  return env.client.get(AW, ns, name);
}

export function phaseOf(env: Env, name: string, ns = 'default'): string | undefined {
  return (getAw(env, name, ns)?.status as { phase?: string } | undefined)?.phase;
}

export function conditionOf(obj: KubeObject | undefined, type: string) {
  return (
    (obj?.status as { conditions?: { type: string; status: string; reason: string; message: string }[] })
      ?.conditions ?? []
  ).find((c) => c.type === type);
}

export function waitPhase(
  env: Env,
  name: string,
  phase: string,
  timeoutMs = 20_000,
  ns = 'default',
): Promise<KubeObject> {
  return waitFor(
    `AppWrapper ${name} in phase ${phase} (now ${phaseOf(env, name, ns) ?? 'none'})`,
    () => (phaseOf(env, name, ns) === phase ? getAw(env, name, ns) : undefined),
    { timeoutMs },
  );
}

export function workloadOf(env: Env, name: string, ns = 'default'): Workload | undefined {
  return env.client
    .list<Workload>(KGVR.workloads, ns)
    .find((w) => w.metadata.ownerReferences?.some((r) => r.kind === 'AppWrapper' && r.name === name));
}

/** Plays the kubelet on the bare server: writes a pod's phase (and an exit code). */
export async function setPodPhase(
  env: Env,
  name: string,
  phase: string,
  exitCode?: number,
  ns = 'default',
): Promise<void> {
  await env.client.mutate(
    GVR.pods,
    ns,
    name,
    (pod) => {
      const containers = (
        (pod.spec as { containers?: { name: string; image?: string }[] })?.containers ?? []
      ).map((c) => {
        const state =
          phase === 'Running'
            ? { running: { startedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z') } }
            : phase === 'Pending'
              ? { waiting: { reason: 'ContainerCreating' } }
              : {
                  terminated: {
                    exitCode: exitCode ?? (phase === 'Succeeded' ? 0 : 1),
                    reason: phase === 'Succeeded' ? 'Completed' : 'Error',
                  },
                };
        return {
          name: c.name,
          image: c.image ?? '',
          imageID: '',
          ready: phase === 'Running',
          restartCount: 0,
          state,
        };
      });
      pod.status = { ...(pod.status as object), phase, containerStatuses: containers };
    },
    'status',
  );
}

export function appWrapper(
  name: string,
  opts: {
    cpu?: string;
    annotations?: Record<string, string>;
    components?: unknown[];
    queue?: string | null;
    suspend?: boolean;
  } = {},
): KubeObject {
  const labels: Record<string, string> = {};
  if (opts.queue !== null) labels['kueue.x-k8s.io/queue-name'] = opts.queue ?? 'user-queue';
  return {
    apiVersion: 'workload.codeflare.dev/v1beta2',
    kind: 'AppWrapper',
    metadata: { name, namespace: 'default', labels, annotations: opts.annotations },
    spec: {
      suspend: opts.suspend ?? true,
      components: opts.components ?? [{ template: podTemplate(name, opts.cpu) }],
    },
  };
}
