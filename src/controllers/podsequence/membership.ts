/**
 * Which pods belong to which group of a sequence: explicit names, label selectors, pods
 * claimed twice (by two groups, or by two sequences managing the same gate), and named
 * pods that do not exist. Pure.
 */

import { groupSelects, type ResolvedGroup, type ResolvedSpec } from './spec.ts';
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

/**
 * The indexes of the selector groups matching a set of labels, ascending. Each group is
 * filed under one of its equality requirements (key → value → groups), so a pod costs one
 * lookup per indexed key rather than one selector match per group: a sequence of 100
 * selector tiers over 10,000 pods would otherwise match a million selectors per reconcile.
 * A group can only match labels that carry its filed key=value, so the lookup misses
 * nothing; groups without an equality requirement are matched against every pod.
 */
function selectorMatcher(groups: ResolvedGroup[]): (labels: Record<string, string> | undefined) => number[] {
  const byKey = new Map<string, Map<string, ResolvedGroup[]>>();
  const always: ResolvedGroup[] = [];
  for (const g of groups) {
    const eq = g.selector!.equalities()[0];
    if (!eq) {
      always.push(g);
      continue;
    }
    let byValue = byKey.get(eq[0]);
    if (!byValue) {
      byValue = new Map();
      byKey.set(eq[0], byValue);
    }
    byValue.set(eq[1], [...(byValue.get(eq[1]) ?? []), g]);
  }
  return (labels) => {
    const hits: number[] = [];
    for (const g of always) if (g.selector!.matches(labels)) hits.push(g.index);
    if (labels) {
      for (const [key, byValue] of byKey) {
        if (!Object.hasOwn(labels, key)) continue;
        for (const g of byValue.get(labels[key]!) ?? []) if (g.selector!.matches(labels)) hits.push(g.index);
      }
    }
    return hits.length > 1 ? hits.sort((a, b) => a - b) : hits;
  };
}

export function resolveMembership(spec: ResolvedSpec, pods: Pod[], others: OtherSequence[] = []): Membership {
  const byName = new Map<string, Pod>();
  for (const p of pods) if (p.metadata.name) byName.set(p.metadata.name, p);
  const explicit = new Map<string, number>();
  const selectorHits = selectorMatcher(spec.groups.filter((g) => g.selector));
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
    hits.push(...selectorHits(pod.metadata.labels));
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
