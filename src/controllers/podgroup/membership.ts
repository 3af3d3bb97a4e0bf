/**
 * Which group a pod belongs to. A pod names its group with the seed's label or with the
 * kube-batch/Volcano annotation; when both are present and disagree, the label wins (the
 * seed's contract stays exact) and the pod is reported as a conflict to both groups.
 */

import { claimOf, type PodObject } from '../../apis/scheduling.incubator.k8s.io/v1alpha1.ts';
import { isDNS1123Subdomain } from '../../kube/labels.ts';
import { keyOf } from '../../runtime/index.ts';

export { claimOf, type GroupClaim } from '../../apis/scheduling.incubator.k8s.io/v1alpha1.ts';

/** Every group key (`namespace/group`) a pod is relevant to: its group and, on conflict, the other one. */
export function groupKeysOf(pod: PodObject): string[] {
  const c = claimOf(pod);
  const ns = pod.metadata.namespace;
  const keys: string[] = [];
  if (c.label) keys.push(keyOf(ns, c.label));
  if (c.annotation && c.annotation !== c.label) keys.push(keyOf(ns, c.annotation));
  return keys;
}

// A PodGroup's name must be a DNS-1123 subdomain; a label value may hold characters
// (uppercase, "_") that no object name can, so such groups get labels but no PodGroup.

/** Why `name` cannot name a PodGroup, or undefined when it can. */
export function invalidGroupName(name: string): string | undefined {
  if (name.length > 253) return 'must be no more than 253 characters';
  if (!isDNS1123Subdomain(name)) {
    return "must be a lowercase RFC 1123 subdomain: lowercase alphanumerics, '-' or '.', starting and ending with an alphanumeric";
  }
  return undefined;
}
