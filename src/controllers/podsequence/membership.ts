/**
 * Which pods belong to which group of a sequence: explicit names, label selectors, pods
 * claimed twice (by two groups, or by two sequences managing the same gate), and named
 * pods that do not exist. Pure.
 */

import { groupSelects, type ResolvedSpec } from './spec.ts';
import { hasGate, isFailed } from './pods.ts';
import type { Pod } from './types.ts';

export interface GroupMembers {
  index: number;
  /** Pods counted in the group (selector groups leave failed pods out while others match). */
  members: Pod[];
  /** Explicit names with no pod in the namespace. */
  missing: string[];
  /** Failed pods a selector matched and that are left out (their controller replaces them). */
  ignoredFailed: Pod[];
}

export interface Membership {
  groups: GroupMembers[];
  /** Group index of each member pod, by name. */
  groupOf: Map<string, number>;
  /** Pods this sequence must not release, with why. */
  conflicts: Map<string, string>;
}

export interface OtherSequence {
  key: string;
  spec: ResolvedSpec;
}

export function resolveMembership(spec: ResolvedSpec, pods: Pod[], others: OtherSequence[] = []): Membership {
  const byName = new Map<string, Pod>();
  for (const p of pods) if (p.metadata.name) byName.set(p.metadata.name, p);
  const explicit = new Map<string, number>();
  const selectorGroups = spec.groups.filter((g) => g.selector);
  for (const g of spec.groups) for (const n of g.pods ?? []) if (!explicit.has(n)) explicit.set(n, g.index);

  const groups: GroupMembers[] = spec.groups.map((g) => ({
    index: g.index,
    members: [],
    missing: [],
    ignoredFailed: [],
  }));
  const groupOf = new Map<string, number>();
  const conflicts = new Map<string, string>();
  const selectedFailed: Pod[][] = spec.groups.map(() => []);

  for (const g of spec.groups) {
    for (const n of g.pods ?? []) if (!byName.has(n)) groups[g.index]!.missing.push(n);
  }
  for (const pod of pods) {
    const name = pod.metadata.name ?? '';
    const hits: number[] = [];
    const e = explicit.get(name);
    if (e !== undefined) hits.push(e);
    for (const g of selectorGroups) if (g.selector!.matches(pod.metadata.labels)) hits.push(g.index);
    if (hits.length === 0) continue;
    if (hits.length > 1) {
      conflicts.set(
        name,
        `selected by ${hits.length} groups (${hits.map((i) => `'${spec.groups[i]!.name}'`).join(', ')})`,
      );
      // Counted in its earliest group, so that a group never looks complete without it.
    }
    const k = Math.min(...hits);
    groupOf.set(name, k);
    if (spec.groups[k]!.selector && isFailed(pod)) selectedFailed[k]!.push(pod);
    else groups[k]!.members.push(pod);
  }
  // A selector group whose every match failed has failed: keep those pods as members so it
  // cannot complete; otherwise their replacements stand for them.
  selectedFailed.forEach((failed, k) => {
    if (failed.length === 0) return;
    const g = groups[k]!;
    if (g.members.length === 0) g.members.push(...failed);
    else g.ignoredFailed.push(...failed);
  });
  for (const g of groups)
    g.members.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));

  // Two sequences removing the same gate from one pod would each undo the other's ordering.
  const rivals = others.filter(
    (o) => o.spec.errors.length === 0 && o.spec.gate === spec.gate && o.spec.namespace === spec.namespace,
  );
  if (rivals.length > 0) {
    for (const g of groups) {
      for (const pod of g.members) {
        if (!hasGate(pod, spec.gate)) continue;
        const name = pod.metadata.name ?? '';
        for (const o of rivals) {
          const claimed = o.spec.groups.some((og) => groupSelects(og, name, pod.metadata.labels));
          if (claimed) {
            conflicts.set(name, `also sequenced by PodSequence ${o.key} with the same gate ${spec.gate}`);
            break;
          }
        }
      }
    }
  }
  return { groups, groupOf, conflicts };
}
