import { compareStrings } from '../../../lib/compare.ts';
import { canonicalJson, clone, isObject, type JsonObject, jsonEqual } from '../../../lib/json.ts';
import type { FieldError, KubeObject, ManagedFieldsEntry } from '../types.ts';
import { badRequest, internalError } from './errors.ts';
import { FieldSet, namesToPath, pathToString } from './fieldset.ts';
import { builtinListSemantics, type ListSemanticsLookup } from './list-semantics.ts';
import { objectGvkKey } from './smp-table.ts';
import {
  ApplyConfigError,
  compare,
  createdFieldsV1,
  mergeApplied,
  removeItems,
  toFieldSet,
} from './ssa-walk.ts';

/**
 * Server-side apply and field ownership tracking, following kube-apiserver's field manager
 * stack (structured-merge-diff's Updater under the stripMeta, managedFieldsUpdater and
 * skipNonApplied layers): FieldsV1 sets per manager in metadata.managedFields, conflicts on
 * fields another manager owns and this apply changes, `force` taking them over, and removal
 * of fields an applier stops applying when nobody else owns them.
 */

export interface ServerSideApplyOptions {
  /** The stored object, or undefined when the apply creates it. */
  live: KubeObject | undefined | null;
  /** The applied configuration (the decoded apply patch body). */
  applied: Record<string, unknown>;
  manager: string;
  force?: boolean;
  /** The request's group/version (`apps/v1`, `v1`); the configuration must carry the same. */
  apiVersion: string;
  /** '' (or undefined) for the main resource, else `status`, `scale`, ... */
  subresource?: string;
  now: Date | string;
  listSemantics: ListSemanticsLookup;
  /**
   * Field-name paths (`[['status']]` on a main endpoint) whose values the strategy resets, so
   * nobody owns them through this endpoint (the registry strategy's reset fields).
   */
  ignoredFields?: string[][];
}

export type ServerSideApplyResult =
  | { ok: true; object: KubeObject }
  | { ok: false; conflicts: FieldError[]; message: string };

export interface TrackUpdateOptions {
  /** The object before the write, or undefined for a create. */
  old: KubeObject | undefined | null;
  /** The object about to be stored, as the create/update/patch produced it. */
  updated: KubeObject;
  manager: string;
  apiVersion: string;
  subresource?: string;
  now: Date | string;
  /** Defaults to builtinListSemantics of the object's kind (ObjectMeta rules for custom kinds). */
  listSemantics?: ListSemanticsLookup;
  ignoredFields?: string[][];
}

/** The manager kube-apiserver charges with an object's fields when it is first applied. */
export const BEFORE_FIRST_APPLY = 'before-first-apply';

interface Manager {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource: string;
  time: string | undefined;
  set: FieldSet;
}

/** Fields never tracked (stripMeta). */
export const STRIPPED = FieldSet.of(
  ...[
    ['apiVersion'],
    ['kind'],
    ['metadata'],
    ['metadata', 'name'],
    ['metadata', 'namespace'],
    ['metadata', 'creationTimestamp'],
    ['metadata', 'selfLink'],
    ['metadata', 'uid'],
    ['metadata', 'clusterName'],
    ['metadata', 'generation'],
    ['metadata', 'managedFields'],
    ['metadata', 'resourceVersion'],
  ].map(namesToPath),
);

/**
 * The manager identifier of kube-apiserver (the JSON of the entry without fields and time;
 * apiVersion only for Update): distinct identifiers are distinct owners.
 */
function managerId(m: Pick<Manager, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify({
    manager: m.manager,
    operation: m.operation,
    ...(m.operation === 'Update' && m.apiVersion ? { apiVersion: m.apiVersion } : {}),
    ...(m.subresource ? { subresource: m.subresource } : {}),
  });
}

function printManager(m: Manager): string {
  let s = JSON.stringify(m.manager);
  if (m.subresource) s += ` with subresource ${JSON.stringify(m.subresource)}`;
  if (m.operation === 'Update') s += ` using ${m.apiVersion}`;
  return s;
}

function decodeManaged(entries: unknown): Map<string, Manager> {
  const out = new Map<string, Manager>();
  if (!Array.isArray(entries)) return out;
  for (const e of entries) {
    if (!isObject(e)) continue;
    const m: Manager = {
      manager: typeof e.manager === 'string' ? e.manager : '',
      operation: e.operation === 'Apply' ? 'Apply' : 'Update',
      apiVersion: typeof e.apiVersion === 'string' ? e.apiVersion : '',
      subresource: typeof e.subresource === 'string' ? e.subresource : '',
      time: typeof e.time === 'string' ? e.time : undefined,
      set: FieldSet.fromFieldsV1(e.fieldsV1),
    };
    const id = managerId(m);
    const prev = out.get(id);
    out.set(id, prev ? { ...m, set: prev.set.union(m.set) } : m);
  }
  return out;
}

/** Entries in kube-apiserver's order: Apply before Update, then by time, manager, version. */
function encodeManaged(managers: Map<string, Manager>): ManagedFieldsEntry[] {
  const list = [...managers.values()].filter((m) => !m.set.isEmpty());
  const seconds = (t: string | undefined) => (t ? Math.floor(Date.parse(t) / 1000) : 0);
  list.sort(
    (a, b) =>
      compareStrings(a.operation, b.operation) ||
      seconds(a.time) - seconds(b.time) ||
      compareStrings(a.manager, b.manager) ||
      compareStrings(a.apiVersion, b.apiVersion) ||
      compareStrings(a.subresource, b.subresource),
  );
  return list.map((m) => ({
    manager: m.manager,
    operation: m.operation,
    apiVersion: m.apiVersion,
    ...(m.time ? { time: m.time } : {}),
    fieldsType: 'FieldsV1',
    fieldsV1: m.set.toFieldsV1(),
    ...(m.subresource ? { subresource: m.subresource } : {}),
  }));
}

/** metav1.Time: RFC 3339 with whole seconds. */
function formatTime(now: Date | string): string {
  const d = typeof now === 'string' ? new Date(now) : now;
  const second = Math.floor(d.getTime() / 1000);
  // Writes come many to a second: format each second once.
  if (second !== lastSecond.at) lastSecond = { at: second, text: d.toISOString().replace(/\.\d+Z$/, 'Z') };
  return lastSecond.text;
}

let lastSecond = { at: Number.NaN, text: '' };

function withoutManagedFields(obj: unknown): JsonObject {
  const copy = isObject(obj) ? clone(obj) : {};
  if (isObject(copy.metadata)) delete copy.metadata.managedFields;
  return copy;
}

/**
 * The object as compare reads it, without metadata.managedFields: a new top level and
 * metadata, every other value shared with `obj` (compare only reads; cloning the whole
 * object on each update was 6% of a simulated day's CPU).
 */
function viewWithoutManagedFields(obj: unknown): JsonObject {
  if (!isObject(obj)) return {};
  if (!isObject(obj.metadata)) return { ...obj };
  const { managedFields: _, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

function setManagedFields(obj: JsonObject, managers: Map<string, Manager>): KubeObject {
  for (const m of managers.values()) m.set = m.set.difference(STRIPPED);
  const entries = encodeManaged(managers);
  const metadata = isObject(obj.metadata) ? obj.metadata : {};
  if (entries.length > 0) metadata.managedFields = entries;
  else delete metadata.managedFields;
  obj.metadata = metadata;
  return obj as KubeObject;
}

function ignoredSet(paths: string[][] | undefined): FieldSet {
  if (!paths || paths.length === 0) return EMPTY;
  const key = paths.map((p) => p.join('.')).join('|');
  let set = ignoredSets.get(key);
  if (!set) {
    set = FieldSet.of(...paths.map(namesToPath));
    ignoredSets.set(key, set);
  }
  return set;
}

/** Reset-field sets by their paths (a handful: `status` on main endpoints); never changed by callers. */
const ignoredSets = new Map<string, FieldSet>();
const EMPTY = new FieldSet();

/**
 * Updater.update with force: the operation takes every field it adds or modifies away from
 * the other managers, and removed fields leave every manager. Returns what the operation
 * itself now owns. The writer (`writer`, its id) loses only the changed fields it does not
 * own afterwards: taking the rest and giving them back gave it a new set on every write, so
 * its FieldsV1 was encoded again each time.
 */
function recordUpdate(
  oldObj: JsonObject,
  newObj: JsonObject,
  managers: Map<string, Manager>,
  sem: ListSemanticsLookup,
  ignored: FieldSet,
  writer: string,
): FieldSet {
  const c = compare(oldObj, newObj, sem);
  const changed = c.added.union(c.modified);
  const changedForOthers = changed.recursiveDifference(ignored);
  const removedForOthers = c.removed.recursiveDifference(ignored);
  const own = changed.difference(c.removed).recursiveDifference(ignored).difference(STRIPPED);
  const takenFromWriter = changedForOthers.difference(own);
  for (const [id, m] of managers) {
    const taken = id === writer ? takenFromWriter : changedForOthers;
    m.set = m.set.difference(m.set.intersection(taken)).difference(removedForOthers);
  }
  return own;
}

/**
 * managedFieldsUpdater.Update: what the write changed is owned by `id` (merged with what it
 * owned before), stamped with `now`; a write that changed nothing leaves ownership alone.
 */
function updateOwnership(
  oldObj: JsonObject,
  newObj: JsonObject,
  managers: Map<string, Manager>,
  who: Omit<Manager, 'set' | 'time'>,
  time: string,
  sem: ListSemanticsLookup,
  ignored: FieldSet,
): void {
  const id = managerId(who);
  const own = recordUpdate(oldObj, newObj, managers, sem, ignored, id);
  for (const [key, m] of managers) if (m.set.isEmpty()) managers.delete(key);
  if (own.isEmpty()) return;
  const prev = managers.get(id);
  managers.set(id, { ...who, time, set: prev ? prev.set.union(own) : own });
}

/**
 * Records operation-Update ownership for an ordinary write (create, update, non-apply patch)
 * and returns the object to store with its metadata.managedFields (a new top level and
 * metadata; every other value is `updated`'s own, not a copy). As on the real server, a
 * client may replace managedFields through the main resource (`[{}]` clears them), and an
 * existing object without managedFields stays untracked.
 */
export function trackUpdate(opts: TrackUpdateOptions): KubeObject {
  const subresource = opts.subresource ?? '';
  const sem = opts.listSemantics ?? builtinListSemantics(objectGvkKey(opts.updated));
  const provided = opts.updated.metadata?.managedFields;
  const stored = opts.old?.metadata?.managedFields;
  // Entries sent back as stored (a read-modify-write of the whole object) change nothing:
  // the stored ones are read instead, whose FieldsV1 objects are decoded once.
  const base =
    Array.isArray(provided) && provided.length > 0 && subresource === '' && !jsonEqual(provided, stored)
      ? provided
      : stored;
  if (!opts.old && !(Array.isArray(base) && base.length > 0)) return trackCreate(opts, sem, subresource);
  const managers = decodeManaged(base);
  const newObj = viewWithoutManagedFields(opts.updated);
  if (opts.old && managers.size === 0) return newObj as KubeObject;
  const oldObj = opts.old ? viewWithoutManagedFields(opts.old) : {};
  updateOwnership(
    oldObj,
    newObj,
    managers,
    { manager: opts.manager, operation: 'Update', apiVersion: opts.apiVersion, subresource },
    formatTime(opts.now),
    sem,
    ignoredSet(opts.ignoredFields),
  );
  return setManagedFields(newObj, managers);
}

/**
 * trackUpdate of a create that brings no managedFields (nearly every create): the one Update
 * manager owns what compare({}, object) would find, less the reset and stripped fields. The
 * object is read, not copied; the returned object differs from it only in its managedFields.
 */
function trackCreate(opts: TrackUpdateOptions, sem: ListSemanticsLookup, subresource: string): KubeObject {
  const obj = opts.updated as unknown as JsonObject;
  const meta = isObject(obj.metadata) ? obj.metadata : undefined;
  // Read without metadata.managedFields (whatever empty value the client sent).
  const input: JsonObject =
    meta && 'managedFields' in meta
      ? { ...obj, metadata: Object.fromEntries(Object.entries(meta).filter(([k]) => k !== 'managedFields')) }
      : obj;
  const fieldsV1 = createdFieldsV1(input, sem, ignoredSet(opts.ignoredFields), STRIPPED);
  const metadata: JsonObject = { ...((input.metadata as JsonObject | undefined) ?? {}) };
  if (fieldsV1) {
    const entry: ManagedFieldsEntry = {
      manager: opts.manager,
      operation: 'Update',
      apiVersion: opts.apiVersion,
      time: formatTime(opts.now),
      fieldsType: 'FieldsV1',
      fieldsV1,
      ...(subresource ? { subresource } : {}),
    };
    metadata.managedFields = [entry];
  }
  return { ...input, metadata } as KubeObject;
}

/**
 * Applies a configuration as `manager`. Conflicts (fields owned by another manager whose value
 * this apply changes) fail the apply unless `force`, which takes those fields over.
 * Throws PatchError for a malformed configuration (400 for a version mismatch or managedFields
 * in the body; 500 for list items that are duplicated or lack their key, as the real server).
 */
export function serverSideApply(opts: ServerSideApplyOptions): ServerSideApplyResult {
  const { applied, listSemantics: sem } = opts;
  const subresource = opts.subresource ?? '';
  const now = formatTime(opts.now);
  const ignored = ignoredSet(opts.ignoredFields);
  if (!isObject(applied)) throw badRequest('error decoding YAML: the apply configuration must be an object');
  if (applied.apiVersion !== opts.apiVersion) {
    throw badRequest(
      `Incorrect version specified in apply patch. Specified patch version: ${String(applied.apiVersion ?? '')}, expected: ${opts.apiVersion}`,
    );
  }
  if (isObject(applied.metadata) && applied.metadata.managedFields != null) {
    throw badRequest('metadata.managedFields must be nil');
  }

  const liveObj = opts.live ? withoutManagedFields(opts.live) : {};
  const managers = decodeManaged(opts.live?.metadata?.managedFields);
  if (opts.live && managers.size === 0) {
    // skipNonApplied: an object nobody tracked is first charged to before-first-apply.
    updateOwnership(
      {},
      liveObj,
      managers,
      { manager: BEFORE_FIRST_APPLY, operation: 'Update', apiVersion: opts.apiVersion, subresource },
      now,
      sem,
      ignored,
    );
  }

  const config = clone(applied);
  let appliedSet: FieldSet;
  try {
    appliedSet = toFieldSet(config, sem, true).recursiveDifference(ignored);
  } catch (err) {
    if (!(err instanceof ApplyConfigError)) throw err;
    const [group, version] = opts.apiVersion.includes('/')
      ? opts.apiVersion.split('/')
      : ['', opts.apiVersion];
    throw internalError(
      `failed to create typed patch object (${group}/${version}, Kind=${String(applied.kind)}): ${err.message}`,
    );
  }
  const applier: Omit<Manager, 'set' | 'time'> = {
    manager: opts.manager,
    operation: 'Apply',
    apiVersion: opts.apiVersion,
    subresource,
  };
  const applierId = managerId(applier);
  const previous = managers.get(applierId);
  managers.set(applierId, { ...applier, time: previous?.time, set: appliedSet });

  const merged = mergeApplied(liveObj, config, sem);
  const result = prune(merged, managers, previous?.set, sem);

  const c = compare(liveObj, result, sem);
  const changed = c.added.union(c.modified).recursiveDifference(ignored);
  const removed = c.removed.recursiveDifference(ignored);
  const conflicts: { m: Manager; set: FieldSet }[] = [];
  for (const [id, m] of managers) {
    if (id === applierId) continue;
    const overlap = m.set.intersection(changed);
    if (!overlap.isEmpty()) conflicts.push({ m, set: overlap });
  }
  if (conflicts.length > 0 && !opts.force) {
    // lastAppliedManager: `kubectl apply --server-side` takes over, without conflicts, the
    // fields the client-side apply annotation recorded and the live object still holds.
    const allowed =
      opts.manager === 'kubectl' ? lastAppliedFields(opts.live, liveObj, opts.apiVersion, sem) : undefined;
    const remaining = allowed
      ? conflicts.map((c) => ({ m: c.m, set: c.set.difference(allowed) })).filter((c) => !c.set.isEmpty())
      : conflicts;
    if (remaining.length > 0) return conflictResult(remaining);
  }
  for (const { m, set } of conflicts) m.set = m.set.difference(set);
  for (const [id, m] of managers) {
    if (id !== applierId) m.set = m.set.difference(removed);
    if (m.set.difference(STRIPPED).isEmpty()) managers.delete(id);
  }

  // lastAppliedUpdater: kubectl's server-side apply keeps an existing client-side apply
  // annotation in step with what it applied, so a later client-side apply diffs correctly.
  if (opts.manager === 'kubectl') updateLastApplied(result, applied);
  const own = managers.get(applierId);
  // A no-op apply keeps the entry's previous timestamp (the real server returns the live object).
  if (own && (!opts.live || !jsonEqual(liveObj, result))) own.time = now;
  return { ok: true, object: setManagedFields(result, managers) };
}

/** kubectl's client-side apply annotation. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

function annotationsOf(obj: unknown): JsonObject | undefined {
  const meta = isObject(obj) ? obj.metadata : undefined;
  return isObject(meta) && isObject(meta.annotations) ? meta.annotations : undefined;
}

/**
 * lastAppliedManager.allowedConflictsFromLastApplied: the fields of the last-applied
 * configuration (at the request's version) whose values the live object still has.
 */
function lastAppliedFields(
  live: KubeObject | undefined | null,
  liveObj: JsonObject,
  apiVersion: string,
  sem: ListSemanticsLookup,
): FieldSet | undefined {
  const text = annotationsOf(live)?.[LAST_APPLIED_ANNOTATION];
  if (typeof text !== 'string' || text === '') return undefined;
  let last: unknown;
  try {
    last = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(last) || last.apiVersion !== apiVersion) return undefined;
  try {
    const c = compare(last, liveObj, sem);
    return toFieldSet(last, sem, true).difference(c.modified).difference(c.added).difference(c.removed);
  } catch (err) {
    if (err instanceof ApplyConfigError) return undefined;
    throw err;
  }
}

/**
 * lastAppliedUpdater: when the result still carries the annotation, it becomes the applied
 * configuration (without the annotation), encoded as unstructured.UnstructuredJSONScheme does:
 * encoding/json of a map, so keys sorted, HTML-escaped, with a trailing newline.
 */
function updateLastApplied(result: JsonObject, applied: JsonObject): void {
  const annotations = annotationsOf(result);
  const current = annotations?.[LAST_APPLIED_ANNOTATION];
  if (!annotations || typeof current !== 'string' || current === '') return;
  const config = clone(applied);
  const configAnnotations = annotationsOf(config);
  if (configAnnotations) {
    delete configAnnotations[LAST_APPLIED_ANNOTATION];
    // Go keeps an emptied annotations map: it encodes as {}.
  }
  annotations[LAST_APPLIED_ANNOTATION] = `${goJsonEncode(config)}\n`;
}

/** encoding/json's Marshal of decoded JSON: sorted keys and its HTML-safe escapes. */
function goJsonEncode(v: unknown): string {
  return canonicalJson(v).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * Updater.prune: what the applier applied last time and no longer applies is removed, unless
 * some manager (the applier's new configuration included) still owns it.
 */
function prune(
  merged: JsonObject,
  managers: Map<string, Manager>,
  lastSet: FieldSet | undefined,
  sem: ListSemanticsLookup,
): JsonObject {
  if (!lastSet || lastSet.isEmpty()) return merged;
  const last = lastSet.withNamedFieldsAsMembers();
  const pruned = removeItems(merged, last, sem);
  let managed = new FieldSet();
  for (const m of managers.values()) managed = managed.union(m.set);
  managed = managed.withNamedFieldsAsMembers();
  const mergedSet = toFieldSet(merged, sem).withNamedFieldsAsMembers();
  const prunedSet = toFieldSet(pruned, sem).withNamedFieldsAsMembers();
  const ownedBack = removeItems(merged, mergedSet.difference(prunedSet.union(managed)), sem);
  const ownedBackSet = toFieldSet(ownedBack, sem).withNamedFieldsAsMembers();
  return removeItems(merged, mergedSet.difference(ownedBackSet).intersection(last), sem);
}

function conflictResult(conflicts: { m: Manager; set: FieldSet }[]): ServerSideApplyResult {
  conflicts.sort((a, b) => compareStrings(managerId(a.m), managerId(b.m)));
  const errors: FieldError[] = [];
  const lines: string[] = [];
  for (const { m, set } of conflicts) {
    const who = printManager(m);
    lines.push(`conflicts with ${who}:`);
    for (const path of set.paths()) {
      errors.push({
        reason: 'FieldManagerConflict',
        field: pathToString(path),
        message: `conflict with ${who}`,
      });
      lines.push(`- ${pathToString(path)}`);
    }
  }
  const message =
    errors.length === 1
      ? `Apply failed with 1 conflict: ${errors[0]!.message}: ${errors[0]!.field}`
      : `Apply failed with ${errors.length} conflicts: ${lines.join('\n')}`;
  return { ok: false, conflicts: errors, message };
}
