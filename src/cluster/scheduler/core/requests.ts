/**
 * Effective pod requests the way kube-scheduler computes them
 * (k8s.io/component-helpers/resource.PodRequests without pod-level resources):
 * max(sum of app containers + sidecars, the largest init step) + overhead.
 *
 * Private to the scheduler core until a shared `src/kube/pod.ts` exists; the rules are small.
 */

import type { Container, Pod, ResourceList } from '../../../kube/builtin.ts';
import { quantityMilliValue, quantityValue } from './quantity.ts';

/** Requests in scheduler units: cpu in millicores, everything else in Value() units. */
export interface Resources {
  milliCPU: number;
  memory: number;
  ephemeralStorage: number;
  /** Extended resources, hugepages-*, attachable-volumes-*; null when the pod asks for none. */
  scalar: Map<string, number> | null;
}

export interface PodRequests {
  /** What NodeResourcesFit filters on and what a node's `Requested` sums. */
  requests: Resources;
  /** CPU/memory with 100m / 200Mi for containers that set none: what the Allocated scorers use. */
  nonZeroMilliCPU: number;
  nonZeroMemory: number;
}

export const DEFAULT_MILLI_CPU_REQUEST = 100;
export const DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024;

/** Names the scheduler tracks as scalar resources (schedutil.IsScalarResourceName). */
export function isScalarResourceName(name: string): boolean {
  if (name.startsWith('hugepages-') || name.startsWith('attachable-volumes-')) return true;
  // Extended resources are domain-qualified and outside the kubernetes.io namespace.
  if (!name.includes('/')) return false;
  if (name.startsWith('requests.')) return false;
  return !name.startsWith('kubernetes.io/') && !name.includes('.kubernetes.io/');
}

type ResMap = Map<string, number>;

function toUnits(name: string, q: string | number): number {
  const v = name === 'cpu' ? quantityMilliValue(q) : quantityValue(q);
  return Number.isFinite(v) ? v : 0;
}

/** Container requests after API defaulting: a limit with no request stands in for the request. */
function containerRequests(c: Container, nonZero: boolean): ResMap {
  const out: ResMap = new Map();
  const req = c.resources?.requests ?? undefined;
  const lim = c.resources?.limits ?? undefined;
  if (req) for (const k of Object.keys(req)) out.set(k, toUnits(k, req[k] as string | number));
  if (lim)
    for (const k of Object.keys(lim)) if (!out.has(k)) out.set(k, toUnits(k, lim[k] as string | number));
  if (nonZero) {
    if (!out.has('cpu')) out.set('cpu', DEFAULT_MILLI_CPU_REQUEST);
    if (!out.has('memory')) out.set('memory', DEFAULT_MEMORY_REQUEST);
  }
  return out;
}

function addInto(dst: ResMap, src: ResMap): void {
  for (const [k, v] of src) dst.set(k, (dst.get(k) ?? 0) + v);
}

function maxInto(dst: ResMap, src: ResMap): void {
  for (const [k, v] of src) {
    const cur = dst.get(k);
    if (cur === undefined || v > cur) dst.set(k, v);
  }
}

function aggregate(pod: Pod, nonZero: boolean): ResMap {
  const reqs: ResMap = new Map();
  for (const c of pod.spec?.containers ?? []) addInto(reqs, containerRequests(c, nonZero));
  const sidecars: ResMap = new Map();
  const initMax: ResMap = new Map();
  for (const c of pod.spec?.initContainers ?? []) {
    const cr = containerRequests(c, nonZero);
    if (c.restartPolicy === 'Always') {
      // A sidecar keeps running, so it adds to every later init step and to the app containers.
      addInto(sidecars, cr);
      maxInto(initMax, sidecars);
    } else {
      const step = new Map(sidecars);
      addInto(step, cr);
      maxInto(initMax, step);
    }
  }
  addInto(reqs, sidecars);
  maxInto(reqs, initMax);
  const overhead = pod.spec?.overhead;
  if (overhead) {
    const o: ResMap = new Map();
    for (const k of Object.keys(overhead)) o.set(k, toUnits(k, overhead[k] as string | number));
    addInto(reqs, o);
  }
  return reqs;
}

function toResources(m: ResMap): Resources {
  const r: Resources = { milliCPU: 0, memory: 0, ephemeralStorage: 0, scalar: null };
  for (const [k, v] of m) {
    if (k === 'cpu') r.milliCPU = v;
    else if (k === 'memory') r.memory = v;
    else if (k === 'ephemeral-storage') r.ephemeralStorage = v;
    else if (isScalarResourceName(k)) {
      r.scalar ??= new Map();
      r.scalar.set(k, v);
    }
  }
  return r;
}

export function computePodRequests(pod: Pod): PodRequests {
  const requests = toResources(aggregate(pod, false));
  const nz = aggregate(pod, true);
  return {
    requests,
    nonZeroMilliCPU: nz.get('cpu') ?? 0,
    nonZeroMemory: nz.get('memory') ?? 0,
  };
}

/** A node's allocatable list in scheduler units; `pods` becomes allowedPodNumber. */
export function resourcesFromList(list: ResourceList | null | undefined): { res: Resources; pods: number } {
  const m: ResMap = new Map();
  let pods = 0;
  if (list) {
    for (const k of Object.keys(list)) {
      const v = toUnits(k, list[k] as string | number);
      if (k === 'pods') pods = v;
      else m.set(k, v);
    }
  }
  return { res: toResources(m), pods };
}
