/**
 * Drives a strategy in the order the API server does (api.ts): default → server metadata →
 * prepareForCreate → validateCreate, and default → prepareForUpdate → generation →
 * validateUpdate, so tests see what a client would.
 */
import assert from 'node:assert/strict';
import { builtinResourceTypes } from '../../../../src/cluster/apiserver/builtin/index.ts';
import type {
  FieldError,
  KubeObject,
  RequestContext,
  ResourceType,
} from '../../../../src/cluster/apiserver/types.ts';

const types = builtinResourceTypes();

export function rtFor(resource: string, group = ''): ResourceType {
  const rt = types.find((t) => t.resource === resource && t.group === group);
  assert.ok(rt, `no resource type ${group}/${resource}`);
  return rt;
}

export function ctx(subresource = ''): RequestContext {
  return { subresource, dryRun: false, user: 'tester' };
}

let uidCounter = 0;

export interface Result {
  obj: KubeObject;
  errors: FieldError[];
}

export function create(rt: ResourceType, input: Record<string, unknown>, namespace = 'default'): Result {
  const obj = structuredClone(input) as KubeObject;
  obj.metadata ??= {};
  rt.strategy.default?.(obj);
  const m = obj.metadata;
  if (rt.namespaced) m.namespace = namespace;
  m.uid = `uid-${++uidCounter}`;
  m.creationTimestamp = '2025-01-01T00:00:00Z';
  if (rt.strategy.tracksGeneration) m.generation = 1;
  if (rt.subresources.includes('status') && !rt.strategy.prepareForCreate) delete obj.status;
  rt.strategy.prepareForCreate?.(obj, ctx());
  const errors = rt.strategy.validateCreate?.(obj, ctx()) ?? [];
  return { obj, errors };
}

/** Creates and insists the object is valid. */
export function created(rt: ResourceType, input: Record<string, unknown>, namespace = 'default'): KubeObject {
  const r = create(rt, input, namespace);
  assert.deepEqual(r.errors, [], `unexpected errors: ${JSON.stringify(r.errors, null, 1)}`);
  return r.obj;
}

function specJson(o: KubeObject): string {
  return JSON.stringify(o.spec ?? null);
}

export function update(
  rt: ResourceType,
  old: KubeObject,
  next: Record<string, unknown>,
  subresource = '',
): Result {
  let obj = structuredClone(next) as KubeObject;
  if (subresource === 'status') {
    obj = { ...structuredClone(old), status: obj.status } as KubeObject;
  } else if (subresource === '' && rt.subresources.includes('status')) {
    obj.status = structuredClone(old.status);
  }
  if (subresource === '') rt.strategy.default?.(obj);
  obj.metadata ??= {};
  obj.metadata.uid = old.metadata.uid;
  obj.metadata.creationTimestamp = old.metadata.creationTimestamp;
  if (old.metadata.generation !== undefined) obj.metadata.generation = old.metadata.generation;
  rt.strategy.prepareForUpdate?.(obj, old, ctx(subresource));
  if (rt.strategy.tracksGeneration && specJson(obj) !== specJson(old))
    obj.metadata.generation = (old.metadata.generation ?? 1) + 1;
  const errors = rt.strategy.validateUpdate?.(obj, old, ctx(subresource)) ?? [];
  return { obj, errors };
}

/** `field: message` lines, the way kubectl shows them. */
export function messages(errors: FieldError[]): string[] {
  return errors.map((e) => `${e.field}: ${e.message}`);
}

export function mutate<T>(obj: T, fn: (copy: T) => void): T {
  const copy = structuredClone(obj);
  fn(copy);
  return copy;
}
