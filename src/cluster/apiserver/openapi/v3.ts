/**
 * The /openapi/v3 documents: the discovery document listing one URL per group-version, and the
 * per-group-version documents kubectl reads for `apply` (does PATCH take `fieldValidation`?),
 * for the strategic-merge-patch decision, and for `explain`.
 *
 * Structure follows kube-openapi's builder3: one path item per URL with the path and `pretty`
 * parameters at path level, operation parameters inline, `x-kubernetes-action` and
 * `x-kubernetes-group-version-kind` on every operation, component schemas under
 * components.schemas with `x-kubernetes-group-version-kind` on top-level kinds.
 */

import { createHash } from 'node:crypto';
import { compareStrings } from '../../../lib/compare.ts';
import { groupVersion, type ResourceType } from '../types.ts';
import {
  CRD_META_REFS,
  type CrdSchemas,
  crdKindSchema,
  crdListSchema,
  crdSchemaKey,
  crdSchemaName,
} from './crd-schema.ts';
import { addBuiltinClosure, builtinSchemaName, type JSONSchema, META_V1, schemaRef } from './schemas.ts';

export interface OpenAPIV3Parameter {
  name: string;
  in: 'path' | 'query';
  description: string;
  required?: boolean;
  schema: JSONSchema;
}

export interface OpenAPIV3Operation {
  description: string;
  operationId: string;
  tags: string[];
  parameters?: OpenAPIV3Parameter[];
  requestBody?: { content: Record<string, { schema: JSONSchema }>; required: boolean };
  responses: Record<string, { description: string; content?: Record<string, { schema: JSONSchema }> }>;
  'x-kubernetes-action': string;
  'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string };
}

export type HttpMethod = 'get' | 'put' | 'post' | 'patch' | 'delete';

export type OpenAPIV3PathItem = { parameters?: OpenAPIV3Parameter[] } & Partial<
  Record<HttpMethod, OpenAPIV3Operation>
>;

export interface OpenAPIV3Document {
  openapi: '3.0.0';
  info: { title: string; version: string };
  paths: Record<string, OpenAPIV3PathItem>;
  components: { schemas: Record<string, JSONSchema> };
}

/** The /openapi/v3 discovery document. */
export interface OpenAPIV3Discovery {
  paths: Record<string, { serverRelativeURL: string }>;
}

// --- parameters ------------------------------------------------------------------------------

function query(
  name: string,
  type: 'string' | 'boolean' | 'integer',
  description: string,
): OpenAPIV3Parameter {
  return { name, in: 'query', description, schema: { type, uniqueItems: true } };
}

const P = {
  pretty: query('pretty', 'string', "If 'true', the output is pretty printed."),
  dryRun: query(
    'dryRun',
    'string',
    'When set to All, the request is validated and processed but nothing is persisted.',
  ),
  fieldManager: query(
    'fieldManager',
    'string',
    'Name of the actor making the change, recorded in managedFields.',
  ),
  fieldValidation: query(
    'fieldValidation',
    'string',
    'How the server treats unknown or duplicate fields in the request body: Ignore, Warn (answer with a warning per field) or Strict (reject the request).',
  ),
  force: query('force', 'boolean', 'Apply requests only: take ownership of fields that other managers own.'),
  gracePeriodSeconds: query('gracePeriodSeconds', 'integer', 'Seconds to wait before the object is deleted.'),
  orphanDependents: query('orphanDependents', 'boolean', 'Deprecated: use propagationPolicy.'),
  propagationPolicy: query(
    'propagationPolicy',
    'string',
    'Garbage collection of dependents: Orphan, Background or Foreground.',
  ),
  labelSelector: query('labelSelector', 'string', 'Only return objects whose labels match this selector.'),
  fieldSelector: query('fieldSelector', 'string', 'Only return objects whose fields match this selector.'),
  resourceVersion: query(
    'resourceVersion',
    'string',
    'Constrains which resource version the request is served from.',
  ),
  resourceVersionMatch: query(
    'resourceVersionMatch',
    'string',
    'How resourceVersion applies to a list: Exact or NotOlderThan.',
  ),
  limit: query(
    'limit',
    'integer',
    'Maximum number of items to return; continue with the returned continue token.',
  ),
  continue: query('continue', 'string', 'Token from a previous list response to fetch the next chunk.'),
  watch: query('watch', 'boolean', 'Watch for changes instead of listing.'),
  allowWatchBookmarks: query('allowWatchBookmarks', 'boolean', 'Ask for BOOKMARK watch events.'),
  sendInitialEvents: query(
    'sendInitialEvents',
    'boolean',
    'Start a watch with synthetic events for the current state.',
  ),
  timeoutSeconds: query('timeoutSeconds', 'integer', 'Time limit for the list or watch call.'),
};

const LIST_PARAMS = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const WRITE_PARAMS = [P.dryRun, P.fieldManager, P.fieldValidation];
const PATCH_PARAMS = [P.dryRun, P.fieldManager, P.fieldValidation, P.force];
const DELETE_PARAMS = [P.dryRun, P.gracePeriodSeconds, P.orphanDependents, P.propagationPolicy];
const DELETE_COLLECTION_PARAMS = [...DELETE_PARAMS, ...LIST_PARAMS].sort((a, b) =>
  a.name < b.name ? -1 : 1,
);

function pathParam(name: 'name' | 'namespace', kind: string): OpenAPIV3Parameter {
  return {
    name,
    in: 'path',
    description:
      name === 'name' ? `name of the ${kind}` : 'object name and auth scope, such as for teams and projects',
    required: true,
    schema: { type: 'string', uniqueItems: true },
  };
}

// --- naming ----------------------------------------------------------------------------------

function pascal(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** kube-apiserver's operation-id form of a group-version: `rbac.authorization.k8s.io/v1` -> `RbacAuthorizationV1`. */
function gvWord(group: string, version: string): string {
  const g = group === '' ? 'core' : group.replace(/\.k8s\.io$/, '');
  return g.split(/[.-]/).map(pascal).join('') + pascal(version);
}

function gvTag(group: string, version: string): string {
  const g = group === '' ? 'core' : group.replace(/\.k8s\.io$/, '');
  const words = g.split(/[.-]/);
  return `${words[0]}${words.slice(1).map(pascal).join('')}_${version}`;
}

/** `v1` or `apps/v1`; also accepts the /openapi/v3 path forms `api/v1` and `apis/apps/v1`. */
function normalizeGV(gv: string): string {
  if (gv.startsWith('api/')) return gv.slice(4);
  if (gv.startsWith('apis/')) return gv.slice(5);
  return gv;
}

/** The /openapi/v3 path key of a group-version: `v1` -> `api/v1`, `apps/v1` -> `apis/apps/v1`. */
export function openapiV3PathKey(gv: string): string {
  const n = normalizeGV(gv);
  return n.includes('/') ? `apis/${n}` : `api/${n}`;
}

// --- document --------------------------------------------------------------------------------

const JSON_ONLY = ['application/json'];
const LIST_CONTENT = ['application/json', 'application/json;stream=watch'];
/**
 * Patch bodies accepted for every kind. Deliberately without
 * `application/strategic-merge-patch+json`: kubectl apply (1.32) computes its strategic merge
 * patch from the v3 schema of a kind whose PATCH lists that type, reading
 * `x-kubernetes-patch-merge-key`/`-strategy`, which our generated schemas do not carry. Without
 * it kubectl asks /openapi/v2, whose PATCH `consumes` mirror these (v2.ts), and then falls back
 * to the merge keys compiled into it, which are exactly the upstream ones. Custom resources never accept strategic merge patch anyway.
 */
const PATCH_CONTENT = [
  'application/apply-patch+yaml',
  'application/json-patch+json',
  'application/merge-patch+json',
];

function content(types: string[], schema: JSONSchema): Record<string, { schema: JSONSchema }> {
  return Object.fromEntries(types.map((t) => [t, { schema }]));
}

function ok(types: string[], schema: JSONSchema, codes: number[] = [200]): OpenAPIV3Operation['responses'] {
  const descriptions: Record<number, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted' };
  const out: OpenAPIV3Operation['responses'] = {};
  for (const code of codes)
    out[String(code)] = { description: descriptions[code]!, content: content(types, schema) };
  out['401'] = { description: 'Unauthorized' };
  return out;
}

interface KindSchemas {
  kind: string;
  kindRef: JSONSchema;
  listRef: JSONSchema;
}

interface Builder {
  paths: Record<string, OpenAPIV3PathItem>;
  schemas: Record<string, JSONSchema>;
  builtinNames: Set<string>;
}

const GVK_SCALE = { group: 'autoscaling', version: 'v1', kind: 'Scale' };
const GVK_BINDING = { group: '', version: 'v1', kind: 'Binding' };
const GVK_EVICTION = { group: 'policy', version: 'v1', kind: 'Eviction' };

/** Registers the kind's component schemas (built-in, from its CRD, or a permissive stand-in). */
function kindSchemas(b: Builder, rt: ResourceType, crdSchemas: CrdSchemas): KindSchemas {
  const crd = crdSchemas.get(crdSchemaKey(rt.group, rt.version, rt.kind));
  const builtin = crd ? undefined : builtinSchemaName(rt);
  if (builtin) {
    const list = builtinSchemaName({ group: rt.group, version: rt.version, kind: rt.listKind });
    b.builtinNames.add(builtin);
    if (list) b.builtinNames.add(list);
    return { kind: rt.kind, kindRef: schemaRef(builtin), listRef: schemaRef(list ?? `${META_V1}Status`) };
  }
  // A kind served without a known schema (a CRD without one, or a built-in we ship none for)
  // is published the way a schemaless CRD is: it accepts any fields.
  const name = crdSchemaName(rt.group, rt.version, rt.kind);
  const listName = crdSchemaName(rt.group, rt.version, rt.listKind);
  b.schemas[name] = crdKindSchema(rt.group, rt.version, rt.kind, crd);
  b.schemas[listName] = crdListSchema(rt.group, rt.version, rt.kind, rt.listKind);
  for (const ref of CRD_META_REFS) b.builtinNames.add(ref);
  return { kind: rt.kind, kindRef: schemaRef(name), listRef: schemaRef(listName) };
}

function builtinRef(b: Builder, gvk: { group: string; version: string; kind: string }): JSONSchema {
  const name = builtinSchemaName(gvk);
  if (!name) throw new Error(`openapi: no built-in schema for ${gvk.group}/${gvk.version} ${gvk.kind}`);
  b.builtinNames.add(name);
  return schemaRef(name);
}

function addOperation(
  b: Builder,
  path: string,
  pathParams: OpenAPIV3Parameter[],
  method: HttpMethod,
  op: OpenAPIV3Operation,
): void {
  let item = b.paths[path];
  if (!item) {
    item = { parameters: [...pathParams, P.pretty] };
    b.paths[path] = item;
  }
  item[method] = op;
}

function addResource(b: Builder, rt: ResourceType, crdSchemas: CrdSchemas): void {
  const { kind, kindRef, listRef } = kindSchemas(b, rt, crdSchemas);
  const gvk = { group: rt.group, kind: rt.kind, version: rt.version };
  const prefix = rt.group === '' ? `/api/${rt.version}` : `/apis/${rt.group}/${rt.version}`;
  const gvw = gvWord(rt.group, rt.version);
  const tags = [gvTag(rt.group, rt.version)];
  const ns = rt.namespaced ? 'Namespaced' : '';
  const collection = rt.namespaced
    ? `${prefix}/namespaces/{namespace}/${rt.resource}`
    : `${prefix}/${rt.resource}`;
  const item = `${collection}/{name}`;
  const collectionParams = rt.namespaced ? [pathParam('namespace', kind)] : [];
  const itemParams = [pathParam('name', kind), ...collectionParams];
  const verbs = new Set(rt.verbs);
  const patchContent = (schema: JSONSchema) => ({ content: content(PATCH_CONTENT, schema), required: true });
  const body = (schema: JSONSchema) => ({ content: content(JSON_ONLY, schema), required: true });
  const status = schemaRef(`${META_V1}Status`);
  const deleteBody = { content: content(JSON_ONLY, schemaRef(`${META_V1}DeleteOptions`)), required: false };
  b.builtinNames.add(`${META_V1}Status`).add(`${META_V1}DeleteOptions`).add(`${META_V1}Patch`);
  const patchRef = schemaRef(`${META_V1}Patch`);

  if (verbs.has('list')) {
    addOperation(b, collection, collectionParams, 'get', {
      description: `list or watch objects of kind ${kind}`,
      operationId: `list${gvw}${ns}${kind}`,
      tags,
      parameters: LIST_PARAMS,
      responses: ok(LIST_CONTENT, listRef),
      'x-kubernetes-action': 'list',
      'x-kubernetes-group-version-kind': gvk,
    });
    if (rt.namespaced) {
      addOperation(b, `${prefix}/${rt.resource}`, [], 'get', {
        description: `list or watch objects of kind ${kind}`,
        operationId: `list${gvw}${kind}ForAllNamespaces`,
        tags,
        parameters: LIST_PARAMS,
        responses: ok(LIST_CONTENT, listRef),
        'x-kubernetes-action': 'list',
        'x-kubernetes-group-version-kind': gvk,
      });
    }
  }
  if (verbs.has('create')) {
    addOperation(b, collection, collectionParams, 'post', {
      description: `create ${article(kind)} ${kind}`,
      operationId: `create${gvw}${ns}${kind}`,
      tags,
      parameters: WRITE_PARAMS,
      requestBody: body(kindRef),
      responses: ok(JSON_ONLY, kindRef, [200, 201, 202]),
      'x-kubernetes-action': 'post',
      'x-kubernetes-group-version-kind': gvk,
    });
  }
  if (verbs.has('deletecollection')) {
    addOperation(b, collection, collectionParams, 'delete', {
      description: `delete collection of ${kind}`,
      operationId: `delete${gvw}Collection${ns}${kind}`,
      tags,
      parameters: DELETE_COLLECTION_PARAMS,
      requestBody: deleteBody,
      responses: ok(JSON_ONLY, status),
      'x-kubernetes-action': 'deletecollection',
      'x-kubernetes-group-version-kind': gvk,
    });
  }
  if (verbs.has('get')) {
    addOperation(b, item, itemParams, 'get', {
      description: `read the specified ${kind}`,
      operationId: `read${gvw}${ns}${kind}`,
      tags,
      responses: ok(JSON_ONLY, kindRef),
      'x-kubernetes-action': 'get',
      'x-kubernetes-group-version-kind': gvk,
    });
  }
  if (verbs.has('update')) {
    addOperation(b, item, itemParams, 'put', {
      description: `replace the specified ${kind}`,
      operationId: `replace${gvw}${ns}${kind}`,
      tags,
      parameters: WRITE_PARAMS,
      requestBody: body(kindRef),
      responses: ok(JSON_ONLY, kindRef, [200, 201]),
      'x-kubernetes-action': 'put',
      'x-kubernetes-group-version-kind': gvk,
    });
  }
  if (verbs.has('patch')) {
    addOperation(b, item, itemParams, 'patch', {
      description: `partially update the specified ${kind}`,
      operationId: `patch${gvw}${ns}${kind}`,
      tags,
      parameters: PATCH_PARAMS,
      requestBody: patchContent(patchRef),
      responses: ok(JSON_ONLY, kindRef, [200, 201]),
      'x-kubernetes-action': 'patch',
      'x-kubernetes-group-version-kind': gvk,
    });
  }
  if (verbs.has('delete')) {
    addOperation(b, item, itemParams, 'delete', {
      description: `delete ${article(kind)} ${kind}`,
      operationId: `delete${gvw}${ns}${kind}`,
      tags,
      parameters: DELETE_PARAMS,
      requestBody: deleteBody,
      responses: ok(JSON_ONLY, status, [200, 202]),
      'x-kubernetes-action': 'delete',
      'x-kubernetes-group-version-kind': gvk,
    });
  }

  // Subresources that read and write (a view of) the object.
  const views: Array<[sub: string, ref: JSONSchema, subGVK: typeof gvk]> = [];
  if (rt.subresources.includes('status')) views.push(['status', kindRef, gvk]);
  if (rt.subresources.includes('scale')) views.push(['scale', builtinRef(b, GVK_SCALE), GVK_SCALE]);
  for (const [sub, ref, subGVK] of views) {
    const path = `${item}/${sub}`;
    const word = `${ns}${kind}${pascal(sub)}`;
    const what = `${sub} of the specified ${kind}`;
    addOperation(b, path, itemParams, 'get', {
      description: `read ${what}`,
      operationId: `read${gvw}${word}`,
      tags,
      responses: ok(JSON_ONLY, ref),
      'x-kubernetes-action': 'get',
      'x-kubernetes-group-version-kind': subGVK,
    });
    addOperation(b, path, itemParams, 'put', {
      description: `replace ${what}`,
      operationId: `replace${gvw}${word}`,
      tags,
      parameters: WRITE_PARAMS,
      requestBody: body(ref),
      responses: ok(JSON_ONLY, ref, [200, 201]),
      'x-kubernetes-action': 'put',
      'x-kubernetes-group-version-kind': subGVK,
    });
    addOperation(b, path, itemParams, 'patch', {
      description: `partially update ${what}`,
      operationId: `patch${gvw}${word}`,
      tags,
      parameters: PATCH_PARAMS,
      requestBody: patchContent(patchRef),
      responses: ok(JSON_ONLY, ref, [200, 201]),
      'x-kubernetes-action': 'patch',
      'x-kubernetes-group-version-kind': subGVK,
    });
  }
  // Create-only subresources (pods/binding, pods/eviction).
  const creates: Array<[sub: string, subGVK: typeof gvk]> = [];
  if (rt.subresources.includes('binding')) creates.push(['binding', GVK_BINDING]);
  if (rt.subresources.includes('eviction')) creates.push(['eviction', GVK_EVICTION]);
  for (const [sub, subGVK] of creates) {
    const ref = builtinRef(b, subGVK);
    addOperation(b, `${item}/${sub}`, itemParams, 'post', {
      description: `create ${sub} of ${article(kind)} ${kind}`,
      operationId: `create${gvw}${ns}${kind}${pascal(sub)}`,
      tags,
      parameters: WRITE_PARAMS,
      requestBody: body(ref),
      responses: ok(JSON_ONLY, ref, [200, 201, 202]),
      'x-kubernetes-action': 'post',
      'x-kubernetes-group-version-kind': subGVK,
    });
  }
}

function article(word: string): string {
  return /^[AEIOU]/.test(word) ? 'an' : 'a';
}

function sortedObject<T>(obj: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(obj).sort(([a], [b]) => compareStrings(a, b)));
}

export const NO_CRDS: CrdSchemas = new Map();

/**
 * The OpenAPI v3 document of one group-version (`v1`, `apps/v1`, or the path forms `api/v1`,
 * `apis/apps/v1`), or undefined if no resource is served in it. `resources` may contain other
 * group-versions; they are ignored. Component schemas are shared with the loaded data: treat
 * the result as read-only.
 */
export function openapiV3GroupVersion(
  gv: string,
  resources: readonly ResourceType[],
  crdSchemas: CrdSchemas = NO_CRDS,
): OpenAPIV3Document | undefined {
  const wanted = normalizeGV(gv);
  const served = resources.filter((rt) => groupVersion(rt) === wanted);
  const first = served[0];
  if (!first) return undefined;
  const b: Builder = {
    paths: {},
    schemas: {},
    builtinNames: new Set([`${META_V1}APIResourceList`]),
  };
  const prefix = first.group === '' ? `/api/${first.version}` : `/apis/${first.group}/${first.version}`;
  b.paths[`${prefix}/`] = {
    get: {
      description: 'get available resources',
      operationId: `get${gvWord(first.group, first.version)}APIResources`,
      tags: [gvTag(first.group, first.version)],
      responses: ok(JSON_ONLY, schemaRef(`${META_V1}APIResourceList`)),
      'x-kubernetes-action': 'get',
    },
  };
  for (const rt of [...served].sort((x, y) => (x.resource < y.resource ? -1 : 1))) {
    addResource(b, rt, crdSchemas);
  }
  addBuiltinClosure(b.builtinNames, b.schemas);
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'unversioned' },
    paths: sortedObject(b.paths),
    components: { schemas: sortedObject(b.schemas) },
  };
}

/** Everything that shapes a group-version's document (a ResourceType's strategy does not). */
function fingerprint(gv: string, resources: readonly ResourceType[], crdSchemas: CrdSchemas): string {
  const served = resources
    .filter((rt) => groupVersion(rt) === gv)
    .sort((x, y) => (x.resource < y.resource ? -1 : 1))
    .map((rt) => [
      rt.resource,
      rt.kind,
      rt.listKind,
      rt.namespaced,
      rt.verbs,
      rt.subresources,
      crdSchemas.get(crdSchemaKey(rt.group, rt.version, rt.kind)) ?? null,
    ]);
  return JSON.stringify([gv, served]);
}

const RENDER_CACHE_LIMIT = 64;
const renderCache = new Map<string, { json: string; hash: string }>();

/**
 * The serialized document of one group-version with its hash (SHA-512, upper-case hex, like
 * kube-apiserver), memoized on everything that shapes it so the discovery document and the
 * document endpoint agree and repeated requests cost a map lookup.
 */
export function renderOpenAPIV3GroupVersion(
  gv: string,
  resources: readonly ResourceType[],
  crdSchemas: CrdSchemas = NO_CRDS,
): { json: string; hash: string } | undefined {
  const wanted = normalizeGV(gv);
  const key = fingerprint(wanted, resources, crdSchemas);
  const cached = renderCache.get(key);
  if (cached) return cached;
  const doc = openapiV3GroupVersion(wanted, resources, crdSchemas);
  if (!doc) return undefined;
  const json = JSON.stringify(doc);
  const rendered = { json, hash: createHash('sha512').update(json).digest('hex').toUpperCase() };
  if (renderCache.size >= RENDER_CACHE_LIMIT) renderCache.delete(renderCache.keys().next().value!);
  renderCache.set(key, rendered);
  return rendered;
}

/**
 * The /openapi/v3 discovery document: `{"paths": {"api/v1": {"serverRelativeURL":
 * "/openapi/v3/api/v1?hash=..."}, "apis/apps/v1": ...}}`, one entry per served group-version.
 */
export function openapiV3Paths(
  resources: readonly ResourceType[],
  crdSchemas: CrdSchemas = NO_CRDS,
): OpenAPIV3Discovery {
  const gvs = [...new Set(resources.map((rt) => groupVersion(rt)))].sort();
  const paths: OpenAPIV3Discovery['paths'] = {};
  for (const gv of gvs) {
    const rendered = renderOpenAPIV3GroupVersion(gv, resources, crdSchemas);
    if (!rendered) continue;
    const key = openapiV3PathKey(gv);
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${rendered.hash}` };
  }
  return { paths };
}
