import { isObject } from '../../../lib/json.ts';

/**
 * A set of field paths, as structured-merge-diff's fieldpath.Set: a trie whose edges are path
 * elements spelled as in FieldsV1 (`f:name`, `k:{"name":"c"}`, `v:"x"`, `i:0`) and whose nodes
 * say whether that exact path is a member. Serialises to and from the FieldsV1 JSON kept in
 * metadata.managedFields (where `.` marks a member that also has children).
 *
 * A set is built (insert, fromFieldsV1) and then only read: union, difference and the other
 * operations return new sets that share unchanged subtrees with their inputs, or an input
 * itself when nothing changes (copying every manager's set on each update was a visible
 * share of a simulated day's CPU). Never insert into a set an operation returned.
 */
export class FieldSet {
  member = false;
  readonly children = new Map<string, FieldSet>();

  static of(...paths: (readonly string[])[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  insert(path: readonly string[]): void {
    let node: FieldSet = this;
    for (const pe of path) {
      let next = node.children.get(pe);
      if (!next) {
        next = new FieldSet();
        node.children.set(pe, next);
      }
      node = next;
    }
    if (path.length > 0) node.member = true;
  }

  has(path: readonly string[]): boolean {
    let node: FieldSet | undefined = this;
    for (const pe of path) {
      node = node.children.get(pe);
      if (!node) return false;
    }
    return path.length > 0 && node.member;
  }

  child(pe: string): FieldSet | undefined {
    return this.children.get(pe);
  }

  isEmpty(): boolean {
    if (this.member) return false;
    for (const c of this.children.values()) if (!c.isEmpty()) return false;
    return true;
  }

  clone(): FieldSet {
    const s = new FieldSet();
    s.member = this.member;
    for (const [pe, c] of this.children) s.children.set(pe, c.clone());
    return s;
  }

  /** Members of either set; this set itself when `other` adds none (a manager writing its own fields again). */
  union(other: FieldSet): FieldSet {
    if (other.isBare()) return this;
    if (this.isBare()) return other;
    const s = new FieldSet();
    s.member = this.member || other.member;
    let same = s.member === this.member;
    for (const [pe, c] of this.children) {
      const o = other.children.get(pe);
      const u = o ? c.union(o) : c;
      if (u !== c) same = false;
      s.children.set(pe, u);
    }
    for (const [pe, c] of other.children) {
      if (this.children.has(pe)) continue;
      s.children.set(pe, c);
      same = false;
    }
    return same ? this : s;
  }

  /** No member and no children: the set every operation leaves unchanged. */
  private isBare(): boolean {
    return !this.member && this.children.size === 0;
  }

  /** Members of this set that are not members of `other` (exact paths, not subtrees). */
  difference(other: FieldSet): FieldSet {
    if (other.isBare()) return this;
    const s = new FieldSet();
    s.member = this.member && !other.member;
    let same = s.member === this.member;
    for (const [pe, c] of this.children) {
      const o = other.children.get(pe);
      const d = o ? c.difference(o) : c;
      if (d === c) s.children.set(pe, c);
      else {
        same = false;
        if (!d.isEmpty()) s.children.set(pe, d);
      }
    }
    return same ? this : s;
  }

  intersection(other: FieldSet): FieldSet {
    if (other.isBare()) return other;
    const s = new FieldSet();
    s.member = this.member && other.member;
    for (const [pe, c] of this.children) {
      const o = other.children.get(pe);
      if (!o) continue;
      const i = c.intersection(o);
      if (!i.isEmpty()) s.children.set(pe, i);
    }
    return s;
  }

  /** Like difference, but a member of `other` also removes everything beneath it. */
  recursiveDifference(other: FieldSet): FieldSet {
    if (other.isBare()) return this;
    const s = new FieldSet();
    s.member = this.member && !other.member;
    let same = s.member === this.member;
    for (const [pe, c] of this.children) {
      const o = other.children.get(pe);
      if (o?.member) {
        same = false;
        continue;
      }
      const d = o ? c.recursiveDifference(o) : c;
      if (d === c) s.children.set(pe, c);
      else {
        same = false;
        if (!d.isEmpty()) s.children.set(pe, d);
      }
    }
    return same ? this : s;
  }

  /**
   * EnsureNamedFieldsAreMembers: object fields that have owned children become members
   * themselves (list items and values do not). Without a schema every object key counts as a
   * named field, which only differs from structured-merge-diff for maps of objects.
   */
  withNamedFieldsAsMembers(): FieldSet {
    const s = new FieldSet();
    s.member = this.member;
    for (const [pe, c] of this.children) {
      const n = c.withNamedFieldsAsMembers();
      if (pe.startsWith('f:') && c.children.size > 0 && !c.isEmpty()) n.member = true;
      s.children.set(pe, n);
    }
    return s;
  }

  /** Every member path, in FieldsV1 order. */
  paths(): string[][] {
    const out: string[][] = [];
    const walk = (node: FieldSet, prefix: string[]) => {
      if (node.member && prefix.length > 0) out.push(prefix);
      for (const pe of sortedElements(node.children.keys())) walk(node.children.get(pe)!, [...prefix, pe]);
    };
    walk(this, []);
    return out;
  }

  /**
   * The FieldsV1 JSON of this set. A set decoded from JSON already in the encoder's form, and
   * not changed since (operations return their input when nothing changes), gives that JSON
   * back instead of encoding it again: most managers' sets survive an update untouched.
   */
  toFieldsV1(): Record<string, unknown> {
    return decodedFrom.get(this) ?? fieldsV1Entries(this);
  }

  /**
   * The set a FieldsV1 object encodes. Decoded once per object: a stored object is read, never
   * written, and each update of it decodes every manager's set again otherwise.
   */
  static fromFieldsV1(json: unknown): FieldSet {
    if (!isObject(json)) return new FieldSet();
    let s = decodedSets.get(json);
    if (s) return s;
    s = new FieldSet();
    if (decodeNode(s, json) && !s.member) decodedFrom.set(s, json);
    decodedSets.set(json, s);
    return s;
  }
}

/** FieldsV1 objects decoded, and their sets (never inserted into: see the class). */
const decodedSets = new WeakMap<object, FieldSet>();

/** Sets decoded from FieldsV1 that encodes back to exactly the same JSON, and that JSON. */
const decodedFrom = new WeakMap<FieldSet, Record<string, unknown>>();

/**
 * Fills `s` from a FieldsV1 object; returns whether fieldsV1Entries would write `json` back
 * as it is (keys in path element order after a leading `.`, every value an object, no
 * member written as `{".":{}}`).
 */
function decodeNode(s: FieldSet, json: Record<string, unknown>): boolean {
  let canonical = true;
  let prev: string | undefined;
  for (const pe in json) {
    const v = json[pe];
    if (pe === '.') {
      s.member = true;
      if (prev !== undefined || !isObject(v) || !isEmptyObject(v)) canonical = false;
      continue;
    }
    if (prev !== undefined && comparePathElements(prev, pe) >= 0) canonical = false;
    prev = pe;
    const c = new FieldSet();
    if (!isObject(v)) canonical = false;
    else if (isEmptyObject(v)) c.member = true;
    else {
      if (!decodeNode(c, v)) canonical = false;
      // A member with nothing beneath is written `{}`, and a child with no member beneath
      // is not written at all.
      if (c.children.size === 0 || c.isEmpty()) canonical = false;
    }
    s.children.set(pe, c);
  }
  return canonical;
}

function isEmptyObject(v: Record<string, unknown>): boolean {
  for (const _ in v) return false;
  return true;
}

/**
 * FieldsV1 of a node's children: a child with members beneath gets its entries (with `.` when
 * it is a member itself), a bare member `{}`, an empty child nothing. One pass, each node once.
 */
function fieldsV1Entries(node: FieldSet, out: Record<string, unknown> = {}): Record<string, unknown> {
  const keys = node.children.size > 1 ? sortedElements(node.children.keys()) : node.children.keys();
  for (const pe of keys) {
    const c = node.children.get(pe)!;
    if (c.children.size === 0) {
      if (c.member) out[pe] = {};
      continue;
    }
    // `.` comes first when the child is a member; dropped again if nothing is beneath it.
    const body: Record<string, unknown> = c.member ? { '.': {} } : {};
    fieldsV1Entries(c, body);
    let entries = 0;
    for (const k in body) if (k !== '.') entries++;
    if (entries > 0) out[pe] = body;
    else if (c.member) out[pe] = {};
  }
  return out;
}

const RANK: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

/** Path element order of structured-merge-diff: fields, then keys, then values, then indexes. */
export function comparePathElements(a: string, b: string): number {
  const ra = RANK[a[0]!] ?? 4;
  const rb = RANK[b[0]!] ?? 4;
  if (ra !== rb) return ra - rb;
  // Same kind, same two-character prefix: fields and keys compare as whole strings.
  if (a[0] === 'f' || a[0] === 'k') return a < b ? -1 : a > b ? 1 : 0;
  const va = a.slice(2);
  const vb = b.slice(2);
  if (a[0] === 'i' || a[0] === 'v') {
    const na = Number(va);
    const nb = Number(vb);
    if (!Number.isNaN(na) && !Number.isNaN(nb)) return na - nb;
  }
  return va < vb ? -1 : va > vb ? 1 : 0;
}

function sortedElements(keys: Iterable<string>): string[] {
  return [...keys].sort(comparePathElements);
}

/** fieldpath.Path.String(): `.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"]`. */
export function pathToString(path: readonly string[]): string {
  return path
    .map((pe) => {
      const body = pe.slice(2);
      switch (pe[0]) {
        case 'f':
          return `.${body}`;
        case 'k': {
          const key = JSON.parse(body) as Record<string, unknown>;
          return `[${Object.entries(key)
            .map(([k, v]) => `${k}=${valueToString(v)}`)
            .join(',')}]`;
        }
        case 'v':
          return `[=${valueToString(JSON.parse(body))}]`;
        default:
          return `[${body}]`;
      }
    })
    .join('');
}

function valueToString(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null) return 'null';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** A field path (names only) as a set member: ['spec','replicas'] is `f:spec`/`f:replicas`. */
export function namesToPath(names: readonly string[]): string[] {
  return names.map((n) => `f:${n}`);
}
