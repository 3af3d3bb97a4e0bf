/**
 * The deadlock demo's figure: examples/deadlock's gangs (two gangs of three one-GPU workers,
 * four GPUs) on a fresh embedded cluster, with the default scheduler and with coscheduling
 * (`gangScheduling`), for both inputs: `gangs.yaml` (OrderedReady StatefulSets) and
 * `coscheduling.yaml` (the same with Parallel). Once the placements stop changing, each gang
 * is counted complete (minMember placed), deadlocked (some GPUs held, fewer than minMember
 * placed: held for nothing) or waiting (nothing held).
 *
 *   ./node_modules/.bin/node bench/gang-deadlock.ts
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../src/cluster/apiserver/types.ts';
import { GVR, type Gvr } from '../src/cluster/client.ts';
import { startEmbeddedCluster } from '../src/cluster/index.ts';
import { parseNodeConfig } from '../src/cluster/nodes/index.ts';
import { podGroupCrdManifests } from '../src/controllers/podgroup/index.ts';

const DIR = new URL('../examples/deadlock/', import.meta.url).pathname;
const PODGROUPS: Gvr = { group: 'scheduling.incubator.k8s.io', version: 'v1alpha1', resource: 'podgroups' };
const CRDS: Gvr = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };
const SETTLE_MS = 5_000;
const MAX_MS = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  complete: number;
  deadlocked: number;
  waiting: number;
  /** GPUs held by gangs that are not complete. */
  idleGpus: number;
}

async function run(file: string, gangScheduling: boolean): Promise<Outcome> {
  const cluster = await startEmbeddedCluster({
    tls: false,
    port: 0,
    nodes: parseNodeConfig(readFileSync(`${DIR}nodes.yaml`, 'utf8')),
    gangScheduling,
  });
  try {
    const { client } = cluster;
    for (const crd of podGroupCrdManifests()) await client.create(CRDS, crd as KubeObject);
    while (!client.served(PODGROUPS)) await sleep(50);
    await client.create(GVR.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } });
    const docs = parseAllDocuments(readFileSync(`${DIR}${file}`, 'utf8')).map((d) => d.toJS() as KubeObject);
    const groups = docs.filter((d) => d.kind === 'PodGroup');
    for (const d of docs) {
      const gvr = d.kind === 'PodGroup' ? PODGROUPS : GVR.statefulsets;
      await client.create(gvr, { ...d, metadata: { ...d.metadata, namespace: 'demo' } });
    }
    // Placements per gang, until they have not changed for SETTLE_MS.
    const placements = () => {
      const pods = client.list(GVR.pods, 'demo');
      return groups.map(
        (g) =>
          pods.filter(
            (p) =>
              p.metadata.labels?.['podgroup.jhwagner.github.io/name'] === g.metadata.name &&
              (p.spec as { nodeName?: string } | undefined)?.nodeName,
          ).length,
      );
    };
    const start = Date.now();
    let last = JSON.stringify(placements());
    let since = Date.now();
    while (Date.now() - since < SETTLE_MS && Date.now() - start < MAX_MS) {
      await sleep(250);
      const now = JSON.stringify(placements());
      if (now !== last) {
        last = now;
        since = Date.now();
      }
    }
    const placed = JSON.parse(last) as number[];
    const out: Outcome = { complete: 0, deadlocked: 0, waiting: 0, idleGpus: 0 };
    groups.forEach((g, i) => {
      const min = (g.spec as { minMember: number }).minMember;
      const n = placed[i] ?? 0;
      if (n >= min) out.complete++;
      else if (n > 0) {
        out.deadlocked++;
        out.idleGpus += n;
      } else out.waiting++;
    });
    return out;
  } finally {
    await cluster.stop();
  }
}

console.log(
  'input | scheduler | complete | deadlocked | waiting (nothing held) | GPUs held by incomplete gangs',
);
for (const file of ['gangs.yaml', 'coscheduling.yaml']) {
  for (const gangScheduling of [false, true]) {
    const o = await run(file, gangScheduling);
    console.log(
      `${file} | ${gangScheduling ? 'coscheduling' : 'default'} | ${o.complete} | ${o.deadlocked} | ${o.waiting} | ${o.idleGpus}`,
    );
  }
}
