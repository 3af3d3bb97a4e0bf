/**
 * The CEL environment of CRD validation rules: @bufbuild/cel's standard library plus its
 * strings extension, and the Kubernetes libraries rules commonly use (lists: isSorted, sum,
 * min, max, indexOf, lastIndexOf; regex: find, findAll; strings: reverse). Kubernetes' url,
 * ip/cidr, quantity, semver and optional-type libraries are not provided.
 */

import { type CelEnv, type CelFunc, CelScalar, celEnv, celMethod, isCelList, listType } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { compilePattern } from '../value-validation.ts';

type Comparable = bigint | number | string | boolean;

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'bigint' && typeof b === 'number') return Number(a) < b ? -1 : Number(a) > b ? 1 : 0;
  if (typeof a === 'number' && typeof b === 'bigint') return a < Number(b) ? -1 : a > Number(b) ? 1 : 0;
  const x = a as Comparable;
  const y = b as Comparable;
  return x < y ? -1 : x > y ? 1 : 0;
}

function elements(list: unknown): unknown[] {
  return isCelList(list) ? [...list] : [];
}

function equal(a: unknown, b: unknown): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    return compare(a, b) === 0;
  }
  return a === b;
}

const LIST = listType(CelScalar.DYN);

const listFuncs = [
  celMethod('isSorted', LIST, [], CelScalar.BOOL, function () {
    const xs = elements(this);
    return xs.every((x, i) => i === 0 || compare(xs[i - 1], x) <= 0);
  }),
  celMethod('sum', LIST, [], CelScalar.DYN, function () {
    const xs = elements(this);
    if (xs.length === 0) return 0n;
    if (xs.every((x) => typeof x === 'bigint')) return (xs as bigint[]).reduce((a, b) => a + b, 0n);
    return xs.reduce<number>((a, b) => a + Number(b), 0);
  }),
  celMethod('min', LIST, [], CelScalar.DYN, function () {
    const xs = elements(this);
    if (xs.length === 0) throw new Error('min called on empty list');
    return xs.reduce((a, b) => (compare(b, a) < 0 ? b : a)) as bigint;
  }),
  celMethod('max', LIST, [], CelScalar.DYN, function () {
    const xs = elements(this);
    if (xs.length === 0) throw new Error('max called on empty list');
    return xs.reduce((a, b) => (compare(b, a) > 0 ? b : a)) as bigint;
  }),
  celMethod('indexOf', LIST, [CelScalar.DYN], CelScalar.INT, function (v) {
    return BigInt(elements(this).findIndex((x) => equal(x, v)));
  }),
  celMethod('lastIndexOf', LIST, [CelScalar.DYN], CelScalar.INT, function (v) {
    const xs = elements(this);
    for (let i = xs.length - 1; i >= 0; i--) if (equal(xs[i], v)) return BigInt(i);
    return -1n;
  }),
];

/** Compiles a regex for find/findAll; RE2 validates the syntax, JS RegExp extracts matches. */
function regex(pattern: string): RegExp {
  if (compilePattern(pattern) === null) throw new Error(`invalid regex: ${pattern}`);
  return new RegExp(pattern, 'gu');
}

const regexFuncs = [
  celMethod('find', CelScalar.STRING, [CelScalar.STRING], CelScalar.STRING, function (pattern) {
    return regex(pattern).exec(this)?.[0] ?? '';
  }),
  celMethod('findAll', CelScalar.STRING, [CelScalar.STRING], listType(CelScalar.STRING), function (pattern) {
    return [...this.matchAll(regex(pattern))].map((m) => m[0]);
  }),
  celMethod(
    'findAll',
    CelScalar.STRING,
    [CelScalar.STRING, CelScalar.INT],
    listType(CelScalar.STRING),
    function (pattern, limit) {
      const all = [...this.matchAll(regex(pattern))].map((m) => m[0]);
      return limit < 0n ? all : all.slice(0, Number(limit));
    },
  ),
];

const stringFuncs = [
  celMethod('reverse', CelScalar.STRING, [], CelScalar.STRING, function () {
    return [...this].reverse().join('');
  }),
];

let env: CelEnv | undefined;

/** The shared environment (functions only: `self`/`oldSelf` are bound per evaluation). */
/** The rule environment plus more functions (ValidatingAdmissionPolicy's authorizer library). */
export function ruleEnvWith(extra: CelFunc[]): CelEnv {
  return celEnv({ funcs: [...strings, ...listFuncs, ...regexFuncs, ...stringFuncs, ...extra] });
}

export function ruleEnv(): CelEnv {
  env ??= celEnv({ funcs: [...strings, ...listFuncs, ...regexFuncs, ...stringFuncs] });
  return env;
}
