/**
 * Full mode's node taints. For a node-scoped sequence, group k (k >= 1) has a NoSchedule
 * taint that stays on a node until groups 0..k-1 are Ready there; pods of group j carry
 * tolerations for the taints of groups after j (injected by the webhook), so each pod is
 * kept off the nodes where its own group may not start yet. Pure.
 */

import { createHash } from 'node:crypto';
import type { Taint, Toleration } from './objects.ts';

const DOMAIN = 'podsequence.example.com';
export const TAINT_EFFECT = 'NoSchedule';

/**
 * The key's name part is limited to 63 characters, and sequences in different namespaces
 * may share a name: the key carries a short form of the name (for people reading
 * `kubectl describe node`) and a hash of namespace/name (for uniqueness).
 */
function sequenceId(namespace: string, name: string): string {
  const hash = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 8);
  const short = name.slice(0, 35).replace(/[^A-Za-z0-9]+$/, '');
  return short ? `${short}-${hash}` : hash;
}

export function taintKey(namespace: string, name: string, group: number): string {
  return `${DOMAIN}/${sequenceId(namespace, name)}-group-${group}-blocked`;
}

/** True for the taints this sequence manages (any group). */
export function isSequenceTaint(key: string, namespace: string, name: string): boolean {
  return key.startsWith(`${DOMAIN}/${sequenceId(namespace, name)}-group-`) && key.endsWith('-blocked');
}

/** Taints a node should carry for a sequence whose groups below `allowedThrough + 1` are Ready there. */
export function desiredTaints(
  namespace: string,
  name: string,
  nodeIndex: number,
  totalGroups: number,
): Taint[] {
  const out: Taint[] = [];
  for (let k = Math.max(1, nodeIndex + 1); k < totalGroups; k++) {
    out.push({ key: taintKey(namespace, name, k), effect: TAINT_EFFECT });
  }
  return out;
}

/** Tolerations a pod of group `group` needs: every later group's taint. */
export function tolerationsFor(
  namespace: string,
  name: string,
  group: number,
  totalGroups: number,
): Toleration[] {
  const out: Toleration[] = [];
  for (let k = group + 1; k < totalGroups; k++) {
    out.push({ key: taintKey(namespace, name, k), operator: 'Exists', effect: TAINT_EFFECT });
  }
  return out;
}

/**
 * The node's taint list with this sequence's taints replaced by `desired`, or undefined
 * when nothing changes. Other taints keep their order and fields.
 */
export function reconcileTaints(
  current: Taint[] | undefined,
  namespace: string,
  name: string,
  desired: Taint[],
): Taint[] | undefined {
  const list = current ?? [];
  const ours = list.filter((t) => isSequenceTaint(t.key, namespace, name));
  const want = new Set(desired.map((t) => t.key));
  const have = new Set(ours.map((t) => t.key));
  const same = ours.length === desired.length && [...want].every((k) => have.has(k));
  if (same) return undefined;
  const kept = list.filter((t) => !isSequenceTaint(t.key, namespace, name) || want.has(t.key));
  for (const t of desired) if (!have.has(t.key)) kept.push(t);
  return kept;
}
