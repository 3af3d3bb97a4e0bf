/**
 * PodSequence integration harness: the embedded API server (no data plane), the controller
 * in a runtime Manager over real HTTP, a minimal kubelet stand-in that binds released pods
 * and reports them Running/Ready (on demand or after a delay), and an order checker that
 * sees every pod event in resourceVersion order and records any early release.
 */

import type { PodSequence } from '../../../src/apis/scheduling.example.com/v1alpha1.ts';
import {
  type ApiServerHandle,
  type ApiServerOptions,
  startApiServer,
} from '../../../src/cluster/apiserver/server.ts';
import { ClusterClient, GVR } from '../../../src/cluster/client.ts';
import {
  type PodSequenceOptions,
  podSequenceControllers,
  podSequenceCrd,
} from '../../../src/controllers/podsequence/index.ts';
import type { Pod } from '../../../src/controllers/podsequence/objects.ts';
import { candidateNodes, hasGate, isDone, podNode } from '../../../src/controllers/podsequence/pods.ts';
import { type ResolvedSpec, resolveSpec } from '../../../src/controllers/podsequence/spec.ts';
import {
  kubeConfigFromString,
  Manager,
  type ManagerOptions,
  silentLogger,
} from '../../../src/runtime/index.ts';
import { pod as buildPod } from '../../support/objects.ts';
import { waitFor } from '../../support/wait.ts';

const CRD_GVR = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };
export const PODSEQ_GVR = { group: 'scheduling.example.com', version: 'v1alpha1', resource: 'podsequences' };

export interface Harness {
  server: ApiServerHandle;
  /** Every HTTP request the API server answered (the controller's; the harness works in-process). */
  requests: { method: string; path: string; code: number }[];
  /** In-process admin client: not subject to injected faults. */
  cluster: ClusterClient;
  manager: Manager | undefined;
  startController(
    opts?: PodSequenceOptions,
    managerOpts?: Partial<ManagerOptions>,
    beforeStart?: (mgr: Manager) => void,
  ): Promise<Manager>;
  /** Stops the controller; `abrupt` aborts in-flight reconciles at once (a crash). */
  stopController(abrupt?: boolean): Promise<void>;
  kubelet: Kubelet;
  close(): Promise<void>;
}

export async function startHarness(
  opts: { nodes?: string[]; server?: ApiServerOptions; autoReadyMs?: number } = {},
): Promise<Harness> {
  const requests: Harness['requests'] = [];
  const server = await startApiServer({
    port: 0,
    tls: false,
    log: (msg, f) => {
      if (msg === 'request')
        requests.push({ method: String(f.method), path: String(f.path), code: Number(f.code) });
    },
    ...opts.server,
  });
  const cluster = new ClusterClient(server.api, 'system:admin');
  await cluster.create(CRD_GVR, podSequenceCrd);
  await waitFor('the CRD to be served', () => cluster.served(PODSEQ_GVR));
  for (const name of opts.nodes ?? ['node-a', 'node-b', 'node-c']) {
    await cluster.create(GVR.nodes, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { 'kubernetes.io/hostname': name } },
      spec: {},
    });
  }
  const kubelet = new Kubelet(cluster, opts.autoReadyMs);
  const h: Harness = {
    server,
    requests,
    cluster,
    manager: undefined,
    kubelet,
    async startController(o = {}, m = {}, beforeStart) {
      const mgr = new Manager({
        kubeConfig: kubeConfigFromString(server.kubeconfig),
        healthProbeAddress: false,
        processMetrics: false,
        gracefulShutdownMs: 5_000,
        logger: silentLogger(),
        ...m,
      });
      for (const c of podSequenceControllers(o)) mgr.add(c);
      beforeStart?.(mgr);
      await mgr.start();
      h.manager = mgr;
      return mgr;
    },
    async stopController(abrupt = false) {
      const mgr = h.manager;
      h.manager = undefined;
      if (!mgr) return;
      if (abrupt) {
        for (const name of mgr.controllerNames) await mgr.getController(name)?.abortNow();
      }
      await mgr.stop();
    },
    async close() {
      await h.stopController();
      kubelet.stop();
      await server.close();
    },
  };
  return h;
}

/**
 * Binds pods once no gate is left (to their pinned or narrowed node when they have one)
 * and reports them Running; Ready follows `ready(name)` or `autoReadyMs`.
 */
export class Kubelet {
  private readonly cluster: ClusterClient;
  private readonly autoReadyMs: number | undefined;
  private readonly stopWatch: () => void;
  private readonly seen = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  failures: string[] = [];
  /** Where pods without a node constraint go, in turn. */
  nodes: string[] = ['node-a', 'node-b', 'node-c'];
  private next = 0;

  constructor(cluster: ClusterClient, autoReadyMs?: number) {
    this.cluster = cluster;
    this.autoReadyMs = autoReadyMs;
    this.stopWatch = cluster.watch(GVR.pods, (type, obj) => {
      if (type === 'DELETED') return;
      const pod = obj as Pod;
      const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
      if ((pod.spec?.schedulingGates ?? []).length > 0 || pod.spec?.nodeName || this.seen.has(key)) return;
      this.seen.add(key);
      queueMicrotask(
        () => void this.start(pod).catch((err) => this.failures.push(`${key}: ${(err as Error).message}`)),
      );
    });
  }

  private async start(pod: Pod): Promise<void> {
    const ns = pod.metadata.namespace!;
    const name = pod.metadata.name!;
    const candidates = candidateNodes(pod);
    const node = candidates ? [...candidates].sort()[0]! : this.nodes[this.next++ % this.nodes.length]!;
    await this.cluster.bind(ns, name, node);
    await this.setStatus(ns, name, { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] });
    if (this.autoReadyMs !== undefined) {
      const t = setTimeout(
        () => {
          this.timers.delete(t);
          if (!this.stopped) void this.ready(name, ns).catch(() => {});
        },
        this.autoReadyMs * (0.5 + Math.random()),
      );
      this.timers.add(t);
    }
  }

  async setStatus(ns: string, name: string, status: Record<string, unknown>): Promise<void> {
    await this.cluster.mutate(
      GVR.pods,
      ns,
      name,
      (obj) => {
        const p = obj as unknown as Pod;
        p.status = { ...p.status, ...status };
        const conds = (status.conditions as { type: string }[] | undefined) ?? [];
        if (conds.length > 0) {
          const others = (p.status.conditions ?? []).filter((c) => !conds.some((n) => n.type === c.type));
          p.status.conditions = [...others, ...(conds as never[])];
        }
      },
      'status',
    );
  }

  ready(name: string, ns = 'default'): Promise<void> {
    return this.setStatus(ns, name, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] });
  }

  succeed(name: string, ns = 'default'): Promise<void> {
    return this.setStatus(ns, name, {
      phase: 'Succeeded',
      conditions: [{ type: 'Ready', status: 'False', reason: 'PodCompleted' }],
    });
  }

  stop(): void {
    this.stopped = true;
    this.stopWatch();
    for (const t of this.timers) clearTimeout(t);
  }
}

export interface Violation {
  pod: string;
  group: number;
  why: string;
}

/**
 * Watches every pod event (in resourceVersion order, inside the write that caused it) and
 * checks each release of `gate` against the state of the other pods at that instant:
 * Cluster scope, every pod of every earlier group done; Node scope, on every node the pod
 * may land on, every earlier group present and done.
 */
export class OrderChecker {
  readonly violations: Violation[] = [];
  /** Each release, with the wall-clock time it was observed. */
  readonly releases: { pod: string; group: number; rv: number; at: number }[] = [];
  private readonly pods = new Map<string, Pod>();
  private readonly stopWatch: () => void;
  private spec: ResolvedSpec;
  private readonly defaultGate: string;

  constructor(
    cluster: ClusterClient,
    seq: PodSequence,
    defaultGate = 'podsequence.example.com/sequence-gate',
  ) {
    this.defaultGate = defaultGate;
    this.spec = resolveSpec(seq, defaultGate);
    const ns = this.spec.namespace;
    this.stopWatch = cluster.watch(
      GVR.pods,
      (type, obj) => {
        const pod = obj as Pod;
        const name = pod.metadata.name!;
        if (type === 'DELETED') {
          this.pods.delete(name);
          return;
        }
        const before = this.pods.get(name);
        if (before && hasGate(before, this.spec.gate) && !hasGate(pod, this.spec.gate)) this.check(pod);
        this.pods.set(name, pod);
      },
      { namespace: ns },
    );
  }

  /** The spec to check against from now on (call it when the test edits the sequence). */
  update(seq: PodSequence): void {
    this.spec = resolveSpec(seq, this.defaultGate);
  }

  private groupsOf(pod: Pod): number[] {
    return this.spec.groups
      .filter((g) =>
        g.pods ? g.pods.includes(pod.metadata.name!) : g.selector?.matches(pod.metadata.labels),
      )
      .map((g) => g.index);
  }

  groupOf(pod: Pod): number | undefined {
    const hits = this.groupsOf(pod);
    return hits.length === 1 ? hits[0] : undefined;
  }

  private check(pod: Pod): void {
    const hits = this.groupsOf(pod);
    if (hits.length === 0) return;
    if (hits.length > 1) {
      this.violations.push({
        pod: pod.metadata.name!,
        group: -1,
        why: `released although in groups ${hits}`,
      });
      return;
    }
    const k = hits[0]!;
    this.releases.push({
      pod: pod.metadata.name!,
      group: k,
      rv: Number(pod.metadata.resourceVersion),
      at: Date.now(),
    });
    const earlier = [...this.pods.values()].filter((p) => {
      const g = this.groupOf(p);
      return g !== undefined && g < k;
    });
    if (this.spec.scope === 'Cluster') {
      for (let j = 0; j < k; j++) {
        const g = this.spec.groups[j]!;
        const members = earlier.filter((p) => this.groupOf(p) === j);
        const missing = (g.pods ?? []).filter((n) => !this.pods.has(n));
        const notDone = members.filter((p) => !isDone(p)).map((p) => p.metadata.name);
        if (members.length === 0 || missing.length > 0 || notDone.length > 0) {
          this.violations.push({
            pod: pod.metadata.name!,
            group: k,
            why: `group ${j} not ready: ${members.length} pods, missing [${missing}], not done [${notDone}]`,
          });
        }
      }
      return;
    }
    const nodes = candidateNodes(pod);
    if (k > 0 && !nodes) {
      this.violations.push({ pod: pod.metadata.name!, group: k, why: 'released without a node constraint' });
      return;
    }
    for (const node of nodes ?? []) {
      for (let j = 0; j < k; j++) {
        const here = earlier.filter((p) => this.groupOf(p) === j && podNode(p) === node);
        const notDone = here.filter((p) => !isDone(p)).map((p) => p.metadata.name);
        if (here.length === 0 || notDone.length > 0) {
          this.violations.push({
            pod: pod.metadata.name!,
            group: k,
            why: `node ${node}: group ${j} has ${here.length} pods, not done [${notDone}]`,
          });
        }
      }
    }
  }

  stop(): void {
    this.stopWatch();
  }
}

export function gatedPod(
  name: string,
  o: { labels?: Record<string, string>; gate?: string; pinned?: string; namespace?: string } = {},
): Pod {
  return buildPod<Pod>(name, {
    namespace: o.namespace ?? 'default',
    ...(o.labels ? { labels: o.labels } : {}),
    gates: [o.gate ?? 'podsequence.example.com/sequence-gate'],
    image: 'nginx:latest',
    ...(o.pinned ? { pinnedTo: o.pinned } : {}),
  });
}
