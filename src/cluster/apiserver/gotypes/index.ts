/**
 * The Go types of the built-in kinds at the API server's two boundaries: decoding (a write's
 * body must fit the kind's Go struct, or the write is refused with kube-apiserver's words) and
 * encoding (a stored object has every field its Go struct always encodes). Every served
 * built-in resource gets both by being registered: the type is found from its group, version
 * and kind (custom resources have no Go type and are left to their CRD schema).
 */
import { type ApiError, errors } from '../errors.ts';
import { goQuote, goV } from '../gofmt.ts';
import { isBuiltinGroup } from '../registry.ts';
import { groupVersion, type KubeObject, type ResourceType } from '../types.ts';
import { jsonDecodeError, unstructuredDecodeError } from './decode.ts';
import { applyMarkerDefaults } from './defaults.ts';
import { shapeAsGo } from './shape.ts';
import { type GoType, kindType } from './types.ts';

export { type GoType, kindType } from './types.ts';

const byResource = new WeakMap<ResourceType, GoType | null>();

/** The Go struct of a served built-in resource's kind, undefined for custom resources. */
export function goKindOf(rt: ResourceType): GoType | undefined {
  let t = byResource.get(rt);
  if (t === undefined) {
    t = isBuiltinGroup(rt.group) ? (kindType(groupVersion(rt), rt.kind) ?? null) : null;
    byResource.set(rt, t);
  }
  return t ?? undefined;
}

/**
 * Refuses a create or update body that does not decode into the kind's Go type: 400 with
 * transformDecodeError's words (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go),
 * `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal ...`.
 */
export function checkBodyDecodes(rt: ResourceType, obj: KubeObject): void {
  const t = goKindOf(rt);
  if (t) throwIfUndecodable(t, rt.kind, rt.version, obj);
}

/**
 * The same for the body of a subresource whose kind is not the resource's (autoscaling/v1
 * Scale, policy/v1 Eviction, v1 Binding).
 */
export function checkSubresourceBodyDecodes(apiVersion: string, kind: string, obj: unknown): void {
  const t = kindType(apiVersion, kind);
  if (t) throwIfUndecodable(t, kind, apiVersion.slice(apiVersion.indexOf('/') + 1), obj);
}

function throwIfUndecodable(t: GoType, kind: string, version: string, obj: unknown): void {
  const err = jsonDecodeError(t, obj);
  if (err !== undefined) {
    throw errors.badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${err}`);
  }
}

/**
 * Refuses a patch whose result does not decode into the kind's Go type, as the patch handler
 * (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go) does: 422 on the `patch`
 * field, showing the patched object for JSON and merge patches (decoded by the JSON
 * serializer) and the patch itself for strategic merge patches (converted from a map).
 * Server-side apply is checked against the schema by the apply engine itself.
 */
export function checkPatchedDecodes(
  rt: ResourceType,
  patched: KubeObject,
  contentType: string,
  body: string,
): void {
  const t = goKindOf(rt);
  if (t) throwIfPatchUndecodable(t, patched, contentType, body);
}

/** The same for a patch of a subresource whose kind is not the resource's (a Scale). */
export function checkPatchedSubresourceDecodes(
  apiVersion: string,
  kind: string,
  patched: unknown,
  contentType: string,
  body: string,
): void {
  const t = kindType(apiVersion, kind);
  if (t) throwIfPatchUndecodable(t, patched, contentType, body);
}

function throwIfPatchUndecodable(t: GoType, patched: unknown, contentType: string, body: string): void {
  if (contentType === 'application/strategic-merge-patch+json') {
    const err = unstructuredDecodeError(t, patched);
    if (err !== undefined) throw patchInvalid(goV(parseOr(body)), err);
    return;
  }
  if (contentType === 'application/json-patch+json' || contentType === 'application/merge-patch+json') {
    const err = jsonDecodeError(t, patched);
    if (err !== undefined) throw patchInvalid(JSON.stringify(patched), err);
  }
}

function parseOr(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

function patchInvalid(value: string, detail: string): ApiError {
  return errors.invalid('', '', '', [
    { reason: 'FieldValueInvalid', field: 'patch', message: `Invalid value: ${goQuote(value)}: ${detail}` },
  ]);
}

/** Objects already given their Go shape, so the storage boundary does not walk them twice. */
const shaped = new WeakSet<object>();

/**
 * Gives a built-in object the fields its Go struct always encodes (see shape.ts), in place.
 * Called where objects are stored and where a write compares the new object with the stored one.
 */
export function shapeForStorage(rt: ResourceType, obj: KubeObject): void {
  if (shaped.has(obj)) return;
  const t = goKindOf(rt);
  if (t) shapeAsGo(t, obj);
  shaped.add(obj);
}

/** Forgets that `obj` was shaped: it is about to be changed again. */
export function unshaped(obj: KubeObject): void {
  shaped.delete(obj);
}

/**
 * Defaulting of a built-in object as kube-apiserver's decoder does it: the kind's
 * SetDefaults_* functions (the strategy's `default` hook), then the `+default=` markers of its
 * Go types. The markers run once, on the object as decoded (`markers` false after admission:
 * what a webhook adds is checked by validation, and no marker applies to what a strategy adds).
 */
export function defaultAsGo(rt: ResourceType, obj: KubeObject, markers = true): void {
  rt.strategy.default?.(obj);
  if (!markers) return;
  const t = goKindOf(rt);
  if (t) applyMarkerDefaults(t, obj);
}
