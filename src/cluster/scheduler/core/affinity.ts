/**
 * Node selection terms (nodeSelector, required/preferred node affinity) compiled once per pod
 * into closures, so filtering a thousand nodes does no parsing.
 */

import type { NodeSelectorRequirement, NodeSelectorTerm, Pod } from '../../../kube/builtin.ts';

export type NodeMatcher = (labels: Record<string, string>, name: string) => boolean;

const NEVER: NodeMatcher = () => false;

/** Gt/Lt compare integers; a value that is not an integer makes the requirement unmatchable. */
function parseIntStrict(s: string | undefined): number | undefined {
  if (s === undefined || !/^[+-]?\d+$/.test(s)) return undefined;
  return Number(s);
}

function compileLabelRequirement(r: NodeSelectorRequirement): NodeMatcher | undefined {
  const key = r.key;
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In': {
      if (values.length === 0) return undefined;
      const set = new Set(values);
      return (l) => {
        const v = l[key];
        return v !== undefined && set.has(v);
      };
    }
    case 'NotIn': {
      if (values.length === 0) return undefined;
      const set = new Set(values);
      return (l) => {
        const v = l[key];
        return v === undefined || !set.has(v);
      };
    }
    case 'Exists':
      return values.length === 0 ? (l) => l[key] !== undefined : undefined;
    case 'DoesNotExist':
      return values.length === 0 ? (l) => l[key] === undefined : undefined;
    case 'Gt':
    case 'Lt': {
      const bound = values.length === 1 ? parseIntStrict(values[0]) : undefined;
      if (bound === undefined) return undefined;
      const gt = r.operator === 'Gt';
      return (l) => {
        const v = parseIntStrict(l[key]);
        if (v === undefined) return false;
        return gt ? v > bound : v < bound;
      };
    }
    default:
      return undefined;
  }
}

function compileFieldRequirement(r: NodeSelectorRequirement): NodeMatcher | undefined {
  // Only metadata.name is a supported node field; anything else fails validation upstream.
  if (r.key !== 'metadata.name') return undefined;
  const values = r.values ?? [];
  if (values.length !== 1) return undefined;
  const want = values[0];
  if (r.operator === 'In') return (_l, name) => name === want;
  if (r.operator === 'NotIn') return (_l, name) => name !== want;
  return undefined;
}

/**
 * One term: its requirements ANDed. An empty term matches nothing, and a term that cannot be
 * parsed matches nothing while the other terms keep working (upstream's lazy-error selector).
 */
export function compileTerm(term: NodeSelectorTerm): NodeMatcher {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return NEVER;
  const parts: NodeMatcher[] = [];
  for (const e of exprs) {
    const m = compileLabelRequirement(e);
    if (!m) return NEVER;
    parts.push(m);
  }
  for (const f of fields) {
    const m = compileFieldRequirement(f);
    if (!m) return NEVER;
    parts.push(m);
  }
  if (parts.length === 1) return parts[0]!;
  return (l, n) => {
    for (const p of parts) if (!p(l, n)) return false;
    return true;
  };
}

export interface CompiledNodeAffinity {
  /** nodeSelector AND required affinity; undefined when the pod constrains nothing. */
  required: NodeMatcher | undefined;
  /**
   * Node names from `matchFields metadata.name In` when every term pins names (the PreFilter
   * result upstream): nodes outside the set are rejected as "didn't satisfy plugin(s)".
   * An empty set means the terms conflict.
   */
  nodeNames: Set<string> | undefined;
  preferred: { weight: number; match: NodeMatcher }[];
}

export function compileNodeAffinity(pod: Pod): CompiledNodeAffinity {
  const spec = pod.spec ?? {};
  const parts: NodeMatcher[] = [];
  const sel = spec.nodeSelector;
  if (sel) {
    const entries = Object.entries(sel);
    if (entries.length > 0) {
      parts.push((l) => {
        for (const [k, v] of entries) if (l[k] !== v) return false;
        return true;
      });
    }
  }
  const na = spec.affinity?.nodeAffinity;
  const req = na?.requiredDuringSchedulingIgnoredDuringExecution;
  let nodeNames: Set<string> | undefined;
  if (req) {
    const terms = (req.nodeSelectorTerms ?? []).map(compileTerm);
    parts.push((l, n) => {
      for (const t of terms) if (t(l, n)) return true;
      return false;
    });
    nodeNames = pinnedNodeNames(req.nodeSelectorTerms ?? []);
  }
  const preferred = (na?.preferredDuringSchedulingIgnoredDuringExecution ?? [])
    .filter((p) => p.weight !== 0)
    .map((p) => ({ weight: p.weight, match: compileTerm(p.preference ?? {}) }));
  let required: NodeMatcher | undefined;
  if (parts.length === 1) required = parts[0];
  else if (parts.length > 1) {
    required = (l, n) => {
      for (const p of parts) if (!p(l, n)) return false;
      return true;
    };
  }
  return { required, nodeNames, preferred };
}

function pinnedNodeNames(terms: NodeSelectorTerm[]): Set<string> | undefined {
  if (terms.length === 0) return undefined;
  let union: Set<string> | undefined;
  for (const t of terms) {
    let termNames: Set<string> | undefined;
    for (const r of t.matchFields ?? []) {
      if (r.key !== 'metadata.name' || r.operator !== 'In') continue;
      const s = new Set(r.values ?? []);
      termNames = termNames ? new Set([...termNames].filter((x) => s.has(x))) : s;
    }
    // A term without a name pin lets every node through, since terms are ORed.
    if (!termNames) return undefined;
    union ??= new Set();
    for (const n of termNames) union.add(n);
  }
  return union;
}
