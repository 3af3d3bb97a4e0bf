/**
 * Server-side field validation (`fieldValidation=Strict|Warn`): the fields of a request body that
 * the kind's schema does not declare. kube-apiserver finds them while decoding into Go structs
 * (built-in kinds) or while pruning against the structural schema (custom resources) and reports
 * `strict decoding error: unknown field "spec.containers[0].foo"` (Strict, 400) or one warning
 * `unknown field "..."` per field (Warn). Paths use the decoder's form: dots between fields,
 * `[i]` for list items, the key itself for map entries.
 */

import { isObject } from '../../../lib/json.ts';
import { crdKindSchema } from './crd-schema.ts';
import {
  builtinSchema,
  builtinSchemaName,
  type GroupVersionKind,
  type JSONSchema,
  refName,
} from './schemas.ts';

type Resolve = (name: string) => JSONSchema | undefined;

/**
 * Follows `$ref` and single-element `allOf` wrappers down to the schema that has the shape.
 * Reports whether a `$ref` was followed: every ref leads into the built-in (Go-typed) schemas.
 */
function deref(schema: JSONSchema, resolve: Resolve): { schema: JSONSchema; viaRef: boolean } {
  // Schemas are immutable once loaded and always resolved against the built-in ones (as
  // declaredProperties assumes): each node is followed once, not once per write.
  let known = derefCache.get(schema);
  if (!known) {
    known = follow(schema, resolve);
    derefCache.set(schema, known);
  }
  return known;
}

const derefCache = new WeakMap<JSONSchema, { schema: JSONSchema; viaRef: boolean }>();

function follow(schema: JSONSchema, resolve: Resolve): { schema: JSONSchema; viaRef: boolean } {
  let current = schema;
  let viaRef = false;
  for (let hops = 0; hops < 32; hops++) {
    const ref = current.$ref;
    if (typeof ref === 'string') {
      const target = resolve(refName(ref));
      if (!target) return { schema: {}, viaRef: true };
      current = target;
      viaRef = true;
      continue;
    }
    const allOf = current.allOf;
    if (Array.isArray(allOf) && allOf.length === 1 && !current.properties && !current.items) {
      current = allOf[0] as JSONSchema;
      continue;
    }
    break;
  }
  return { schema: current, viaRef };
}

/** Declared properties, including those of `allOf` members (structural schemas repeat them at top). */
const declaredCache = new WeakMap<JSONSchema, Map<string, JSONSchema>>();

function declaredProperties(schema: JSONSchema, resolve: Resolve): Map<string, JSONSchema> {
  // Schemas are immutable once loaded, and this runs for every node of every write.
  const cached = declaredCache.get(schema);
  if (cached) return cached;
  const out = new Map<string, JSONSchema>();
  declaredCache.set(schema, out);
  const add = (s: JSONSchema) => {
    const props = s.properties;
    if (isObject(props))
      for (const [k, v] of Object.entries(props)) if (!out.has(k)) out.set(k, v as JSONSchema);
  };
  add(schema);
  if (Array.isArray(schema.allOf))
    for (const member of schema.allOf) add(deref(member as JSONSchema, resolve).schema);
  return out;
}

const OBJECT_META_REF = { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' };

/**
 * `structural` is true inside a CRD's own schema, where (as in apiextensions pruning) an object
 * node declaring no fields keeps none; in the built-in schemas such a node is a Go type that
 * keeps raw content (RawExtension, FieldsV1) and takes anything.
 */
function walk(
  schemaIn: JSONSchema,
  value: unknown,
  path: Path | undefined,
  structuralIn: boolean,
  resolve: Resolve,
  out: string[],
): void {
  if (value === null || value === undefined) return;
  const { schema, viaRef } = deref(schemaIn, resolve);
  const structural = structuralIn && !viaRef;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (!isObject(items)) return;
    value.forEach((item, i) => {
      walk(items, item, { up: path, step: i }, structural, resolve, out);
    });
    return;
  }
  if (!isObject(value)) return;

  const properties = declaredProperties(schema, resolve);
  if (schema['x-kubernetes-embedded-resource'] === true) {
    // An embedded object always may carry apiVersion, kind and an ObjectMeta.
    if (!properties.has('apiVersion')) properties.set('apiVersion', { type: 'string' });
    if (!properties.has('kind')) properties.set('kind', { type: 'string' });
    if (!properties.has('metadata')) properties.set('metadata', OBJECT_META_REF);
  }
  const additional = schema.additionalProperties;
  const open =
    schema['x-kubernetes-preserve-unknown-fields'] === true ||
    additional === true ||
    (!structural && properties.size === 0 && additional === undefined);

  for (const [key, child] of Object.entries(value)) {
    const declared = properties.get(key);
    if (declared) walk(declared, child, { up: path, step: key }, structural, resolve, out);
    else if (isObject(additional)) walk(additional, child, { up: path, step: key }, structural, resolve, out);
    else if (!open) out.push(pathString({ up: path, step: key }));
  }
}

/**
 * A position in the walk, linked to its parent: a field name or a list index. Written out as
 * `spec.containers[0].foo` only for an unknown field; every write walks the whole object, and
 * building each field's path string was most of the walk.
 */
interface Path {
  up: Path | undefined;
  step: string | number;
}

function pathString(at: Path): string {
  const steps: (string | number)[] = [];
  for (let p: Path | undefined = at; p; p = p.up) steps.push(p.step);
  let out = '';
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i]!;
    out = typeof step === 'number' ? `${out}[${step}]` : out === '' ? step : `${out}.${step}`;
  }
  return out;
}

function unknownFieldsIn(schema: JSONSchema, obj: unknown, structural: boolean): string[] {
  const out: string[] = [];
  walk(schema, obj, undefined, structural, builtinSchema, out);
  return out;
}

/**
 * Unknown fields of a built-in kind's object, e.g. `["spec.containers[0].foo"]`. Returns an
 * empty list for a kind without a published schema (nothing can be judged unknown).
 */
export function unknownFields(gvk: GroupVersionKind, obj: unknown): string[] {
  const name = builtinSchemaName(gvk);
  const schema = name ? builtinSchema(name) : undefined;
  return schema ? unknownFieldsIn(schema, obj, false) : [];
}

/**
 * Unknown fields of a custom resource against its CRD version's `openAPIV3Schema` (undefined:
 * a schemaless version, everything is accepted). apiVersion, kind and metadata (as ObjectMeta)
 * are always declared, as for the published schema.
 */
export function unknownFieldsForCRD(
  gvk: GroupVersionKind,
  openAPIV3Schema: JSONSchema | undefined,
  obj: unknown,
): string[] {
  return unknownFieldsIn(publishedCRDSchema(gvk, openAPIV3Schema), obj, true);
}

/**
 * The published form of a CRD version's schema, built once per schema object: building it
 * copies the whole schema, and a fresh copy per write would also miss `declaredCache`.
 */
const publishedCache = new WeakMap<JSONSchema, JSONSchema>();

function publishedCRDSchema(gvk: GroupVersionKind, openAPIV3Schema: JSONSchema | undefined): JSONSchema {
  if (!openAPIV3Schema) return crdKindSchema(gvk.group, gvk.version, gvk.kind, undefined);
  let published = publishedCache.get(openAPIV3Schema);
  if (!published) {
    published = crdKindSchema(gvk.group, gvk.version, gvk.kind, openAPIV3Schema);
    publishedCache.set(openAPIV3Schema, published);
  }
  return published;
}

/** The message kube-apiserver puts in the 400 BadRequest Status for `fieldValidation=Strict`. */
export function strictDecodingError(fields: readonly string[]): string {
  return `strict decoding error: ${fields.map(unknownFieldWarning).join(', ')}`;
}

/** One `Warning` header text for `fieldValidation=Warn`. */
export function unknownFieldWarning(field: string): string {
  return `unknown field "${field}"`;
}
