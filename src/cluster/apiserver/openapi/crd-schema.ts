/**
 * How a CustomResourceDefinition version's `openAPIV3Schema` is published, the way the
 * apiextensions-apiserver does it: a component named by reversed group
 * (`scheduling.example.com` -> `com.example.scheduling.v1alpha1.PodSequence`), with
 * apiVersion/kind/metadata added, plus a `<Kind>List` component.
 */
import type { KubeObject } from '../types.ts';
import { builtinSchema, type JSONSchema, META_V1, schemaRef } from './schemas.ts';

/** Key of a CRD schema in a {@link CrdSchemas} map. */
export function crdSchemaKey(group: string, version: string, kind: string): string {
  return `${group}/${version}/${kind}`;
}

/** CRD `openAPIV3Schema`s by {@link crdSchemaKey}. */
export type CrdSchemas = ReadonlyMap<string, JSONSchema>;

/** The `openAPIV3Schema` of every served version of the given CustomResourceDefinition objects. */
export function crdSchemasFromCRDs(crds: readonly KubeObject[]): Map<string, JSONSchema> {
  const out = new Map<string, JSONSchema>();
  for (const crd of crds) {
    const spec = crd.spec as
      | {
          group?: string;
          names?: { kind?: string };
          versions?: Array<{ name?: string; served?: boolean; schema?: { openAPIV3Schema?: JSONSchema } }>;
        }
      | undefined;
    const group = spec?.group;
    const kind = spec?.names?.kind;
    if (!group || !kind) continue;
    for (const v of spec.versions ?? []) {
      const schema = v.schema?.openAPIV3Schema;
      if (v.name && v.served !== false && schema) out.set(crdSchemaKey(group, v.name, kind), schema);
    }
  }
  return out;
}

export function crdSchemaName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

/** Descriptions of the fields every object has, taken from the built-in schemas. */
function typeMetaDescriptions(): {
  apiVersion: string;
  kind: string;
  metadata: string;
  listMetadata: string;
} {
  const prop = (schemaName: string, field: string): string => {
    const props = builtinSchema(schemaName)?.properties as Record<string, JSONSchema> | undefined;
    return (props?.[field]?.description as string | undefined) ?? '';
  };
  return {
    apiVersion: prop(`${META_V1}Status`, 'apiVersion'),
    kind: prop(`${META_V1}Status`, 'kind'),
    metadata: prop('io.k8s.api.core.v1.ConfigMap', 'metadata'),
    listMetadata: prop('io.k8s.api.core.v1.ConfigMapList', 'metadata'),
  };
}

function described(schema: JSONSchema, description: string): JSONSchema {
  return description ? { ...schema, description } : schema;
}

/** Names of schemas outside the CRD itself that its published components reference. */
export const CRD_META_REFS = [`${META_V1}ObjectMeta`, `${META_V1}ListMeta`];

/**
 * The published component for a custom resource kind. `openAPIV3Schema` may be undefined for a
 * version without a schema, which then accepts any fields.
 */
export function crdKindSchema(
  group: string,
  version: string,
  kind: string,
  openAPIV3Schema: JSONSchema | undefined,
): JSONSchema {
  const docs = typeMetaDescriptions();
  const base: JSONSchema = openAPIV3Schema
    ? (structuredClone(openAPIV3Schema) as JSONSchema)
    : { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const properties = { ...((base.properties as Record<string, JSONSchema> | undefined) ?? {}) };
  properties.apiVersion = described({ type: 'string' }, docs.apiVersion);
  properties.kind = described({ type: 'string' }, docs.kind);
  properties.metadata = {
    allOf: [schemaRef(`${META_V1}ObjectMeta`)],
    ...(docs.metadata ? { description: docs.metadata } : {}),
  };
  return {
    ...base,
    type: 'object',
    properties,
    'x-kubernetes-group-version-kind': [{ group, kind, version }],
  };
}

export function crdListSchema(group: string, version: string, kind: string, listKind: string): JSONSchema {
  const docs = typeMetaDescriptions();
  return {
    description: `${listKind} is a list of ${kind}`,
    properties: {
      apiVersion: described({ type: 'string' }, docs.apiVersion),
      items: {
        description: `List of ${kind.toLowerCase()} objects.`,
        items: schemaRef(crdSchemaName(group, version, kind)),
        type: 'array',
      },
      kind: described({ type: 'string' }, docs.kind),
      metadata: {
        allOf: [schemaRef(`${META_V1}ListMeta`)],
        ...(docs.listMetadata ? { description: docs.listMetadata } : {}),
      },
    },
    required: ['items'],
    type: 'object',
    'x-kubernetes-group-version-kind': [{ group, kind: listKind, version }],
  };
}
