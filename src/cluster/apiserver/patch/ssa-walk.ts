import { isObject, type JsonObject, jsonEqual } from '../../../lib/json.ts';
import { comparePathElements, FieldSet, pathToString } from './fieldset.ts';
import type { ListSemantics, ListSemanticsLookup } from './list-semantics.ts';

/**
 * The structured-merge-diff walks server-side apply is built from (ToFieldSet, Compare,
 * RemoveItems, Merge), over plain JSON objects with list semantics from a lookup instead of
 * a typed schema. Paths handed to the lookup are field names with list items transparent.
 */

/** A problem with the applied configuration, worded as structured-merge-diff words it. */
export class ApplyConfigError extends Error {}

type Granular = Exclude<ListSemantics, { type: 'atomic' }>;

function granular(sem: ListSemantics | undefined): Granular | undefined {
  return sem && sem.type !== 'atomic' ? sem : undefined;
}

/**
 * The path element of a list item: `k:{...}` with the key fields sorted by name, `v:<json>`
 * for a set. Returns undefined when the item cannot be keyed (then the caller falls back to
 * its index, or reports the problem for an applied configuration).
 */
function itemElement(sem: Granular, item: unknown): string | { missing: string } | undefined {
  if (sem.type === 'set')
    return isObject(item) || Array.isArray(item) ? undefined : `v:${JSON.stringify(item)}`;
  if (!isObject(item)) return undefined;
  const key: Record<string, unknown> = {};
  for (const k of [...sem.keys].sort()) {
    const v = Object.hasOwn(item, k) ? item[k] : sem.keyDefaults?.[k];
    if (v === undefined || v === null) return { missing: k };
    key[k] = v;
  }
  return `k:${JSON.stringify(key)}`;
}

/** Path elements of a list's items, index fallback for unkeyable items of stored objects. */
function itemElements(sem: Granular, list: unknown[], names: string[], strict: boolean): string[] {
  const seen = new Set<string>();
  return list.map((item, i) => {
    const pe = itemElement(sem, item);
    if (typeof pe === 'string') {
      if (strict && seen.has(pe)) {
        throw new ApplyConfigError(`.${names.join('.')}: duplicate entries for key ${pathToString([pe])}`);
      }
      seen.add(pe);
      return pe;
    }
    if (strict) {
      const why =
        pe && 'missing' in pe
          ? `associative list with keys has an element that omits key field "${pe.missing}" (and doesn't have default value)`
          : 'expected a keyable item';
      throw new ApplyConfigError(`.${names.join('.')}: element ${i}: ${why}`);
    }
    return `i:${i}`;
  });
}

/**
 * ToFieldSet: every scalar, every atomic list or object, and every item of a granular list.
 * Objects themselves are not members. With `strict`, unkeyable or duplicate list items throw.
 */
export function toFieldSet(obj: JsonObject, sem: ListSemanticsLookup, strict = false): FieldSet {
  const set = new FieldSet();
  const walkObject = (o: JsonObject, names: string[], pes: string[]) => {
    for (const [k, v] of Object.entries(o)) walk(v, [...names, k], [...pes, `f:${k}`]);
  };
  const walk = (v: unknown, names: string[], pes: string[]) => {
    if (Array.isArray(v)) {
      const s = granular(sem(names));
      if (!s) return set.insert(pes);
      const elements = itemElements(s, v, names, strict);
      v.forEach((item, i) => {
        const p = [...pes, elements[i]!];
        set.insert(p);
        if (s.type === 'map' && !s.atomicItems && isObject(item)) walkObject(item, names, p);
      });
    } else if (isObject(v)) {
      if (sem(names)?.type === 'atomic') return set.insert(pes);
      walkObject(v, names, pes);
    } else {
      set.insert(pes);
    }
  };
  walkObject(obj, [], []);
  return set;
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/**
 * Compare: leaves that differ, plus granular objects, lists and list items that exist on one
 * side only (which is where FieldsV1's `.` entries of Update managers come from). Fields the
 * typed object always has (`alwaysPresent`) are taken as present-but-empty when missing.
 */
export function compare(lhs: JsonObject, rhs: JsonObject, sem: ListSemanticsLookup): Comparison {
  const out: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  // Most fields of an update are unchanged: the path element arrays are built only for a field
  // that differs, and the lookup is asked by joined key when it answers by key (as in
  // createdFieldsV1), instead of copying two arrays per field visited.
  const keyed = sem.byKey;
  const semanticsAt = (p: Path) => (keyed ? keyed.semantics(p.key) : sem(namesOf(p)));
  const alwaysPresentAt = (p: Path) =>
    keyed ? keyed.alwaysPresent(p.key) : sem.alwaysPresent?.(namesOf(p)) === true;
  const leaf = (l: unknown, r: unknown, at: Path) => {
    if (l === undefined) out.added.insert(elementsOf(at));
    else if (r === undefined) out.removed.insert(elementsOf(at));
    else if (!jsonEqual(l, r)) out.modified.insert(elementsOf(at));
  };
  const containerHook = (l: unknown, r: unknown, at: Path) => {
    if (at.pe === undefined) return;
    if (l === undefined) out.added.insert(elementsOf(at));
    else if (r === undefined) out.removed.insert(elementsOf(at));
  };
  const isEmpty = (v: unknown) =>
    v === undefined ||
    v === null ||
    (Array.isArray(v) ? v.length === 0 : isObject(v) && Object.keys(v).length === 0);

  const cmpObject = (l: unknown, r: unknown, at: Path) => {
    const lo = isObject(l) ? l : undefined;
    const ro = isObject(r) ? r : undefined;
    // Left's keys, then right's others: no key set built per object visited.
    if (lo) for (const k of Object.keys(lo)) cmpField(lo, ro, k, at);
    if (ro) for (const k of Object.keys(ro)) if (!lo || !Object.hasOwn(lo, k)) cmpField(lo, ro, k, at);
  };

  const cmpField = (lo: JsonObject | undefined, ro: JsonObject | undefined, k: string, at: Path) => {
    const child = childPath(at, k);
    let lv = lo?.[k];
    let rv = ro?.[k];
    // A field the typed object always has is present-but-empty on the side that lacks it.
    const fillLeft = lo !== undefined && lv === undefined && rv !== undefined;
    const fillRight = ro !== undefined && rv === undefined && lv !== undefined;
    if ((fillLeft || fillRight) && alwaysPresentAt(child)) {
      if (fillLeft) lv = Array.isArray(rv) ? [] : {};
      else rv = Array.isArray(lv) ? [] : {};
    }
    cmp(lv, rv, child);
  };

  const cmp = (l: unknown, r: unknown, at: Path) => {
    // One value on both sides (a status write keeps the stored spec and metadata values):
    // nothing beneath differs.
    if (l === r) return;
    const probe = r !== undefined && r !== null ? r : l;
    const bothKnown = l !== undefined && l !== null && r !== undefined && r !== null;
    if (bothKnown && (Array.isArray(l) !== Array.isArray(r) || isObject(l) !== isObject(r))) {
      return leaf(l, r, at);
    }
    if (Array.isArray(probe)) {
      const s = granular(semanticsAt(at));
      if (!s || (isEmpty(l) && isEmpty(r))) return leaf(l, r, at);
      const la = Array.isArray(l) ? l : [];
      const ra = Array.isArray(r) ? r : [];
      const names = namesOf(at);
      const lItems = indexItems(s, la, names);
      const rItems = indexItems(s, ra, names);
      for (const pe of new Set([...lItems.keys(), ...rItems.keys()])) {
        const li = lItems.get(pe);
        const ri = rItems.get(pe);
        // A list item: a path element of its own, the same names as its list.
        const item: Path = { up: at, name: undefined, pe, key: at.key };
        if (s.type === 'map' && !s.atomicItems && (isObject(li) || isObject(ri))) {
          if (isEmpty(li) && isEmpty(ri)) leaf(li, ri, item);
          else {
            cmpObject(li, ri, item);
            containerHook(li, ri, item);
          }
        } else {
          leaf(li, ri, item);
        }
      }
      return containerHook(l, r, at);
    }
    if (isObject(probe)) {
      if (semanticsAt(at)?.type === 'atomic' || (isEmpty(l) && isEmpty(r))) return leaf(l, r, at);
      cmpObject(l, r, at);
      return containerHook(l, r, at);
    }
    leaf(l, r, at);
  };
  cmp(lhs, rhs, ROOT);
  return out;
}

/**
 * A position in compare's walk, linked to its parent: `name` is the field name (undefined for a
 * list item, transparent to the lookup), `pe` its path element (undefined at the root), `key`
 * the field names joined with `.`.
 */
interface Path {
  up: Path | undefined;
  name: string | undefined;
  pe: string | undefined;
  key: string;
}

const ROOT: Path = { up: undefined, name: undefined, pe: undefined, key: '' };

function childPath(at: Path, name: string): Path {
  return { up: at, name, pe: `f:${name}`, key: at.key === '' ? name : `${at.key}.${name}` };
}

function namesOf(at: Path): string[] {
  const names: string[] = [];
  for (let p: Path | undefined = at; p; p = p.up) if (p.name !== undefined) names.push(p.name);
  return names.reverse();
}

function elementsOf(at: Path): string[] {
  const pes: string[] = [];
  for (let p: Path | undefined = at; p; p = p.up) if (p.pe !== undefined) pes.push(p.pe);
  return pes.reverse();
}

/**
 * The FieldsV1 of what `compare({}, obj)` finds added or modified (the fields a create gives
 * its manager), less the subtrees `skip` holds as members (the strategy's reset fields) and
 * less the members of `strip` (fields never tracked), written in one walk: no comparison sets,
 * no path arrays, no set algebra, no trie. A create is the commonest write, and its ownership
 * was most of its cost. Must agree with compare exactly (the patch tests check both on the
 * same objects): fields the typed object always has (`alwaysPresent`) start as
 * present-but-empty, so they are members only when their own value differs from empty.
 * Undefined when nothing is owned.
 */
export function createdFieldsV1(
  obj: JsonObject,
  sem: ListSemanticsLookup,
  skip: FieldSet,
  strip: FieldSet,
): Record<string, unknown> | undefined {
  // The path so far, as the lookup wants it: joined names when it answers by key (the built-in
  // kinds), else the names themselves.
  type Path = { key: string; names: string[] | undefined };
  const keyed = sem.byKey;
  const semanticsAt = (p: Path) => (keyed ? keyed.semantics(p.key) : sem(p.names!));
  const alwaysPresentAt = (p: Path) =>
    keyed ? keyed.alwaysPresent(p.key) : sem.alwaysPresent?.(p.names!) === true;
  /** The node's FieldsV1: `{}` for a bare member, its entries (after `.` if a member), or undefined. */
  const node = (member: boolean, entries: Record<string, unknown> | undefined) =>
    entries ? entries : member ? {} : undefined;
  /** `v`'s FieldsV1; `placeholder` when the old side is the empty value of an always-present field. */
  const add = (
    v: unknown,
    path: Path,
    ign: FieldSet | undefined,
    st: FieldSet | undefined,
    placeholder: boolean,
  ): unknown => {
    const unstripped = !st?.member;
    if (v === null || typeof v !== 'object') return unstripped ? {} : undefined;
    if (Array.isArray(v)) {
      const s = granular(semanticsAt(path));
      if (!s || v.length === 0) {
        // Equal to an empty placeholder only when empty itself.
        return node(unstripped && (!placeholder || v.length > 0), undefined);
      }
      const elements = itemElements(s, v, path.names ?? [], false);
      const items: [string, unknown][] = [];
      const seen = new Set<string>();
      for (let i = 0; i < v.length; i++) {
        const pe = elements[i]!;
        // Repeated keys: the first occurrence wins, as in compare.
        if (seen.has(pe)) continue;
        seen.add(pe);
        const ic = ign?.children.get(pe);
        if (ic?.member) continue;
        const sc = st?.children.get(pe);
        const item = v[i];
        const itemMember = !sc?.member;
        const body =
          s.type === 'map' && !s.atomicItems && isObject(item) && Object.keys(item).length > 0
            ? fields(item, path, ic, sc, false, itemMember)
            : undefined;
        const json = node(itemMember, body);
        if (json !== undefined) items.push([pe, json]);
      }
      if (items.length > 1) items.sort((a, b) => comparePathElements(a[0], b[0]));
      const member = unstripped && !placeholder;
      if (items.length === 0) return node(member, undefined);
      const out: Record<string, unknown> = member ? { '.': {} } : {};
      for (const [pe, json] of items) out[pe] = json;
      return out;
    }
    const o = v as JsonObject;
    const empty = Object.keys(o).length === 0;
    if (empty || semanticsAt(path)?.type === 'atomic') {
      return node(unstripped && (!placeholder || !empty), undefined);
    }
    const member = unstripped && !placeholder;
    return node(member, fields(o, path, ign, st, placeholder, member));
  };
  /**
   * The entries of an object's fields, in FieldsV1 order, after `.` when `member`; undefined
   * when none is owned. `known` when the old side is an (empty) object, so always-present
   * fields apply.
   */
  const fields = (
    o: JsonObject,
    path: Path,
    ign: FieldSet | undefined,
    st: FieldSet | undefined,
    known: boolean,
    member: boolean,
  ): Record<string, unknown> | undefined => {
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(o).sort()) {
      const v = o[k];
      if (v === undefined) continue;
      const pe = `f:${k}`;
      const ic = ign?.children.get(pe);
      if (ic?.member) continue;
      const p: Path = {
        key: path.key === '' ? k : `${path.key}.${k}`,
        names: path.names && [...path.names, k],
      };
      // Only an object or list can equal its always-present placeholder: no lookup for scalars.
      const placeholder = known && v !== null && typeof v === 'object' && alwaysPresentAt(p);
      const json = add(v, p, ic, st?.children.get(pe), placeholder);
      if (json === undefined) continue;
      out ??= member ? { '.': {} } : {};
      out[pe] = json;
    }
    return out;
  };
  if (Object.keys(obj).length === 0) return undefined;
  return fields(obj, { key: '', names: keyed ? undefined : [] }, skip, strip, true, false);
}

function indexItems(sem: Granular, list: unknown[], names: string[]): Map<string, unknown> {
  const elements = itemElements(sem, list, names, false);
  const m = new Map<string, unknown>();
  // Repeated keys in a stored object: the first occurrence wins, as in structured-merge-diff.
  elements.forEach((pe, i) => {
    if (!m.has(pe)) m.set(pe, list[i]);
  });
  return m;
}

/**
 * RemoveItems: drops every member of `set` (with its subtree) from `obj`. Objects and lists
 * left empty by the removal disappear.
 */
export function removeItems(obj: JsonObject, set: FieldSet, sem: ListSemanticsLookup): JsonObject {
  const rmObject = (o: JsonObject, s: FieldSet, names: string[]): JsonObject | undefined => {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(o)) {
      const c = s.child(`f:${k}`);
      if (c?.member) continue;
      if (c && c.children.size > 0) {
        const kept = rmValue(v, c, [...names, k]);
        if (kept !== undefined) out[k] = kept;
      } else {
        out[k] = v;
      }
    }
    return Object.keys(out).length > 0 ? out : undefined;
  };
  const rmValue = (v: unknown, s: FieldSet, names: string[]): unknown => {
    if (Array.isArray(v)) {
      const g = granular(sem(names));
      if (!g) return v;
      const elements = itemElements(g, v, names, false);
      const out: unknown[] = [];
      v.forEach((item, i) => {
        const c = s.child(elements[i]!);
        if (c?.member) return;
        if (c && c.children.size > 0 && isObject(item)) {
          const kept = rmObject(item, c, names);
          if (kept !== undefined) out.push(kept);
        } else {
          out.push(item);
        }
      });
      return out.length > 0 ? out : undefined;
    }
    if (isObject(v)) return sem(names)?.type === 'atomic' ? v : rmObject(v, s, names);
    return v;
  };
  return rmObject(obj, set, []) ?? {};
}

/**
 * Merge(live, config): the config's scalars and atomic values win, objects merge key by key,
 * keyed lists and sets merge item by item keeping the live order with the config's new items
 * placed before the next shared item (structured-merge-diff's ordering). A null in the
 * config removes the field.
 */
export function mergeApplied(live: JsonObject, config: JsonObject, sem: ListSemanticsLookup): JsonObject {
  const mergeValue = (l: unknown, r: unknown, names: string[]): unknown => {
    if (r === undefined) return l;
    if (r === null) return undefined;
    if (Array.isArray(r)) {
      const s = granular(sem(names));
      if (!s || !Array.isArray(l)) return withoutNulls(r);
      return mergeList(l, r, s, names);
    }
    if (isObject(r)) {
      if (!isObject(l) || sem(names)?.type === 'atomic') return withoutNulls(r);
      return mergeObject(l, r, names);
    }
    return r;
  };
  const mergeObject = (l: JsonObject, r: JsonObject, names: string[]): JsonObject => {
    const out: JsonObject = { ...l };
    for (const [k, v] of Object.entries(r)) {
      const merged = mergeValue(l[k], v, [...names, k]);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    }
    return out;
  };
  const mergeItem = (l: unknown, r: unknown, s: Granular, names: string[]): unknown => {
    if (l === undefined) return withoutNulls(r);
    if (r === undefined) return l;
    if (s.type === 'map' && !s.atomicItems && isObject(l) && isObject(r)) return mergeObject(l, r, names);
    return withoutNulls(r);
  };
  const mergeList = (l: unknown[], r: unknown[], s: Granular, names: string[]): unknown[] => {
    const lpes = dedupe(itemElements(s, l, names, false));
    const rpes = dedupe(itemElements(s, r, names, false));
    const lMap = indexItems(s, l, names);
    const rMap = indexItems(s, r, names);
    const shared = rpes.filter((pe) => lMap.has(pe));
    let nextShared = shared.shift();
    const out: unknown[] = [];
    let li = 0;
    let ri = 0;
    while (li < lpes.length || ri < rpes.length) {
      const lpe = lpes[li];
      const rpe = rpes[ri];
      if (lpe !== undefined && rpe !== undefined) {
        if (lpe === rpe) {
          out.push(mergeItem(lMap.get(lpe), rMap.get(rpe), s, names));
          li++;
          ri++;
          nextShared = shared.shift();
          continue;
        }
        if (rMap.has(lpe) && nextShared !== undefined && nextShared !== lpe) {
          li++;
          continue;
        }
      }
      if (lpe !== undefined && !rMap.has(lpe)) {
        out.push(lMap.get(lpe));
        li++;
        continue;
      }
      if (rpe !== undefined) {
        out.push(mergeItem(lMap.get(rpe), rMap.get(rpe), s, names));
        ri++;
        if (nextShared === rpe) nextShared = shared.shift();
        continue;
      }
      li++; // a live item already merged through the config's order
    }
    return out;
  };
  return mergeObject(live, config, []);
}

function dedupe(pes: string[]): string[] {
  return [...new Set(pes)];
}

function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (isObject(v)) {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = withoutNulls(x);
    return out;
  }
  return v;
}
