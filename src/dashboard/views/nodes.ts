/** Nodes: what the pods bound to each node request, against what the node can allocate. */

import type { Node } from '../../kube/builtin.ts';
import { findCondition } from '../../kube/conditions.ts';
import { isPodTerminal, podRequestsMilli } from '../../kube/pod.ts';
import { tryParseQuantity } from '../../kube/quantity.ts';
import { Offload } from '../kinds.ts';
import type { NodeView, ResourceUse } from '../view-model.ts';
import type { Pod } from './pods.ts';

export type { Node } from '../../kube/builtin.ts';

const GIB = 1024 ** 3;

/** Extended resources shown as GPUs: `nvidia.com/gpu`, `amd.com/gpu`, `gpu.intel.com/i915`. */
export function isGpuResource(name: string): boolean {
  return name.endsWith('/gpu') || name.startsWith('gpu.');
}

function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

function formatNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : String(round(n, 2));
}

/** A resource in its display unit: cores, GiB or a plain count. */
export function displayValue(resource: string, milli: bigint): number {
  const value = Number(milli) / 1000;
  if (resource === 'memory' || resource === 'ephemeral-storage' || resource.startsWith('hugepages-')) {
    return value / GIB;
  }
  return value;
}

export function useText(resource: string, used: number, total: number): string {
  const unit = resource === 'memory' || resource === 'ephemeral-storage' ? 'Gi' : '';
  return `${formatNumber(round(used, 2))}${unit} / ${formatNumber(round(total, 2))}${unit}`;
}

function use(resource: string, usedMilli: bigint, totalMilli: bigint): ResourceUse {
  const used = displayValue(resource, usedMilli);
  const total = displayValue(resource, totalMilli);
  return { resource, used, total, text: useText(resource, used, total) };
}

function milli(raw: unknown): bigint {
  const q = tryParseQuantity(raw);
  return q ? q.nanos / 1_000_000n : 0n;
}

const NODE_LIMIT = 500;

export function nodesView(
  nodes: readonly Node[],
  pods: readonly Pod[],
): { items: NodeView[]; omitted: number } {
  const requested = new Map<string, Record<string, bigint>>();
  const podCount = new Map<string, number>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    if (!node || isPodTerminal(pod)) continue;
    podCount.set(node, (podCount.get(node) ?? 0) + 1);
    const sum = requested.get(node) ?? {};
    for (const [name, v] of Object.entries(podRequestsMilli(pod))) sum[name] = (sum[name] ?? 0n) + v;
    requested.set(node, sum);
  }
  const sorted = [...nodes].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  const items = sorted.slice(0, NODE_LIMIT).map((node): NodeView => {
    const name = node.metadata.name ?? '';
    const alloc = node.status?.allocatable ?? node.status?.capacity ?? {};
    const req = requested.get(name) ?? {};
    const resources: ResourceUse[] = [
      use('cpu', req.cpu ?? 0n, milli(alloc.cpu)),
      use('memory', req.memory ?? 0n, milli(alloc.memory)),
    ];
    let gpus: ResourceUse | undefined;
    for (const res of Object.keys(alloc).sort()) {
      if (!isGpuResource(res)) continue;
      const u = use(res, req[res] ?? 0n, milli(alloc[res]));
      if (u.total > 0 || u.used > 0) {
        resources.push(u);
        gpus = gpus
          ? { ...gpus, used: gpus.used + u.used, total: gpus.total + u.total }
          : { ...u, resource: 'gpu' };
      }
    }
    if (gpus) gpus.text = useText('gpu', gpus.used, gpus.total);
    const count = podCount.get(name) ?? 0;
    resources.push(use('pods', BigInt(count) * 1000n, milli(alloc.pods)));
    const view: NodeView = {
      name,
      ready: findCondition(node.status?.conditions, 'Ready')?.status === 'True',
      unschedulable: node.spec?.unschedulable === true,
      virtual: name === Offload.virtualNode || node.metadata.labels?.[Offload.virtualLabel] === 'true',
      taints: (node.spec?.taints ?? []).map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`),
      resources,
      podCount: count,
    };
    if (gpus) view.gpus = gpus;
    return view;
  });
  return { items, omitted: Math.max(0, sorted.length - NODE_LIMIT) };
}
