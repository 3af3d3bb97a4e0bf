import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import {
  crdSchemasFromCRDs,
  type JSONSchema,
  type OpenAPIV3Document,
  openApiProvider,
  openapiV3GroupVersion,
  openapiV3Paths,
  renderOpenAPIV3GroupVersion,
} from '../../../../src/cluster/apiserver/openapi/index.ts';
import { groupVersion, type KubeObject, type ResourceType } from '../../../../src/cluster/apiserver/types.ts';
import { BUILTIN_RESOURCES, PODSEQUENCE_CRD, PODSEQUENCE_RESOURCE } from './fixtures.ts';

const RESOURCES = [...BUILTIN_RESOURCES, PODSEQUENCE_RESOURCE];
const CRDS = crdSchemasFromCRDs([PODSEQUENCE_CRD as unknown as KubeObject]);
const GVS = [...new Set(RESOURCES.map((rt) => groupVersion(rt)))].sort();
const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

function doc(gv: string): OpenAPIV3Document {
  const d = openapiV3GroupVersion(gv, RESOURCES, CRDS);
  assert.ok(d, `no document for ${gv}`);
  return d;
}

interface GVK {
  group: string;
  version: string;
  kind: string;
}

/** kubectl's QueryParamVerifierV3: the first PATCH operation tagged with the GVK lists the parameter. */
function patchSupportsParam(d: OpenAPIV3Document, gvk: GVK, param: string): boolean {
  for (const item of Object.values(d.paths)) {
    const op = item.patch;
    const tag = op?.['x-kubernetes-group-version-kind'];
    if (!op || !tag || tag.group !== gvk.group || tag.version !== gvk.version || tag.kind !== gvk.kind)
      continue;
    return (op.parameters ?? []).some((p) => p.name === param);
  }
  return false;
}

function resolve(d: OpenAPIV3Document, schema: JSONSchema): JSONSchema {
  let s = schema;
  for (;;) {
    if (typeof s.$ref === 'string') {
      const target = d.components.schemas[s.$ref.replace('#/components/schemas/', '')];
      assert.ok(target, `dangling ${s.$ref}`);
      s = target;
    } else if (Array.isArray(s.allOf) && s.allOf.length === 1 && !s.properties) {
      s = s.allOf[0] as JSONSchema;
    } else {
      return s;
    }
  }
}

/**
 * What `kubectl explain <resource>.<fields...>` walks (kubectl's plaintext template): the GVK
 * from the resource's operations, the component schema carrying that GVK, then properties,
 * through $ref/allOf, array items and map values.
 */
function explain(d: OpenAPIV3Document, rt: ResourceType, fields: string[]): JSONSchema {
  const prefix = rt.group === '' ? `/api/${rt.version}` : `/apis/${rt.group}/${rt.version}`;
  const candidates = [
    `${prefix}/${rt.resource}`,
    `${prefix}/${rt.resource}/{name}`,
    `${prefix}/namespaces/{namespace}/${rt.resource}`,
    `${prefix}/namespaces/{namespace}/${rt.resource}/{name}`,
  ];
  let gvk: GVK | undefined;
  for (const path of candidates) {
    for (const m of METHODS) gvk ??= d.paths[path]?.[m]?.['x-kubernetes-group-version-kind'];
  }
  assert.ok(gvk, `no GVK for ${rt.resource}`);
  const root = Object.values(d.components.schemas).find((s) =>
    (s['x-kubernetes-group-version-kind'] as GVK[] | undefined)?.some(
      (g) => g.group === gvk.group && g.version === gvk.version && g.kind === gvk.kind,
    ),
  );
  assert.ok(root, `no schema with GVK ${JSON.stringify(gvk)}`);
  let s = resolve(d, root);
  for (const field of fields) {
    while (!s.properties && (s.items || typeof s.additionalProperties === 'object')) {
      s = resolve(d, (s.items ?? s.additionalProperties) as JSONSchema);
    }
    const next = (s.properties as Record<string, JSONSchema> | undefined)?.[field];
    assert.ok(next, `field ${field} not found`);
    s = resolve(d, next);
  }
  while (!s.properties && (s.items || typeof s.additionalProperties === 'object')) {
    s = resolve(d, (s.items ?? s.additionalProperties) as JSONSchema);
  }
  return s;
}

describe('/openapi/v3 discovery', () => {
  test('lists one entry per served group-version, with the hash of its document', () => {
    const discovery = openapiV3Paths(RESOURCES, CRDS);
    const keys = GVS.map((gv) => (gv.includes('/') ? `apis/${gv}` : `api/${gv}`)).sort();
    assert.deepEqual(Object.keys(discovery.paths).sort(), keys);
    for (const key of keys) {
      const entry = discovery.paths[key]!;
      const rendered = renderOpenAPIV3GroupVersion(key, RESOURCES, CRDS)!;
      const hash = createHash('sha512').update(rendered.json).digest('hex').toUpperCase();
      assert.equal(entry.serverRelativeURL, `/openapi/v3/${key}?hash=${hash}`);
    }
  });

  test('a changed CRD schema changes that group-version hash and no other', () => {
    const before = openapiV3Paths(RESOURCES, CRDS).paths;
    const crd = structuredClone(PODSEQUENCE_CRD);
    const props = crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties as Record<
      string,
      unknown
    >;
    props.newField = { type: 'string' };
    const after = openapiV3Paths(RESOURCES, crdSchemasFromCRDs([crd as unknown as KubeObject])).paths;
    for (const key of Object.keys(before)) {
      if (key === 'apis/scheduling.example.com/v1alpha1') assert.notEqual(after[key], before[key]);
      else assert.deepEqual(after[key], before[key], key);
    }
    assert.notEqual(
      after['apis/scheduling.example.com/v1alpha1']!.serverRelativeURL,
      before['apis/scheduling.example.com/v1alpha1']!.serverRelativeURL,
    );
  });

  test('an unserved group-version has no document', () => {
    assert.equal(openapiV3GroupVersion('apis/storage.k8s.io/v1', RESOURCES, CRDS), undefined);
    assert.equal(renderOpenAPIV3GroupVersion('apis/storage.k8s.io/v1', RESOURCES, CRDS), undefined);
  });
});

describe('per group-version documents', () => {
  test('are valid OpenAPI 3.0 documents', async () => {
    for (const gv of GVS) {
      // JSONSchemaProps (CRDs) has properties named "$ref" and "$schema", which is legal (property
      // names are free) but which the validator's reference resolver takes for references.
      const json = JSON.stringify(doc(gv)).replaceAll('"$ref":{"type"', '"dollarRef":{"type"');
      const result = await new Validator().validate(JSON.parse(json) as Record<string, unknown>);
      assert.equal(result.valid, true, `${gv}: ${JSON.stringify(result.errors)?.slice(0, 2000)}`);
    }
  });

  test('every $ref resolves inside the document', () => {
    for (const gv of GVS) {
      const d = doc(gv);
      const seen: string[] = [];
      JSON.stringify(d, (key, value) => {
        if (key === '$ref' && typeof value === 'string') seen.push(value);
        return value;
      });
      assert.ok(seen.length > 0);
      for (const ref of seen) {
        assert.match(ref, /^#\/components\/schemas\//);
        assert.ok(d.components.schemas[ref.slice('#/components/schemas/'.length)], `${gv}: dangling ${ref}`);
      }
    }
  });

  test('path templates declare their path parameters, and operation ids are unique', () => {
    for (const gv of GVS) {
      const ids = new Set<string>();
      for (const [path, item] of Object.entries(doc(gv).paths)) {
        const declared = (item.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
        const used = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
        assert.deepEqual(declared.sort(), used.sort(), path);
        for (const m of METHODS) {
          const op = item[m];
          if (!op) continue;
          assert.ok(!ids.has(op.operationId), `duplicate ${op.operationId}`);
          ids.add(op.operationId);
          assert.ok(op['x-kubernetes-action'], `${m} ${path} has no action`);
        }
      }
    }
  });

  test('every served resource takes fieldValidation and dryRun on create, update and patch', () => {
    for (const rt of RESOURCES) {
      const d = doc(groupVersion(rt));
      const gvk = { group: rt.group, version: rt.version, kind: rt.kind };
      const ops = Object.values(d.paths).flatMap((item) =>
        (['post', 'put', 'patch'] as const)
          .map((m) => item[m])
          .filter((op) => {
            const tag = op?.['x-kubernetes-group-version-kind'];
            return tag?.kind === rt.kind && tag.group === rt.group;
          }),
      );
      const expected = ['create', 'update', 'patch'].filter((v) => rt.verbs.includes(v)).length;
      assert.ok(ops.length >= expected, `${rt.resource}: ${ops.length} write operations`);
      for (const op of ops) {
        const names = (op?.parameters ?? []).map((p) => p.name);
        assert.ok(names.includes('fieldValidation'), `${rt.resource} ${op?.operationId}`);
        assert.ok(names.includes('dryRun'), `${rt.resource} ${op?.operationId}`);
      }
      if (rt.verbs.includes('patch')) {
        assert.ok(
          patchSupportsParam(d, gvk, 'fieldValidation'),
          `kubectl would not send fieldValidation for ${rt.kind}`,
        );
      }
    }
  });

  test('pods carry their subresources with the subresource kinds', () => {
    const d = doc('v1');
    const item = '/api/v1/namespaces/{namespace}/pods/{name}';
    assert.equal(d.paths[`${item}/status`]?.patch?.['x-kubernetes-group-version-kind']?.kind, 'Pod');
    assert.deepEqual(d.paths[`${item}/binding`]?.post?.['x-kubernetes-group-version-kind'], {
      group: '',
      version: 'v1',
      kind: 'Binding',
    });
    assert.deepEqual(d.paths[`${item}/eviction`]?.post?.['x-kubernetes-group-version-kind'], {
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
    });
    assert.ok(d.components.schemas['io.k8s.api.policy.v1.Eviction']);
    assert.equal(d.paths['/api/v1/pods']?.get?.operationId, 'listCoreV1PodForAllNamespaces');
    const scale = doc('apps/v1').paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'];
    assert.deepEqual(scale?.put?.['x-kubernetes-group-version-kind'], {
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
    });
    assert.ok(scale?.patch?.parameters?.some((p) => p.name === 'fieldValidation'));
  });

  test('create-only kinds have only a POST', () => {
    const d = doc('authorization.k8s.io/v1');
    const item = d.paths['/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'];
    assert.ok(item?.post);
    assert.equal(item.get, undefined);
    assert.equal(d.paths['/apis/authorization.k8s.io/v1/selfsubjectaccessreviews/{name}'], undefined);
  });

  test('PATCH does not advertise strategic merge patch, so kubectl apply uses its compiled-in merge keys', () => {
    for (const gv of GVS) {
      for (const item of Object.values(doc(gv).paths)) {
        const types = Object.keys(item.patch?.requestBody?.content ?? {});
        if (!item.patch) continue;
        assert.ok(types.includes('application/merge-patch+json'));
        assert.ok(!types.includes('application/strategic-merge-patch+json'));
      }
    }
  });

  test('kind schemas carry their GVK; lists reference their items', () => {
    const schemas = doc('apps/v1').components.schemas;
    assert.deepEqual(schemas['io.k8s.api.apps.v1.Deployment']?.['x-kubernetes-group-version-kind'], [
      { group: 'apps', kind: 'Deployment', version: 'v1' },
    ]);
    const listProps = schemas['io.k8s.api.apps.v1.DeploymentList']?.properties as Record<string, JSONSchema>;
    const items = listProps.items;
    assert.deepEqual(items?.items, { $ref: '#/components/schemas/io.k8s.api.apps.v1.Deployment' });
  });
});

describe('what kubectl explain reads', () => {
  test('pods.spec.containers resolves to Container with described fields', () => {
    const pods = BUILTIN_RESOURCES.find((rt) => rt.resource === 'pods')!;
    const d = doc('v1');
    const container = explain(d, pods, ['spec', 'containers']);
    assert.equal(container.description, 'A single application container that you want to run within a pod.');
    const props = container.properties as Record<string, JSONSchema>;
    for (const field of ['name', 'image', 'resources', 'ports', 'env', 'imagePullPolicy']) {
      assert.ok(props[field]?.description, `containers.${field} has no description`);
    }
    assert.deepEqual(container.required, ['name']);
    assert.deepEqual(props.imagePullPolicy?.enum, ['Always', 'IfNotPresent', 'Never']);
    const limits = explain(d, pods, ['spec', 'containers', 'resources', 'limits']);
    assert.deepEqual(limits.oneOf, [{ type: 'string' }, { type: 'number' }]);
    const port = explain(d, pods, ['spec', 'containers', 'ports', 'containerPort']);
    assert.deepEqual([port.type, port.format], ['integer', 'int32']);
    const created = explain(d, pods, ['metadata', 'creationTimestamp']);
    assert.deepEqual([created.type, created.format], ['string', 'date-time']);
  });

  test('deployments.spec.template.spec reaches the pod spec', () => {
    const deployments = BUILTIN_RESOURCES.find((rt) => rt.resource === 'deployments')!;
    const spec = explain(doc('apps/v1'), deployments, ['spec', 'template', 'spec']);
    assert.ok((spec.properties as Record<string, unknown>).schedulingGates);
  });

  test('podsequences.spec resolves to the CRD schema under its reversed-group name', () => {
    const d = doc('scheduling.example.com/v1alpha1');
    const root = d.components.schemas['com.example.scheduling.v1alpha1.PodSequence'];
    assert.ok(root);
    assert.deepEqual(root['x-kubernetes-group-version-kind'], [
      { group: 'scheduling.example.com', kind: 'PodSequence', version: 'v1alpha1' },
    ]);
    const spec = explain(d, PODSEQUENCE_RESOURCE, ['spec']);
    assert.equal(spec.description, 'PodSequenceSpec defines the desired order.');
    assert.deepEqual(spec.required, ['podNames']);
    const meta = explain(d, PODSEQUENCE_RESOURCE, ['metadata']);
    assert.ok((meta.properties as Record<string, unknown>).labels);
    assert.ok(d.components.schemas['com.example.scheduling.v1alpha1.PodSequenceList']);
    assert.ok(
      d.paths['/apis/scheduling.example.com/v1alpha1/namespaces/{namespace}/podsequences/{name}/status']
        ?.patch,
    );
  });

  test('a served resource without any schema is published as accepting any fields', () => {
    const stage: ResourceType = {
      ...PODSEQUENCE_RESOURCE,
      group: 'kwok.x-k8s.io',
      resource: 'stages',
      kind: 'Stage',
      listKind: 'StageList',
      namespaced: false,
    };
    const d = openapiV3GroupVersion('apis/kwok.x-k8s.io/v1alpha1', [stage])!;
    const root = d.components.schemas['io.x-k8s.kwok.v1alpha1.Stage'];
    assert.equal(root?.['x-kubernetes-preserve-unknown-fields'], true);
    assert.ok(
      patchSupportsParam(
        d,
        { group: 'kwok.x-k8s.io', version: 'v1alpha1', kind: 'Stage' },
        'fieldValidation',
      ),
    );
  });
});

describe('openApiProvider', () => {
  test('serves the current resources on every call', () => {
    let resources: ResourceType[] = BUILTIN_RESOURCES;
    const provider = openApiProvider({ resources: () => resources, crdSchemas: () => CRDS });
    assert.equal(provider.v3GroupVersion('apis/scheduling.example.com/v1alpha1'), undefined);
    resources = RESOURCES;
    assert.ok(provider.v3Paths().paths['apis/scheduling.example.com/v1alpha1']);
    const d = provider.v3GroupVersion('apis/scheduling.example.com/v1alpha1');
    assert.ok(d?.components.schemas['com.example.scheduling.v1alpha1.PodSequence']);
    assert.deepEqual(
      provider.v3GroupVersionRendered('api/v1'),
      renderOpenAPIV3GroupVersion('v1', RESOURCES, CRDS),
    );
  });
});
