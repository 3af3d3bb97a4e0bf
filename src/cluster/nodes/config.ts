/**
 * Node pool configuration of the embedded cluster: a YAML file describing heterogeneous pools
 * (count, capacity/allocatable including extended resources, labels, taints, annotations) or
 * the `--nodes N` shorthand. Impossible values are refused up front with one line per
 * problem naming the pool and the field, so a typo never turns into a half-built cluster.
 */
import { Ajv, type ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { isDNS1123Label, validateLabelKey, validateLabelValue } from '../../kube/labels.ts';
import { tryParseQuantity } from '../../kube/quantity.ts';
import { parseCIDR } from './addresses.ts';
import { NODE_CONFIG_SCHEMA } from './config-schema.ts';

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

/** A pool after validation and defaulting: every field present, quantities as strings. */
export interface NodePool {
  name: string;
  namePrefix: string;
  count: number;
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  taints: Taint[];
  /** IPv4 range of the pool's InternalIP addresses. */
  cidr: string;
}

export interface NodeConfig {
  pools: NodePool[];
  /** Default InternalIP range (the kubelet simulator's default node range). */
  nodeCIDR: string;
}

export const DEFAULT_NODE_CIDR = '10.240.0.0/16';
/** kubelet's default maxPods. */
export const DEFAULT_MAX_PODS = '110';
export const DEFAULT_POOL_NAME = 'standard';
export const DEFAULT_NODE_PREFIX = 'node';
export const DEFAULT_NODE_CAPACITY: Readonly<Record<string, string>> = {
  cpu: '32',
  memory: '256Gi',
  pods: DEFAULT_MAX_PODS,
};

export class NodeConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid node config:\n  ${problems.join('\n  ')}`);
    this.name = 'NodeConfigError';
    this.problems = problems;
  }
}

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const validateShape = ajv.compile(NODE_CONFIG_SCHEMA);

/** Parses and validates a YAML node config; throws NodeConfigError listing every problem. */
export function parseNodeConfig(yamlText: string): NodeConfig {
  let doc: unknown;
  try {
    doc = parseYaml(yamlText);
  } catch (err) {
    throw new NodeConfigError([`not valid YAML: ${err instanceof Error ? err.message : String(err)}`]);
  }
  return validateNodeConfig(doc ?? {});
}

/** Validates an already-parsed config object (JSON or YAML data). */
export function validateNodeConfig(raw: unknown): NodeConfig {
  if (!validateShape(raw)) {
    throw new NodeConfigError(schemaProblems(raw, validateShape.errors ?? []));
  }
  const input = raw as { nodeCIDR?: string; pools: RawPool[] };
  const problems: string[] = [];
  const nodeCIDR = input.nodeCIDR ?? DEFAULT_NODE_CIDR;
  if (input.nodeCIDR !== undefined && !parseCIDR(nodeCIDR)) {
    problems.push(`nodeCIDR: "${nodeCIDR}" is not an IPv4 CIDR (e.g. 10.240.0.0/16)`);
  }
  const pools: NodePool[] = [];
  const poolIndex = new Map<string, number>();
  input.pools.forEach((p, i) => {
    const where = `pool "${p.name}" (pools[${i}])`;
    const err = (field: string, msg: string) => problems.push(`${where}: ${field}: ${msg}`);
    const first = poolIndex.get(p.name);
    if (first !== undefined) err('name', `duplicate pool name (also pools[${first}])`);
    else poolIndex.set(p.name, i);
    for (const m of dnsLabelProblems(p.name)) err('name', m);
    const namePrefix = p.namePrefix ?? p.name;
    if (p.namePrefix !== undefined) for (const m of dnsLabelProblems(namePrefix)) err('namePrefix', m);

    const capacity = resourceList(p.capacity, 'capacity', err);
    for (const r of ['cpu', 'memory']) if (!(r in p.capacity)) err(`capacity.${r}`, 'required');
    if (!('pods' in capacity)) capacity.pods = DEFAULT_MAX_PODS;
    const allocatable = p.allocatable ? resourceList(p.allocatable, 'allocatable', err) : { ...capacity };
    if (p.allocatable) {
      if (!('pods' in allocatable) && 'pods' in capacity) allocatable.pods = capacity.pods!;
      for (const [name, v] of Object.entries(allocatable)) {
        const cap = capacity[name];
        if (cap === undefined) {
          err(`allocatable.${name}`, 'has no capacity entry (allocatable is what is left of capacity)');
          continue;
        }
        const a = tryParseQuantity(v);
        const c = tryParseQuantity(cap);
        if (a && c && a.nanos > c.nanos) err(`allocatable.${name}`, `${v} exceeds capacity ${cap}`);
      }
    }

    const labels = { ...(p.labels ?? {}) };
    for (const [k, v] of Object.entries(labels)) {
      const km = validateLabelKey(k);
      if (km) err(`labels`, km);
      const vm = validateLabelValue(v);
      if (vm) err(`labels.${k}`, vm);
    }
    const annotations = { ...(p.annotations ?? {}) };
    for (const k of Object.keys(annotations)) {
      const km = validateLabelKey(k);
      if (km) err('annotations', km.replace('label key', 'annotation key'));
    }
    const taints: Taint[] = [];
    const seenTaints = new Set<string>();
    (p.taints ?? []).forEach((t, ti) => {
      const field = `taints[${ti}]`;
      const km = validateLabelKey(t.key);
      if (km) err(`${field}.key`, km.replace('label key', 'taint key'));
      if (t.value !== undefined) {
        const vm = validateLabelValue(t.value);
        if (vm) err(`${field}.value`, vm.replace('label value', 'taint value'));
      }
      const id = `${t.key}:${t.effect}`;
      if (seenTaints.has(id)) err(field, `duplicate taint ${t.key}:${t.effect}`);
      seenTaints.add(id);
      taints.push(
        t.value === undefined
          ? { key: t.key, effect: t.effect }
          : { key: t.key, value: t.value, effect: t.effect },
      );
    });

    const cidr = p.cidr ?? nodeCIDR;
    if (p.cidr !== undefined && !parseCIDR(p.cidr))
      err('cidr', `"${p.cidr}" is not an IPv4 CIDR (e.g. 10.241.0.0/24)`);
    pools.push({
      name: p.name,
      namePrefix,
      count: p.count,
      capacity,
      allocatable,
      labels,
      annotations,
      taints,
      cidr,
    });
  });

  // Names and addresses across pools: only meaningful once each pool is sound.
  if (problems.length === 0) {
    const owner = new Map<string, string>();
    const perRange = new Map<string, number>();
    pools.forEach((pool, i) => {
      const where = `pool "${pool.name}" (pools[${i}])`;
      for (let n = 0; n < pool.count; n++) {
        const name = nodeName(pool, n);
        const prior = owner.get(name);
        if (prior !== undefined) {
          problems.push(`${where}: namePrefix: node name "${name}" is also produced by ${prior}`);
          break;
        }
        owner.set(name, where);
      }
      perRange.set(pool.cidr, (perRange.get(pool.cidr) ?? 0) + pool.count);
    });
    for (const [range, count] of perRange) {
      const r = parseCIDR(range)!;
      const usable = r.size - 2;
      if (count > usable) {
        const users = pools
          .map((p, i) => (p.cidr === range ? `pools[${i}]` : ''))
          .filter(Boolean)
          .join(', ');
        problems.push(
          `${range === nodeCIDR ? 'nodeCIDR' : `cidr ${range}`}: ${count} nodes (${users}) do not fit in ${usable} addresses`,
        );
      }
    }
  }
  if (problems.length > 0) throw new NodeConfigError(problems);
  return { pools, nodeCIDR };
}

/** `--nodes N`: N nodes named node-0…node-(N-1) with 32 cpu, 256Gi and 110 pods each. */
export function defaultNodeConfig(n: number): NodeConfig {
  if (!Number.isInteger(n) || n < 0)
    throw new NodeConfigError([`--nodes: must be a whole number ≥ 0, got ${String(n)}`]);
  return validateNodeConfig({
    pools: [
      {
        name: DEFAULT_POOL_NAME,
        namePrefix: DEFAULT_NODE_PREFIX,
        count: n,
        capacity: { ...DEFAULT_NODE_CAPACITY },
      },
    ],
  });
}

export function nodeName(pool: Pick<NodePool, 'namePrefix'>, index: number): string {
  return `${pool.namePrefix}-${index}`;
}

interface RawPool {
  name: string;
  namePrefix?: string;
  count: number;
  capacity: Record<string, string | number>;
  allocatable?: Record<string, string | number>;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  taints?: Taint[];
  cidr?: string;
}

function resourceList(
  raw: Record<string, string | number>,
  field: string,
  err: (field: string, msg: string) => void,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(raw)) {
    const km = validateLabelKey(name);
    if (km) {
      err(field, km.replace('label key', 'resource name'));
      continue;
    }
    const q = tryParseQuantity(v);
    if (!q) err(`${field}.${name}`, `"${v}" is not a quantity (e.g. 4, 500m, 16Gi)`);
    else if (q.nanos < 0n) err(`${field}.${name}`, `${v} is negative`);
    else out[name] = String(v);
  }
  return out;
}

function dnsLabelProblems(v: string): string[] {
  if (v.length > 50) return [`"${v}" is too long for node names (at most 50 characters)`];
  if (!isDNS1123Label(v)) {
    return [
      `"${v}" must be lower case letters, digits and '-', starting and ending with a letter or digit (it names the nodes)`,
    ];
  }
  return [];
}

/** Ajv errors → `pool "gpu" (pools[1]): count: must be >= 0`. */
function schemaProblems(raw: unknown, errors: ErrorObject[]): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const parts = e.instancePath.split('/').slice(1).map(unescapePointer);
    let prefix = '';
    let rest = parts;
    if (parts[0] === 'pools' && parts.length >= 2) {
      const i = Number(parts[1]);
      const pools = (raw as { pools?: unknown[] }).pools;
      const name = (pools?.[i] as { name?: unknown } | undefined)?.name;
      prefix = typeof name === 'string' ? `pool "${name}" (pools[${i}]): ` : `pools[${i}]: `;
      rest = parts.slice(2);
    }
    let field = rest.map((p, k) => (/^\d+$/.test(p) && k > 0 ? `[${p}]` : k > 0 ? `.${p}` : p)).join('');
    let msg = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      field = field ? `${field}.${missing}` : missing;
      msg = 'required';
    } else if (e.keyword === 'additionalProperties') {
      msg = `unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    } else if (e.keyword === 'enum') {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues
        .map((v) => JSON.stringify(v))
        .join(', ');
      msg = `must be one of ${allowed}`;
    }
    out.push(field ? `${prefix}${field}: ${msg}` : prefix ? `${prefix}${msg}` : msg);
  }
  return [...new Set(out)];
}

function unescapePointer(s: string): string {
  return s.replace(/~1/g, '/').replace(/~0/g, '~');
}
