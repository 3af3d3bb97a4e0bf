/**
 * The protobuf form of /openapi/v2 that kubectl asks for
 * (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`): gnostic's `openapi.v2.Document`
 * message (github.com/google/gnostic-models, openapiv2/OpenAPIv2.proto), which kube-openapi's
 * handler produces with `openapi_v2.ParseDocument(json)` then `proto.Marshal`.
 *
 * Why written here: no maintained npm package ships gnostic's messages for JavaScript. The wire
 * format is @bufbuild/protobuf's BinaryWriter; this file holds only the mapping ParseDocument
 * makes from Swagger JSON to gnostic's messages and their field numbers, for the subset of
 * Swagger that swaggerFromV3 writes (vendor extensions and free-form values travel as
 * `Any.yaml`; JSON text is YAML, and kube-openapi reads them with a YAML parser). As in any
 * proto3 encoder, fields holding their zero value are left out, except inside a oneof.
 */
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { isObject } from '../../../lib/json.ts';
import type { JSONSchema } from './schemas.ts';
import type { SwaggerDocument, SwaggerOperation, SwaggerParameter, SwaggerPathItem } from './v2.ts';

export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

type W = BinaryWriter;

function str(w: W, field: number, v: unknown): void {
  if (typeof v === 'string' && v !== '') w.tag(field, WireType.LengthDelimited).string(v);
}

function strs(w: W, field: number, v: unknown): void {
  if (Array.isArray(v))
    for (const s of v) if (typeof s === 'string') w.tag(field, WireType.LengthDelimited).string(s);
}

function bool(w: W, field: number, v: unknown): void {
  if (v === true) w.tag(field, WireType.Varint).bool(true);
}

function double(w: W, field: number, v: unknown): void {
  if (typeof v === 'number' && v !== 0) w.tag(field, WireType.Bit64).double(v);
}

function int64(w: W, field: number, v: unknown): void {
  if (typeof v === 'number' && v !== 0) w.tag(field, WireType.Varint).int64(v);
}

/** A nested message: `body` writes its fields. */
function msg(w: W, field: number, body: (w: W) => void): void {
  w.tag(field, WireType.LengthDelimited).fork();
  body(w);
  w.join();
}

/** gnostic `Any`: a free-form value as YAML text (field 2). */
function any(w: W, field: number, v: unknown): void {
  msg(w, field, (m) => str(m, 2, JSON.stringify(v)));
}

/** gnostic `NamedAny` entries (field `field`) for every `x-` key. */
function vendorExtensions(w: W, field: number, obj: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(obj)) {
    if (!k.startsWith('x-')) continue;
    msg(w, field, (m) => {
      str(m, 1, k);
      any(m, 2, v);
    });
  }
}

/** gnostic `Schema`. */
function schema(w: W, s: JSONSchema): void {
  str(w, 1, s.$ref);
  str(w, 2, s.format);
  str(w, 3, s.title);
  str(w, 4, s.description);
  if (s.default !== undefined) any(w, 5, s.default);
  double(w, 6, s.multipleOf);
  double(w, 7, s.maximum);
  bool(w, 8, s.exclusiveMaximum);
  double(w, 9, s.minimum);
  bool(w, 10, s.exclusiveMinimum);
  int64(w, 11, s.maxLength);
  int64(w, 12, s.minLength);
  str(w, 13, s.pattern);
  int64(w, 14, s.maxItems);
  int64(w, 15, s.minItems);
  bool(w, 16, s.uniqueItems);
  int64(w, 17, s.maxProperties);
  int64(w, 18, s.minProperties);
  strs(w, 19, s.required);
  if (Array.isArray(s.enum)) for (const e of s.enum) any(w, 20, e);
  const ap = s.additionalProperties;
  if (typeof ap === 'boolean') msg(w, 21, (m) => m.tag(2, WireType.Varint).bool(ap));
  else if (isObject(ap)) msg(w, 21, (m) => msg(m, 1, (n) => schema(n, ap)));
  if (typeof s.type === 'string') msg(w, 22, (m) => str(m, 1, s.type));
  else if (Array.isArray(s.type)) msg(w, 22, (m) => strs(m, 1, s.type));
  const items = s.items;
  if (isObject(items)) msg(w, 23, (m) => msg(m, 1, (n) => schema(n, items)));
  else if (Array.isArray(items))
    msg(w, 23, (m) => {
      for (const i of items) msg(m, 1, (n) => schema(n, i as JSONSchema));
    });
  if (Array.isArray(s.allOf)) for (const a of s.allOf) msg(w, 24, (m) => schema(m, a as JSONSchema));
  const props = s.properties;
  if (isObject(props)) msg(w, 25, (m) => namedSchemas(m, 1, props as Record<string, JSONSchema>));
  str(w, 26, s.discriminator);
  bool(w, 27, s.readOnly);
  if (s.example !== undefined) any(w, 30, s.example);
  vendorExtensions(w, 31, s);
}

function namedSchemas(w: W, field: number, schemas: Record<string, JSONSchema>): void {
  for (const [name, s] of Object.entries(schemas)) {
    msg(w, field, (m) => {
      str(m, 1, name);
      msg(m, 2, (n) => schema(n, s));
    });
  }
}

/** gnostic `ParametersItem` → `Parameter` → body or non-body (query, path) parameter. */
function parameter(w: W, p: SwaggerParameter): void {
  msg(w, 1, (param) => {
    if (p.in === 'body') {
      msg(param, 1, (b) => {
        str(b, 1, p.description);
        str(b, 2, p.name);
        str(b, 3, p.in);
        bool(b, 4, p.required);
        if (isObject(p.schema)) msg(b, 5, (s) => schema(s, p.schema as JSONSchema));
        vendorExtensions(b, 6, p);
      });
      return;
    }
    // QueryParameterSubSchema (3) and PathParameterSubSchema (4) share their first fields;
    // from `type` on, the query one is one number higher (it has allow_empty_value at 5).
    const query = p.in !== 'path';
    const o = query ? 1 : 0;
    msg(param, 2, (nb) =>
      msg(nb, query ? 3 : 4, (q) => {
        bool(q, 1, p.required);
        str(q, 2, p.in);
        str(q, 3, p.description);
        str(q, 4, p.name);
        str(q, 5 + o, p.type);
        str(q, 6 + o, p.format);
        bool(q, 19 + o, p.uniqueItems);
        vendorExtensions(q, 22 + o, p);
      }),
    );
  });
}

function operation(w: W, op: SwaggerOperation): void {
  strs(w, 1, op.tags);
  str(w, 3, op.description);
  str(w, 5, op.operationId);
  strs(w, 6, op.produces);
  strs(w, 7, op.consumes);
  for (const p of op.parameters ?? []) msg(w, 8, (m) => parameter(m, p));
  msg(w, 9, (responses) => {
    for (const [code, r] of Object.entries(op.responses)) {
      msg(responses, 1, (named) => {
        str(named, 1, code);
        msg(named, 2, (value) =>
          msg(value, 1, (resp) => {
            str(resp, 1, r.description);
            if (r.schema) msg(resp, 2, (item) => msg(item, 1, (s) => schema(s, r.schema!)));
          }),
        );
      });
    }
  });
  strs(w, 10, op.schemes);
  vendorExtensions(w, 13, op as unknown as Record<string, unknown>);
}

const PATH_ITEM_FIELDS: Array<[keyof SwaggerPathItem, number]> = [
  ['get', 2],
  ['put', 3],
  ['post', 4],
  ['delete', 5],
  ['patch', 8],
];

function pathItem(w: W, item: SwaggerPathItem): void {
  for (const [method, field] of PATH_ITEM_FIELDS) {
    const op = item[method] as SwaggerOperation | undefined;
    if (op) msg(w, field, (m) => operation(m, op));
  }
  for (const p of item.parameters ?? []) msg(w, 9, (m) => parameter(m, p));
}

/** The gnostic `openapi.v2.Document` encoding of a Swagger document. */
export function swaggerToProtobuf(doc: SwaggerDocument): Uint8Array {
  const w = new BinaryWriter();
  str(w, 1, doc.swagger);
  msg(w, 2, (info) => {
    str(info, 1, doc.info.title);
    str(info, 2, doc.info.version);
  });
  msg(w, 8, (paths) => {
    for (const [name, item] of Object.entries(doc.paths)) {
      msg(paths, 2, (named) => {
        str(named, 1, name);
        msg(named, 2, (m) => pathItem(m, item));
      });
    }
  });
  msg(w, 9, (defs) => namedSchemas(defs, 1, doc.definitions));
  for (const requirement of doc.security) {
    msg(w, 12, (req) => {
      for (const [name, scopes] of Object.entries(requirement)) {
        msg(req, 1, (named) => {
          str(named, 1, name);
          msg(named, 2, (arr) => strs(arr, 1, scopes));
        });
      }
    });
  }
  msg(w, 13, (defs) => {
    for (const [name, d] of Object.entries(doc.securityDefinitions)) {
      msg(defs, 1, (named) => {
        str(named, 1, name);
        // SecurityDefinitionsItem.api_key_security (2): ApiKeySecurity type, name, in, description.
        msg(named, 2, (item) =>
          msg(item, 2, (k) => {
            str(k, 1, d.type);
            str(k, 2, d.name);
            str(k, 3, d.in);
            str(k, 4, d.description);
          }),
        );
      });
    }
  });
  return w.finish();
}
