import { after, before, describe, test } from 'node:test';
import { Manager } from '../../src/runtime/index.ts';
import { waitFor } from '../support/wait.ts';
import { createNamespace, startCluster, type TestCluster } from './cluster.ts';
import {
  CONFIGMAP,
  GREETING,
  GREETING_LABEL,
  type Greeting,
  greeting,
  greetingController,
  installGreetingCrd,
} from './example-controller.ts';

describe('Controllers under injected faults', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await startCluster();
    await installGreetingCrd(cluster.client);
  });
  after(() => cluster.close());

  test('converge with 5% failed calls (500, 429, 409), cut watches and expired resourceVersions', async () => {
    const ns = await createNamespace(cluster.client);
    const mgr = new Manager({
      kubeConfig: cluster.newKubeConfig(),
      healthProbeAddress: false,
      processMetrics: false,
    });
    mgr.add(greetingController());
    await mgr.start();
    // The test's own requests meet the faults too, so each is retried until it succeeds.
    const checker = cluster.client;
    cluster.server.faults.configure({
      errorRate: 0.05,
      errorCodes: [500, 429, 409],
      watchCutMs: 700,
      expireMs: 1500,
    });
    try {
      const names = Array.from({ length: 10 }, (_, i) => `r-${i}`);
      for (const n of names) {
        await waitFor(() => checker.create(greeting(ns, n, (Number(n.slice(2)) % 3) + 1)).then(() => true));
      }
      // Keep changing specs until the manager has met injected errors, cut watches and 410s.
      const metric = () =>
        mgr.metrics.registry.getSingleMetricAsString('troupe_informer_watch_restarts_total');
      let round = 0;
      await waitFor(
        'faults exercised',
        async () => {
          round++;
          const name = names[round % names.length]!;
          await checker
            .mergePatch(greeting(ns, name, 0), { spec: { message: `round ${round}` } })
            .catch(() => {});
          const m = await metric();
          const codes = await mgr.metrics.registry.getSingleMetricAsString('rest_client_requests_total');
          return /reason="gone"/.test(m) && /reason="closed"/.test(m) && /code="(500|429|409)"/.test(codes);
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      await waitFor(
        async () => {
          const gs = (await checker.list<Greeting>(GREETING, { namespace: ns })).items;
          const cms = (await checker.list(CONFIGMAP, { namespace: ns })).items;
          return names.every((n) => {
            const g = gs.find((x) => x.metadata.name === n);
            if (!g || g.status?.observedGeneration !== g.metadata.generation) return false;
            const kids = cms.filter((c) => c.metadata.labels?.[GREETING_LABEL] === n);
            return (
              kids.length === g.spec.replicas &&
              kids.every((c) => (c.data as Record<string, string>).message === g.spec.message)
            );
          });
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
    } finally {
      cluster.server.faults.configure({});
      await mgr.stop();
    }
  });
});
