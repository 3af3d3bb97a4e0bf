/**
 * Quota and usage of ClusterQueues and their cohorts, as Kueue's scheduler cache keeps them
 * (kueue pkg/cache/scheduler/resource_node.go, v0.19): every ClusterQueue is a node with
 * nominal quota, borrowing and lending limits per flavor and resource; a cohort is a node
 * whose quota is what its children lend it. Usage past a child's lending-protected local
 * quota is stored in its parent, so "available" is local room plus what the parent still
 * has, capped by the borrowing limit. Amounts are milli-units.
 *
 * Cohorts come from `spec.cohortName`; the stand-in has no Cohort objects, so a cohort is a
 * root with no quota of its own. The arithmetic is Kueue's tree arithmetic all the same.
 */

import { parseQuantityMilli } from '../../kube/quantity.ts';
import type { ClusterQueue } from './api.ts';

/** A flavor and resource, `<flavor>/<resource>` (flavor names cannot hold a slash). */
export type FR = string;

export function fr(flavor: string, resource: string): FR {
  return `${flavor}/${resource}`;
}

export function splitFR(key: FR): { flavor: string; resource: string } {
  const i = key.indexOf('/');
  return { flavor: key.slice(0, i), resource: key.slice(i + 1) };
}

export interface ResourceQuota {
  nominal: bigint;
  borrowingLimit?: bigint;
  lendingLimit?: bigint;
}

export interface QuotaNode {
  name: string;
  kind: 'ClusterQueue' | 'Cohort';
  parent?: QuotaNode;
  childCohorts: QuotaNode[];
  childQueues: QuotaNode[];
  quotas: Map<FR, ResourceQuota>;
  /** Own nominal quota plus what the children lend (past their lending limits). */
  subtreeQuota: Map<FR, bigint>;
  /** ClusterQueue: its usage. Cohort: the children's usage past their local quota. */
  usage: Map<FR, bigint>;
}

const ZERO = 0n;
const max = (a: bigint, b: bigint) => (a > b ? a : b);
const min = (a: bigint, b: bigint) => (a < b ? a : b);
const at = (m: Map<FR, bigint>, k: FR) => m.get(k) ?? ZERO;

function node(name: string, kind: QuotaNode['kind']): QuotaNode {
  return {
    name,
    kind,
    childCohorts: [],
    childQueues: [],
    quotas: new Map(),
    subtreeQuota: new Map(),
    usage: new Map(),
  };
}

function milli(q: unknown): bigint | undefined {
  if (q === undefined || q === null) return undefined;
  try {
    return parseQuantityMilli(q as string | number);
  } catch {
    // A malformed quantity (the CRD schema checks the pattern) counts as none.
    return ZERO;
  }
}

/** Capacity only this node's subtree sees: what its lending limit keeps from the parent. */
function localQuota(n: QuotaNode, k: FR): bigint {
  const lending = n.quotas.get(k)?.lendingLimit;
  return lending === undefined ? ZERO : max(ZERO, at(n.subtreeQuota, k) - lending);
}

/** Guaranteed quota of the node not yet used (invisible to its parent). */
export function localAvailable(n: QuotaNode, k: FR): bigint {
  return max(ZERO, localQuota(n, k) - at(n.usage, k));
}

function availableRaw(n: QuotaNode, k: FR): bigint {
  if (!n.parent) return at(n.subtreeQuota, k) - at(n.usage, k);
  let parentAvailable = availableRaw(n.parent, k);
  const borrowing = n.quotas.get(k)?.borrowingLimit;
  if (borrowing !== undefined) {
    const lq = localQuota(n, k);
    const storedInParent = at(n.subtreeQuota, k) - lq;
    const usedInParent = max(ZERO, at(n.usage, k) - lq);
    parentAvailable = min(storedInParent - usedInParent + borrowing, parentAvailable);
  }
  return localAvailable(n, k) + parentAvailable;
}

/** What the node can still take now, borrowing included (never negative). */
export function available(n: QuotaNode, k: FR): bigint {
  return max(ZERO, availableRaw(n, k));
}

/** The most the node could ever take, with no usage anywhere, within its borrowing limit. */
export function potentialAvailable(n: QuotaNode, k: FR): bigint {
  if (!n.parent) return at(n.subtreeQuota, k);
  let avail = localQuota(n, k) + potentialAvailable(n.parent, k);
  const borrowing = n.quotas.get(k)?.borrowingLimit;
  if (borrowing !== undefined) avail = min(at(n.subtreeQuota, k) + borrowing, avail);
  return avail;
}

export function addUsage(n: QuotaNode, k: FR, val: bigint): void {
  const local = localAvailable(n, k);
  n.usage.set(k, at(n.usage, k) + val);
  if (n.parent && val > local) addUsage(n.parent, k, val - local);
}

export function removeUsage(n: QuotaNode, k: FR, val: bigint): void {
  const storedInParent = at(n.usage, k) - localQuota(n, k);
  n.usage.set(k, at(n.usage, k) - val);
  if (storedInParent <= ZERO || !n.parent) return;
  removeUsage(n.parent, k, min(val, storedInParent));
}

export function nominal(n: QuotaNode, k: FR): bigint {
  return n.quotas.get(k)?.nominal ?? ZERO;
}

/** Whether taking `val` more makes the node use more than its (subtree) quota. */
export function borrowingWith(n: QuotaNode, k: FR, val: bigint): boolean {
  return at(n.subtreeQuota, k) < at(n.usage, k) + val;
}

export function isWithinNominal(n: QuotaNode, frs: Iterable<FR>): boolean {
  for (const k of frs) if (at(n.subtreeQuota, k) < at(n.usage, k)) return false;
  return true;
}

/** QuantitiesFitInQuota: whether the requests fit the node's quota, and what exceeds its local room. */
export function fitsInQuota(n: QuotaNode, requests: Map<FR, bigint>): [boolean, Map<FR, bigint>] {
  let fits = true;
  const remaining = new Map<FR, bigint>();
  for (const [k, v] of requests) {
    if (at(n.subtreeQuota, k) < at(n.usage, k) + v) fits = false;
    remaining.set(k, max(ZERO, v - localAvailable(n, k)));
  }
  return [fits, remaining];
}

export function* ancestors(n: QuotaNode): Generator<QuotaNode> {
  for (let p = n.parent; p; p = p.parent) yield p;
}

function height(n: QuotaNode): number {
  let h = Math.min(n.childCohorts.length + n.childQueues.length, 1);
  for (const c of n.childCohorts) h = Math.max(h, height(c) + 1);
  return h;
}

/**
 * FindHeightOfLowestSubtreeThatFits: how far from the queue the quota for `val` comes from
 * (0: within its nominal quota), and whether the subtree that fits is smaller than the whole
 * cohort tree (so that reclaiming within it is possible).
 */
export function borrowLevel(cq: QuotaNode, k: FR, val: bigint): [number, boolean] {
  if (!borrowingWith(cq, k, val) || !cq.parent) return [0, Boolean(cq.parent)];
  let remaining = val - localAvailable(cq, k);
  for (const p of ancestors(cq)) {
    if (!borrowingWith(p, k, remaining)) return [height(p), Boolean(p.parent)];
    remaining -= localAvailable(p, k);
  }
  let root = cq.parent;
  while (root.parent) root = root.parent;
  return [height(root), false];
}

export interface QuotaTree {
  queues: Map<string, QuotaNode>;
  cohorts: Map<string, QuotaNode>;
}

/** The tree of the given ClusterQueues (by `spec.cohortName`), with no usage yet. */
export function buildQuotaTree(clusterQueues: Iterable<ClusterQueue>): QuotaTree {
  const tree: QuotaTree = { queues: new Map(), cohorts: new Map() };
  for (const cq of clusterQueues) {
    const n = node(cq.metadata.name ?? '', 'ClusterQueue');
    for (const rg of cq.spec?.resourceGroups ?? []) {
      for (const f of rg.flavors ?? []) {
        for (const r of f.resources ?? []) {
          const q: ResourceQuota = { nominal: milli(r.nominalQuota) ?? ZERO };
          const b = milli(r.borrowingLimit);
          const l = milli(r.lendingLimit);
          if (b !== undefined) q.borrowingLimit = b;
          if (l !== undefined) q.lendingLimit = l;
          n.quotas.set(fr(f.name, r.name), q);
          n.subtreeQuota.set(fr(f.name, r.name), q.nominal);
        }
      }
    }
    tree.queues.set(n.name, n);
    const cohortName = cq.spec?.cohortName;
    if (cohortName) {
      let c = tree.cohorts.get(cohortName);
      if (!c) {
        c = node(cohortName, 'Cohort');
        tree.cohorts.set(cohortName, c);
      }
      n.parent = c;
      c.childQueues.push(n);
    }
  }
  for (const c of tree.cohorts.values()) {
    for (const child of c.childQueues) {
      for (const [k, q] of child.subtreeQuota) {
        c.subtreeQuota.set(k, at(c.subtreeQuota, k) + q - localQuota(child, k));
      }
    }
  }
  return tree;
}
