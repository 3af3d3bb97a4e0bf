/**
 * Scheduler core throughput: 1,000 nodes, 100,000 pods scheduled one after another, each
 * accounted on its node (assumed) before the next, on one core. Prints pods/s for kube-scheduler's
 * adaptive node sampling and for scoring every node.
 *
 *   ./node_modules/.bin/node bench/scheduler-core.ts [nodes] [pods]
 */

import { ClusterState, schedulePod } from '../src/cluster/scheduler/core/index.ts';
import type { Node, Pod, PodSpec } from '../src/kube/builtin.ts';

const NODES = Number(process.argv[2] ?? 1000);
const PODS = Number(process.argv[3] ?? 100_000);

let seed = 42;
function rnd(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

function makeNodes(): Node[] {
  const nodes: Node[] = [];
  for (let i = 0; i < NODES; i++) {
    const gpu = i % 10 === 0;
    nodes.push({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: `node-${i}`,
        labels: {
          'kubernetes.io/hostname': `node-${i}`,
          zone: `zone-${i % 3}`,
          ...(gpu ? { accelerator: 'a100' } : {}),
        },
      },
      spec: gpu ? { taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }] } : {},
      status: {
        allocatable: { cpu: '96', memory: '384Gi', pods: '110', ...(gpu ? { 'nvidia.com/gpu': '8' } : {}) },
      },
    });
  }
  return nodes;
}

function makePods(): Pod[] {
  const pods: Pod[] = [];
  for (let i = 0; i < PODS; i++) {
    const kind = rnd();
    const cpu = `${250 + Math.floor(rnd() * 350)}m`;
    const memory = `${512 + Math.floor(rnd() * 1024)}Mi`;
    const spec: PodSpec = {
      containers: [{ name: 'main', resources: { requests: { cpu, memory } } }],
    };
    if (kind < 0.02) {
      spec.containers = [
        { name: 'main', resources: { requests: { cpu, memory }, limits: { 'nvidia.com/gpu': '1' } } },
      ];
      spec.tolerations = [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }];
      spec.nodeSelector = { accelerator: 'a100' };
    } else if (kind < 0.2) {
      spec.affinity = {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'zone', operator: 'In', values: ['zone-0', 'zone-1'] }] },
            ],
          },
        },
      };
    }
    pods.push({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `pod-${i}`, namespace: 'bench', uid: `uid-${i}` },
      spec,
    });
  }
  return pods;
}

function run(label: string, percentageOfNodesToScore: number): void {
  const state = new ClusterState();
  for (const n of makeNodes()) state.upsertNode(n);
  seed = 42;
  const pods = makePods();
  let scheduled = 0;
  let failed = 0;
  const t0 = performance.now();
  for (const p of pods) {
    const r = schedulePod(state, p, { percentageOfNodesToScore });
    if (r.status === 'Scheduled') {
      state.addPod(p, r.nodeName);
      scheduled++;
    } else failed++;
  }
  const secs = (performance.now() - t0) / 1000;
  console.log(
    `${label}: ${NODES} nodes, ${PODS} pods: ${Math.round(PODS / secs)} pods/s ` +
      `(${secs.toFixed(2)} s, ${scheduled} scheduled, ${failed} unschedulable)`,
  );
}

run('adaptive sampling (kube-scheduler default)', 0);
run('all nodes scored', 100);
