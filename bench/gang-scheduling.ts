/**
 * Coscheduling throughput: the same pods placed by the embedded scheduler with
 * `gangScheduling` on, once as single pods (no PodGroup) and once as gangs of GANG members
 * (scheduler-plugins PodGroups, minMember = GANG), each run on a fresh in-process API server
 * with simulated nodes. Pods/s from the first create to the last binding; the ratio
 * gangs/singles is the figure to compare (the machine is shared and noisy).
 *
 *   ./node_modules/.bin/node bench/gang-scheduling.ts [nodes] [pods] [gang size]
 */
import { startApiServer } from '../src/cluster/apiserver/server.ts';
import type { KubeObject } from '../src/cluster/apiserver/types.ts';
import { ClusterClient, GVR } from '../src/cluster/client.ts';
import { startNodes, validateNodeConfig } from '../src/cluster/nodes/index.ts';
import { ensureXPodGroupCRD } from '../src/cluster/scheduler/gang/crd.ts';
import { startScheduler } from '../src/cluster/scheduler/index.ts';
import { createInBatches, exitOnStall } from './support.ts';

const NODES = Number(process.argv[2] ?? 100);
const PODS = Number(process.argv[3] ?? 4000);
const GANG = Number(process.argv[4] ?? 8);
const X_PODGROUPS = { group: 'scheduling.x-k8s.io', version: 'v1alpha1', resource: 'podgroups' };

async function run(gangs: boolean): Promise<number> {
  const server = await startApiServer({ tls: false, port: 0, historySize: 10_000 });
  const admin = new ClusterClient(server.api, 'bench');
  await admin.create(GVR.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
  await ensureXPodGroupCRD(admin);
  const nodes = await startNodes(
    admin.as('system:node-simulator'),
    validateNodeConfig({
      pools: [
        {
          name: 'gpu',
          count: NODES,
          capacity: { cpu: '96', memory: '768Gi', pods: '110', 'nvidia.com/gpu': '8' },
        },
      ],
    }),
  );
  let bound = 0;
  let done: () => void = () => {};
  const allBound = new Promise<void>((r) => {
    done = r;
  });
  const stopWatch = admin.watch(
    GVR.pods,
    (type, pod) => {
      if (type === 'MODIFIED' && (pod.spec as { nodeName?: string }).nodeName && ++bound === PODS) done();
    },
    { namespace: 'bench' },
  );
  const sched = startScheduler(admin.as('system:kube-scheduler'), { gangScheduling: true });
  if (gangs) {
    for (let g = 0; g < PODS / GANG; g++) {
      await admin.create(X_PODGROUPS, {
        apiVersion: 'scheduling.x-k8s.io/v1alpha1',
        kind: 'PodGroup',
        metadata: { name: `g-${g}`, namespace: 'bench' },
        spec: { minMember: GANG },
      });
    }
  }
  const pod = (i: number): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `pod-${i}`,
      namespace: 'bench',
      labels: gangs ? { 'scheduling.x-k8s.io/pod-group': `g-${Math.floor(i / GANG)}` } : { app: 'bench' },
    },
    spec: {
      containers: [
        {
          name: 'main',
          image: 'registry.k8s.io/pause:3.10',
          resources: { requests: { cpu: '1', memory: '4Gi' }, limits: { 'nvidia.com/gpu': '1' } },
        },
      ],
    },
  });
  const t = performance.now();
  await createInBatches(PODS, 250, (j) => admin.create(GVR.pods, pod(j)));
  const stopStall = exitOnStall(
    () => bound,
    30_000,
    () => console.error(`stalled at ${bound}/${PODS} bound:`, sched.stats()),
  );
  await allBound;
  stopStall();
  const rate = PODS / ((performance.now() - t) / 1000);
  stopWatch();
  await sched.stop();
  await nodes.stop();
  await server.close();
  return rate;
}

if (PODS > NODES * 8) throw new Error(`${PODS} one-GPU pods do not fit on ${NODES} nodes of 8 GPUs`);
// Alternated, best of ROUNDS each: the first run of a process also pays for warming up.
const ROUNDS = Number(process.env.ROUNDS ?? 2);
let singles = 0;
let gangs = 0;
for (let r = 0; r < ROUNDS; r++) {
  const s = await run(false);
  const g = await run(true);
  console.log(`round ${r + 1}: single pods ${s.toFixed(0)} pods/s, gangs ${g.toFixed(0)} pods/s`);
  singles = Math.max(singles, s);
  gangs = Math.max(gangs, g);
}
console.log(`${NODES} nodes, ${PODS} one-GPU pods, gangScheduling on, best of ${ROUNDS}`);
console.log(`single pods: ${singles.toFixed(0)} pods/s`);
console.log(
  `gangs of ${GANG}: ${gangs.toFixed(0)} pods/s (ratio to single pods ${(gangs / singles).toFixed(2)})`,
);
