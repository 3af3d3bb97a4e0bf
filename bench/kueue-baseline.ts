/**
 * Kueue's scheduler-performance baseline (kubernetes-sigs/kueue
 * test/performance/scheduler/configs/baseline/generator.yaml, v0.19) against the stand-in,
 * API server and runner in one process:
 *
 * - 5 cohorts × 6 ClusterQueues, each 20 CPUs nominal, borrowingLimit 100,
 *   preemption withinClusterQueue LowerPriority and reclaimWithinCohort Any;
 * - per ClusterQueue 350 small (1 CPU, priority 50, runs 200 ms, one every 100 ms),
 *   100 medium (5 CPU, priority 100, 500 ms, every 500 ms) and 50 large (20 CPU,
 *   priority 200, 1000 ms, every 1200 ms): 15,000 Workloads;
 * - the runner plays Kueue's test runner (runner/controller/controller.go): an admitted
 *   Workload is marked Finished after its running time, an evicted one has its quota
 *   reservation cleared ("Evicted by the test runner").
 *
 * It prints wall time, admissions per second, average time to admission per class
 * (creation to last admission, as Kueue's recorder measures it), evictions, and the
 * ClusterQueues' average CPU usage as a share of their nominal quota.
 *
 *   ./node_modules/.bin/node bench/kueue-baseline.ts [scale=1]
 *
 * `scale` < 1 runs a fraction of each set (e.g. 0.1 for a 1,500-workload smoke run).
 */

import { availableParallelism, cpus } from 'node:os';
import { startApiServer } from '../src/cluster/apiserver/server.ts';
import { ClusterClient, GVR } from '../src/cluster/client.ts';
import { KGVR, startKueue, type Workload } from '../src/cluster/kueue/index.ts';
import { setCondition } from '../src/kube/conditions.ts';

const SCALE = Number(process.argv[2] ?? 1);
const COHORTS = 5;
const QUEUES_PER_COHORT = 6;
const NOMINAL = 20;
const BORROWING_LIMIT = 100;

interface WorkloadClass {
  name: string;
  count: number;
  intervalMs: number;
  runtimeMs: number;
  priority: number;
  cpu: number;
}

const CLASSES: WorkloadClass[] = [
  { name: 'small', count: 350, intervalMs: 100, runtimeMs: 200, priority: 50, cpu: 1 },
  { name: 'medium', count: 100, intervalMs: 500, runtimeMs: 500, priority: 100, cpu: 5 },
  { name: 'large', count: 50, intervalMs: 1200, runtimeMs: 1000, priority: 200, cpu: 20 },
];

// Kueue's published baseline (configs/baseline/rangespec.yaml: averages of 5 CI runs).
const KUEUE = {
  wallMs: 351_116,
  minUsagePct: 55.9,
  avgTimeToAdmissionMs: { small: 215_468, medium: 76_768, large: 16_501 } as Record<string, number>,
};

interface Track {
  cls: WorkloadClass;
  cq: string;
  created: number;
  admittedAt?: number;
  lastAdmission?: number;
  finished?: number;
  timer?: NodeJS.Timeout;
  evictions: number;
}

async function main(): Promise<void> {
  const server = await startApiServer({ port: 0 });
  const client = new ClusterClient(server.api, 'system:admin');
  const kueue = await startKueue(client, { integrations: [] });
  const runner = client.as('kueue-performance-runner');

  await client.create(KGVR.resourceFlavors, {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'ResourceFlavor',
    metadata: { name: 'rf' },
  });
  const queues: string[] = [];
  for (let c = 0; c < COHORTS; c++) {
    for (let q = 0; q < QUEUES_PER_COHORT; q++) {
      const name = `cq-0-${q}-cohort-${c}`;
      queues.push(name);
      await client.create(KGVR.clusterQueues, {
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        kind: 'ClusterQueue',
        metadata: { name },
        spec: {
          cohortName: `cohort-${c}`,
          namespaceSelector: {},
          preemption: { reclaimWithinCohort: 'Any', withinClusterQueue: 'LowerPriority' },
          resourceGroups: [
            {
              coveredResources: ['cpu'],
              flavors: [
                {
                  name: 'rf',
                  resources: [{ name: 'cpu', nominalQuota: NOMINAL, borrowingLimit: BORROWING_LIMIT }],
                },
              ],
            },
          ],
        },
      });
      await client.create(GVR.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      await client.create(KGVR.localQueues, {
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        kind: 'LocalQueue',
        metadata: { name, namespace: name },
        spec: { clusterQueue: name },
      });
    }
  }

  const tracks = new Map<string, Track>();
  let total = 0;
  for (const cls of CLASSES) total += Math.max(1, Math.round(cls.count * SCALE)) * queues.length;
  let finished = 0;
  let admissions = 0;
  let evictions = 0;
  // CPU·ms used per ClusterQueue while admitted (for the usage share).
  let cpuMs = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => {
    resolveDone = r;
  });

  const setStatus = async (key: string, change: (wl: Workload) => void) => {
    const [ns, name] = key.split('/') as [string, string];
    try {
      await runner.mutate<Workload>(KGVR.workloads, ns, name, (cur) => change(cur), 'status');
    } catch {
      // Deleted or replaced meanwhile: nothing to finish.
    }
  };

  const cond = (wl: Workload, type: string) => wl.status?.conditions?.find((x) => x.type === type);
  const stopWatch = client.watch(
    KGVR.workloads,
    (type, obj) => {
      if (type === 'DELETED') return;
      const wl = obj as Workload;
      const key = `${wl.metadata.namespace}/${wl.metadata.name}`;
      const t = tracks.get(key);
      if (!t || t.finished) return;
      const now = Date.now();
      if (cond(wl, 'Finished')?.status === 'True') {
        t.finished = now;
        if (t.admittedAt) cpuMs += (now - t.admittedAt) * t.cls.cpu;
        t.admittedAt = undefined;
        if (++finished === total) resolveDone();
        return;
      }
      if (cond(wl, 'Evicted')?.status === 'True' && wl.status?.admission) {
        if (t.timer) clearTimeout(t.timer);
        t.timer = undefined;
        if (t.admittedAt) {
          cpuMs += (now - t.admittedAt) * t.cls.cpu;
          t.admittedAt = undefined;
          t.evictions++;
          evictions++;
        }
        void setStatus(key, (cur) => {
          if (!cur.status?.admission) return;
          cur.status.admission = null;
          const list = cur.status.conditions ?? [];
          const at = new Date();
          setCondition(
            list,
            {
              type: 'QuotaReserved',
              status: 'False',
              reason: 'Pending',
              message: 'Evicted by the test runner',
              lastTransitionTime: '',
            },
            at,
          );
          setCondition(
            list,
            {
              type: 'Admitted',
              status: 'False',
              reason: 'NoReservation',
              message: 'The workload has no reservation',
              lastTransitionTime: '',
            },
            at,
          );
          cur.status.conditions = list;
        });
        return;
      }
      if (
        cond(wl, 'Admitted')?.status === 'True' &&
        cond(wl, 'Evicted')?.status !== 'True' &&
        !t.admittedAt
      ) {
        t.admittedAt = now;
        t.lastAdmission = now;
        admissions++;
        t.timer = setTimeout(() => {
          void setStatus(key, (cur) => {
            const list = cur.status?.conditions ?? [];
            setCondition(
              list,
              {
                type: 'Finished',
                status: 'True',
                reason: 'ByTest',
                message: 'By test runner',
                lastTransitionTime: '',
              },
              new Date(),
            );
            cur.status = { ...(cur.status ?? {}), conditions: list };
          });
        }, t.cls.runtimeMs);
      }
    },
    { shared: true },
  );

  const cpuStart = process.cpuUsage();
  const start = Date.now();
  const generators: Promise<void>[] = [];
  for (const cq of queues) {
    for (const [setIdx, cls] of CLASSES.entries()) {
      const count = Math.max(1, Math.round(cls.count * SCALE));
      generators.push(
        (async () => {
          for (let i = 0; i < count; i++) {
            await new Promise((r) => setTimeout(r, cls.intervalMs));
            const name = `${cls.name}-${setIdx}-${i}-0`;
            tracks.set(`${cq}/${name}`, { cls, cq, created: Date.now(), evictions: 0 });
            await client.create(KGVR.workloads, {
              apiVersion: 'kueue.x-k8s.io/v1beta2',
              kind: 'Workload',
              metadata: {
                name,
                namespace: cq,
                labels: { 'kueue.x-k8s.io/performance-scheduler-running-ms': String(cls.runtimeMs) },
              },
              spec: {
                queueName: cq,
                priority: cls.priority,
                podSets: [
                  {
                    name: 'main',
                    count: 1,
                    template: {
                      spec: {
                        containers: [{ name: 'c', resources: { requests: { cpu: String(cls.cpu) } } }],
                      },
                    },
                  },
                ],
              },
            });
          }
        })(),
      );
    }
  }
  await Promise.all(generators);
  await done;
  const wallMs = Date.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  stopWatch();

  const perClass = new Map<string, { n: number; sum: number }>();
  for (const t of tracks.values()) {
    const s = perClass.get(t.cls.name) ?? { n: 0, sum: 0 };
    s.n++;
    s.sum += (t.lastAdmission ?? start) - t.created;
    perClass.set(t.cls.name, s);
  }
  const usagePct = (100 * cpuMs) / (wallMs * NOMINAL * queues.length);
  const out = {
    machine: `${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, node ${process.version}`,
    workloads: total,
    wallMs,
    admissionsPerSecond: Number(((1000 * total) / wallMs).toFixed(1)),
    admissionsIncludingReadmissions: admissions,
    evictions,
    processCpuMs: Math.round((cpu.user + cpu.system) / 1000),
    avgTimeToAdmissionMs: Object.fromEntries([...perClass].map(([k, v]) => [k, Math.round(v.sum / v.n)])),
    clusterQueueUsagePct: Number(usagePct.toFixed(1)),
    kueue: { ...KUEUE, admissionsPerSecond: Number(((1000 * 15_000) / KUEUE.wallMs).toFixed(1)) },
  };
  console.log(JSON.stringify(out, null, 2));
  await kueue.stop();
  await server.close();
}

await main();
