/**
 * AppWrapper admissions per second through the Kueue stand-in, on a load shaped like Kueue's
 * scheduler-performance baseline: many small workloads (one 100m pod each) spread over
 * several ClusterQueues, each fed by its own LocalQueue and namespace, with quota for
 * about half of them at once, so queues stay busy as earlier workloads finish. Kueue
 * publishes about 43 admissions/s for its baseline.
 *
 * The API server, the stand-in and the AppWrapper controller (over HTTP, as in production)
 * share this process. A small "finisher" plays the pods: each admitted AppWrapper is marked
 * Succeeded after `--run-ms`, which releases its quota.
 *
 *   ./node_modules/.bin/node bench/appwrapper.ts [wrappers=2000] [queues=5] [run-ms=1000]
 *   BENCH_NO_CONTROLLER=1 ...   stand-in alone (pod sets inferred by the stand-in)
 */

import { startApiServer } from '../src/cluster/apiserver/server.ts';
import type { KubeObject } from '../src/cluster/apiserver/types.ts';
import { ClusterClient, GVR } from '../src/cluster/client.ts';
import { KGVR, startKueue } from '../src/cluster/kueue/index.ts';
import { appWrapperController, appWrapperCrdManifests } from '../src/controllers/appwrapper/index.ts';
import { kubeConfigFromString, Manager } from '../src/runtime/index.ts';
import { percentile } from './support.ts';

const WRAPPERS = Number(process.argv[2] ?? 2000);
const QUEUES = Number(process.argv[3] ?? 5);
const RUN_MS = Number(process.argv[4] ?? 1000);
const WITH_CONTROLLER = !process.env.BENCH_NO_CONTROLLER;
const PER_QUEUE = Math.ceil(WRAPPERS / QUEUES);

async function main(): Promise<void> {
  const server = await startApiServer({ port: 0 });
  const client = new ClusterClient(server.api, 'system:admin');
  for (const crd of appWrapperCrdManifests()) await client.create(KGVR.crds, crd);
  while (!client.served(KGVR.appWrappers)) await new Promise((r) => setTimeout(r, 10));
  const kueue = await startKueue(client);
  await client.create(KGVR.resourceFlavors, {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'ResourceFlavor',
    metadata: { name: 'default' },
  });
  for (let q = 0; q < QUEUES; q++) {
    // Room for half of each queue's wrappers at once (100m each).
    const quota = `${Math.max(100, Math.floor(PER_QUEUE / 2) * 100)}m`;
    await client.create(KGVR.clusterQueues, {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ClusterQueue',
      metadata: { name: `cq-${q}` },
      spec: {
        namespaceSelector: {},
        queueingStrategy: 'BestEffortFIFO',
        resourceGroups: [
          {
            coveredResources: ['cpu'],
            flavors: [{ name: 'default', resources: [{ name: 'cpu', nominalQuota: quota }] }],
          },
        ],
      },
    });
    await client.create(GVR.namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: `team-${q}` },
    });
    await client.create(KGVR.localQueues, {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'LocalQueue',
      metadata: { name: 'lq', namespace: `team-${q}` },
      spec: { clusterQueue: `cq-${q}` },
    });
  }

  let manager: Manager | undefined;
  if (WITH_CONTROLLER) {
    manager = new Manager({
      kubeConfig: kubeConfigFromString(server.kubeconfig),
      healthProbeAddress: false,
      gracefulShutdownMs: 2000,
    });
    manager.add(appWrapperController({ maxConcurrentReconciles: 8 }));
    await manager.start();
  }

  const created = new Map<string, number>();
  const admitted = new Map<string, number>();
  let done: () => void = () => {};
  const allAdmitted = new Promise<void>((r) => {
    done = r;
  });
  const finisher = client.as('bench-finisher');
  const stopWatch = client.watch(KGVR.appWrappers, (type, obj) => {
    if (type === 'DELETED') return;
    const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
    if ((obj.spec as { suspend?: boolean }).suspend === false && !admitted.has(key)) {
      admitted.set(key, performance.now());
      if (admitted.size === WRAPPERS) done();
      // The pods "run" for RUN_MS, then the wrapper succeeds and frees its quota.
      setTimeout(() => {
        void finisher
          .mutate(
            KGVR.appWrappers,
            obj.metadata.namespace ?? '',
            obj.metadata.name!,
            (cur: KubeObject) => {
              const now = new Date().toISOString().slice(0, 19) + 'Z';
              cur.status = {
                ...(cur.status as object),
                phase: 'Succeeded',
                conditions: [
                  {
                    type: 'QuotaReserved',
                    status: 'False',
                    reason: 'Succeeded',
                    message: '',
                    lastTransitionTime: now,
                  },
                  {
                    type: 'ResourcesDeployed',
                    status: 'True',
                    reason: 'Succeeded',
                    message: '',
                    lastTransitionTime: now,
                  },
                ],
              };
            },
            'status',
          )
          .catch(() => {});
      }, RUN_MS);
    }
  });

  const t0 = performance.now();
  const creator = client.as('bench-user');
  for (let i = 0; i < WRAPPERS; i++) {
    const q = i % QUEUES;
    const name = `aw-${i}`;
    created.set(`team-${q}/${name}`, performance.now());
    await creator.create(KGVR.appWrappers, {
      apiVersion: 'workload.codeflare.dev/v1beta2',
      kind: 'AppWrapper',
      metadata: { name, namespace: `team-${q}`, labels: { 'kueue.x-k8s.io/queue-name': 'lq' } },
      spec: {
        suspend: true,
        components: [
          {
            template: {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name },
              spec: {
                restartPolicy: 'Never',
                containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m' } } }],
              },
            },
          },
        ],
      },
    });
  }
  const tCreated = performance.now();
  await allAdmitted;
  const tAll = performance.now();
  stopWatch();

  const lat = [...admitted].map(([k, t]) => t - created.get(k)!).sort((a, b) => a - b);
  const pct = (p: number) => percentile(lat, p).toFixed(0);
  const seconds = (tAll - t0) / 1000;
  process.stdout.write(
    `AppWrapper admissions through the Kueue stand-in${WITH_CONTROLLER ? ' (with the AppWrapper controller)' : ' (stand-in alone)'}\n` +
      `  ${WRAPPERS} wrappers, ${QUEUES} ClusterQueues, quota for half at once, pods run ${RUN_MS} ms\n` +
      `  created in ${((tCreated - t0) / 1000).toFixed(1)} s; all admitted after ${seconds.toFixed(1)} s\n` +
      `  ${(WRAPPERS / seconds).toFixed(1)} admissions/s (Kueue baseline: ~43/s)\n` +
      `  creation to admission: p50 ${pct(50)} ms, p90 ${pct(90)} ms, p99 ${pct(99)} ms\n`,
  );
  await manager?.stop();
  await kueue.stop();
  await server.close();
}

await main();
