import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { Validator } from '@seriousme/openapi-schema-validator';
import {
  crdSchemasFromCRDs,
  type OpenAPIV3Document,
  openapiV3GroupVersion,
  renderSwagger,
  type SwaggerDocument,
  swaggerFromV3,
  swaggerToProtobuf,
} from '../../../../src/cluster/apiserver/openapi/index.ts';
import { groupVersion, type KubeObject } from '../../../../src/cluster/apiserver/types.ts';
import { BUILTIN_RESOURCES, PODSEQUENCE_CRD, PODSEQUENCE_RESOURCE } from './fixtures.ts';

const RESOURCES = [...BUILTIN_RESOURCES, PODSEQUENCE_RESOURCE];
const CRDS = crdSchemasFromCRDs([PODSEQUENCE_CRD as unknown as KubeObject]);
const GVS = [...new Set(RESOURCES.map((rt) => groupVersion(rt)))].sort();
const V3: OpenAPIV3Document[] = GVS.map((gv) => openapiV3GroupVersion(gv, RESOURCES, CRDS)!);
const V2: SwaggerDocument = swaggerFromV3(V3);

/** The length-delimited fields of one protobuf message, by field number, in order. */
function fields(bytes: Uint8Array): Map<number, Uint8Array[]> {
  const out = new Map<number, Uint8Array[]>();
  const r = new BinaryReader(bytes);
  while (r.pos < r.len) {
    const [no, wt] = r.tag();
    if (wt !== WireType.LengthDelimited) {
      r.skip(wt);
      continue;
    }
    const list = out.get(no) ?? [];
    list.push(r.bytes());
    out.set(no, list);
  }
  return out;
}

const text = (b: Uint8Array | undefined) => new TextDecoder().decode(b);

/** The names of gnostic's `Named*` entries under field `field` of `container`. */
function names(container: Uint8Array, field: number): string[] {
  return (fields(container).get(field) ?? []).map((named) => text(fields(named).get(1)?.[0]));
}

describe('/openapi/v2 document', () => {
  test('is a valid Swagger 2.0 document', async () => {
    // See documents.test.ts: JSONSchemaProps' "$ref" property confuses the validator's resolver.
    const json = JSON.stringify(V2).replaceAll('"$ref":{"type"', '"dollarRef":{"type"');
    const result = await new Validator().validate(JSON.parse(json) as Record<string, unknown>);
    assert.equal(result.valid, true, JSON.stringify(result.errors)?.slice(0, 2000));
  });

  test('holds every path and schema of every v3 document, with references into definitions', () => {
    for (const d of V3) {
      for (const path of Object.keys(d.paths)) assert.ok(V2.paths[path], path);
      for (const name of Object.keys(d.components.schemas)) assert.ok(V2.definitions[name], name);
    }
    const refs: string[] = [];
    const walk = (s: Record<string, unknown>): void => {
      for (const key of ['oneOf', 'anyOf', 'not', 'nullable']) assert.ok(!(key in s), `v3-only key ${key}`);
      if (typeof s.$ref === 'string') refs.push(s.$ref);
      for (const p of Object.values((s.properties ?? {}) as Record<string, Record<string, unknown>>)) walk(p);
      for (const key of ['items', 'additionalProperties', 'schema']) {
        if (typeof s[key] === 'object' && s[key] !== null) walk(s[key] as Record<string, unknown>);
      }
      for (const a of (s.allOf ?? []) as Record<string, unknown>[]) walk(a);
    };
    for (const d of Object.values(V2.definitions)) walk(d);
    for (const item of Object.values(V2.paths)) {
      for (const op of [item.get, item.put, item.post, item.patch, item.delete]) {
        if (!op) continue;
        assert.ok(!('requestBody' in op));
        for (const p of op.parameters ?? []) walk(p);
        for (const r of Object.values(op.responses)) walk(r);
      }
    }
    assert.ok(refs.length > 100);
    for (const ref of refs) {
      assert.match(ref, /^#\/definitions\//);
      assert.ok(V2.definitions[ref.slice('#/definitions/'.length)], `${ref} resolves`);
    }
  });

  test('keeps the GVK tags kubectl looks kinds up by, and unwraps allOf references', () => {
    const deployment = V2.definitions['io.k8s.api.apps.v1.Deployment']!;
    assert.deepEqual(deployment['x-kubernetes-group-version-kind'], [
      { group: 'apps', kind: 'Deployment', version: 'v1' },
    ]);
    const spec = (deployment.properties as Record<string, Record<string, unknown>>).spec!;
    assert.equal(spec.$ref, '#/definitions/io.k8s.api.apps.v1.DeploymentSpec');
    assert.equal(spec.allOf, undefined);
    // IntOrString is `type: string, format: int-or-string` in v2, as kube-apiserver writes it.
    assert.deepEqual(
      { ...V2.definitions['io.k8s.apimachinery.pkg.util.intstr.IntOrString'], description: undefined },
      { description: undefined, format: 'int-or-string', type: 'string' },
    );
  });

  test('operations carry a body parameter, and PATCH consumes exactly what v3 accepts', () => {
    const item = V2.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}']!;
    const v3 = V3.find((d) => d.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'])!;
    const v3Patch = v3.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}']!.patch!;
    assert.deepEqual(item.patch!.consumes, Object.keys(v3Patch.requestBody!.content));
    assert.deepEqual(item.put!.parameters![0], {
      in: 'body',
      name: 'body',
      required: true,
      schema: { $ref: '#/definitions/io.k8s.api.apps.v1.Deployment' },
    });
    assert.deepEqual(item.patch!['x-kubernetes-group-version-kind'], {
      group: 'apps',
      kind: 'Deployment',
      version: 'v1',
    });
    const dryRun = item.patch!.parameters!.find((p) => p.name === 'dryRun');
    assert.deepEqual(
      { ...dryRun, description: undefined },
      { name: 'dryRun', in: 'query', description: undefined, type: 'string', uniqueItems: true },
    );
    assert.deepEqual(
      item.parameters?.map((p) => p.name),
      ['name', 'namespace', 'pretty'],
    );
  });

  test('the rendering is memoized until the served set changes, with a SHA-512 ETag', () => {
    const a = renderSwagger(RESOURCES, CRDS);
    assert.equal(renderSwagger(RESOURCES, CRDS), a);
    assert.match(a.etag, /^[0-9A-F]{128}$/);
    const b = renderSwagger(BUILTIN_RESOURCES, CRDS);
    assert.notEqual(b.etag, a.etag);
    assert.ok(!JSON.parse(b.json).paths[Object.keys(V2.paths).find((p) => p.includes('podsequence'))!]);
  });
});

describe('/openapi/v2 protobuf (gnostic openapi.v2.Document)', () => {
  const bytes = swaggerToProtobuf(V2);
  const doc = fields(bytes);

  test('has the version, title, every path and every definition by name', () => {
    assert.equal(text(doc.get(1)?.[0]), '2.0');
    const info = fields(doc.get(2)![0]!);
    assert.equal(text(info.get(1)?.[0]), 'Kubernetes');
    assert.deepEqual(names(doc.get(8)![0]!, 2), Object.keys(V2.paths));
    assert.deepEqual(names(doc.get(9)![0]!, 1), Object.keys(V2.definitions));
  });

  test('a schema carries its reference, properties and GVK vendor extension as YAML', () => {
    const defs = fields(doc.get(9)![0]!).get(1)!;
    const named = defs.find((d) => text(fields(d).get(1)?.[0]) === 'io.k8s.api.apps.v1.Deployment')!;
    const schema = fields(fields(named).get(2)![0]!);
    const properties = fields(schema.get(25)![0]!).get(1)!;
    const spec = properties.find((p) => text(fields(p).get(1)?.[0]) === 'spec')!;
    assert.equal(
      text(fields(fields(spec).get(2)![0]!).get(1)?.[0]),
      '#/definitions/io.k8s.api.apps.v1.DeploymentSpec',
    );
    const ext = fields(schema.get(31)![0]!);
    assert.equal(text(ext.get(1)?.[0]), 'x-kubernetes-group-version-kind');
    const yaml = text(fields(ext.get(2)![0]!).get(2)?.[0]);
    assert.deepEqual(JSON.parse(yaml), [{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
  });

  test('PATCH operations list their consumed media types', () => {
    const paths = fields(doc.get(8)![0]!).get(2)!;
    const path = '/apis/apps/v1/namespaces/{namespace}/deployments/{name}';
    const named = paths.find((p) => text(fields(p).get(1)?.[0]) === path)!;
    const patch = fields(fields(fields(named).get(2)![0]!).get(8)![0]!);
    assert.deepEqual((patch.get(7) ?? []).map(text), V2.paths[path]!.patch!.consumes);
    assert.equal(text(patch.get(5)?.[0]), 'patchAppsV1NamespacedDeployment');
  });
});
