import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Client,
  FencedError,
  type KubeObject,
  kubeConfigFromString,
  Manager,
  type ManagerOptions,
} from '../../src/runtime/index.ts';
import { waitFor } from '../support/wait.ts';
import { createNamespace, startCluster, type TestCluster } from './cluster.ts';
import {
  CONFIGMAP,
  defaultGreeting,
  FINALIZER,
  GREETING,
  GREETING_LABEL,
  type Greeting,
  type GreetingHooks,
  greeting,
  greetingController,
  greetingWebhookConfigurations,
  installGreetingCrd,
  SECRET,
  validateGreeting,
} from './example-controller.ts';
import { PartitionableProxy } from './proxy.ts';

const EVENT = { apiVersion: 'events.k8s.io/v1', kind: 'Event' };

function newManager(
  cluster: TestCluster,
  hooks: GreetingHooks = {},
  opts: Partial<ManagerOptions> = {},
): Manager {
  const mgr = new Manager({
    kubeConfig: cluster.newKubeConfig(),
    healthProbeAddress: '127.0.0.1:0',
    processMetrics: false,
    ...opts,
  });
  mgr.add(greetingController(hooks));
  return mgr;
}

async function children(client: Client, ns: string, name: string): Promise<KubeObject[]> {
  const list = await client.list(CONFIGMAP, { namespace: ns, labelSelector: `${GREETING_LABEL}=${name}` });
  return list.items.filter((c) => !c.metadata.deletionTimestamp);
}

/** The Greeting reached the state its spec asks for. */
async function converged(client: Client, ns: string, name: string, replicas: number, message = 'hello') {
  const g = await client.tryGet<Greeting>(GREETING, name, ns);
  if (!g || g.status?.replicas !== replicas || g.status.message !== message) return false;
  if (g.status.observedGeneration !== g.metadata.generation) return false;
  const cs = await children(client, ns, name);
  return (
    cs.length === replicas &&
    cs.every((c) => (c.data as Record<string, string>).message === message) &&
    cs.every((c) => c.metadata.ownerReferences?.some((r) => r.controller && r.uid === g.metadata.uid))
  );
}

describe('Manager running the example controller', () => {
  let cluster: TestCluster;
  let client: Client;
  let mgr: Manager;
  let ns: string;
  const reconciles = new Map<string, number>();
  let inFlight = new Map<string, number>();
  let sameKeyOverlap = false;

  before(async () => {
    cluster = await startCluster();
    client = cluster.client;
    await installGreetingCrd(client);
    ns = await createNamespace(client);
    mgr = newManager(cluster, {
      async onReconcile(key) {
        reconciles.set(key, (reconciles.get(key) ?? 0) + 1);
        const n = (inFlight.get(key) ?? 0) + 1;
        inFlight.set(key, n);
        if (n > 1) sameKeyOverlap = true;
        await new Promise((r) => setImmediate(r));
        inFlight.set(key, (inFlight.get(key) ?? 1) - 1);
      },
    });
    await mgr.start();
  });
  after(async () => {
    await mgr.stop();
    await cluster.close();
  });

  test('converges a Greeting: owned children, finalizer, status and an event', async () => {
    await client.create(greeting(ns, 'g1', 2));
    await waitFor(() => converged(client, ns, 'g1', 2));
    const g = await client.get<Greeting>(GREETING, 'g1', ns);
    assert.deepEqual(g.metadata.finalizers, [FINALIZER]);
    const cs = await children(client, ns, 'g1');
    const managers = cs.flatMap((c) =>
      (c.metadata.managedFields as { manager: string }[]).map((m) => m.manager),
    );
    assert.ok(managers.includes('troupe'), 'children are applied with field manager troupe');
    await waitFor(async () => {
      const evs = (await client.list<KubeObject & { reason: string }>(EVENT, { namespace: ns })).items;
      return evs.some((e) => e.reason === 'Reconciled');
    });
  });

  test('recreates a deleted child, scales down, and follows a labelled Secret', async () => {
    await client.create(greeting(ns, 'g2', 3));
    await waitFor(() => converged(client, ns, 'g2', 3));
    const [victim] = await children(client, ns, 'g2');
    await client.delete(victim!);
    await waitFor(async () =>
      (await children(client, ns, 'g2')).some(
        (c) => c.metadata.uid !== victim!.metadata.uid && c.metadata.name === victim!.metadata.name,
      ),
    );
    await client.mergePatch(greeting(ns, 'g2', 1), { spec: { replicas: 1 } });
    await waitFor(() => converged(client, ns, 'g2', 1));
    await client.create({
      ...SECRET,
      metadata: { name: 'suffix', namespace: ns, labels: { [GREETING_LABEL]: 'g2' } },
      data: { suffix: Buffer.from(', world').toString('base64') },
    });
    await waitFor(() => converged(client, ns, 'g2', 1, 'hello, world'));
  });

  test('a TerminalError is recorded and not retried', async () => {
    await client.create(greeting(ns, 'bad', -1));
    await waitFor(async () => {
      const evs = (await client.list<KubeObject & { reason: string }>(EVENT, { namespace: ns })).items;
      return evs.some((e) => e.reason === 'InvalidSpec');
    });
    const queue = mgr.getController('greeting')?.workQueue;
    assert.ok(queue);
    await waitFor(() => queue.inFlight() === 0 && queue.len() === 0);
    assert.equal(queue.numRequeues(`${ns}/bad`), 0);
    assert.equal(queue.delayedLen(), 0, 'nothing waits for a retry');
    const metrics = await mgr.metrics.registry.getSingleMetricAsString(
      'controller_runtime_terminal_reconcile_errors_total',
    );
    assert.match(metrics, /controller="greeting"} [1-9]/);
  });

  test('requeueAfter reconciles again without any event', async () => {
    const g = greeting(ns, 'periodic', 1);
    g.spec.recheckSeconds = 1;
    await client.create(g);
    await waitFor(() => converged(client, ns, 'periodic', 1));
    const seen = reconciles.get(`${ns}/periodic`) ?? 0;
    await waitFor(() => (reconciles.get(`${ns}/periodic`) ?? 0) >= seen + 2, { timeoutMs: 10_000 });
  });

  test('deleting a Greeting runs its finalizer logic', async () => {
    await client.create(greeting(ns, 'doomed', 2));
    await waitFor(() => converged(client, ns, 'doomed', 2));
    await client.delete(greeting(ns, 'doomed', 0));
    await waitFor(async () => (await client.tryGet(GREETING, 'doomed', ns)) === undefined);
    assert.deepEqual(await children(client, ns, 'doomed'), []);
  });

  test('never reconciles one key twice at once', async () => {
    inFlight = new Map();
    await client.create(greeting(ns, 'busy', 1));
    for (let i = 0; i < 20; i++) {
      await client.mergePatch(greeting(ns, 'busy', 1), { metadata: { labels: { bump: String(i) } } });
    }
    await waitFor(() => converged(client, ns, 'busy', 1));
    assert.equal(sameKeyOverlap, false);
  });

  test('serves readiness and controller-runtime metrics', async () => {
    const url = mgr.healthServer?.url;
    assert.ok(url);
    const ready = await fetch(`${url}/readyz?verbose`);
    assert.equal(ready.status, 200, await ready.clone().text());
    assert.match(await ready.text(), /\[\+\]informers ok/);
    const text = await (await fetch(`${url}/metrics`)).text();
    assert.match(text, /controller_runtime_reconcile_total\{controller="greeting",result="success"\} [1-9]/);
    assert.match(text, /workqueue_adds_total\{name="greeting",controller="greeting"\} [1-9]/);
    assert.match(text, /rest_client_requests_total\{code="201",method="POST"/);
    assert.match(text, /troupe_informer_objects\{kind="Greeting.example.troupe.dev\/v1"\}/);
  });
});

describe('Manager options', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await startCluster();
    await installGreetingCrd(cluster.client);
  });
  after(() => cluster.close());

  test('--controllers runs only the chosen controllers', async () => {
    const mgr = new Manager({
      kubeConfig: cluster.newKubeConfig(),
      healthProbeAddress: false,
      processMetrics: false,
      controllers: ['other'],
    });
    mgr.add(greetingController());
    assert.deepEqual(mgr.controllerNames, []);
    await mgr.start();
    assert.ok(mgr.metrics.registry.getMetricsAsArray().length > 0);
    await mgr.stop();
    // A stopped manager's metrics reach nothing (see RuntimeMetrics.release).
    assert.deepEqual(mgr.metrics.registry.getMetricsAsArray(), []);
  });

  test('--namespace limits what the manager sees', async () => {
    const mine = await createNamespace(cluster.client);
    const other = await createNamespace(cluster.client);
    const seen: string[] = [];
    const mgr = newManager(
      cluster,
      { onReconcile: (key) => void seen.push(key) },
      { namespace: mine, healthProbeAddress: false },
    );
    await mgr.start();
    try {
      await cluster.client.create(greeting(other, 'outside', 1));
      await cluster.client.create(greeting(mine, 'inside', 1));
      await waitFor(() => converged(cluster.client, mine, 'inside', 1));
      assert.ok(
        seen.every((k) => k.startsWith(`${mine}/`)),
        seen.join(','),
      );
      assert.equal((await cluster.client.get<Greeting>(GREETING, 'outside', other)).status, undefined);
    } finally {
      await mgr.stop();
    }
  });

  test('a restarted manager finishes the work of a stopped one', async () => {
    const ns = await createNamespace(cluster.client);
    let gate: Promise<void> | undefined = new Promise(() => {});
    const first = newManager(
      cluster,
      {
        async onReconcile(key) {
          // Let two Greetings through, then hang: the manager is stopped mid-work.
          if (key.endsWith('-0') || key.endsWith('-1')) return;
          await gate;
        },
      },
      { namespace: ns, healthProbeAddress: false, gracefulShutdownMs: 200 },
    );
    await first.start();
    for (let i = 0; i < 5; i++) await cluster.client.create(greeting(ns, `work-${i}`, 1));
    await waitFor(() => converged(cluster.client, ns, 'work-0', 1));
    await first.stop();
    gate = undefined;
    const second = newManager(cluster, {}, { namespace: ns, healthProbeAddress: false });
    await second.start();
    try {
      for (let i = 0; i < 5; i++) await waitFor(() => converged(cluster.client, ns, `work-${i}`, 1));
    } finally {
      await second.stop();
    }
  });
});

describe('Manager shutdown', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await startCluster();
    await installGreetingCrd(cluster.client);
  });
  after(() => cluster.close());

  test('a reconcile outliving the shutdown deadline is aborted and cannot write', async () => {
    const ns = await createNamespace(cluster.client);
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let signal: AbortSignal | undefined;
    let outcome: unknown;
    const mgr = newManager(
      cluster,
      {
        async onReconcile(_key, ctx) {
          signal = ctx.signal;
          await gate;
          try {
            await ctx.client.create({ ...CONFIGMAP, metadata: { name: 'late', namespace: ns } });
            outcome = 'wrote';
          } catch (err) {
            outcome = err;
          }
        },
      },
      { namespace: ns, healthProbeAddress: false, gracefulShutdownMs: 100 },
    );
    await mgr.start();
    await cluster.client.create(greeting(ns, 'slow', 1));
    await waitFor(() => signal !== undefined);
    await mgr.stop();
    assert.equal(signal?.aborted, true);
    release();
    await waitFor(() => outcome !== undefined);
    assert.ok(outcome instanceof FencedError, String(outcome));
    assert.equal(await cluster.client.tryGet(CONFIGMAP, 'late', ns), undefined);
  });
});

describe('Manager with a webhook server', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await startCluster();
    await installGreetingCrd(cluster.client);
  });
  after(() => cluster.close());

  test('serves admission webhooks the API server calls, with a generated CA', async () => {
    const ns = await createNamespace(cluster.client);
    const mgr = newManager(cluster, {}, { namespace: ns, webhook: { port: 0, host: '127.0.0.1' } });
    mgr.webhooks?.register('/default-greeting', defaultGreeting);
    mgr.webhooks?.register('/validate-greeting', validateGreeting);
    await mgr.start();
    try {
      const wh = mgr.webhooks!;
      assert.equal(wh.serving, true);
      const ready = await fetch(`${mgr.healthServer!.url}/readyz?verbose`);
      assert.match(await ready.text(), /\[\+\]webhook ok/);
      for (const cfg of greetingWebhookConfigurations(`https://127.0.0.1:${wh.port}`, wh.caBundle!)) {
        await cluster.client.create(cfg);
      }
      const g = greeting(ns, 'defaulted', 1, '');
      const created = await cluster.client.create(g);
      assert.equal((created as Greeting).spec.message, 'hello', 'the mutating webhook defaulted the message');
      await assert.rejects(
        cluster.client.create(greeting(ns, 'chatty', 1, 'x'.repeat(41))),
        /at most 40 characters/,
      );
      await waitFor(() => converged(cluster.client, ns, 'defaulted', 1));
      const metrics = await mgr.metrics.registry.getSingleMetricAsString(
        'controller_runtime_webhook_requests_total',
      );
      assert.match(metrics, /webhook="\/validate-greeting",code="200"/);
    } finally {
      await mgr.stop();
    }
  });
});

describe('Two managers with leader election', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await startCluster();
    await installGreetingCrd(cluster.client);
  });
  after(() => cluster.close());

  test('exactly one reconciles; the other takes over when it stops; they never overlap', async () => {
    const ns = await createNamespace(cluster.client);
    const log: { who: string; at: number }[] = [];
    const leaderElection = {
      namespace: ns,
      leaseDurationMs: 1500,
      renewDeadlineMs: 1000,
      retryPeriodMs: 200,
    };
    const managers = ['a', 'b'].map((who) =>
      newManager(
        cluster,
        { onReconcile: () => void log.push({ who, at: performance.now() }) },
        { leaderElection: { ...leaderElection, identity: who }, healthProbeAddress: false },
      ),
    );
    await Promise.all(managers.map((m) => m.start()));
    try {
      const leader = await waitFor(() => managers.find((m) => m.running));
      const follower = managers.find((m) => m !== leader)!;
      for (let i = 0; i < 3; i++) await cluster.client.create(greeting(ns, `ha-${i}`, 1));
      for (let i = 0; i < 3; i++) await waitFor(() => converged(cluster.client, ns, `ha-${i}`, 1));
      assert.ok(log.length > 0);
      assert.ok(
        log.every((e) => e.who === leader.identity),
        'only the leader reconciles',
      );
      assert.equal(follower.running, false);

      await leader.stop();
      const stoppedAt = performance.now();
      await waitFor(() => follower.running);
      await cluster.client.create(greeting(ns, 'after-failover', 2));
      await waitFor(() => converged(cluster.client, ns, 'after-failover', 2));
      const byOld = log.filter((e) => e.who === leader.identity);
      const byNew = log.filter((e) => e.who === follower.identity);
      assert.ok(byNew.length > 0, 'the new leader reconciles');
      assert.ok(
        byOld.every((e) => e.at < stoppedAt),
        'the old leader stopped reconciling',
      );
      assert.ok(Math.min(...byNew.map((e) => e.at)) > Math.max(...byOld.map((e) => e.at)), 'no overlap');
    } finally {
      await Promise.all(managers.map((m) => m.stop()));
    }
  });

  test('a leader cut off from the API server stops before the other takes over', async () => {
    const ns = await createNamespace(cluster.client);
    const proxy = new PartitionableProxy();
    const proxyUrl = await proxy.start(cluster.server.url);
    const timeline: { what: string; who: string; at: number }[] = [];
    const mark = (what: string, who: string) => timeline.push({ what, who, at: performance.now() });
    const leaderElection = {
      namespace: ns,
      leaseDurationMs: 1500,
      renewDeadlineMs: 1000,
      retryPeriodMs: 200,
    };
    const make = (who: string, kubeConfig = cluster.newKubeConfig()) =>
      newManager(
        cluster,
        { onReconcile: () => void mark('reconcile', who) },
        {
          kubeConfig,
          namespace: ns,
          healthProbeAddress: false,
          gracefulShutdownMs: 2000,
          leaderElection: { ...leaderElection, identity: who },
          onStartedLeading: () => mark('lead', who),
          onStoppedLeading: () => mark('unlead', who),
        },
      );
    const a = make(
      'a',
      kubeConfigFromString(cluster.server.kubeconfig.replace(cluster.server.url, proxyUrl)),
    );
    const b = make('b');
    try {
      await a.start();
      await waitFor(() => a.running);
      await b.start();
      await cluster.client.create(greeting(ns, 'k-0', 1));
      await waitFor(() => converged(cluster.client, ns, 'k-0', 1));

      proxy.partition();
      await waitFor(() => b.running, { timeoutMs: 20_000 });
      const aUnlead = timeline.find((e) => e.what === 'unlead' && e.who === 'a');
      const bLead = timeline.find((e) => e.what === 'lead' && e.who === 'b');
      assert.ok(aUnlead && bLead);
      assert.ok(aUnlead.at < bLead.at, 'a stopped leading before b started');
      assert.equal(a.running, false);
      assert.ok(
        timeline.every((e) => !(e.who === 'a' && e.what === 'reconcile' && e.at > aUnlead.at)),
        'a did not reconcile after losing leadership',
      );
      await cluster.client.create(greeting(ns, 'k-1', 2));
      await waitFor(() => converged(cluster.client, ns, 'k-1', 2));
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await proxy.close();
    }
  });
});
