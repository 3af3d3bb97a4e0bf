/**
 * Label and field selectors with apimachinery's grammar and semantics.
 *
 * Hand-written because no maintained npm package parses Kubernetes' selector grammar
 * (`a in (x,y),!b,c!=d`); the grammar is small and both the API server (query strings)
 * and controllers (metav1.LabelSelector objects) need the same matcher.
 */

export type Operator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Equals' | 'NotEquals' | 'Gt' | 'Lt';

export interface Requirement {
  key: string;
  operator: Operator;
  values: string[];
}

export interface LabelSelectorObject {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: { key: string; operator: string; values?: string[] | null }[] | null;
}

export class SelectorParseError extends Error {}

/** A conjunction of requirements; the empty selector matches everything. */
export class Selector {
  readonly requirements: readonly Requirement[];
  constructor(requirements: Requirement[]) {
    this.requirements = requirements;
  }

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  matches(labels: Record<string, string> | undefined | null): boolean {
    const l = labels ?? {};
    for (const r of this.requirements) {
      if (!matchRequirement(r, l)) return false;
    }
    return true;
  }

  /** Equality requirements, usable as an index lookup before the full match. */
  equalities(): [string, string][] {
    const out: [string, string][] = [];
    for (const r of this.requirements) {
      if ((r.operator === 'Equals' || r.operator === 'In') && r.values.length === 1)
        out.push([r.key, r.values[0]!]);
    }
    return out;
  }

  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
}

function matchRequirement(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const v = labels[r.key];
  switch (r.operator) {
    case 'Equals':
    case 'In':
      return has && r.values.includes(v!);
    case 'NotEquals':
    case 'NotIn':
      return !has || !r.values.includes(v!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has) return false;
      const n = Number(v);
      const bound = Number(r.values[0]);
      if (!Number.isInteger(n) || !Number.isInteger(bound)) return false;
      return r.operator === 'Gt' ? n > bound : n < bound;
    }
  }
}

function requirementString(r: Requirement): string {
  switch (r.operator) {
    case 'Equals':
      return `${r.key}=${r.values[0]}`;
    case 'NotEquals':
      return `${r.key}!=${r.values[0]}`;
    case 'Exists':
      return r.key;
    case 'DoesNotExist':
      return `!${r.key}`;
    case 'In':
      return `${r.key} in (${r.values.join(',')})`;
    case 'NotIn':
      return `${r.key} notin (${r.values.join(',')})`;
    case 'Gt':
      return `${r.key}>${r.values[0]}`;
    case 'Lt':
      return `${r.key}<${r.values[0]}`;
  }
}

const NAME_RE = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The shape of an RFC 1123 label (namespaces, most object names), without the 63-character limit. */
/** Two label sets are equal (a missing set is empty). */
export function sameLabels(
  a: Readonly<Record<string, string>> | undefined | null,
  b: Readonly<Record<string, string>> | undefined | null,
): boolean {
  const ak = Object.keys(a ?? {});
  if (ak.length !== Object.keys(b ?? {}).length) return false;
  return ak.every((k) => b![k] === a![k]);
}

export function isDNS1123Label(s: string): boolean {
  return DNS1123_LABEL_RE.test(s);
}

/** The shape of an RFC 1123 subdomain (object names), without the 253-character limit. */
export function isDNS1123Subdomain(s: string): boolean {
  return DNS1123_SUBDOMAIN_RE.test(s);
}

/** Returns an error message for an invalid qualified name (label key), or undefined. */
export function validateLabelKey(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2)
    return `invalid label key "${key}": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`;
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0 || prefix.length > 253 || !DNS1123_SUBDOMAIN_RE.test(prefix)) {
      return `invalid label key "${key}": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`;
    }
  }
  if (name.length === 0) return `invalid label key "${key}": name part must be non-empty`;
  if (name.length > 63) return `invalid label key "${key}": name part must be no more than 63 characters`;
  if (!NAME_RE.test(name)) {
    return `invalid label key "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`;
  }
  return undefined;
}

/** Returns an error message for an invalid label value, or undefined. */
export function validateLabelValue(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63) return `invalid label value: "${value}": must be no more than 63 characters`;
  if (!NAME_RE.test(value)) {
    return `invalid label value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`;
  }
  return undefined;
}

// ---- label selector string parser (labels.Parse) ----

type Token =
  | { t: 'id'; v: string }
  | { t: 'op'; v: '=' | '==' | '!=' | '!' | '(' | ')' | ',' | '>' | '<' }
  | { t: 'end' };

function tokenize(s: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === ' ' || c === '\t' || c === '\n') {
      i++;
      continue;
    }
    if (c === '=' && s[i + 1] === '=') {
      out.push({ t: 'op', v: '==' });
      i += 2;
    } else if (c === '!' && s[i + 1] === '=') {
      out.push({ t: 'op', v: '!=' });
      i += 2;
    } else if (c === '=' || c === '!' || c === '(' || c === ')' || c === ',' || c === '>' || c === '<') {
      out.push({ t: 'op', v: c });
      i++;
    } else {
      let j = i;
      while (j < s.length && !' \t\n=!(),<>'.includes(s[j]!)) j++;
      out.push({ t: 'id', v: s.slice(i, j) });
      i = j;
    }
  }
  out.push({ t: 'end' });
  return out;
}

function describe(tok: Token): string {
  return tok.t === 'end' ? "''" : `'${tok.v}'`;
}

/** Parses a label selector query string (`?labelSelector=`). Throws SelectorParseError. */
export function parseLabelSelector(input: string): Selector {
  const toks = tokenize(input);
  let p = 0;
  const reqs: Requirement[] = [];
  if (toks[0]!.t === 'end') return new Selector([]);
  for (;;) {
    let tok = toks[p++]!;
    let negated = false;
    if (tok.t === 'op' && tok.v === '!') {
      negated = true;
      tok = toks[p++]!;
    }
    if (tok.t !== 'id')
      throw new SelectorParseError(
        `unable to parse requirement: found ${describe(tok)}, expected: identifier`,
      );
    const key = tok.v;
    const keyErr = validateLabelKey(key);
    if (keyErr) throw new SelectorParseError(`unable to parse requirement: ${keyErr}`);
    const next = toks[p]!;
    if (negated) {
      reqs.push({ key, operator: 'DoesNotExist', values: [] });
    } else if (next.t === 'end' || (next.t === 'op' && next.v === ',')) {
      reqs.push({ key, operator: 'Exists', values: [] });
    } else if (next.t === 'op' && ['=', '==', '!=', '>', '<'].includes(next.v)) {
      p++;
      const val = toks[p]!;
      let value = '';
      if (val.t === 'id') {
        value = val.v;
        p++;
      } else if (!(val.t === 'end' || (val.t === 'op' && val.v === ','))) {
        throw new SelectorParseError(
          `unable to parse requirement: found ${describe(val)}, expected: identifier`,
        );
      }
      const op: Operator =
        next.v === '!=' ? 'NotEquals' : next.v === '>' ? 'Gt' : next.v === '<' ? 'Lt' : 'Equals';
      if ((op === 'Gt' || op === 'Lt') && !/^-?\d+$/.test(value)) {
        throw new SelectorParseError(
          `unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer`,
        );
      }
      const valErr = op === 'Gt' || op === 'Lt' ? undefined : validateLabelValue(value);
      if (valErr) throw new SelectorParseError(`unable to parse requirement: ${valErr}`);
      reqs.push({ key, operator: op, values: [value] });
    } else if (next.t === 'id' && (next.v === 'in' || next.v === 'notin')) {
      p++;
      const open = toks[p++]!;
      if (!(open.t === 'op' && open.v === '(')) {
        throw new SelectorParseError(`unable to parse requirement: found ${describe(open)}, expected: '('`);
      }
      const values: string[] = [];
      for (;;) {
        const v = toks[p]!;
        if (v.t === 'id') {
          const valErr = validateLabelValue(v.v);
          if (valErr) throw new SelectorParseError(`unable to parse requirement: ${valErr}`);
          values.push(v.v);
          p++;
        } else if (v.t === 'op' && (v.v === ',' || v.v === ')')) {
          values.push('');
        } else {
          throw new SelectorParseError(
            `unable to parse requirement: found ${describe(v)}, expected: ',', ')' or identifier`,
          );
        }
        const sep = toks[p++]!;
        if (sep.t === 'op' && sep.v === ')') break;
        if (!(sep.t === 'op' && sep.v === ',')) {
          throw new SelectorParseError(
            `unable to parse requirement: found ${describe(sep)}, expected: ',' or ')'`,
          );
        }
      }
      reqs.push({ key, operator: next.v === 'in' ? 'In' : 'NotIn', values });
    } else {
      throw new SelectorParseError(
        `unable to parse requirement: found ${describe(next)}, expected: in, notin, =, ==, !=, gt, lt`,
      );
    }
    const sep = toks[p++]!;
    if (sep.t === 'end') break;
    if (!(sep.t === 'op' && sep.v === ',')) {
      throw new SelectorParseError(`found ${describe(sep)}, expected: ',' or 'end of string'`);
    }
  }
  return new Selector(reqs);
}

/** Converts a metav1.LabelSelector object. Throws SelectorParseError on invalid operators. */
export function selectorFromObject(ls: LabelSelectorObject | undefined | null): Selector {
  if (!ls) return new Selector([]);
  const reqs: Requirement[] = [];
  for (const [key, value] of Object.entries(ls.matchLabels ?? {})) {
    reqs.push({ key, operator: 'Equals', values: [value] });
  }
  for (const e of ls.matchExpressions ?? []) {
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0)
          throw new SelectorParseError(
            `values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'`,
          );
        reqs.push({ key: e.key, operator: e.operator, values });
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0)
          throw new SelectorParseError(
            `values: Forbidden: may not be specified when \`operator\` is 'Exists' or 'DoesNotExist'`,
          );
        reqs.push({ key: e.key, operator: e.operator, values: [] });
        break;
      default:
        throw new SelectorParseError(
          `operator: Unsupported value: "${e.operator}": supported values: "In", "NotIn", "Exists", "DoesNotExist"`,
        );
    }
  }
  return new Selector(reqs);
}

/** True when a metav1.LabelSelector matches the labels. A null selector matches nothing, an empty one everything. */
export function labelSelectorMatches(
  ls: LabelSelectorObject | undefined | null,
  labels: Record<string, string> | undefined,
): boolean {
  if (ls == null) return false;
  return selectorFromObject(ls).matches(labels);
}

// ---- field selectors (fields.ParseSelector) ----

export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

/** Parses `?fieldSelector=` (`a=b,c!=d`, `==` allowed, `\` escapes). Throws SelectorParseError. */
export function parseFieldSelector(input: string): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  if (input.trim() === '') return out;
  for (const part of splitUnescaped(input, ',')) {
    const m = /^([^=!]+?)\s*(==|!=|=)\s*(.*)$/.exec(part.trim());
    if (!m) throw new SelectorParseError(`invalid selector: '${input}'; can't understand '${part}'`);
    out.push({ field: m[1]!.trim(), operator: m[2] === '!=' ? '!=' : '=', value: unescapeValue(m[3]!) });
  }
  return out;
}

function splitUnescaped(s: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === sep) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  return parts;
}

function unescapeValue(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

export function fieldsMatch(reqs: readonly FieldRequirement[], fields: Record<string, string>): boolean {
  for (const r of reqs) {
    const v = fields[r.field] ?? '';
    if (r.operator === '=' ? v !== r.value : v === r.value) return false;
  }
  return true;
}
