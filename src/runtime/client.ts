/**
 * The read/write client controllers use: CRUD, every patch type, server-side apply with
 * field manager `troupe`, the status subresource, conflict retries and finalizers.
 * Writes can be fenced (see `withFence`): the manager hands controllers a client that
 * refuses to write once this process is no longer the elected leader.
 */

import type { KubeConfig } from '@kubernetes/client-node';
import { Backoff } from '../lib/backoff.ts';
import { sleep } from '../lib/clock.ts';
import { isConflict, isNotFound } from './errors.ts';
import { type ResourceInfo, RestMapper } from './resources.ts';
import { type HttpMethod, type Query, RestClient, type RestClientOptions } from './rest.ts';
import type { KindRef, KubeObject, ListResult, ObjectRef } from './types.ts';

export const FIELD_MANAGER = 'troupe';

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

const CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

export interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  signal?: AbortSignal;
}

export interface PatchOptions extends WriteOptions {
  subresource?: string;
  /** Server-side apply only: take ownership of fields other managers own. */
  force?: boolean;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  signal?: AbortSignal;
}

export interface DeleteOptions {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
  signal?: AbortSignal;
}

export interface ConflictRetryOptions {
  /** Attempts in total, including the first. */
  attempts?: number;
  initialMs?: number;
  signal?: AbortSignal;
}

/** Thrown by a fenced client's writes when the fence says this process must not act. */
export class FencedError extends Error {
  constructor(message = 'not the leader: writes are fenced') {
    super(message);
    this.name = 'FencedError';
  }
}

/**
 * Runs `fn` again while it fails with 409 Conflict (client-go's retry.RetryOnConflict):
 * `fn` must re-read the object each time.
 */
export async function retryOnConflict<T>(fn: () => Promise<T>, opts: ConflictRetryOptions = {}): Promise<T> {
  const attempts = opts.attempts ?? 5;
  const backoff = new Backoff({ initialMs: opts.initialMs ?? 10, factor: 2, maxMs: 1000, jitter: 0.1 });
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (!isConflict(err) || i >= attempts || opts.signal?.aborted) throw err;
      await sleep(backoff.next(), opts.signal);
    }
  }
}

export class Client {
  readonly rest: RestClient;
  readonly mapper: RestMapper;
  private readonly fence: (() => void) | undefined;

  constructor(rest: RestClient, mapper?: RestMapper, fence?: () => void) {
    this.rest = rest;
    this.mapper = mapper ?? new RestMapper(rest);
    this.fence = fence;
  }

  static fromKubeConfig(kc: KubeConfig, opts?: RestClientOptions): Client {
    return new Client(new RestClient(kc, opts));
  }

  /**
   * A client sharing this one's connections whose writes first call `fence` (which throws
   * to refuse), after this client's own fence if it has one.
   */
  withFence(fence: () => void): Client {
    const outer = this.fence;
    return new Client(
      this.rest,
      this.mapper,
      outer
        ? () => {
            outer();
            fence();
          }
        : fence,
    );
  }

  async get<T extends KubeObject = KubeObject>(
    kind: KindRef,
    name: string,
    namespace?: string,
    opts: { signal?: AbortSignal } = {},
  ): Promise<T> {
    const info = await this.mapper.resourceFor(kind);
    return this.rest.request<T>({
      method: 'GET',
      path: this.path(info, namespace, name),
      signal: opts.signal,
    });
  }

  /** Like `get`, but undefined instead of a 404 error. */
  async tryGet<T extends KubeObject = KubeObject>(
    kind: KindRef,
    name: string,
    namespace?: string,
    opts: { signal?: AbortSignal } = {},
  ): Promise<T | undefined> {
    try {
      return await this.get<T>(kind, name, namespace, opts);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** One page of a list; see `listAll` to follow continue tokens. */
  async list<T extends KubeObject = KubeObject>(
    kind: KindRef,
    opts: ListOptions = {},
  ): Promise<ListResult<T>> {
    const info = await this.mapper.resourceFor(kind);
    const query: Query = {
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      limit: opts.limit,
      continue: opts.continue,
      resourceVersion: opts.resourceVersion,
    };
    const body = await this.rest.request<{
      items?: T[];
      metadata?: { resourceVersion?: string; continue?: string };
    }>({
      method: 'GET',
      path: RestMapper.path(info, info.namespaced ? opts.namespace : undefined),
      query,
      signal: opts.signal,
    });
    const items = body.items ?? [];
    // List items omit apiVersion/kind on a real API server; restore them for callers.
    for (const item of items) {
      item.apiVersion ??= kind.apiVersion;
      item.kind ??= kind.kind;
    }
    return {
      items,
      resourceVersion: body.metadata?.resourceVersion ?? '',
      continue: body.metadata?.continue || undefined,
    };
  }

  /** Every page of a list, in pages of `limit` (default 500). */
  async listAll<T extends KubeObject = KubeObject>(
    kind: KindRef,
    opts: ListOptions = {},
  ): Promise<ListResult<T>> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    do {
      const page = await this.list<T>(kind, { ...opts, limit: opts.limit ?? 500, continue: cont });
      items.push(...page.items);
      rv = page.resourceVersion;
      cont = page.continue;
    } while (cont);
    return { items, resourceVersion: rv };
  }

  async create<T extends KubeObject>(obj: T, opts: WriteOptions = {}): Promise<T> {
    const info = await this.mapper.resourceFor(obj);
    return this.write<T>('POST', this.path(info, obj.metadata.namespace), obj, opts);
  }

  /** PUT; the object's resourceVersion makes it an optimistic-concurrency update. */
  async update<T extends KubeObject>(obj: T, opts: WriteOptions = {}): Promise<T> {
    const info = await this.mapper.resourceFor(obj);
    return this.write<T>('PUT', this.path(info, obj.metadata.namespace, nameOf(obj)), obj, opts);
  }

  /** PUT to the status subresource. */
  async updateStatus<T extends KubeObject>(obj: T, opts: WriteOptions = {}): Promise<T> {
    const info = await this.mapper.resourceFor(obj);
    return this.write<T>('PUT', this.path(info, obj.metadata.namespace, nameOf(obj), 'status'), obj, opts);
  }

  /** Deletes; resolves false when the object was already gone. */
  async delete(ref: ObjectRef, opts: DeleteOptions = {}): Promise<boolean> {
    this.fence?.();
    const info = await this.mapper.resourceFor(ref);
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (opts.propagationPolicy) body.propagationPolicy = opts.propagationPolicy;
    if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
    if (opts.preconditions) body.preconditions = opts.preconditions;
    try {
      await this.rest.request({
        method: 'DELETE',
        path: this.path(info, ref.metadata.namespace, nameOf(ref)),
        query: { dryRun: opts.dryRun ? 'All' : undefined },
        body,
        signal: opts.signal,
      });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async patch<T extends KubeObject = KubeObject>(
    ref: ObjectRef,
    type: PatchType,
    patch: unknown,
    opts: PatchOptions = {},
  ): Promise<T> {
    return this.sendPatch<T>(ref, type, patch, opts, false);
  }

  private async sendPatch<T>(
    ref: ObjectRef,
    type: PatchType,
    patch: unknown,
    opts: PatchOptions,
    ignoreBody: boolean,
  ): Promise<T> {
    this.fence?.();
    const info = await this.mapper.resourceFor(ref);
    const fieldManager = opts.fieldManager ?? FIELD_MANAGER;
    return this.rest.request<T>({
      ignoreBody,
      method: 'PATCH',
      path: this.path(info, ref.metadata.namespace, nameOf(ref), opts.subresource),
      query: {
        fieldManager,
        force: type === 'apply' && opts.force ? true : undefined,
        dryRun: opts.dryRun ? 'All' : undefined,
      },
      body: patch,
      contentType: CONTENT_TYPES[type],
      signal: opts.signal,
    });
  }

  /** RFC 7386 merge patch. Include metadata.resourceVersion to make it conditional. */
  mergePatch<T extends KubeObject = KubeObject>(
    ref: ObjectRef,
    patch: unknown,
    opts?: PatchOptions,
  ): Promise<T> {
    return this.patch<T>(ref, 'merge', patch, opts);
  }

  /**
   * A merge patch whose result the caller does not read: resolves once it is applied,
   * without decoding the object the server sends back (a pod is kilobytes of JSON).
   */
  async mergePatchUnread(ref: ObjectRef, patch: unknown, opts?: PatchOptions): Promise<void> {
    await this.sendPatch(ref, 'merge', patch, opts ?? {}, true);
  }

  /** RFC 6902 JSON patch; a `test` op makes it conditional. */
  jsonPatch<T extends KubeObject = KubeObject>(
    ref: ObjectRef,
    ops: JsonPatchOp[],
    opts?: PatchOptions,
  ): Promise<T> {
    return this.patch<T>(ref, 'json', ops, opts);
  }

  /** Strategic merge patch (built-in kinds only; the server rejects it for custom resources). */
  strategicMergePatch<T extends KubeObject = KubeObject>(
    ref: ObjectRef,
    patch: unknown,
    opts?: PatchOptions,
  ): Promise<T> {
    return this.patch<T>(ref, 'strategic', patch, opts);
  }

  /**
   * Server-side apply of `obj` (a partial intent: only the fields this manager owns),
   * field manager `troupe` unless given. `force` takes conflicting fields over.
   */
  apply<T extends KubeObject = KubeObject>(obj: KubeObject, opts: PatchOptions = {}): Promise<T> {
    const body = { ...obj, metadata: { ...obj.metadata } };
    delete body.metadata.managedFields;
    delete body.metadata.resourceVersion;
    return this.patch<T>(obj, 'apply', body, opts);
  }

  /** Server-side apply to the status subresource. */
  applyStatus<T extends KubeObject = KubeObject>(obj: KubeObject, opts: PatchOptions = {}): Promise<T> {
    return this.apply<T>(obj, { ...opts, subresource: 'status' });
  }

  /** Patch of the status subresource (merge by default). */
  patchStatus<T extends KubeObject = KubeObject>(
    ref: ObjectRef,
    patch: unknown,
    opts: PatchOptions & { type?: PatchType } = {},
  ): Promise<T> {
    return this.patch<T>(ref, opts.type ?? 'merge', patch, { ...opts, subresource: 'status' });
  }

  /**
   * Reads the latest object, lets `mutate` (sync or async) change it, and PUTs it (to
   * /status when `status` is set), retrying on conflict. `mutate` returning false skips the write;
   * resolves with the stored object, or undefined if it does not exist.
   */
  async modify<T extends KubeObject>(
    ref: ObjectRef,
    mutate: (obj: T) => unknown,
    opts: ConflictRetryOptions & { status?: boolean } = {},
  ): Promise<T | undefined> {
    const name = nameOf(ref);
    return retryOnConflict(async () => {
      const current = await this.tryGet<T>(ref, name, ref.metadata.namespace, { signal: opts.signal });
      if (!current) return undefined;
      if ((await mutate(current)) === false) return current;
      return opts.status ? this.updateStatus(current) : this.update(current);
    }, opts);
  }

  /** `modify` on the status subresource. */
  updateStatusWithRetry<T extends KubeObject>(
    ref: ObjectRef,
    mutate: (obj: T) => unknown,
    opts: ConflictRetryOptions = {},
  ): Promise<T | undefined> {
    return this.modify(ref, mutate, { ...opts, status: true });
  }

  /**
   * Adds a finalizer unless present. The patch carries the resourceVersion it was based
   * on, so a concurrent change of the list fails with 409 and is retried on fresh data.
   */
  async addFinalizer<T extends KubeObject>(
    obj: T,
    finalizer: string,
    opts: ConflictRetryOptions = {},
  ): Promise<T> {
    return this.changeFinalizers(obj, opts, (list) =>
      list.includes(finalizer) ? undefined : [...list, finalizer],
    );
  }

  /** Removes a finalizer if present; resolves with the object (or the input if it is gone). */
  async removeFinalizer<T extends KubeObject>(
    obj: T,
    finalizer: string,
    opts: ConflictRetryOptions = {},
  ): Promise<T> {
    return this.changeFinalizers(obj, opts, (list) =>
      list.includes(finalizer) ? list.filter((f) => f !== finalizer) : undefined,
    );
  }

  private async changeFinalizers<T extends KubeObject>(
    obj: T,
    opts: ConflictRetryOptions,
    change: (list: string[]) => string[] | undefined,
  ): Promise<T> {
    let current: T | undefined = obj;
    return retryOnConflict(async () => {
      if (!current) current = await this.tryGet<T>(obj, nameOf(obj), obj.metadata.namespace, opts);
      if (!current) return obj;
      const next = change(current.metadata.finalizers ?? []);
      if (!next) return current;
      const base = current;
      current = undefined; // a conflict re-reads
      try {
        return await this.mergePatch<T>(
          base,
          { metadata: { finalizers: next, resourceVersion: base.metadata.resourceVersion } },
          { signal: opts.signal },
        );
      } catch (err) {
        if (isNotFound(err)) return base;
        throw err;
      }
    }, opts);
  }

  private async write<T>(method: HttpMethod, path: string, obj: KubeObject, opts: WriteOptions): Promise<T> {
    this.fence?.();
    return this.rest.request<T>({
      method,
      path,
      query: { fieldManager: opts.fieldManager ?? FIELD_MANAGER, dryRun: opts.dryRun ? 'All' : undefined },
      body: obj,
      signal: opts.signal,
    });
  }

  private path(info: ResourceInfo, namespace: string | undefined, name?: string, sub?: string): string {
    if (info.namespaced && !namespace) {
      throw new Error(`${info.kind} is namespaced: a namespace is required`);
    }
    return RestMapper.path(info, info.namespaced ? namespace : undefined, name, sub);
  }
}

function nameOf(ref: ObjectRef): string {
  const name = ref.metadata.name;
  if (!name) throw new Error(`${ref.kind} has no metadata.name`);
  return name;
}
