/**
 * The generic REST semantics of kube-apiserver (the equivalent of its generic registry
 * store): create/get/list/update/patch/delete/watch on any served resource, with
 * resourceVersions, generation, optimistic concurrency, finalizers, graceful deletion,
 * the status split and admission. The HTTP layer is a thin codec over this class, and
 * in-process components (the simulated data plane) call it directly with the same
 * semantics as over HTTP.
 *
 * Why one file: the generic store's verbs share storage, watch and admission plumbing, as
 * upstream's registry store.go does.
 */
import {
  type FieldRequirement,
  fieldsMatch,
  parseFieldSelector,
  parseLabelSelector,
  type Selector,
  SelectorParseError,
} from '../../kube/labels.ts';
import { type Clock, realClock } from '../../lib/clock.ts';
import { clone, jsonEqual, shared } from '../../lib/json.ts';
import { admitNamespaceDelete, admitNamespacedCreate } from './admission/namespace-lifecycle.ts';
import { ApiError, errors, type QualifiedResource } from './errors.ts';
import { forbidden, invalid as invalidValue, required } from './field-errors.ts';
import { goQuote, goSharpV } from './gofmt.ts';
import {
  checkBodyDecodes,
  checkPatchedDecodes,
  defaultAsGo,
  shapeForStorage,
  unshaped,
} from './gotypes/index.ts';
import { currentView, readPage, type TableView, viewAt } from './list-view.ts';
import { generateNameSuffix, newUid, normalizeTimes, nowRfc3339, orderedMeta, specOf } from './meta.ts';
import { strictDecodingError, unknownFieldWarning } from './openapi/unknown-fields.ts';
import type { Patcher, PatchRequest } from './patcher.ts';
import { isBuiltinGroup, type ResourceRegistry, storageKey } from './registry.ts';
import { type EventType, type ObjectStore, type StoredRecord, TooOldResourceVersionError } from './store.ts';
import { rememberStoredJson } from './stored-json.ts';
import {
  type FieldError,
  type FinishWrite,
  groupVersion,
  type KubeObject,
  type RequestContext,
  type ResourceType,
} from './types.ts';

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface WatchOptions extends ListOptions {
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
}

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export interface WriteOptions {
  user: string;
  /** The user's groups, passed to admission webhooks' userInfo. */
  groups?: string[];
  dryRun?: boolean;
  fieldManager?: string;
  fieldValidation?: FieldValidation;
  subresource?: string;
  /** Collected warnings, returned to HTTP clients as `Warning: 299` headers. */
  warnings?: string[];
  /** Names the default field manager, as kube-apiserver derives it from the User-Agent. */
  userAgent?: string;
  /** Set by server-side apply, which records its own field ownership. */
  applying?: boolean;
}

export interface DeleteOptions {
  user: string;
  groups?: string[];
  dryRun?: boolean;
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface ListResult {
  records: StoredRecord[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface WatchSink {
  /**
   * One event; `rv` is the resourceVersion it shows. `parsed` is the object `json` encodes,
   * when the record has it at the watch's version: shared, never to be written to.
   */
  event(type: EventType | 'BOOKMARK', json: string, rv: number, parsed?: KubeObject): void;
}

/** Admission: mutating then validating (webhooks and built-in plugins). */
export interface Admission {
  mutate(req: AdmissionRequest): Promise<KubeObject>;
  validate(req: AdmissionRequest): Promise<void>;
}

export interface AdmissionRequest {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  rt: ResourceType;
  namespace: string;
  name: string;
  subresource: string;
  object: KubeObject | undefined;
  oldObject: KubeObject | undefined;
  user: string;
  groups: string[];
  dryRun: boolean;
  /** Warnings for the client (`Warning` headers), as admission's warning recorder collects them. */
  warnings?: string[];
}

/** A write as {@link ApiHooks.guardWrite} sees it. `groups` is absent for in-process callers. */
export interface GuardedWrite {
  rt: ResourceType;
  namespace: string;
  obj: KubeObject;
  old?: KubeObject;
  user: string;
  groups?: string[];
}

/** Lists unknown fields of an object for fieldValidation (strict decoding). */
export type UnknownFieldsFn = (rt: ResourceType, obj: KubeObject) => string[];

export interface ApiHooks {
  admission?: Admission;
  patcher?: Patcher;
  unknownFields?: UnknownFieldsFn;
  /**
   * A resource storage's own check of who may write what, after mutating admission (RBAC's
   * escalation prevention). Throws ApiError to refuse the write.
   */
  guardWrite?: (w: GuardedWrite) => void;
  /** Called after a committed write, e.g. to (un)register CRD resources. */
  afterWrite?: (rt: ResourceType, type: EventType, obj: KubeObject) => void;
}

export function qr(rt: ResourceType): QualifiedResource {
  return { group: rt.group, resource: rt.resource };
}

const BASE_FIELDS = ['metadata.name', 'metadata.namespace'];

export class Api {
  readonly store: ObjectStore;
  readonly registry: ResourceRegistry;
  readonly hooks: ApiHooks;
  /**
   * The server's time: creation and deletion timestamps, managedFields times, conditions it
   * sets. The embedded cluster's clock (a virtual one in a simulation); set before serving.
   */
  clock: Clock = realClock;
  /** The record last converted to other versions or shapes, with its JSON in each. */
  private converted: { rec: StoredRecord; json: Map<string, string> } | undefined;

  constructor(store: ObjectStore, registry: ResourceRegistry, hooks: ApiHooks = {}) {
    this.store = store;
    this.registry = registry;
    this.hooks = hooks;
  }

  // ---------- reads ----------

  getRecord(rt: ResourceType, namespace: string, name: string): StoredRecord {
    const rec = this.store.get(storageKey(rt), objectKey(rt, namespace, name));
    if (!rec) throw errors.notFound(qr(rt), name);
    return rec;
  }

  /** A fresh copy of the object as served at this resource's version. */
  get(rt: ResourceType, namespace: string, name: string): KubeObject {
    return this.decode(rt, this.getRecord(rt, namespace, name));
  }

  tryGet(rt: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const rec = this.store.get(storageKey(rt), objectKey(rt, namespace, name));
    return rec ? this.decode(rt, rec) : undefined;
  }

  /** Parses a record, converting apiVersion for multi-version resources (CRDs: conversion None). */
  decode(rt: ResourceType, rec: StoredRecord): KubeObject {
    const parsed = (rec.parsed ? clone(rec.parsed) : JSON.parse(rec.json)) as KubeObject;
    const obj = rt.sharedStorage ? rt.sharedStorage.fromStorage(parsed) : parsed;
    const gv = groupVersion(rt);
    if (obj.apiVersion !== gv) obj.apiVersion = gv;
    return obj;
  }

  /**
   * The stored object itself when it is served at this resource's version, else a decoded
   * copy: for readers that never write to it (frozen under the test runner).
   */
  private storedObject(rt: ResourceType, rec: StoredRecord): KubeObject {
    const p = rec.parsed;
    return p && !rt.sharedStorage && p.apiVersion === groupVersion(rt) ? p : this.decode(rt, rec);
  }

  /** JSON of a record at this resource's version, without parsing when versions agree. */
  encode(rt: ResourceType, rec: StoredRecord): string {
    if (!rt.sharedStorage) {
      if (!rt.group) return rec.json;
      // Records are serialized apiVersion first, so one stored at this version goes out as is.
      // This runs per listed item and per watch event: no registry scan for the group's versions.
      if (rec.json.startsWith(`{"apiVersion":"${groupVersion(rt)}"`)) return rec.json;
    }
    // One event reaches every watcher of the resource in turn: convert it once for all of them.
    if (this.converted?.rec !== rec) this.converted = { rec, json: new Map() };
    const as = `${groupVersion(rt)}/${rt.resource}`;
    let json = this.converted.json.get(as);
    if (json === undefined) {
      json = JSON.stringify(this.decode(rt, rec));
      this.converted.json.set(as, json);
    }
    return json;
  }

  list(rt: ResourceType, namespace: string | undefined, opts: ListOptions = {}): ListResult {
    const filter = this.compileFilter(rt, opts);
    const rvMatch = opts.resourceVersionMatch;
    if (rvMatch && rvMatch !== 'NotOlderThan' && rvMatch !== 'Exact') {
      throw errors.badRequest(
        `resourceVersionMatch: Unsupported value: "${rvMatch}": supported values: "Exact", "NotOlderThan"`,
      );
    }
    if (rvMatch && !opts.resourceVersion) {
      throw errors.badRequest(`resourceVersionMatch is forbidden unless resourceVersion is provided`);
    }
    const current = this.store.currentRv;
    if (opts.resourceVersion && opts.resourceVersion !== '0') {
      const asked = parseRv(opts.resourceVersion);
      if (rvMatch === 'Exact' && asked !== current) {
        throw errors.expired(`too old resource version: ${asked} (${current})`);
      }
      if (asked > current) {
        throw errors.timeout(`Too large resource version: ${asked}, current: ${current}`);
      }
    }
    let startAt: string | undefined;
    let listRv = current;
    const sk = storageKey(rt);
    const table = this.store.table(sk);
    const keys = this.store.sortedKeys(sk);
    let view = currentView(table, keys);
    if (opts.continue) {
      if (opts.resourceVersion && opts.resourceVersion !== '0')
        throw errors.badRequest('specifying resource version is not allowed when using continue');
      const token = decodeContinue(opts.continue);
      startAt = token.start;
      // rv -1: the client chose to go on with the current data after its snapshot expired.
      if (token.rv !== -1) {
        listRv = token.rv;
        view = this.snapshot(sk, token.rv, token.start, table, keys);
      }
    }
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    // Namespaced keys are `ns/name`, so one namespace is a contiguous run of keys.
    const prefix = rt.namespaced && namespace !== undefined ? `${namespace}/` : '';
    // '0' follows '/': the first key past the namespace's run.
    const end = prefix ? `${namespace}0` : undefined;
    const from = startAt !== undefined && startAt > prefix ? startAt : prefix;
    // kube-apiserver counts what is left only when no selector filters the list.
    const page = readPage(view, from, end, filter.matches, limit, filter.trivial);
    if (!page.more) return { records: page.records, resourceVersion: String(listRv) };
    return {
      records: page.records,
      resourceVersion: String(listRv),
      continue: encodeContinue(listRv, page.records.at(-1)!.key),
      remainingItemCount: page.remaining,
    };
  }

  /**
   * The table as of `rv` for a continued list: the current records with every key written
   * since seen as it was. An expired `rv` is etcd's compaction: 410 with a token that
   * goes on with the current data (`handleCompactedErrorForPaging` in storage/etcd3).
   */
  private snapshot(
    sk: string,
    rv: number,
    start: string,
    table: ReadonlyMap<string, StoredRecord>,
    keys: readonly string[],
  ): TableView {
    let changes: Map<string, StoredRecord | undefined>;
    try {
      changes = this.store.changedSince(sk, rv);
    } catch (err) {
      if (err instanceof TooOldResourceVersionError)
        throw errors.expired(INCONSISTENT_CONTINUE, encodeContinueToken(-1, start));
      throw err;
    }
    return changes.size === 0 ? currentView(table, keys) : viewAt(table, keys, changes);
  }

  /**
   * Starts a watch. Without a resourceVersion (or "0"), current objects are sent as
   * ADDED first, as kube-apiserver does. Returns a stop function.
   */
  watch(rt: ResourceType, namespace: string | undefined, opts: WatchOptions, sink: WatchSink): () => void {
    const filter = this.compileFilter(rt, opts);
    const sk = storageKey(rt);
    const rv = opts.resourceVersion;
    const initial = rv === undefined || rv === '' || rv === '0' || opts.sendInitialEvents === true;
    const deliver = (type: EventType, rec: StoredRecord) => {
      const json = this.encode(rt, rec);
      sink.event(type, json, rec.rv, json === rec.json ? rec.parsed : undefined);
    };
    if (initial) {
      for (const rec of this.store.table(sk).values()) {
        if ((namespace === undefined || rec.namespace === namespace) && filter.matches(rec))
          deliver('ADDED', rec);
      }
      if (opts.sendInitialEvents && opts.allowWatchBookmarks) {
        const rv = this.store.currentRv;
        sink.event('BOOKMARK', this.bookmarkJson(rt, rv, true), rv);
      }
    }
    const from = initial ? undefined : parseWatchRv(rt, rv!);
    if (from !== undefined && from > this.store.currentRv) {
      throw errors.timeout(`Too large resource version: ${from}, current: ${this.store.currentRv}`);
    }
    try {
      return this.store.watch(
        {
          storage: sk,
          filter: { namespace, matches: filter.matches },
          deliver: (type, rec) => deliver(type, rec),
        },
        from,
      );
    } catch (err) {
      if (err instanceof TooOldResourceVersionError) throw errors.expired(err.message);
      throw err;
    }
  }

  bookmarkJson(rt: ResourceType, rv: number, initialEventsEnd = false): string {
    const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
    if (initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
    return JSON.stringify({ kind: rt.kind, apiVersion: groupVersion(rt), metadata });
  }

  private compileFilter(
    rt: ResourceType,
    opts: ListOptions,
  ): { matches: (r: StoredRecord) => boolean; trivial: boolean } {
    let labels: Selector | undefined;
    let fields: FieldRequirement[] = [];
    try {
      if (opts.labelSelector) labels = parseLabelSelector(opts.labelSelector);
      if (opts.fieldSelector) fields = parseFieldSelector(opts.fieldSelector);
    } catch (err) {
      if (err instanceof SelectorParseError) throw errors.badRequest(err.message);
      throw err;
    }
    if (fields.length) {
      const known = this.selectableFieldNames(rt);
      for (const f of fields) {
        if (!known.includes(f.field)) {
          throw errors.badRequest(
            `"${f.field}" is not a known field selector: only ${known.map((k) => `"${k}"`).join(', ')}`,
          );
        }
      }
    }
    const lab = labels && !labels.empty ? labels : undefined;
    const trivial = !lab && fields.length === 0;
    return {
      trivial,
      matches: trivial
        ? () => true
        : (r) => (!lab || lab.matches(r.labels)) && (fields.length === 0 || fieldsMatch(fields, r.fields)),
    };
  }

  selectableFieldNames(rt: ResourceType): string[] {
    const extra = rt.strategy.selectableFields
      ? Object.keys(safeSelectable(rt, { apiVersion: groupVersion(rt), kind: rt.kind, metadata: {} }))
      : [];
    return [...new Set([...BASE_FIELDS, ...extra])];
  }

  // ---------- writes ----------

  async create(rt: ResourceType, namespace: string, body: unknown, opts: WriteOptions): Promise<KubeObject> {
    const obj = this.checkBody(rt, body, namespace, undefined);
    checkBodyDecodes(rt, obj);
    unshaped(obj);
    const ctx = context(opts);
    const meta = obj.metadata;
    if (!meta.name) {
      if (meta.generateName) meta.name = `${meta.generateName}${generateNameSuffix()}`;
      else {
        throw errors.invalid(rt.kind, rt.group, '', [
          required('metadata.name', 'name or generateName is required'),
        ]);
      }
    }
    const name = meta.name;
    if (rt.namespaced) admitNamespacedCreate(this.store, rt, namespace, name);
    this.checkUnknownFields(rt, obj, opts);
    normalizeTimes(obj, isBuiltinGroup(rt.group));
    defaultAsGo(rt, obj);
    // Ownership is recorded before admission and storage, as kube-apiserver's create handler
    // does: what webhooks, allocators (Service IPs and ports) and the strategy add is no one's.
    this.hooks.patcher?.trackCreate(rt, obj, opts);
    let admitted = obj;
    if (this.hooks.admission) {
      admitted = await this.hooks.admission.mutate(
        this.admissionRequest('CREATE', rt, namespace, name, obj, undefined, opts),
      );
      defaultAsGo(rt, admitted, false);
    }
    this.hooks.guardWrite?.({ rt, namespace, obj: admitted, user: opts.user, groups: opts.groups });
    // Server-owned metadata is set after admission so webhooks cannot forge it.
    const m = admitted.metadata;
    m.name = name;
    if (rt.namespaced) m.namespace = namespace;
    else delete m.namespace;
    m.uid = newUid();
    m.creationTimestamp = nowRfc3339(new Date(this.clock.now()));
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    delete m.resourceVersion;
    if (rt.strategy.tracksGeneration) m.generation = 1;
    else delete m.generation;
    if (rt.subresources.includes('status') && ctx.subresource === '') {
      if (!rt.strategy.prepareForCreate) delete admitted.status;
    }
    const settle = settleOnce(rt.storeHooks?.beginCreate?.(admitted, ctx.dryRun));
    try {
      rt.strategy.prepareForCreate?.(admitted, ctx);
      this.validateOrThrow(rt, name, rt.strategy.validateCreate?.(admitted, ctx) ?? []);
      if (this.hooks.admission) {
        await this.hooks.admission.validate(
          this.admissionRequest('CREATE', rt, namespace, name, admitted, undefined, opts),
        );
      }
      const key = objectKey(rt, namespace, name);
      if (this.store.get(storageKey(rt), key)) throw errors.alreadyExists(qr(rt), name);
      return this.commit(rt, admitted, 'ADDED', ctx.dryRun, settle, false);
    } finally {
      settle(false);
    }
  }

  /** PUT: replaces the object (or its status with subresource 'status'). */
  async update(
    rt: ResourceType,
    namespace: string,
    name: string,
    body: unknown,
    opts: WriteOptions,
  ): Promise<KubeObject> {
    const obj = this.checkBody(rt, body, namespace, name);
    checkBodyDecodes(rt, obj);
    // Each attempt gets the body as sent: admission and the allocators write into what they get.
    // The stored object is not what PUT starts from: no copy of it to decode.
    return this.readModifyWrite(rt, namespace, name, opts, () => clone(obj), true);
  }

  /**
   * Read-modify-write of one object, the shared path of update and patch: `mutate`
   * receives a fresh copy of the stored object and returns the desired object, which the
   * store takes over. Resolves to the object stored (shared with watchers: read, never written).
   */
  updateWith(
    rt: ResourceType,
    namespace: string,
    name: string,
    opts: WriteOptions,
    mutate: (current: KubeObject) => KubeObject,
    checkRv: boolean,
  ): Promise<KubeObject> {
    // A copy of the stored object, which is shared: a quarter of the cost of decoding it again.
    return this.readModifyWrite(rt, namespace, name, opts, (old) => mutate(clone(old)), checkRv);
  }

  /**
   * updateWith, the desired object made from the stored one (`old`, which it must not write
   * to: it copies what it changes) or not.
   */
  private async readModifyWrite(
    rt: ResourceType,
    namespace: string,
    name: string,
    opts: WriteOptions,
    desiredOf: (old: KubeObject) => KubeObject,
    checkRv: boolean,
  ): Promise<KubeObject> {
    const ctx = context(opts);
    const rec = this.getRecord(rt, namespace, name);
    // Read, never written: copying it was the costliest step of a write after encoding it.
    const old = this.storedObject(rt, rec);
    const desired = desiredOf(old);
    const asked = desired.metadata?.resourceVersion;
    if (checkRv && asked && asked !== String(rec.rv)) {
      throw errors.conflict(
        qr(rt),
        name,
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    }
    if (desired.metadata?.uid && desired.metadata.uid !== old.metadata.uid) {
      throw errors.conflict(
        qr(rt),
        name,
        `Precondition failed: UID in precondition: ${desired.metadata.uid}, UID in object meta: ${old.metadata.uid}`,
      );
    }
    this.checkUnknownFields(rt, desired, opts);
    normalizeTimes(desired, isBuiltinGroup(rt.group));
    let next = this.splitForSubresource(rt, desired, old, ctx.subresource);
    if (ctx.subresource === '') defaultAsGo(rt, next);
    // As on create: the handler records ownership before admission and the store's hooks.
    this.hooks.patcher?.trackUpdate(rt, next, old, opts);
    if (this.hooks.admission) {
      next = await this.hooks.admission.mutate(
        this.admissionRequest('UPDATE', rt, namespace, name, next, old, opts),
      );
      if (ctx.subresource === '') defaultAsGo(rt, next, false);
    }
    this.keepServerMetadata(next, old, rt);
    this.hooks.guardWrite?.({ rt, namespace, obj: next, old, user: opts.user, groups: opts.groups });
    const settle = settleOnce(
      ctx.subresource === '' ? rt.storeHooks?.beginUpdate?.(next, old, ctx.dryRun) : undefined,
    );
    try {
      rt.strategy.prepareForUpdate?.(next, old, ctx);
      // Compared with the stored object below (generation, no-op writes): give it the same shape.
      shapeForStorage(rt, next);
      // Binding writes nodeName straight to storage in kube-apiserver: no generation bump.
      if (
        rt.strategy.tracksGeneration &&
        ctx.subresource !== 'binding' &&
        !jsonEqual(specOf(next), specOf(old))
      ) {
        next.metadata.generation = (old.metadata.generation ?? 1) + 1;
      }
      const errs = [
        ...this.finalizerErrors(next, old),
        ...(rt.strategy.validateUpdate?.(next, old, ctx) ?? []),
      ];
      this.validateOrThrow(rt, name, errs);
      if (this.hooks.admission) {
        await this.hooks.admission.validate(
          this.admissionRequest('UPDATE', rt, namespace, name, next, old, opts),
        );
      }
      // A no-op write keeps the resourceVersion and sends no event, as kube-apiserver does.
      delete next.metadata.resourceVersion;
      if (unchanged(next, old)) {
        settle(true);
        return old;
      }
      const current = this.store.get(storageKey(rt), rec.key);
      if (!current || current.rv !== rec.rv) {
        // Someone wrote while admission webhooks were awaited: the real server retries
        // the read-modify-write for unconditional updates and fails conditional ones.
        if (checkRv && asked)
          throw errors.conflict(
            qr(rt),
            name,
            'the object has been modified; please apply your changes to the latest version and try again',
          );
        // The retry allocates afresh: give this attempt's allocations back first.
        settle(false);
        return this.readModifyWrite(rt, namespace, name, opts, desiredOf, checkRv);
      }
      return next.metadata.deletionTimestamp &&
        !next.metadata.finalizers?.length &&
        !this.deletionPending(rt, next)
        ? this.removeNow(rt, next, ctx.dryRun, settle, true)
        : this.commit(rt, next, 'MODIFIED', ctx.dryRun, settle, true);
    } finally {
      settle(false);
    }
  }

  async patch(
    rt: ResourceType,
    namespace: string,
    name: string,
    req: PatchRequest,
    opts: WriteOptions,
  ): Promise<KubeObject> {
    const patcher = this.hooks.patcher;
    if (!patcher) throw errors.unsupportedMediaType(req.contentType);
    const existing = this.store.get(storageKey(rt), objectKey(rt, namespace, name));
    if (!existing) {
      if (req.contentType === 'application/apply-patch+yaml' && (opts.subresource ?? '') === '') {
        const obj = patcher.applyToNew(rt, namespace, name, req, opts);
        return this.create(rt, namespace, obj, opts);
      }
      throw errors.notFound(qr(rt), name);
    }
    return this.updateWith(
      rt,
      namespace,
      name,
      opts,
      (current) => {
        const patched = patcher.apply(rt, current, req, opts);
        // The patched object is decoded into the kind's Go type before its name is looked at.
        checkPatchedDecodes(rt, patched, req.contentType, req.body);
        return checkPatchedName(rt, namespace, name, patched);
      },
      true,
    );
  }

  async delete(
    rt: ResourceType,
    namespace: string,
    name: string,
    opts: DeleteOptions,
  ): Promise<{ object: KubeObject; deleted: boolean }> {
    admitNamespaceDelete(rt, name);
    const rec = this.getRecord(rt, namespace, name);
    const obj = this.decode(rt, rec);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== obj.metadata.uid) {
      throw errors.conflict(
        qr(rt),
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${obj.metadata.uid}`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== String(rec.rv)) {
      throw errors.conflict(
        qr(rt),
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${rec.rv}`,
      );
    }
    if (this.hooks.admission) {
      await this.hooks.admission.validate(
        this.admissionRequest('DELETE', rt, namespace, name, undefined, obj, {
          user: opts.user,
          groups: opts.groups,
          dryRun: opts.dryRun,
        }),
      );
      // Someone wrote while the webhooks ran: decide on what is stored now, as the storage's
      // delete does by running its validation again on the current object.
      if (this.store.get(storageKey(rt), rec.key)?.rv !== rec.rv)
        return this.delete(rt, namespace, name, opts);
    }
    const meta = obj.metadata;
    const finalizers = [...(meta.finalizers ?? [])];
    // batch/v1 Jobs orphan their pods unless told otherwise, for backwards compatibility.
    const policy =
      opts.propagationPolicy ?? (rt.group === 'batch' && rt.resource === 'jobs' ? 'Orphan' : undefined);
    if (policy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
    if (policy === 'Foreground' && !finalizers.includes('foregroundDeletion'))
      finalizers.push('foregroundDeletion');
    const grace = this.gracePeriod(rt, obj, opts);
    const now = new Date(this.clock.now());
    const specFinalized = rt.group === '' && rt.resource === 'namespaces' && this.deletionPending(rt, obj);
    if (finalizers.length > 0 || grace > 0 || specFinalized) {
      let changed = false;
      if (!meta.deletionTimestamp) {
        meta.deletionTimestamp = nowRfc3339(new Date(now.getTime() + grace * 1000));
        meta.deletionGracePeriodSeconds = grace;
        changed = true;
      } else if (grace < (meta.deletionGracePeriodSeconds ?? 0)) {
        // A shorter grace period may be requested while a graceful deletion is pending.
        meta.deletionTimestamp = nowRfc3339(new Date(now.getTime() + grace * 1000));
        meta.deletionGracePeriodSeconds = grace;
        changed = true;
      }
      if (finalizers.length !== (meta.finalizers?.length ?? 0)) {
        meta.finalizers = finalizers;
        changed = true;
      }
      if (!changed) return { object: obj, deleted: false };
      if (rt.kind === 'Namespace' && rt.group === '') {
        (obj.status as Record<string, unknown> | undefined) ??= {};
        (obj.status as Record<string, unknown>).phase = 'Terminating';
      }
      return {
        object: this.commit(rt, obj, 'MODIFIED', opts.dryRun ?? false, undefined, true),
        deleted: false,
      };
    }
    return { object: this.removeNow(rt, obj, opts.dryRun ?? false, undefined, true), deleted: true };
  }

  /** Deletes every matching object (DELETE on a collection). */
  async deleteCollection(
    rt: ResourceType,
    namespace: string | undefined,
    list: ListOptions,
    opts: DeleteOptions,
  ): Promise<KubeObject[]> {
    const out: KubeObject[] = [];
    for (const rec of this.list(rt, namespace, {
      labelSelector: list.labelSelector,
      fieldSelector: list.fieldSelector,
    }).records) {
      try {
        out.push((await this.delete(rt, rec.namespace, rec.name, opts)).object);
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      }
    }
    return out;
  }

  // ---------- helpers ----------

  private gracePeriod(rt: ResourceType, obj: KubeObject, opts: DeleteOptions): number {
    if (!(rt.group === '' && rt.resource === 'pods')) {
      // Namespaces are "deleted gracefully" by their finalizer, everything else at once.
      return 0;
    }
    const spec = (obj.spec ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
    const phase = (obj.status as { phase?: string } | undefined)?.phase;
    // An unscheduled or finished pod has no kubelet to wait for.
    if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
    const g = opts.gracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30;
    return Math.max(0, g);
  }

  /**
   * Deletion that waits on something other than metadata.finalizers: a pod's kubelet
   * (graceful deletion) or a namespace's spec.finalizers (the namespace controller).
   */
  private deletionPending(rt: ResourceType, obj: KubeObject): boolean {
    if (rt.group !== '') return false;
    if (rt.resource === 'pods') return (obj.metadata.deletionGracePeriodSeconds ?? 0) > 0;
    if (rt.resource === 'namespaces')
      return ((obj.spec as { finalizers?: string[] } | undefined)?.finalizers?.length ?? 0) > 0;
    return false;
  }

  /**
   * The two storage writes. Dry run stops here, and only here, for every write path (create,
   * update, every patch type, delete, deletecollection, every subresource), as
   * `genericregistry.DryRunnableStorage` does: everything before runs, nothing is stored, no
   * watch event is sent, no hook sees a change.
   */
  private removeNow(
    rt: ResourceType,
    obj: KubeObject,
    dryRun: boolean,
    stored: FinishWrite | undefined,
    handOver: boolean,
  ): KubeObject {
    if (dryRun) return obj;
    const rv = this.store.nextRv();
    obj.metadata.resourceVersion = String(rv);
    const rec = this.record(rt, obj, rv, handOver);
    const out = handOver && !rt.sharedStorage ? rec.parsed! : obj;
    this.store.remove(storageKey(rt), rec);
    stored?.(true);
    if (!rt.sharedStorage) rememberStoredJson(out, rec.json);
    rt.storeHooks?.afterDelete?.(out);
    this.hooks.afterWrite?.(rt, 'DELETED', out);
    return out;
  }

  private commit(
    rt: ResourceType,
    obj: KubeObject,
    type: EventType,
    dryRun: boolean,
    stored: FinishWrite | undefined,
    handOver: boolean,
  ): KubeObject {
    // A dry run answers with what would be stored: the shape of the storage boundary too.
    shapeForStorage(rt, obj);
    if (dryRun) return obj;
    const rv = this.store.nextRv();
    obj.metadata.resourceVersion = String(rv);
    const rec = this.record(rt, obj, rv, handOver);
    // Handed over: what was stored is returned, shared from here on (see record).
    const out = handOver && !rt.sharedStorage ? rec.parsed! : obj;
    this.store.put(storageKey(rt), rec);
    // Stored: what the store hook took is the object's now, whatever a hook below throws.
    stored?.(true);
    // A resource sharing another's storage is stored in that one's shape: no bytes to reuse.
    if (!rt.sharedStorage) rememberStoredJson(out, rec.json);
    this.hooks.afterWrite?.(rt, type, out);
    return out;
  }

  /**
   * The record of `obj` at `rv`. Its parsed object is `obj`'s members themselves when the write
   * hands `obj` over (an object the server built from its own copies, as a read-modify-write
   * does: copying it was a sixth of a write), else a copy (a create's body may be the caller's).
   */
  private record(rt: ResourceType, obj: KubeObject, rv: number, handOver: boolean): StoredRecord {
    if (rt.sharedStorage) {
      // Stored in the owning resource's shape, with both resources' selectable fields.
      const owner = this.registry.get(
        rt.sharedStorage.group,
        rt.sharedStorage.version ?? 'v1',
        rt.sharedStorage.resource,
      );
      const stored = rt.sharedStorage.toStorage(obj);
      // `obj` goes back to the writer, and `stored` may share its members: copied.
      const rec = this.record(owner ?? { ...rt, sharedStorage: undefined }, stored, rv, false);
      const extra = rt.strategy.selectableFields ? safeSelectable(rt, obj) : {};
      return { ...rec, fields: { ...extra, ...rec.fields } };
    }
    // The storage boundary: what is stored has the fields its Go type always encodes.
    shapeForStorage(rt, obj);
    const m = obj.metadata;
    const namespace = rt.namespaced ? (m.namespace ?? '') : '';
    const name = m.name!;
    const fields: Record<string, string> = { 'metadata.name': name, 'metadata.namespace': namespace };
    const shaped = storageOrder(obj);
    const json = JSON.stringify(shaped);
    if (rt.strategy.selectableFields) Object.assign(fields, safeSelectable(rt, obj));
    return {
      key: objectKey(rt, namespace, name),
      namespace,
      name,
      uid: m.uid ?? '',
      rv,
      json,
      parsed: shared(handOver ? shaped : clone(shaped)),
      labels: m.labels ?? {},
      fields,
    };
  }

  private checkBody(
    rt: ResourceType,
    body: unknown,
    namespace: string,
    name: string | undefined,
  ): KubeObject {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw errors.badRequest(`the body of the request must be a JSON or YAML object`);
    }
    const obj = body as KubeObject;
    const gv = groupVersion(rt);
    if (obj.kind !== undefined && obj.kind !== rt.kind) throw this.wrongKind(rt, obj);
    if (obj.apiVersion !== undefined && obj.apiVersion !== gv) {
      throw errors.badRequest(
        `the API version in the data (${obj.apiVersion}) does not match the expected API version (${gv})`,
      );
    }
    obj.apiVersion = gv;
    obj.kind = rt.kind;
    if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
    if (typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) {
      throw errors.badRequest(`metadata: expected an object`);
    }
    const m = obj.metadata;
    if (rt.namespaced && m.namespace && namespace && m.namespace !== namespace) {
      throw errors.badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    if (name !== undefined && m.name && m.name !== name) {
      throw errors.badRequest(
        `the name of the object (${m.name}) does not match the name on the URL (${name})`,
      );
    }
    if (name !== undefined && !m.name) m.name = name;
    return obj;
  }

  /**
   * A body of another kind, as `transformDecodeError` in `handlers/rest.go` words it: the
   * codec decodes the kind the body names, then fails to convert it into the endpoint's type
   * (or finds no such kind in the scheme).
   */
  private wrongKind(rt: ResourceType, obj: KubeObject): ApiError {
    const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
    const kind = String(obj.kind);
    const why = this.registry.byKind(group!, version!, kind)
      ? `converting (${version}.${kind}) to (${internalPackage(rt.group)}.${rt.kind}): unknown conversion`
      : `no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme "pkg/api/legacyscheme/scheme.go:30"`;
    return errors.badRequest(
      `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${rt.kind}: ${why}`,
    );
  }

  private checkUnknownFields(rt: ResourceType, obj: KubeObject, opts: WriteOptions): void {
    const mode = opts.fieldValidation ?? 'Warn';
    if (mode === 'Ignore' || !this.hooks.unknownFields) return;
    // Warnings for a caller that collects none (the in-process components): nobody would see them.
    if (mode === 'Warn' && !opts.warnings) return;
    const unknown = this.hooks.unknownFields(rt, obj);
    if (unknown.length === 0) return;
    if (mode === 'Strict') throw errors.badRequest(strictDecodingError(unknown));
    for (const f of unknown) opts.warnings?.push(unknownFieldWarning(f));
  }

  /** The status split for kinds with a status subresource, applied before strategies. */
  private splitForSubresource(
    rt: ResourceType,
    desired: KubeObject,
    old: KubeObject,
    sub: string,
  ): KubeObject {
    // `old` is the stored object, shared: what `next` takes from it is copied, as the steps
    // after this one default and shape `next` in place. Metadata is a new object over shared
    // members, which those steps replace rather than change.
    if (sub === 'status') {
      const next: KubeObject = { ...old, status: desired.status };
      for (const k in next) {
        if (k !== 'status' && k !== 'metadata' && typeof next[k] === 'object') next[k] = clone(next[k]);
      }
      next.metadata = { ...old.metadata, resourceVersion: desired.metadata?.resourceVersion };
      if (desired.status === undefined) delete next.status;
      return next;
    }
    if (sub === '' && rt.subresources.includes('status')) {
      const next: KubeObject = { ...desired, status: clone(old.status) };
      if (old.status === undefined) delete next.status;
      return next;
    }
    return desired;
  }

  private keepServerMetadata(next: KubeObject, old: KubeObject, rt: ResourceType): void {
    next.metadata ??= {};
    const m = next.metadata;
    const o = old.metadata;
    m.name = o.name;
    if (rt.namespaced) m.namespace = o.namespace;
    else delete m.namespace;
    m.uid = o.uid;
    m.creationTimestamp = o.creationTimestamp;
    if (o.deletionTimestamp) m.deletionTimestamp = o.deletionTimestamp;
    else delete m.deletionTimestamp;
    if (o.deletionGracePeriodSeconds !== undefined)
      m.deletionGracePeriodSeconds = o.deletionGracePeriodSeconds;
    else delete m.deletionGracePeriodSeconds;
    if (o.generation !== undefined) m.generation = o.generation;
    else delete m.generation;
    if (m.generateName === undefined && o.generateName !== undefined) m.generateName = o.generateName;
  }

  private finalizerErrors(next: KubeObject, old: KubeObject): FieldError[] {
    if (!old.metadata.deletionTimestamp) return [];
    const before = new Set(old.metadata.finalizers ?? []);
    const added = (next.metadata.finalizers ?? []).filter((f) => !before.has(f));
    if (added.length === 0) return [];
    return [
      forbidden(
        'metadata.finalizers',
        `no new finalizers can be added if the object is being deleted, found new finalizers ${goSharpV(added)}`,
      ),
    ];
  }

  private validateOrThrow(rt: ResourceType, name: string, errs: FieldError[]): void {
    if (errs.length > 0) throw errors.invalid(rt.kind, rt.group, name, errs);
  }

  private admissionRequest(
    operation: AdmissionRequest['operation'],
    rt: ResourceType,
    namespace: string,
    name: string,
    object: KubeObject | undefined,
    oldObject: KubeObject | undefined,
    opts: { user: string; groups?: string[]; dryRun?: boolean; subresource?: string; warnings?: string[] },
  ): AdmissionRequest {
    return {
      operation,
      rt,
      namespace: rt.namespaced ? namespace : '',
      name,
      subresource: opts.subresource ?? '',
      object,
      oldObject,
      user: opts.user,
      groups: opts.groups ?? ['system:authenticated'],
      dryRun: opts.dryRun ?? false,
      warnings: opts.warnings,
    };
  }
}

/**
 * A patch may not rename an object or move it to another namespace: `checkName` and
 * `EnsureObjectNamespaceMatchesRequestNamespace` in `handlers/patch.go` answer 400.
 */
function checkPatchedName(rt: ResourceType, namespace: string, name: string, obj: KubeObject): KubeObject {
  const meta = (obj.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  const objName = typeof meta.name === 'string' ? meta.name : '';
  if (objName !== name) {
    throw errors.badRequest(
      `the name of the object (${objName}) does not match the name on the URL (${name})`,
    );
  }
  const objNs = typeof meta.namespace === 'string' ? meta.namespace : '';
  if (rt.namespaced && objNs !== '' && objNs !== namespace) {
    throw errors.badRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
  return obj;
}

/** The Go package of a group's internal types, which conversion errors name (`core.Pod`, `apps.Deployment`). */
function internalPackage(group: string): string {
  return group === '' ? 'core' : group.split('.')[0]!;
}

/** A store hook's write settles once: what storage did first is what counts. */
function settleOnce(finish: FinishWrite | undefined): FinishWrite {
  let settled = false;
  return (stored) => {
    if (settled) return;
    settled = true;
    finish?.(stored);
  };
}

function context(opts: WriteOptions): RequestContext {
  return {
    subresource: opts.subresource ?? '',
    dryRun: opts.dryRun ?? false,
    fieldManager: opts.fieldManager,
    user: opts.user,
    groups: opts.groups,
  };
}

function safeSelectable(rt: ResourceType, obj: KubeObject): Record<string, string> {
  try {
    return rt.strategy.selectableFields?.(obj) ?? {};
  } catch {
    return {};
  }
}

/**
 * `next` equals `old` as JSON, but for old's resourceVersion. Most writes change the status or
 * ownership (managedFields), which come last in key order: looked at first, a changed
 * object is told apart without comparing all of its metadata and spec.
 */
function unchanged(next: KubeObject, old: KubeObject): boolean {
  if (!jsonEqual(next.status, old.status)) return false;
  if (!jsonEqual(next.metadata.managedFields, old.metadata.managedFields)) return false;
  const { resourceVersion: _rv, ...oldMeta } = old.metadata;
  return jsonEqual(next, { ...old, metadata: oldMeta });
}

/**
 * The object with apiVersion, kind and metadata first, as kube-apiserver serializes, so output
 * reads naturally (members shared with `obj`).
 */
function storageOrder(obj: KubeObject): KubeObject {
  const { apiVersion, kind, metadata, ...rest } = obj;
  return { apiVersion, kind, metadata: orderedMeta(metadata), ...rest };
}

export function objectKey(rt: Pick<ResourceType, 'namespaced'>, namespace: string, name: string): string {
  return rt.namespaced ? `${namespace}/${name}` : name;
}

function parseRv(rv: string): number {
  const n = Number(rv);
  if (!Number.isInteger(n) || n < 0)
    throw errors.badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  return n;
}

/**
 * A watch's resourceVersion, parsed as the storage's APIObjectVersioner does
 * (`storage/api_object_versioner.go` ParseResourceVersion): 422 on `resourceVersion` with
 * strconv.ParseUint's error, named after the resource as InterpretWatchError does.
 */
function parseWatchRv(rt: ResourceType, rv: string): number {
  if (/^[0-9]+$/.test(rv) && BigInt(rv) < 2n ** 64n) return Number(rv);
  const why = /^[0-9]+$/.test(rv) ? 'value out of range' : 'invalid syntax';
  throw errors.invalid(rt.resource, rt.group, '', [
    invalidValue('resourceVersion', rv, `strconv.ParseUint: parsing ${goQuote(rv)}: ${why}`),
  ]);
}

const INCONSISTENT_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/**
 * Continue tokens as `storage.EncodeContinue` writes them: base64url (unpadded) of
 * `{"v":"meta.k8s.io/v1","rv":…,"start":…}`, where start is the next key to read (the last
 * key returned plus a NUL byte).
 */
function encodeContinue(rv: number, lastKey: string): string {
  return encodeContinueToken(rv, `${lastKey}\u0000`);
}

function encodeContinueToken(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start })).toString('base64url');
}

/** storage.DecodeContinue, with its error texts. */
function decodeContinue(token: string): { rv: number; start: string } {
  const invalidRv =
    'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)';
  let t: { v?: unknown; rv?: unknown; start?: unknown };
  try {
    t = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as typeof t;
  } catch {
    throw errors.badRequest(invalidRv);
  }
  if (t === null || typeof t !== 'object') throw errors.badRequest(invalidRv);
  if (t.v !== 'meta.k8s.io/v1')
    throw errors.badRequest(
      `continue key is not valid: server does not recognize this encoded version ${String(t.v ?? '')}`,
    );
  if (typeof t.rv !== 'number' || !Number.isInteger(t.rv) || t.rv === 0) throw errors.badRequest(invalidRv);
  if (typeof t.start !== 'string' || t.start === '')
    throw errors.badRequest('continue key is not valid: encoded start key is not valid');
  return { rv: t.rv, start: t.start };
}
