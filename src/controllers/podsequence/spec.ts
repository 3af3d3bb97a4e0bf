/**
 * A PodSequence's spec with defaults applied and every check the CRD schema cannot make
 * (pods named in two groups, gate names, selectors the API server accepts but that
 * cannot be evaluated). Pure.
 */

import type { PodSequence, Scope } from '../../apis/scheduling.example.com/v1alpha1.ts';
import { parseGoDuration } from '../../kube/duration.ts';
import {
  isDNS1123Label,
  type LabelSelectorObject,
  type Selector,
  selectorFromObject,
  validateLabelKey,
} from '../../kube/labels.ts';

export interface ResolvedGroup {
  index: number;
  /** The group's name, or `Group <n>` (1-based) when it has none. */
  name: string;
  /** Explicit pod names, when the group lists them. */
  pods?: string[];
  podSet?: Set<string>;
  /** The compiled podSelector, when the group uses one. */
  selector?: Selector;
  selectorText?: string;
  /** waitDuration in ms (0: none). */
  waitMs: number;
  /** timeout in ms, when set. */
  timeoutMs?: number;
  timeoutPolicy: 'Fail' | 'Continue';
}

export interface ResolvedSpec {
  scope: Scope;
  namespace: string;
  gate: string;
  groups: ResolvedGroup[];
  /** Why the spec cannot be acted on; empty when it is valid. */
  errors: string[];
}

export function groupLabel(g: { index: number; name: string }, total: number): string {
  return `'${g.name}' (${g.index + 1}/${total})`;
}

function selectorText(ls: LabelSelectorObject): string {
  const parts = Object.entries(ls.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of ls.matchExpressions ?? []) {
    const op = e.operator;
    if (op === 'Exists') parts.push(e.key);
    else if (op === 'DoesNotExist') parts.push(`!${e.key}`);
    else parts.push(`${e.key} ${op === 'In' ? 'in' : 'notin'} (${(e.values ?? []).join(',')})`);
  }
  return parts.join(',');
}

/**
 * A malformed waitDuration or timeout, reported as a whole message: upstream's words for
 * waitDuration, the same form for troupe's own timeout.
 */
export const DURATION_ERROR = /^Invalid (wait duration|timeout) in /;

export function resolveSpec(seq: PodSequence, defaultGate: string): ResolvedSpec {
  const errors: string[] = [];
  const spec = seq.spec ?? { podGroups: [] };
  const scope = (spec.scope ?? 'Cluster') as Scope;
  if (scope !== 'Cluster' && scope !== 'Node') {
    errors.push(`spec.scope must be "Cluster" or "Node", not "${String(scope)}"`);
  }
  const namespace = spec.namespace || seq.metadata.namespace || 'default';
  if (!isDNS1123Label(namespace) || namespace.length > 63) {
    errors.push(`spec.namespace "${namespace}" is not a valid namespace name`);
  }
  const gate = spec.schedulingGateName || defaultGate;
  const gateError = validateLabelKey(gate);
  if (gateError) {
    errors.push(
      `spec.schedulingGateName "${gate}" is not a valid qualified name: ${gateError.replace(/^invalid label key "[^"]*": /, '')}`,
    );
  }
  const groups: ResolvedGroup[] = [];
  const podGroups = Array.isArray(spec.podGroups) ? spec.podGroups : [];
  if (podGroups.length === 0) errors.push('spec.podGroups must list at least one group');
  const owner = new Map<string, number>();
  podGroups.forEach((g, index) => {
    const name = g?.name || `Group ${index + 1}`;
    const where = `spec.podGroups[${index}] '${name}'`;
    const rg: ResolvedGroup = { index, name, waitMs: 0, timeoutPolicy: 'Fail' };
    // time.ParseDuration's refusal, as upstream reports it (its sequence turns Failed).
    const duration = (field: 'waitDuration' | 'timeout', label: string): number | undefined => {
      const v = g?.[field];
      if (v === undefined || v === null || v === '') return undefined;
      const ms = typeof v === 'string' ? parseGoDuration(v) : undefined;
      if (ms === undefined) {
        errors.push(`Invalid ${label} in ${name}: time: invalid duration ${JSON.stringify(String(v))}`);
        return undefined;
      }
      return ms;
    };
    const wait = duration('waitDuration', 'wait duration');
    if (wait !== undefined && wait > 0) rg.waitMs = wait;
    const timeout = duration('timeout', 'timeout');
    if (timeout !== undefined && timeout > 0) rg.timeoutMs = timeout;
    if (g?.timeoutPolicy !== undefined && g.timeoutPolicy !== 'Fail' && g.timeoutPolicy !== 'Continue')
      errors.push(`${where}: timeoutPolicy must be "Fail" or "Continue", not "${String(g.timeoutPolicy)}"`);
    else if (g?.timeoutPolicy) rg.timeoutPolicy = g.timeoutPolicy;
    const hasPods = g?.pods !== undefined && g?.pods !== null;
    const hasSelector = g?.podSelector !== undefined && g?.podSelector !== null;
    if (hasPods && hasSelector) errors.push(`${where}: set either pods or podSelector, not both`);
    if (!hasPods && !hasSelector) errors.push(`${where}: one of pods or podSelector is required`);
    if (hasPods) {
      const pods = Array.isArray(g.pods) ? g.pods : [];
      if (pods.length === 0) errors.push(`${where}: pods must list at least one pod name`);
      for (const p of pods) {
        const prev = owner.get(p);
        if (prev === index) errors.push(`${where}: pod ${p} is listed twice`);
        else if (prev !== undefined) {
          errors.push(
            `pod ${p} is listed in two groups: spec.podGroups[${prev}] and spec.podGroups[${index}]`,
          );
        }
        owner.set(p, index);
      }
      rg.pods = [...new Set(pods)];
      rg.podSet = new Set(rg.pods);
    } else if (hasSelector) {
      const ls = g.podSelector!;
      const empty =
        Object.keys(ls.matchLabels ?? {}).length === 0 && (ls.matchExpressions ?? []).length === 0;
      if (empty) {
        errors.push(`${where}: podSelector is empty, which would select every pod in the namespace`);
      } else {
        try {
          rg.selector = selectorFromObject(ls);
          rg.selectorText = selectorText(ls);
        } catch (err) {
          errors.push(`${where}: invalid podSelector: ${(err as Error).message}`);
        }
      }
    }
    groups.push(rg);
  });
  return { scope, namespace, gate, groups, errors };
}

/** True when the resolved group selects `pod` (by name or labels). */
export function groupSelects(
  g: ResolvedGroup,
  name: string | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  if (g.podSet) return name !== undefined && g.podSet.has(name);
  return g.selector ? g.selector.matches(labels) : false;
}
