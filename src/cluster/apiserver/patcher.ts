/**
 * The server's Patcher, the bridge between the API's read-modify-write path and the patch
 * engines in patch/: decodes PATCH bodies by content type, produces the desired object, and
 * keeps metadata.managedFields (server-side apply and Update tracking).
 */
import { parse as parseYaml } from 'yaml';
import type { WriteOptions } from './api.ts';
import { ApiError, errors, type StatusReason } from './errors.ts';
import { invalid } from './field-errors.ts';
import { checkNestingDepth } from './http/body.ts';
import { crdSchemaKey } from './openapi/index.ts';
import {
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  builtinListSemantics,
  checkPatchContentType,
  type ListSemanticsLookup,
  listSemanticsFromSchema,
  PatchError,
  serverSideApply,
  supportsStrategicMerge,
  trackUpdate,
} from './patch/index.ts';
import type { SchemaService } from './schemas.ts';
import { groupVersion, type KubeObject, type ResourceType } from './types.ts';

export interface PatchRequest {
  contentType: string;
  body: string;
  force?: boolean;
}

export interface Patcher {
  /**
   * Produces the desired object from the current one, which is the caller's own copy and may
   * be changed in place. Throws ApiError on bad patches.
   */
  apply(rt: ResourceType, current: KubeObject, req: PatchRequest, opts: WriteOptions): KubeObject;
  /** Server-side apply of a missing object creates it: the applied config becomes the object. */
  applyToNew(
    rt: ResourceType,
    namespace: string,
    name: string,
    req: PatchRequest,
    opts: WriteOptions,
  ): KubeObject;
  /** Records field ownership of a non-apply create. */
  trackCreate(rt: ResourceType, obj: KubeObject, opts: WriteOptions): void;
  /** Records field ownership of a non-apply update (apply records its own in `apply`). */
  trackUpdate(rt: ResourceType, next: KubeObject, old: KubeObject, opts: WriteOptions): void;
}

export class DefaultPatcher implements Patcher {
  private readonly schemas: SchemaService;
  private readonly semanticsCache = new WeakMap<object, ListSemanticsLookup>();
  /** managedFields' times. */
  private readonly now: () => Date;

  constructor(schemas: SchemaService, now: () => Date = () => new Date()) {
    this.schemas = schemas;
    this.now = now;
  }

  apply(rt: ResourceType, current: KubeObject, req: PatchRequest, opts: WriteOptions): KubeObject {
    const gvk = { group: rt.group, version: rt.version, kind: rt.kind };
    const patched = translatePatchError(() => {
      const type = checkPatchContentType(req.contentType, gvk);
      switch (type) {
        case 'application/json-patch+json':
          return applyJsonPatch(current, decodeJson(req.body), opts.fieldValidation !== 'Ignore');
        case 'application/merge-patch+json':
          return applyMergePatch(current, decodeJson(req.body));
        case 'application/strategic-merge-patch+json':
          // `current` is this attempt's own decoded copy, the body freshly decoded: merge in place.
          return applyStrategicMergePatch(current, decodeJson(req.body), gvk, true);
        case 'application/apply-patch+yaml':
          return this.serverSideApply(rt, current, req, opts);
        default:
          throw errors.unsupportedMediaType(type);
      }
    });
    checkPatchedKind(rt, patched);
    return patched;
  }

  applyToNew(
    rt: ResourceType,
    namespace: string,
    name: string,
    req: PatchRequest,
    opts: WriteOptions,
  ): KubeObject {
    return translatePatchError(() => {
      checkPatchContentType(req.contentType, { group: rt.group, version: rt.version, kind: rt.kind });
      const obj = this.serverSideApply(rt, undefined, req, opts);
      obj.metadata.name = name;
      if (rt.namespaced) obj.metadata.namespace = namespace;
      return obj;
    });
  }

  trackCreate(rt: ResourceType, obj: KubeObject, opts: WriteOptions): void {
    this.track(rt, obj, undefined, opts);
  }

  trackUpdate(rt: ResourceType, next: KubeObject, old: KubeObject, opts: WriteOptions): void {
    this.track(rt, next, old, opts);
  }

  private track(rt: ResourceType, next: KubeObject, old: KubeObject | undefined, opts: WriteOptions): void {
    // An apply recorded its own ownership; tracking it again would add an Update entry.
    if (opts.applying) return;
    const tracked = trackUpdate({
      old,
      updated: next,
      manager: opts.fieldManager ?? defaultManager(opts),
      apiVersion: groupVersion(rt),
      subresource: opts.subresource || undefined,
      now: this.now(),
      listSemantics: this.listSemantics(rt),
      ignoredFields: this.ignoredFields(rt, opts),
    });
    if (tracked.metadata.managedFields) next.metadata.managedFields = tracked.metadata.managedFields;
    else delete next.metadata.managedFields;
  }

  private serverSideApply(
    rt: ResourceType,
    live: KubeObject | undefined,
    req: PatchRequest,
    opts: WriteOptions,
  ): KubeObject {
    const applied = decodeApplied(req.body);
    const gv = groupVersion(rt);
    if (applied.apiVersion !== gv || applied.kind !== rt.kind) {
      throw errors.badRequest(
        `the apiVersion and kind of the applied configuration (${String(applied.apiVersion)}, ${String(applied.kind)}) must be ${gv}, ${rt.kind}`,
      );
    }
    const meta = (applied.metadata ?? {}) as Record<string, unknown>;
    if (live && meta.name !== undefined && meta.name !== live.metadata.name) {
      throw errors.badRequest(
        `the name of the object (${String(meta.name)}) does not match the name on the URL (${live.metadata.name})`,
      );
    }
    opts.applying = true;
    const result = serverSideApply({
      live,
      applied,
      manager: opts.fieldManager!,
      force: req.force ?? false,
      apiVersion: gv,
      subresource: opts.subresource || undefined,
      now: this.now(),
      listSemantics: this.listSemantics(rt),
      ignoredFields: this.ignoredFields(rt, opts),
    });
    if (!result.ok) {
      throw new ApiError(409, 'Conflict', result.message, { causes: result.conflicts });
    }
    return result.object;
  }

  private ignoredFields(rt: ResourceType, opts: WriteOptions): string[][] | undefined {
    return (opts.subresource ?? '') === '' && rt.subresources.includes('status') ? [['status']] : undefined;
  }

  private listSemantics(rt: ResourceType): ListSemanticsLookup {
    const gvk = { group: rt.group, version: rt.version, kind: rt.kind };
    if (supportsStrategicMerge(gvk)) return builtinListSemantics(gvk);
    const schema = this.schemas.crdSchemas().get(crdSchemaKey(rt.group, rt.version, rt.kind));
    if (!schema) return builtinListSemantics(gvk);
    let cached = this.semanticsCache.get(schema);
    if (!cached) {
      cached = listSemanticsFromSchema(schema);
      this.semanticsCache.set(schema, cached);
    }
    return cached;
  }
}

/**
 * A patch may not turn an object into another kind or version, whatever the patch type.
 * kube-apiserver decodes the patched JSON into the resource's Go type, and a different
 * kind/apiVersion fails that decoding (`handlers/patch.go` jsonPatcher): 422 on the `patch`
 * field with the patched object as the bad value and the scheme's conversion error.
 */
function checkPatchedKind(rt: ResourceType, patched: KubeObject): void {
  const gv = groupVersion(rt);
  if (patched.kind === rt.kind && patched.apiVersion === gv) return;
  const [group, version] = String(patched.apiVersion ?? '').includes('/')
    ? String(patched.apiVersion).split('/', 2)
    : ['', String(patched.apiVersion ?? '')];
  const why =
    group === rt.group && version === rt.version
      ? `converting (${version}.${String(patched.kind)}) to (${rt.group || 'core'}.${rt.kind}): unknown conversion`
      : `no kind "${String(patched.kind)}" is registered for version "${String(patched.apiVersion ?? '')}"`;
  throw errors.invalid('', '', '', [invalid('patch', JSON.stringify(patched), why)]);
}

/** The manager name the real server derives from the User-Agent when none is given. */
function defaultManager(opts: WriteOptions): string {
  const ua = opts.userAgent ?? '';
  return ua.split('/')[0] || 'unknown';
}

function decodeJson(body: string): unknown {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch (err) {
    throw errors.badRequest(`error decoding patch: ${err instanceof Error ? err.message : String(err)}`);
  }
  checkNestingDepth(v, body.length);
  return v;
}

function decodeApplied(body: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = parseYaml(body, { maxAliasCount: 100 });
  } catch (err) {
    throw errors.badRequest(
      `error decoding YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
    );
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw errors.badRequest('the applied configuration must be an object');
  checkNestingDepth(v, body.length);
  return v as Record<string, unknown>;
}

/** Engine errors carry their HTTP status; the HTTP layer speaks ApiError. */
export function translatePatchError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof PatchError) {
      const reason = (err.reason || 'InternalError') as StatusReason;
      throw new ApiError(
        err.status,
        reason,
        err.message,
        err.causes.length ? { causes: err.causes } : undefined,
      );
    }
    throw err;
  }
}
