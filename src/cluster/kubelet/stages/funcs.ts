/**
 * Template functions a KWOK stage template can call: KWOK's own (Now, StartTime, YAML, Version,
 * Quote, NodeConditions, NodeIP, NodeName, NodePort, PodIP, NodeIPWith, PodIPWith) and the
 * handful of sprig functions stage authors commonly reach for.
 */

import { dump as yamlDump } from 'js-yaml';
import {
  type FuncMap,
  formatValue,
  goQuote,
  type TemplateFunc,
  truth,
  type Value,
} from '../gotemplate/index.ts';
import { formatRFC3339Nano } from './time.ts';

export interface KwokFuncOptions {
  /** Clock in epoch ms; Now() formats it as RFC3339Nano. */
  now: () => number;
  /** The kubelet's start in epoch ms for StartTime() (default: now). */
  startTime?: number;
  version?: string;
  /** KWOK's --node-ip, used when no per-node address book is given. */
  nodeIP?: string;
  /** KWOK's --node-name. */
  nodeName?: string;
  /** Kubelet port reported in daemonEndpoints; 0 leaves it out. */
  nodePort?: number;
  nodeIPWith?: (nodeName: string) => string;
  podIPWith?: (
    nodeName: string,
    hostNetwork: boolean,
    uid: string,
    name: string,
    namespace: string,
  ) => string;
  /** Extra or overriding functions (troupe's own behaviour hooks plug in here). */
  extra?: FuncMap;
}

/** Node conditions a healthy kubelet reports, in KWOK's order. */
export const NODE_CONDITIONS = [
  { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
  {
    type: 'MemoryPressure',
    status: 'False',
    reason: 'KubeletHasSufficientMemory',
    message: 'kubelet has sufficient memory available',
  },
  {
    type: 'DiskPressure',
    status: 'False',
    reason: 'KubeletHasNoDiskPressure',
    message: 'kubelet has no disk pressure',
  },
  {
    type: 'PIDPressure',
    status: 'False',
    reason: 'KubeletHasSufficientPID',
    message: 'kubelet has sufficient PID available',
  },
  {
    type: 'NetworkUnavailable',
    status: 'False',
    reason: 'RouteCreated',
    message: 'RouteController created a route',
  },
];

/** What Go's json.Marshal escapes for HTML safety; Quote keeps that byte-for-byte. */
const HTML_UNSAFE = /[<>&\u2028\u2029]/;

/** A value as Go's json.Marshal writes it, HTML-safe escapes included. */
function goJSON(v: Value): string {
  const s = JSON.stringify(v === undefined ? null : v) ?? 'null';
  // Tested before replacing: a global replace with a callback costs even when nothing matches,
  // and this runs for every Quote of every render.
  if (!HTML_UNSAFE.test(s)) return s;
  return s.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** KWOK's Quote: JSON for strings, a quoted JSON text for anything else. */
export function kwokQuote(v: Value): string {
  const data = goJSON(v);
  return data.startsWith('"') ? data : goQuote(data);
}

/** KWOK's YAML: sigs.k8s.io/yaml output (sorted keys, unindented sequences), shifted by 2×indent. */
export function kwokYAML(v: Value, indent?: Value): string {
  let data = yamlDump(v === undefined ? null : v, { sortKeys: true, seqNoIndent: true, lineWidth: -1 });
  if (typeof indent === 'number' && indent > 0) {
    const pad = ' '.repeat(indent * 2);
    data = `\n${data}`.replaceAll('\n', `\n${pad}`);
  }
  return data;
}

function toStr(v: Value): string {
  return typeof v === 'string' ? v : formatValue(v, false);
}

function toNum(v: Value): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return Number(v) || 0;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return 0;
}

/** A few sprig helpers; sprig's full catalogue is not needed by stage templates. */
export const SPRIG_FUNCS: FuncMap = {
  default: (def, given) => (truth(given) ? given : def),
  empty: (v) => !truth(v),
  coalesce: (...vs) => vs.find((v: Value) => truth(v)) ?? null,
  ternary: (a, b, cond) => (truth(cond) ? a : b),
  toJson: (v) => JSON.stringify(v ?? null),
  toString: (v: Value) => toStr(v),
  quote: (...vs) =>
    vs
      .filter((v) => v !== undefined && v !== null)
      .map((v) => goQuote(toStr(v)))
      .join(' '),
  squote: (...vs) =>
    vs
      .filter((v) => v !== undefined && v !== null)
      .map((v) => `'${toStr(v)}'`)
      .join(' '),
  upper: (s) => toStr(s).toUpperCase(),
  lower: (s) => toStr(s).toLowerCase(),
  trim: (s) => toStr(s).trim(),
  trimPrefix: (p, s) => (toStr(s).startsWith(toStr(p)) ? toStr(s).slice(toStr(p).length) : toStr(s)),
  trimSuffix: (p, s) =>
    toStr(s).endsWith(toStr(p)) ? toStr(s).slice(0, -toStr(p).length || undefined) : toStr(s),
  contains: (sub, s) => toStr(s).includes(toStr(sub)),
  hasPrefix: (p, s) => toStr(s).startsWith(toStr(p)),
  hasSuffix: (p, s) => toStr(s).endsWith(toStr(p)),
  replace: (old, neu, s) => toStr(s).replaceAll(toStr(old), toStr(neu)),
  join: (sep, list) => (Array.isArray(list) ? list.map(toStr).join(toStr(sep)) : toStr(list)),
  split: (sep, s) => {
    const parts = toStr(s).split(toStr(sep));
    return Object.fromEntries(parts.map((p, i) => [`_${i}`, p]));
  },
  list: (...vs) => vs,
  dict: (...kv) => {
    const o: Record<string, Value> = {};
    for (let i = 0; i + 1 < kv.length; i += 2) o[toStr(kv[i])] = kv[i + 1];
    return o;
  },
  hasKey: (m, k) => m !== null && typeof m === 'object' && Object.hasOwn(m as object, toStr(k)),
  get: (m, k) => (m !== null && typeof m === 'object' ? ((m as Record<string, Value>)[toStr(k)] ?? '') : ''),
  add: (...vs) => vs.reduce<number>((a, b) => a + Math.trunc(toNum(b)), 0),
  sub: (a, b) => Math.trunc(toNum(a)) - Math.trunc(toNum(b)),
  mul: (...vs) => vs.reduce<number>((a, b) => a * Math.trunc(toNum(b)), 1),
  div: (a, b) => Math.trunc(Math.trunc(toNum(a)) / Math.trunc(toNum(b))),
  mod: (a, b) => Math.trunc(toNum(a)) % Math.trunc(toNum(b)),
  max: (...vs) => Math.max(...vs.map((v) => Math.trunc(toNum(v)))),
  min: (...vs) => Math.min(...vs.map((v) => Math.trunc(toNum(v)))),
  int: (v) => Math.trunc(toNum(v)),
  atoi: (v) => Math.trunc(Number(toStr(v))) || 0,
  b64enc: (v) => Buffer.from(toStr(v), 'utf8').toString('base64'),
  b64dec: (v) => Buffer.from(toStr(v), 'base64').toString('utf8'),
};

export const KWOK_FUNC_NAMES: readonly string[] = [
  'Now',
  'StartTime',
  'YAML',
  'Version',
  'Quote',
  'NodeConditions',
  'NodeIP',
  'NodeName',
  'NodePort',
  'PodIP',
  'NodeIPWith',
  'PodIPWith',
  ...Object.keys(SPRIG_FUNCS),
];

interface ObjectLike {
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; [k: string]: unknown };
  [k: string]: unknown;
}

/**
 * The function map for rendering one object. NodeIP/NodeName/PodIP answer for the object being
 * rendered (the node itself, or the pod and its node) when an address book is given.
 */
export function kwokFuncs(opts: KwokFuncOptions, obj?: ObjectLike): FuncMap {
  const nodeIPWith = (n: Value) => {
    const name = toStr(n);
    return opts.nodeIPWith ? opts.nodeIPWith(name) : (opts.nodeIP ?? '196.168.0.1');
  };
  const podIPWith = (n: Value, hostNetwork: Value, uid: Value, name: Value, namespace: Value) =>
    opts.podIPWith
      ? opts.podIPWith(
          toStr(n),
          hostNetwork === true,
          toStr(uid ?? ''),
          toStr(name ?? ''),
          toStr(namespace ?? ''),
        )
      : hostNetwork === true
        ? nodeIPWith(n)
        : '10.0.0.1';
  const isNode = obj?.kind === 'Node';
  const spec = obj?.spec as { nodeName?: string; hostNetwork?: boolean } | undefined;
  const objNode = isNode ? obj?.metadata?.name : spec?.nodeName;
  const fns: Record<string, TemplateFunc> = {
    ...SPRIG_FUNCS,
    Now: () => formatRFC3339Nano(opts.now()),
    StartTime: () => formatRFC3339Nano(opts.startTime ?? opts.now()),
    YAML: (v, indent) => kwokYAML(v, indent),
    Version: () => opts.version ?? 'troupe',
    Quote: (v) => kwokQuote(v),
    NodeConditions: () => NODE_CONDITIONS.map((c) => ({ ...c })),
    NodeIP: () => (objNode && opts.nodeIPWith ? opts.nodeIPWith(objNode) : (opts.nodeIP ?? '196.168.0.1')),
    NodeName: () => (isNode ? (obj?.metadata?.name ?? '') : (opts.nodeName ?? '')),
    NodePort: () => opts.nodePort ?? 0,
    PodIP: () =>
      podIPWith(
        objNode ?? '',
        spec?.hostNetwork === true,
        obj?.metadata?.uid,
        obj?.metadata?.name,
        obj?.metadata?.namespace,
      ),
    NodeIPWith: nodeIPWith,
    PodIPWith: podIPWith,
  };
  return opts.extra ? { ...fns, ...opts.extra } : fns;
}
