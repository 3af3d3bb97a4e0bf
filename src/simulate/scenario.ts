/**
 * A `troupe simulate` scenario: node pools, a workload trace (listed, or generated from the
 * seed) and the policies to compare. `parseScenario` validates the file with ajv and with the
 * checks a schema cannot say (unique names, PodSequence tiers), and every problem names the
 * file, the path in it and how to fix it.
 */

import { Ajv, type ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { parseGoDuration } from '../kube/duration.ts';
import { type RandomSource, seededRandom } from '../lib/random.ts';
import { FIXES, SCENARIO_SCHEMA } from './scenario-schema.ts';

export type WorkloadKind = 'Job' | 'StatefulSet' | 'Pods' | 'AppWrapper' | 'PodSequence';
export type PodGroupApi = 'troupe' | 'scheduler-plugins' | 'none';

export interface Tier {
  name: string;
  size: number;
  readySeconds: number;
}

/** One gang of the trace, normalised: every field present, times in milliseconds. */
export interface Gang {
  name: string;
  atMs: number;
  kind: WorkloadKind;
  podGroup: PodGroupApi;
  /** Pods that must run together (for a PodSequence, the pods of every tier). */
  size: number;
  gpus: number;
  cpu: string;
  memory: string;
  /** How long each member runs; undefined runs until the end of the simulation. */
  durationMs: number | undefined;
  fail: { afterMs: number; exitCode: number } | undefined;
  priority: number;
  orderedReady: boolean;
  startupSeconds: number;
  tiers: Tier[] | undefined;
}

export interface Policy {
  name: string;
  description: string;
  gangScheduling: boolean;
  scoring: 'LeastAllocated' | 'MostAllocated';
  /** The StatefulSets' podManagementPolicy under this policy, over each item's orderedReady. */
  podManagementPolicy: 'OrderedReady' | 'Parallel' | undefined;
  deadlockPolicy: { timeoutSeconds: number; maxTimeoutSeconds?: number } | undefined;
  queues: boolean;
  /** Kueue's waitForPodsReady section for the Kueue stand-in (checked by the CLI); off when absent. */
  waitForPodsReady?: Record<string, unknown>;
  offload: { maxPendingTime: number; pendingJobThreshold: number; maxGpuPrice: number } | undefined;
}

export interface Scenario {
  name: string;
  description: string;
  seed: number;
  endMs: number;
  /**
   * How often nodes renew their Leases. Nodes never fail in a scenario, so heartbeats change
   * no outcome, only cost: 500 nodes at a kubelet's 10 s are 180,000 writes per simulated hour.
   */
  nodeLeaseRenewMs: number;
  /** Node pools as `--node-config` takes them; the embedded cluster validates them. */
  nodes: { pools: unknown[]; [k: string]: unknown };
  gangs: Gang[];
  policies: Policy[];
}

export class ScenarioError extends Error {
  readonly problems: string[];
  constructor(file: string, problems: string[]) {
    super(
      `${file}: ${problems.length === 1 ? 'invalid scenario' : `${problems.length} problems`}:\n${problems
        .map((p) => `  - ${p}`)
        .join('\n')}`,
    );
    this.name = 'ScenarioError';
    this.problems = problems;
  }
}

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const validateShape = ajv.compile(SCENARIO_SCHEMA);

/** Parses scenario text (YAML or JSON); `file` names it in errors. */
export function parseScenario(text: string, file: string): Scenario {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ScenarioError(file, [
      `not valid YAML: ${err instanceof Error ? err.message.split('\n')[0]!.replace(/:$/, '') : String(err)} (fix the syntax there)`,
    ]);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ScenarioError(file, [
      'a scenario is a mapping with name, end, nodes, workload or generate, and policies (see docs/simulate.md)',
    ]);
  }
  if (!validateShape(doc)) throw new ScenarioError(file, schemaProblems(validateShape.errors ?? []));
  return normalise(doc as RawScenario, file);
}

interface RawShape {
  kind?: WorkloadKind;
  podGroup?: PodGroupApi;
  gpus?: number;
  cpu?: string | number;
  memory?: string | number;
  priority?: number;
  orderedReady?: boolean;
  startupSeconds?: number;
}

interface RawItem extends RawShape {
  name: string;
  at: string;
  size?: number;
  duration?: string;
  fail?: { after: string; exitCode?: number };
  tiers?: { name: string; size: number; readySeconds?: number }[];
}

interface RawGenerator extends RawShape {
  count: number;
  namePrefix: string;
  from?: string;
  to?: string;
  sizes: Record<string, number>;
  gpusPerMember?: Record<string, number>;
  priorities?: Record<string, number>;
  duration: { min: string; max: string };
  failureRate?: number;
}

interface RawPolicy {
  name: string;
  description?: string;
  gangScheduling?: boolean;
  scoring?: 'LeastAllocated' | 'MostAllocated';
  podManagementPolicy?: 'OrderedReady' | 'Parallel';
  deadlockPolicy?: { timeoutSeconds: number; maxTimeoutSeconds?: number };
  queues?: boolean;
  waitForPodsReady?: Record<string, unknown>;
  offload?: { maxPendingTime?: number; pendingJobThreshold?: number; maxGpuPrice?: number };
}

interface RawScenario {
  name: string;
  description?: string;
  seed?: number;
  end: string;
  nodeLeaseRenewInterval?: string;
  nodes: { pools: unknown[] };
  workload?: RawItem[];
  generate?: RawGenerator[];
  policies: RawPolicy[];
}

/** The schema's duration pattern admits what parseGoDuration reads; ms for a checked string. */
function ms(d: string): number {
  return parseGoDuration(d) ?? 0;
}

function normalise(raw: RawScenario, file: string): Scenario {
  const problems: string[] = [];
  const endMs = ms(raw.end);
  if (endMs <= 0) problems.push(`end: must be after the start (${FIXES.end})`);
  if (raw.nodeLeaseRenewInterval !== undefined && ms(raw.nodeLeaseRenewInterval) < 1000)
    problems.push('nodeLeaseRenewInterval: must be 1s or more');
  const gangs: Gang[] = [];
  const seen = new Map<string, string>();
  const add = (g: Gang, where: string) => {
    const first = seen.get(g.name);
    if (first)
      problems.push(`${where}.name: "${g.name}" is also the name of ${first} (give each gang its own name)`);
    seen.set(g.name, where);
    if (g.atMs >= endMs) {
      problems.push(
        `${where}.at: arrives at ${g.atMs / 1000}s, not before end (${raw.end}): move it earlier or end later`,
      );
    }
    gangs.push(g);
  };
  (raw.workload ?? []).forEach((item, i) => {
    const where = `workload[${i}]`;
    const kind = item.kind ?? 'Job';
    if (kind === 'PodSequence') {
      if (!item.tiers)
        problems.push(`${where}.tiers: required for kind PodSequence (list the tiers that start in order)`);
      if (item.size !== undefined)
        problems.push(`${where}.size: a PodSequence's size is the sum of its tiers' sizes: remove size`);
    } else if (item.tiers) {
      problems.push(`${where}.tiers: only kind PodSequence has tiers: remove them or set kind: PodSequence`);
    }
    const tiers = item.tiers?.map((t) => ({ name: t.name, size: t.size, readySeconds: t.readySeconds ?? 0 }));
    const size = tiers ? tiers.reduce((n, t) => n + t.size, 0) : (item.size ?? 1);
    add(
      {
        ...shape(item, size),
        name: item.name,
        atMs: ms(item.at),
        size,
        durationMs: item.duration === undefined ? undefined : ms(item.duration),
        fail: item.fail ? { afterMs: ms(item.fail.after), exitCode: item.fail.exitCode ?? 1 } : undefined,
        tiers,
      },
      where,
    );
  });
  const seed = raw.seed ?? 1;
  (raw.generate ?? []).forEach((gen, i) => {
    const where = `generate[${i}]`;
    if ((gen.kind ?? 'Job') === 'PodSequence')
      problems.push(`${where}.kind: PodSequences cannot be generated: list them under workload`);
    const from = ms(gen.from ?? '0s');
    const to = ms(gen.to ?? raw.end);
    if (to < from) problems.push(`${where}.to: comes before from: arrivals are drawn between from and to`);
    const dmin = ms(gen.duration.min);
    const dmax = ms(gen.duration.max);
    if (dmax < dmin) problems.push(`${where}.duration.max: is below min`);
    if (problems.length > 0) return;
    // Each generator draws from its own stream, so adding a generator leaves the others' gangs alone.
    const rng = seededRandom((seed * 1_000_003 + i) >>> 0);
    const draws = Array.from({ length: gen.count }, () => {
      const atMs = Math.round(uniformInt(rng, from, to) / 1000) * 1000;
      const size = pick(rng, gen.sizes);
      const gpus = gen.gpusPerMember ? pick(rng, gen.gpusPerMember) : (gen.gpus ?? 0);
      const priority = gen.priorities ? pick(rng, gen.priorities) : (gen.priority ?? 0);
      const durationMs = Math.round(uniformInt(rng, dmin, dmax) / 1000) * 1000;
      const fails =
        gen.failureRate !== undefined && uniformInt(rng, 0, 999_999) < gen.failureRate * 1_000_000;
      const failAfter = fails ? Math.round(uniformInt(rng, 0, durationMs) / 1000) * 1000 : 0;
      return { atMs, size, gpus, priority, durationMs, fails, failAfter };
    });
    draws.sort((a, b) => a.atMs - b.atMs);
    const width = String(gen.count - 1).length;
    draws.forEach((d, k) => {
      add(
        {
          ...shape(gen, d.size),
          name: `${gen.namePrefix}-${String(k).padStart(width, '0')}`,
          atMs: d.atMs,
          size: d.size,
          gpus: d.gpus,
          priority: d.priority,
          durationMs: d.durationMs,
          fail: d.fails ? { afterMs: d.failAfter, exitCode: 1 } : undefined,
          tiers: undefined,
        },
        `${where} (gang ${k})`,
      );
    });
  });
  if (gangs.length === 0)
    problems.push('workload: empty: list gangs under workload, or generate some under generate');
  const policies = raw.policies.map(policy);
  const names = new Set<string>();
  raw.policies.forEach((p, i) => {
    if (names.has(p.name))
      problems.push(`policies[${i}].name: "${p.name}" is listed twice (name each policy once)`);
    names.add(p.name);
  });
  if (problems.length > 0) throw new ScenarioError(file, problems);
  gangs.sort((a, b) => a.atMs - b.atMs || (a.name < b.name ? -1 : 1));
  return {
    name: raw.name,
    description: raw.description ?? '',
    seed,
    endMs,
    nodeLeaseRenewMs: ms(raw.nodeLeaseRenewInterval ?? '5m'),
    nodes: raw.nodes,
    gangs,
    policies,
  };
}

function shape(
  s: RawShape,
  size: number,
): Omit<Gang, 'name' | 'atMs' | 'size' | 'durationMs' | 'fail' | 'tiers'> {
  return {
    kind: s.kind ?? 'Job',
    podGroup: s.podGroup ?? (size > 1 && s.kind !== 'PodSequence' ? 'troupe' : 'none'),
    gpus: s.gpus ?? 0,
    cpu: String(s.cpu ?? '1'),
    memory: String(s.memory ?? '1Gi'),
    priority: s.priority ?? 0,
    orderedReady: s.orderedReady ?? false,
    startupSeconds: s.startupSeconds ?? 0,
  };
}

function policy(p: RawPolicy): Policy {
  return {
    name: p.name,
    description: p.description ?? '',
    gangScheduling: p.gangScheduling ?? false,
    scoring: p.scoring ?? 'LeastAllocated',
    podManagementPolicy: p.podManagementPolicy,
    deadlockPolicy: p.deadlockPolicy,
    queues: p.queues ?? false,
    waitForPodsReady: p.waitForPodsReady,
    offload: p.offload
      ? {
          maxPendingTime: p.offload.maxPendingTime ?? 60,
          pendingJobThreshold: p.offload.pendingJobThreshold ?? 0,
          maxGpuPrice: p.offload.maxGpuPrice ?? 3,
        }
      : undefined,
  };
}

/** An integer in [from, to], both ends included. */
function uniformInt(rng: RandomSource, from: number, to: number): number {
  return from + Math.floor(rng() * (to - from + 1));
}

/** A value drawn from `{value: weight}`, in the order of the keys (integer keys sort numerically). */
function pick(rng: RandomSource, weights: Record<string, number>): number {
  const entries = Object.entries(weights);
  const total = entries.reduce((n, [, w]) => n + w, 0);
  let r = (uniformInt(rng, 0, 999_999) / 1_000_000) * total;
  for (const [v, w] of entries) {
    if (r < w) return Number(v);
    r -= w;
  }
  return Number(entries[entries.length - 1]![0]);
}

function schemaProblems(errors: ErrorObject[]): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const parts = e.instancePath
      .split('/')
      .slice(1)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    let path = parts.map((p, k) => (/^\d+$/.test(p) ? `[${p}]` : k > 0 ? `.${p}` : p)).join('');
    let field = parts.filter((p) => !/^\d+$/.test(p)).at(-1) ?? '';
    let msg = e.message ?? 'is invalid';
    switch (e.keyword) {
      case 'required': {
        const missing = (e.params as { missingProperty: string }).missingProperty;
        path = path ? `${path}.${missing}` : missing;
        field = missing;
        msg = 'required';
        break;
      }
      case 'additionalProperties': {
        const extra = (e.params as { additionalProperty: string }).additionalProperty;
        path = path ? `${path}.${extra}` : extra;
        msg = 'unknown field: remove it or check its spelling (docs/simulate.md lists the fields)';
        field = '';
        break;
      }
      case 'enum':
        msg = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
        field = '';
        break;
      case 'pattern':
        msg = 'has the wrong form';
        break;
      case 'propertyNames':
        msg = 'keys must be whole numbers';
        break;
    }
    // ajv reports a bad property name twice (propertyNames and the pattern inside it).
    if (e.keyword === 'pattern' && e.schemaPath.includes('propertyNames')) continue;
    const fix = field ? FIXES[field] : undefined;
    out.push(`${path || '(top level)'}: ${msg}${fix ? ` (${fix})` : ''}`);
  }
  return [...new Set(out)];
}
