import { clone, isObject, type JsonObject } from '../../../lib/json.ts';
import { goJsonKind, goReflectType, goS, goV } from '../gofmt.ts';
import { unsupportedPatchType } from './content-types.ts';
import { badRequest, genericInvalid, internalError } from './errors.ts';
import { type GroupVersionKind, type KindRules, rulesFor } from './smp-table.ts';

/**
 * Strategic merge patch for built-in kinds, following apimachinery's strategicpatch apply
 * half (StrategicMergeMapPatch with MergeParallelList and IgnoreUnmatchedNulls), including
 * its ordering rules and its error statuses: 400 for malformed directives, 422 for lists of
 * lists, and 500 (empty reason) for the errors the real server does not translate, such as
 * a list item missing its merge key. Custom resources are refused with 415.
 * The inputs are never mutated, unless `owned`: then both are the caller's own throwaway
 * copies (a patch request's freshly decoded object and body) and are merged in place, which
 * saves copying the whole object on every patch.
 */
export function applyStrategicMergePatch<T>(
  doc: T,
  patch: unknown,
  kind: GroupVersionKind | string,
  owned = false,
): T {
  const rules = rulesFor(kind);
  if (!rules) throw unsupportedPatchType(kind);
  // A JSON null decodes to an empty patch map.
  if (patch !== null && !isObject(patch)) {
    throw badRequest(
      `json: cannot unmarshal ${goJsonKind(patch)} into Go value of type map[string]interface {}`,
    );
  }
  const original = isObject(doc) ? (owned ? doc : clone(doc)) : {};
  const changes = patch ?? {};
  return new Merger(rules).mergeMap(original, owned ? changes : clone(changes), []) as T;
}

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_PREFIX = '$deleteFromPrimitiveList/';
const ORDER_PREFIX = '$setElementOrder/';

type ElemKind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';

function jsonKind(v: unknown): ElemKind {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v as ElemKind;
}

const badArgType = (expected: string, actual: unknown) =>
  internalError(`expected a ${expected}, but received a ${goReflectType(actual)}`);
const noMergeKey = (m: unknown, key: string) =>
  internalError(`map: ${goV(m)} does not contain declared merge key: ${key}`);

class Merger {
  readonly rules: KindRules;

  constructor(rules: KindRules) {
    this.rules = rules;
  }

  private strategy(path: string[]): { merge: boolean; mergeKey: string | undefined } {
    const rule = this.rules[path.join('.')];
    return {
      merge: rule?.patchStrategy?.split(',').includes('merge') ?? false,
      mergeKey: rule?.patchMergeKey,
    };
  }

  mergeMap(original: JsonObject, patch: JsonObject, path: string[]): JsonObject {
    if (Object.hasOwn(patch, DIRECTIVE)) {
      const directive = patch[DIRECTIVE];
      if (directive === 'replace') {
        delete patch[DIRECTIVE];
        return stripDirectiveKeys(patch) as JsonObject;
      }
      if (directive === 'delete') return {};
      throw internalError(`unknown patch type: ${goS(directive)} in map: ${goV(patch)}`);
    }
    applyRetainKeys(original, patch);
    this.mergeOrderedLists(original, patch, path);

    for (let [key, patchV] of Object.entries(patch)) {
      let isDeleteList = false;
      if (key.startsWith(DELETE_PREFIX)) {
        key = key.slice(DELETE_PREFIX.length);
        isDeleteList = true;
      } else if (key.startsWith('$')) {
        continue;
      }
      if (patchV === null) {
        delete original[key];
        continue;
      }
      const childPath = [...path, key];
      const origV = original[key];
      if (!Object.hasOwn(original, key) || jsonKind(origV) !== jsonKind(patchV)) {
        if (!isDeleteList) setCleaned(original, key, patchV);
        continue;
      }
      if (isObject(origV)) {
        original[key] = this.mergeMap(origV, patchV as JsonObject, childPath);
      } else if (Array.isArray(origV)) {
        const { merge, mergeKey } = this.strategy(childPath);
        if (merge || isDeleteList) {
          original[key] = this.mergeSlice(origV, patchV as unknown[], mergeKey, childPath, isDeleteList);
        } else {
          setCleaned(original, key, patchV);
        }
      } else {
        original[key] = patchV;
      }
    }
    return original;
  }

  /** mergePatchIntoOriginal: `$setElementOrder/<list>` merges that list and fixes its order. */
  private mergeOrderedLists(original: JsonObject, patch: JsonObject, path: string[]): void {
    for (const key of Object.keys(patch)) {
      if (!key.startsWith(ORDER_PREFIX)) continue;
      const order = patch[key];
      delete patch[key];
      if (!Array.isArray(order)) throw badArgType('[]interface {}', order);
      const listKey = key.slice(ORDER_PREFIX.length);
      const foundOriginal = Object.hasOwn(original, listKey);
      const foundPatch = Object.hasOwn(patch, listKey);
      const originalList = original[listKey];
      const patchList = patch[listKey];
      if (foundOriginal && !Array.isArray(originalList)) throw badArgType('[]interface {}', originalList);
      if (foundPatch && !Array.isArray(patchList)) throw badArgType('[]interface {}', patchList);
      const origItems = (originalList ?? []) as unknown[];
      const patchItems = (patchList ?? []) as unknown[];
      const childPath = [...path, listKey];
      const { merge, mergeKey } = this.strategy(childPath);
      validateAgainstOrder(patchItems, order, mergeKey);

      let merged: unknown[];
      if (foundOriginal && !foundPatch) merged = origItems;
      else if (!foundOriginal && foundPatch) merged = removeDirectives(patchItems).value as unknown[];
      else if (foundOriginal && foundPatch)
        merged = merge ? this.mergeSlice(origItems, patchItems, mergeKey, childPath, false) : patchItems;
      else continue;

      const [inOrder, serverOnly] = partition(merged, order, mergeKey);
      const kind = sliceElementType(origItems, patchItems);
      original[listKey] = normalizeElementOrder(inOrder, serverOnly, order, origItems, mergeKey, kind);
      delete patch[listKey];
    }
  }

  private mergeSlice(
    original: unknown[],
    patch: unknown[],
    mergeKey: string | undefined,
    path: string[],
    isDeleteList: boolean,
  ): unknown[] {
    if (original.length === 0 && patch.length === 0) return original;
    const kind = sliceElementType(original, patch);
    let merged: unknown[];
    if (kind !== 'object') {
      if (isDeleteList) return original.filter((v) => !patch.includes(v));
      merged = [...original];
      for (const v of patch) if (!merged.includes(v)) merged.push(v);
    } else {
      if (!mergeKey) throw internalError(`cannot merge lists without merge key for ${path.join('.')}`);
      [original, patch] = applySpecialElements(original, patch, mergeKey);
      merged = [...original];
      for (const v of patch as JsonObject[]) {
        if (!Object.hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey);
        const at = findByKey(merged, mergeKey, v[mergeKey]);
        if (at >= 0) merged[at] = this.mergeMap(merged[at] as JsonObject, v, path);
        else {
          const cleaned = removeDirectives(discardNulls(v));
          if (cleaned.keep) merged.push(cleaned.value);
        }
      }
    }
    const [inPatch, serverOnly] = partition(merged, patch, mergeKey);
    return normalizeElementOrder(inPatch, serverOnly, patch, original, mergeKey, kind);
  }
}

/** A value that is new to the document: nulls and directives are dropped as the real server does. */
function setCleaned(target: JsonObject, key: string, patchV: unknown): void {
  const cleaned = removeDirectives(discardNulls(patchV));
  if (cleaned.keep) target[key] = cleaned.value;
  else delete target[key];
}

function discardNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(discardNulls);
  if (isObject(v)) {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== null)
        .map(([k, x]) => [k, discardNulls(x)]),
    );
  }
  return v;
}

/**
 * strategicpatch's removeDirectives: a map carrying `$patch` disappears; the other directive
 * keys would be dropped by decoding into the typed object, so they are stripped here.
 */
function removeDirectives(v: unknown): { keep: boolean; value: unknown } {
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const item of v) {
      const r = removeDirectives(item);
      if (r.keep) out.push(r.value);
    }
    return { keep: true, value: out };
  }
  if (isObject(v)) {
    if (Object.hasOwn(v, DIRECTIVE)) return { keep: false, value: undefined };
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) {
      if (isDirectiveKey(k)) continue;
      const r = removeDirectives(x);
      if (r.keep) out[k] = r.value;
    }
    return { keep: true, value: out };
  }
  return { keep: true, value: v };
}

function isDirectiveKey(k: string): boolean {
  return k === DIRECTIVE || k === RETAIN_KEYS || k.startsWith(DELETE_PREFIX) || k.startsWith(ORDER_PREFIX);
}

function stripDirectiveKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripDirectiveKeys);
  if (isObject(v)) {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !isDirectiveKey(k))
        .map(([k, x]) => [k, stripDirectiveKeys(x)]),
    );
  }
  return v;
}

/** `$retainKeys`: keys of the original not listed are cleared; the patch may only set listed keys. */
function applyRetainKeys(original: JsonObject, patch: JsonObject): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return;
  const retain = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(retain)) throw badRequest('invalid patch format of retainKeys');
  const keep = new Set(retain);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_PREFIX) || k.startsWith(ORDER_PREFIX)) continue;
    if (!keep.has(k)) throw badRequest('invalid patch format of retainKeys');
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
}

/** Handles `$patch: delete` / `$patch: replace` items of a keyed list. */
function applySpecialElements(
  original: unknown[],
  patch: unknown[],
  mergeKey: string,
): [unknown[], unknown[]] {
  const plain: unknown[] = [];
  let replace = false;
  for (const v of patch as JsonObject[]) {
    if (!Object.hasOwn(v, DIRECTIVE)) {
      plain.push(v);
      continue;
    }
    const directive = v[DIRECTIVE];
    if (directive === 'delete') {
      if (!Object.hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey);
      original = original.filter(
        (o) => !(isObject(o) && Object.hasOwn(o, mergeKey) && o[mergeKey] === v[mergeKey]),
      );
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw internalError('merging lists cannot yet be specified in the patch');
    } else {
      throw internalError(`unknown patch type: ${goS(directive)} in map: ${goV(v)}`);
    }
  }
  return replace ? [plain, []] : [original, plain];
}

function findByKey(list: unknown[], key: string, value: unknown): number {
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (!isObject(item)) throw internalError(`value for key ${i} is not a map`);
    if (Object.hasOwn(item, key) && item[key] === value) return i;
  }
  return -1;
}

function sliceElementType(...slices: unknown[][]): ElemKind {
  let kind: ElemKind | undefined;
  for (const s of slices) {
    for (const v of s) {
      const k = jsonKind(v);
      if (kind === undefined) {
        if (k === 'array') throw genericInvalid('lists of lists are not supported');
        kind = k;
      } else if (k !== kind) {
        throw internalError(`list element types are not identical: ${goV(slices)}`);
      }
    }
  }
  if (kind === undefined) throw internalError('no elements in any of the given slices');
  return kind;
}

function identity(v: unknown, mergeKey: string | undefined, kind: ElemKind): unknown {
  return kind === 'object' && mergeKey ? (v as JsonObject)[mergeKey] : v;
}

function indexIn(list: unknown[], v: unknown, mergeKey: string | undefined, kind: ElemKind): number {
  const id = identity(v, mergeKey, kind);
  return list.findIndex((x) => identity(x, mergeKey, kind) === id);
}

/** Splits `items` into those present in `by` (by merge key, or value for scalars) and the rest. */
function partition(items: unknown[], by: unknown[], mergeKey: string | undefined): [unknown[], unknown[]] {
  const present: unknown[] = [];
  const rest: unknown[] = [];
  for (const v of items) {
    let found: boolean;
    if (mergeKey) {
      if (!isObject(v)) throw badArgType('map[string]interface {}', v);
      if (!Object.hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey);
      found = findByKey(by, mergeKey, v[mergeKey]) >= 0;
    } else {
      found = by.includes(v);
    }
    (found ? present : rest).push(v);
  }
  return [present, rest];
}

function validateAgainstOrder(patchList: unknown[], order: unknown[], mergeKey: string | undefined): void {
  if (order.length === 0 || patchList.length === 0) return;
  const nonDelete = mergeKey
    ? patchList.filter((v) => {
        if (!isObject(v)) throw badArgType('map[string]interface {}', v);
        return v[DIRECTIVE] !== 'delete';
      })
    : patchList;
  let p = 0;
  let o = 0;
  while (p < nonDelete.length && o < order.length) {
    const item = nonDelete[p];
    if (isObject(item) && Object.hasOwn(item, DIRECTIVE)) {
      p++;
      continue;
    }
    if (keyEqual(item, order[o], mergeKey)) p++;
    o++;
  }
  if (p < nonDelete.length && o >= order.length) {
    throw internalError(
      `the order in patch list:\n${goV(patchList)}\n doesn't match $setElementOrder list:\n${goV(order)}`,
    );
  }
}

function keyEqual(left: unknown, right: unknown, mergeKey: string | undefined): boolean {
  if (!mergeKey) return left === right;
  if (!isObject(left)) throw badArgType('map[string]interface {}', left);
  if (!isObject(right)) throw badArgType('map[string]interface {}', right);
  if (!Object.hasOwn(left, mergeKey)) throw noMergeKey(left, mergeKey);
  if (!Object.hasOwn(right, mergeKey)) throw noMergeKey(right, mergeKey);
  return left[mergeKey] === right[mergeKey];
}

/**
 * Orders patch items by `patchOrder` and server-only items by `serverOrder`, then interleaves
 * them: a server-only item goes before a patch item only when both appear in `serverOrder`
 * and it comes first there. So items new to the list land before the remaining server-only
 * items, exactly as kube-apiserver orders them.
 */
function normalizeElementOrder(
  patch: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string | undefined,
  kind: ElemKind,
): unknown[] {
  const left = sortByOrder(serverOnly, serverOrder, mergeKey, kind);
  const right = sortByOrder(patch, patchOrder, mergeKey, kind);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(serverOrder, left[i], mergeKey, kind);
      const ri = indexIn(serverOrder, right[j], mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

function sortByOrder(
  items: unknown[],
  order: unknown[],
  mergeKey: string | undefined,
  kind: ElemKind,
): unknown[] {
  let toSort = items;
  let toDelete: unknown[] = [];
  if (kind === 'object') {
    for (const v of [...items, ...order]) {
      if (!isObject(v)) throw badArgType('map[string]interface {}', v);
      if (mergeKey && !Object.hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey);
    }
    toSort = items.filter((v) => (v as JsonObject)[DIRECTIVE] !== 'delete');
    toDelete = items.filter((v) => (v as JsonObject)[DIRECTIVE] === 'delete');
  }
  // Go's sort.SliceStable is an insertion sort at these sizes; its comparator treats items
  // missing from `order` as smaller, which this reproduces.
  const out = [...toSort];
  const less = (a: unknown, b: unknown) => {
    const ia = indexIn(order, a, mergeKey, kind);
    const ib = indexIn(order, b, mergeKey, kind);
    return ia >= 0 && ib >= 0 ? ia < ib : true;
  };
  for (let x = 1; x < out.length; x++) {
    for (let y = x; y > 0 && less(out[y], out[y - 1]); y--) [out[y], out[y - 1]] = [out[y - 1], out[y]];
  }
  return [...out, ...toDelete];
}
