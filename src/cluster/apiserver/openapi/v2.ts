/**
 * The /openapi/v2 (Swagger 2.0) document, built from the same per-group-version documents as
 * /openapi/v3 so the two never disagree. kube-apiserver builds both from one set of Go
 * definitions (kube-openapi's builder for v2, builder3 for v3); here v3 is the source and v2 is
 * its projection:
 * - `#/components/schemas/X` becomes `#/definitions/X`;
 * - a `$ref` that builder3 wrapped in a one-element `allOf` (to carry a description or
 *   default beside it) is unwrapped, as builder writes it;
 * - v3-only constructs go: `oneOf` (IntOrString and Quantity become `type: string`, as their
 *   OpenAPISchemaType says in v2), `anyOf`, `not`, `nullable` (what CRD schemas' v2 projection
 *   drops too);
 * - an operation's request body becomes the `body` parameter, its media types `consumes`,
 *   query and path parameters carry their type inline.
 *
 * kubectl reads v2 for client-side validation when the server does not take `fieldValidation`
 * for a kind (notably the items of a `kind: List` manifest), and for the patch type of
 * `apply` when v3 names none: PATCH `consumes` mirrors v3's request body, so both versions give
 * kubectl the same answer.
 */

import { createHash } from 'node:crypto';
import { compareStrings } from '../../../lib/compare.ts';
import { isObject } from '../../../lib/json.ts';
import { groupVersion, type ResourceType } from '../types.ts';
import type { CrdSchemas } from './crd-schema.ts';
import { type JSONSchema, SCHEMA_REF_PREFIX } from './schemas.ts';
import { swaggerToProtobuf } from './v2-protobuf.ts';
import {
  type HttpMethod,
  type OpenAPIV3Document,
  type OpenAPIV3Operation,
  renderOpenAPIV3GroupVersion,
} from './v3.ts';

const DEFINITIONS_PREFIX = '#/definitions/';
const METHODS: HttpMethod[] = ['get', 'put', 'post', 'patch', 'delete'];

export type SwaggerParameter = Record<string, unknown>;

export interface SwaggerOperation {
  consumes: string[];
  description: string;
  operationId: string;
  parameters?: SwaggerParameter[];
  produces: string[];
  responses: Record<string, { description: string; schema?: JSONSchema }>;
  schemes: string[];
  tags: string[];
  'x-kubernetes-action': string;
  'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string };
}

export type SwaggerPathItem = { parameters?: SwaggerParameter[] } & Partial<
  Record<HttpMethod, SwaggerOperation>
>;

export interface SwaggerDocument {
  swagger: '2.0';
  info: { title: string; version: string };
  paths: Record<string, SwaggerPathItem>;
  definitions: Record<string, JSONSchema>;
  securityDefinitions: Record<string, Record<string, string>>;
  security: Array<Record<string, string[]>>;
}

/** A v3 schema as Swagger 2.0 writes it (see the file comment for the rules). */
export function toV2Schema(schema: JSONSchema): JSONSchema {
  const out: JSONSchema = {};
  const allOf = schema.allOf as JSONSchema[] | undefined;
  const wrappedRef =
    allOf?.length === 1 && typeof allOf[0]?.$ref === 'string' && Object.keys(allOf[0]).length === 1;
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'nullable' || key === 'anyOf' || key === 'not') continue;
    if (key === 'oneOf') {
      if (schema.type === undefined) out.type = 'string';
      continue;
    }
    if (key === '$ref' && typeof value === 'string') {
      out.$ref = value.startsWith(SCHEMA_REF_PREFIX)
        ? DEFINITIONS_PREFIX + value.slice(SCHEMA_REF_PREFIX.length)
        : value;
    } else if (key === 'allOf' && wrappedRef) {
      out.$ref = toV2Schema(allOf[0]!).$ref;
    } else if ((key === 'properties' || key === 'definitions') && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toV2Schema(v as JSONSchema)]));
    } else if ((key === 'items' || key === 'additionalProperties') && isObject(value)) {
      out[key] = toV2Schema(value);
    } else if (key === 'allOf' && Array.isArray(value)) {
      out[key] = value.map((v) => toV2Schema(v as JSONSchema));
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** A v3 query or path parameter: its schema's type moves up beside name and `in`. */
function toV2Parameter(p: Record<string, unknown>): SwaggerParameter {
  const { schema, ...rest } = p as { schema?: JSONSchema };
  return { ...rest, ...(schema ? toV2Schema(schema) : {}) };
}

function toV2Operation(op: OpenAPIV3Operation): SwaggerOperation {
  const parameters: SwaggerParameter[] = [];
  let consumes = ['*/*'];
  if (op.requestBody) {
    const types = Object.keys(op.requestBody.content);
    const schema = op.requestBody.content[types[0]!]!.schema;
    parameters.push({
      in: 'body',
      name: 'body',
      required: op.requestBody.required,
      schema: toV2Schema(schema),
    });
    // Only PATCH names the body types that matter to a client (which patch formats exist).
    if (op['x-kubernetes-action'] === 'patch') consumes = types;
  }
  for (const p of op.parameters ?? [])
    parameters.push(toV2Parameter(p as unknown as Record<string, unknown>));
  const produces = new Set<string>();
  const responses: SwaggerOperation['responses'] = {};
  for (const [code, r] of Object.entries(op.responses)) {
    const media = Object.entries(r.content ?? {});
    for (const [t] of media) produces.add(t);
    responses[code] = media[0]
      ? { description: r.description, schema: toV2Schema(media[0][1].schema) }
      : { description: r.description };
  }
  const out: SwaggerOperation = {
    consumes,
    description: op.description,
    operationId: op.operationId,
    produces: [...produces],
    responses,
    schemes: ['https'],
    tags: op.tags,
    'x-kubernetes-action': op['x-kubernetes-action'],
  };
  if (parameters.length > 0) out.parameters = parameters;
  if (op['x-kubernetes-group-version-kind'])
    out['x-kubernetes-group-version-kind'] = op['x-kubernetes-group-version-kind'];
  return out;
}

/** Swagger 2.0 of the union of the given v3 group-version documents. */
export function swaggerFromV3(docs: readonly OpenAPIV3Document[]): SwaggerDocument {
  const paths: Record<string, SwaggerPathItem> = {};
  const definitions: Record<string, JSONSchema> = {};
  for (const doc of docs) {
    for (const [path, item] of Object.entries(doc.paths)) {
      const v2: SwaggerPathItem = {};
      for (const m of METHODS) {
        const op = item[m];
        if (op) v2[m] = toV2Operation(op);
      }
      if (item.parameters?.length) {
        v2.parameters = item.parameters.map((p) => toV2Parameter(p as unknown as Record<string, unknown>));
      }
      paths[path] = v2;
    }
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      definitions[name] ??= toV2Schema(schema);
    }
  }
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: 'unversioned' },
    paths: sorted(paths),
    definitions: sorted(definitions),
    // kube-apiserver advertises its bearer-token authentication the same way.
    securityDefinitions: {
      BearerToken: {
        description: 'Bearer Token authentication',
        in: 'header',
        name: 'authorization',
        type: 'apiKey',
      },
    },
    security: [{ BearerToken: [] }],
  };
}

function sorted<T>(obj: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(obj).sort(([a], [b]) => compareStrings(a, b)));
}

export interface RenderedSwagger {
  json: string;
  /** kube-openapi's ETag: SHA-512 of the JSON bytes, upper-case hex; the protobuf form shares it. */
  etag: string;
  /** When this content was first rendered (Last-Modified). */
  lastModified: Date;
  /** The gnostic protobuf encoding, computed on first use (kubectl asks for it, most others never). */
  protobuf(): Uint8Array;
}

let cache: { key: string; rendered: RenderedSwagger } | undefined;

/**
 * The rendered /openapi/v2 document of everything served, memoized on the v3 documents' hashes
 * (themselves memoized), so a request costs one v3 lookup per group-version when nothing changed.
 */
export function renderSwagger(resources: readonly ResourceType[], crdSchemas: CrdSchemas): RenderedSwagger {
  const gvs = [...new Set(resources.map((rt) => groupVersion(rt)))].sort();
  const rendered = gvs.flatMap((gv) => renderOpenAPIV3GroupVersion(gv, resources, crdSchemas) ?? []);
  const key = rendered.map((r) => r.hash).join(',');
  if (cache?.key === key) return cache.rendered;
  const doc = swaggerFromV3(rendered.map((r) => JSON.parse(r.json) as OpenAPIV3Document));
  const json = JSON.stringify(doc);
  const etag = createHash('sha512').update(json).digest('hex').toUpperCase();
  let protobuf: Uint8Array | undefined;
  cache = {
    key,
    rendered: {
      json,
      etag,
      // HTTP dates have whole seconds; keep the value comparable with If-Modified-Since.
      lastModified: new Date(Math.floor(Date.now() / 1000) * 1000),
      protobuf: () => {
        protobuf ??= swaggerToProtobuf(doc);
        return protobuf;
      },
    },
  };
  return cache.rendered;
}
