/**
 * Acceptance: the five samples, applied verbatim with kubectl to the embedded cluster
 * (API server, nodes, scheduler, KWOK-compatible kubelet, workload controllers), release
 * their pods in exactly the order the README describes, and `kubectl get pods -w` would
 * show every pod go SchedulingGated → Pending → Running. Lite mode first, then the
 * node-scoped sample again in full mode (taints and the webhook).
 */

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { PodSequence } from '../../../src/apis/scheduling.example.com/v1alpha1.ts';
import { GVR } from '../../../src/cluster/client.ts';
import { type EmbeddedCluster, startEmbeddedCluster } from '../../../src/cluster/index.ts';
import {
  podSequenceControllers,
  podSequenceWebhookConfiguration,
  registerPodSequenceWebhooks,
  taintKey,
} from '../../../src/controllers/podsequence/index.ts';
import type { Node, Pod } from '../../../src/controllers/podsequence/objects.ts';
import { podStatusString } from '../../../src/kube/pod.ts';
import { kubeConfigFromString, Manager, silentLogger } from '../../../src/runtime/index.ts';
import { type Kubectl, kubectlFor } from '../../support/kubectl.ts';
import { waitFor } from '../../support/wait.ts';
import { OrderChecker, PODSEQ_GVR } from './harness.ts';

const root = new URL('../../../', import.meta.url);
const path = (p: string) => new URL(p, root).pathname;

let cluster: EmbeddedCluster;
let k: Kubectl;
let manager: Manager | undefined;

async function kubectl(args: string[]): Promise<string> {
  return (await k.run(args)).stdout;
}

async function startManager(mode: 'lite' | 'full'): Promise<Manager> {
  const mgr = new Manager({
    kubeConfig: kubeConfigFromString(cluster.server.kubeconfig),
    healthProbeAddress: false,
    processMetrics: false,
    logger: silentLogger(),
    webhook: mode === 'full' ? { port: 0, host: '127.0.0.1' } : false,
  });
  for (const c of podSequenceControllers({ mode })) mgr.add(c);
  if (mode === 'full') registerPodSequenceWebhooks(mgr, { mode });
  await mgr.start();
  if (mode === 'full') {
    // As `troupe up` does on the embedded cluster: under its own name, so that applying
    // config/webhook/webhook.yaml (a real cluster's service-based entry) cannot replace it.
    const cfg = podSequenceWebhookConfiguration({
      name: 'troupe-podsequence-webhook',
      url: `https://127.0.0.1:${mgr.webhooks!.port}`,
      caBundle: mgr.webhooks!.caBundle,
    });
    await cluster.client.create(
      { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingwebhookconfigurations' },
      cfg,
    );
  }
  return mgr;
}

before(async () => {
  cluster = await startEmbeddedCluster({ port: 0, nodes: 3, timeScale: 10 });
  k = await kubectlFor(cluster.server.kubeconfig);
  await kubectl(['apply', '-f', path('config/crd/podsequence-crd.yaml')]);
  await kubectl([
    'wait',
    '--for=condition=Established',
    'crd/podsequences.scheduling.example.com',
    '--timeout=30s',
  ]);
});

after(async () => {
  await manager?.stop();
  await cluster?.stop();
  await k?.cleanup();
});

/** Per pod, the STATUS column `kubectl get pods -w` would print, without repeats. */
class DisplayTracker {
  readonly shown = new Map<string, string[]>();
  private readonly stop: () => void;
  constructor() {
    this.stop = cluster.client.watch(
      GVR.pods,
      (type, obj) => {
        if (type === 'DELETED') return;
        const pod = obj as Pod;
        const list = this.shown.get(pod.metadata.name!) ?? [];
        const s = podStatusString(pod);
        if (list.at(-1) !== s) list.push(s);
        this.shown.set(pod.metadata.name!, list);
      },
      { namespace: 'default' },
    );
  }
  close(): void {
    this.stop();
  }
}

async function sampleSequence(file: string): Promise<PodSequence> {
  const docs = parseAllDocuments(await readFile(path(file), 'utf8')).map((d) => d.toJS() as PodSequence);
  return docs.find((d) => d?.kind === 'PodSequence')!;
}

interface Run {
  seq: PodSequence;
  checker: OrderChecker;
  display: DisplayTracker;
}

async function runSample(file: string): Promise<Run> {
  const seq = await sampleSequence(file);
  const checker = new OrderChecker(cluster.client, seq);
  const display = new DisplayTracker();
  await kubectl(['apply', '-f', path(file)]);
  const name = seq.metadata.name!;
  await waitFor(
    `${name} Completed`,
    () =>
      (cluster.client.get(PODSEQ_GVR, 'default', name) as PodSequence | undefined)?.status?.phase ===
      'Completed',
    // Long enough for the scheduler's periodic retry of unschedulable pods (scaled by the
    // cluster's timeScale) to rescue a pod whose event-driven requeue was missed (see notes).
    { timeoutMs: 120_000 },
  ).catch((err) => {
    const got = cluster.client.get(PODSEQ_GVR, 'default', name) as PodSequence | undefined;
    // Say why pods are stuck: the scheduler's message is the useful part of a failure.
    const stuck = (cluster.client.list(GVR.pods, 'default') as Pod[])
      .filter((p) => !p.spec?.nodeName)
      .map(
        (p) =>
          `${p.metadata?.name}: ${JSON.stringify(p.status?.conditions)} tolerations=${JSON.stringify(p.spec?.tolerations)} affinity=${JSON.stringify(p.spec?.affinity)}`,
      );
    const taints = (cluster.client.list(GVR.nodes) as Node[]).map(
      (n) => `${n.metadata?.name}: ${JSON.stringify(n.spec?.taints)}`,
    );
    throw new Error(
      `${(err as Error).message}: ${got?.status?.phase} ${got?.status?.message}\n${stuck.join('\n')}\n${taints.join('\n')}`,
    );
  });
  checker.stop();
  display.close();
  assert.deepEqual(checker.violations, [], 'no pod released before its predecessors were Ready');
  for (const [pod, shown] of display.shown) {
    if (checker.groupOf(cluster.client.get(GVR.pods, 'default', pod) as Pod) === undefined) continue;
    const gated = shown.indexOf('SchedulingGated');
    const pending = shown.indexOf('Pending');
    const running = shown.indexOf('Running');
    assert.ok(gated === 0 && pending > gated && running > pending, `${pod} went ${shown.join(' → ')}`);
  }
  return { seq, checker, display };
}

async function deleteSample(file: string): Promise<void> {
  await kubectl(['delete', '-f', path(file), '--wait=true', '--timeout=60s']);
  await waitFor('pods gone', () => cluster.client.list(GVR.pods, 'default').length === 0, {
    timeoutMs: 60_000,
  });
}

/** Groups in the order they were released (each group's releases contiguous). */
function releaseOrder(run: Run): number[] {
  const order: number[] = [];
  for (const r of [...run.checker.releases].sort((a, b) => a.rv - b.rv))
    if (order.at(-1) !== r.group) order.push(r.group);
  return order;
}

describe('lite mode', () => {
  before(async () => {
    manager = await startManager('lite');
  });
  after(async () => {
    await manager?.stop();
    manager = undefined;
  });

  test('example-podsequence.yaml: example-pod-1, then example-pod-2, then example-pod-3', async (t) => {
    const run = await runSample('config/samples/example-podsequence.yaml');
    for (const [pod, shown] of run.display.shown) t.diagnostic(`${pod}: ${shown.join(' → ')}`);
    assert.deepEqual(
      [...run.checker.releases].sort((a, b) => a.rv - b.rv).map((r) => r.pod),
      ['example-pod-1', 'example-pod-2', 'example-pod-3'],
    );
    const s = (cluster.client.get(PODSEQ_GVR, 'default', 'example-sequence') as PodSequence).status!;
    assert.deepEqual(s.processedPods, ['example-pod-1', 'example-pod-2', 'example-pod-3']);
    await deleteSample('config/samples/example-podsequence.yaml');
  });

  test('podgroups-example.yaml: database layer, application layer, frontend', async () => {
    const run = await runSample('config/samples/podgroups-example.yaml');
    assert.deepEqual(releaseOrder(run), [0, 1, 2]);
    const table = await kubectl(['get', 'podseq', 'podgroups-example']);
    assert.match(table, /podgroups-example\s+Cluster\s+Completed\s+3\/3\s+Frontend Layer\s+1\/1/);
    await deleteSample('config/samples/podgroups-example.yaml');
  });

  test('database-init-example.yaml: init-db, database, migrate, app', async () => {
    const run = await runSample('config/samples/database-init-example.yaml');
    assert.deepEqual(
      [...run.checker.releases].sort((a, b) => a.rv - b.rv).map((r) => r.pod),
      ['init-db', 'database', 'migrate', 'app'],
    );
    await deleteSample('config/samples/database-init-example.yaml');
  });

  for (const [file, name, second] of [
    ['config/samples/node-scoped-csi-example.yaml', 'csi-driver-sequence', 'my-app'],
    ['config/samples/node-scoped-device-plugin-example.yaml', 'daemonset-sequence', 'ml-training'],
  ] as const) {
    test(`${file.split('/').pop()}: per node, the DaemonSet's pod before the workload's`, async () => {
      await runSample(file);
      const s = (cluster.client.get(PODSEQ_GVR, 'default', name) as PodSequence).status!;
      const nodes = cluster.client.list(GVR.nodes).map((n) => n.metadata.name!);
      assert.deepEqual(
        s.nodeStatus!.map((n) => n.nodeName),
        nodes.sort(),
        'every node has the DaemonSet pod',
      );
      assert.ok(s.nodeStatus!.every((n) => n.phase === 'Completed' && n.currentIndex === 2));
      const workload = cluster.client.list(GVR.pods, 'default', {
        labelSelector: `app=${second}`,
      }) as unknown as Pod[];
      assert.ok(workload.length >= 2);
      for (const p of workload) {
        const terms =
          p.spec!.affinity!.nodeAffinity!.requiredDuringSchedulingIgnoredDuringExecution!.nodeSelectorTerms!;
        const allowed = terms.flatMap((t) => t.matchFields?.[0]?.values ?? []);
        assert.ok(
          allowed.includes(p.spec!.nodeName!),
          `${p.metadata.name} runs on a node it was released to`,
        );
      }
      await deleteSample(file);
    });
  }

  test("example-with-waits.yaml (upstream's waitDuration sample): each tier waits after the previous one is Ready", async () => {
    const file = 'config/samples/example-with-waits.yaml';
    const waits: string[] = [];
    const stop = cluster.client.watch(
      { group: 'scheduling.example.com', version: 'v1alpha1', resource: 'podsequences' },
      (_type, obj) => {
        const until = (obj as PodSequence).status?.waitingUntil;
        if (until && !waits.includes(until)) waits.push(until);
      },
      { namespace: 'default' },
    );
    const run = await runSample(file);
    stop();
    assert.deepEqual(releaseOrder(run), [0, 1, 2]);
    const readyAt = (names: string[]) =>
      Math.max(
        ...names.map((n) => {
          const pod = cluster.client.get(GVR.pods, 'default', n) as Pod;
          const ready = pod.status?.conditions?.find((c) => c.type === 'Ready') as
            | { lastTransitionTime?: string }
            | undefined;
          return Date.parse(ready?.lastTransitionTime ?? '');
        }),
      );
    const firstRelease = (group: number) =>
      Math.min(...run.checker.releases.filter((r) => r.group === group).map((r) => r.at));
    // Ready times are recorded to the second: allow that much.
    assert.ok(firstRelease(1) - readyAt(['postgres-0', 'postgres-1']) >= 9_000, 'the cache waited 10 s');
    assert.ok(firstRelease(2) - readyAt(['redis-0']) >= 4_000, 'the application waited 5 s');
    assert.equal(waits.length, 2, `the status showed both waits: ${waits.join(', ')}`);
    const events = await kubectl([
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=example-with-waits,reason=Waiting',
      '-o',
      'jsonpath={.items[*].message}',
    ]);
    assert.match(
      events,
      /All pods in Database ready, waiting 10s before next group: 'Cache' \(2\/3\) is released at /,
    );
    assert.match(events, /All pods in Cache ready, waiting 5s before next group/);
    await deleteSample(file);
  });
  test('a waitDuration Go cannot parse, applied with kubectl, fails the sequence in upstream’s words', async () => {
    // The CRD takes any string (as upstream's does); the controller judges it.
    const manifest = `
apiVersion: v1
kind: Pod
metadata: {name: db, namespace: default}
spec:
  schedulingGates: [{name: podsequence.example.com/sequence-gate}]
  containers: [{name: c, image: postgres}]
---
apiVersion: scheduling.example.com/v1alpha1
kind: PodSequence
metadata: {name: bad-wait, namespace: default}
spec:
  podGroups:
  - {name: Database, pods: [db], waitDuration: "ten seconds"}
  - {name: App, pods: [app]}
`;
    await k.run(['apply', '-f', '-'], manifest);
    let message: string;
    let events: string;
    let gates: string;
    try {
      await waitFor(
        'bad-wait Failed',
        () =>
          (cluster.client.get(PODSEQ_GVR, 'default', 'bad-wait') as PodSequence | undefined)?.status
            ?.phase === 'Failed',
        { timeoutMs: 60_000 },
      );
      message = await kubectl(['get', 'podseq', 'bad-wait', '-o', 'jsonpath={.status.message}']);
      events = await kubectl([
        'get',
        'events',
        '--field-selector',
        'involvedObject.name=bad-wait,reason=InvalidSpec,type=Warning',
        '-o',
        'jsonpath={.items[*].message}',
      ]);
      gates = await kubectl(['get', 'pod', 'db', '-o', 'jsonpath={.spec.schedulingGates[*].name}']);
    } finally {
      await k.run(['delete', '-f', '-', '--wait=true', '--timeout=60s'], manifest);
    }
    assert.equal(message, 'Invalid wait duration in Database: time: invalid duration "ten seconds"');
    assert.match(events, /Invalid wait duration in Database: time: invalid duration "ten seconds"/);
    assert.equal(gates, 'podsequence.example.com/sequence-gate', 'an invalid sequence releases nothing');
  });

  test('a tier meant per node spreads over the nodes as their earlier tier becomes Ready', async () => {
    const nodes = (cluster.client.list(GVR.nodes) as Node[]).map((n) => n.metadata.name!).sort();
    const gate = [{ name: 'podsequence.example.com/sequence-gate' }];
    await cluster.client.create(PODSEQ_GVR, {
      apiVersion: 'scheduling.example.com/v1alpha1',
      kind: 'PodSequence',
      metadata: { name: 'spread', namespace: 'default' },
      spec: {
        scope: 'Node',
        podGroups: [
          { name: 'agent', podSelector: { matchLabels: { app: 'agent' } } },
          { name: 'app', podSelector: { matchLabels: { app: 'app' } } },
        ],
      },
    });
    // One agent per node, Ready one after another (readiness probes 20 s apart in cluster
    // time), and as many app pods as nodes, free to go to any node.
    for (const [i, node] of nodes.entries()) {
      await cluster.client.create(GVR.pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `agent-${i}`, namespace: 'default', labels: { app: 'agent' } },
        spec: {
          schedulingGates: gate,
          nodeSelector: { 'kubernetes.io/hostname': node },
          containers: [
            {
              name: 'c',
              image: 'agent',
              readinessProbe: { exec: { command: ['true'] }, initialDelaySeconds: 20 * i },
            },
          ],
        },
      });
    }
    const apps = nodes.map((_, i) => `app-${i}`);
    for (const name of apps) {
      await cluster.client.create(GVR.pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'default', labels: { app: 'app' } },
        spec: { schedulingGates: gate, containers: [{ name: 'c', image: 'app' }] },
      });
    }
    await waitFor(
      'spread Completed',
      () =>
        (cluster.client.get(PODSEQ_GVR, 'default', 'spread') as PodSequence | undefined)?.status?.phase ===
        'Completed',
      { timeoutMs: 120_000 },
    );
    const placed = apps.map((name) => (cluster.client.get(GVR.pods, 'default', name) as Pod).spec!.nodeName);
    assert.deepEqual([...placed].sort(), nodes, 'one app pod per node, not the whole tier on the first');
    await cluster.client.delete(PODSEQ_GVR, 'default', 'spread');
    for (const name of [...apps, ...nodes.map((_, i) => `agent-${i}`)])
      await cluster.client.delete(GVR.pods, 'default', name);
    await waitFor('pods gone', () => cluster.client.list(GVR.pods, 'default').length === 0, {
      timeoutMs: 60_000,
    });
  });
});

describe('full mode', () => {
  before(async () => {
    manager = await startManager('full');
  });
  after(async () => {
    await manager?.stop();
    manager = undefined;
  });

  test('node-scoped-csi-example.yaml with node taints and the webhook', async () => {
    const key = taintKey('default', 'csi-driver-sequence', 1);
    const seen = new Set<string>();
    const stopNodes = cluster.client.watch(GVR.nodes, (_t, obj) => {
      if (((obj as Node).spec?.taints ?? []).some((t) => t.key === key)) seen.add(obj.metadata.name!);
    });
    try {
      await runSample('config/samples/node-scoped-csi-example.yaml');
    } finally {
      stopNodes();
    }
    assert.equal(seen.size, 3, 'every node was tainted until its driver was Ready');
    const ds = cluster.client.get(GVR.daemonsets, 'default', 'csi-driver') as unknown as {
      spec: { template: { spec: { tolerations?: { key?: string }[] } } };
    };
    assert.ok(
      ds.spec.template.spec.tolerations?.some((t) => t.key === key),
      'the webhook added the toleration to the template',
    );
    for (const node of cluster.client.list(GVR.nodes) as unknown as Node[]) {
      assert.ok(
        !(node.spec?.taints ?? []).some((t) => t.key === key),
        `${node.metadata.name} untainted once done`,
      );
    }
    await deleteSample('config/samples/node-scoped-csi-example.yaml');
  });
});
