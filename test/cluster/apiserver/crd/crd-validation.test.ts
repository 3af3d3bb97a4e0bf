import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatFieldError, validateCRD } from '../../../../src/cluster/apiserver/crd/index.ts';
import type {
  CustomResourceDefinition,
  JSONSchemaProps,
} from '../../../../src/cluster/apiserver/crd/types.ts';
import { podSequenceCRD } from './fixtures.ts';

function lines(crd: CustomResourceDefinition, old?: CustomResourceDefinition): string[] {
  return validateCRD(crd, old).map(formatFieldError);
}

function specSchema(crd: CustomResourceDefinition): JSONSchemaProps {
  return crd.spec!.versions![0]!.schema!.openAPIV3Schema!.properties!.spec!;
}

const SCHEMA = 'spec.validation.openAPIV3Schema.properties[spec]';

describe('validateCRD', () => {
  test('the PodSequence CRD is valid', () => {
    assert.deepEqual(validateCRD(podSequenceCRD()), []);
  });

  test('does not modify its input (defaults go to a copy)', () => {
    const crd = podSequenceCRD();
    delete crd.spec!.names!.singular;
    const before = structuredClone(crd);
    assert.deepEqual(validateCRD(crd), []);
    assert.deepEqual(crd, before);
  });

  test('metadata.name must be <plural>.<group>', () => {
    const crd = podSequenceCRD();
    crd.metadata!.name = 'podsequences.example.com';
    assert.deepEqual(lines(crd), [
      'metadata.name: Invalid value: "podsequences.example.com": must be spec.names.plural+"."+spec.group',
    ]);
  });

  test('names: required plural and kind, DNS-1035 rules, kind and listKind differ', () => {
    const crd = podSequenceCRD();
    crd.metadata!.name = '.scheduling.example.com';
    crd.spec!.names = { plural: '', kind: '' };
    const out = lines(crd);
    assert.ok(out.includes('spec.names.plural: Required value'), out.join('\n'));
    assert.ok(out.includes('spec.names.kind: Required value'));
    assert.ok(out.includes('spec.names.singular: Required value'));
    assert.ok(out.includes('spec.names.listKind: Required value'));

    const upper = podSequenceCRD();
    upper.spec!.names!.plural = 'PodSequences';
    upper.metadata!.name = 'PodSequences.scheduling.example.com';
    assert.ok(
      lines(upper).includes(
        `spec.names.plural: Invalid value: "PodSequences": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
      ),
    );

    const same = podSequenceCRD();
    same.spec!.names!.listKind = 'PodSequence';
    assert.deepEqual(lines(same), [
      'spec.names.listKind: Invalid value: "PodSequence": kind and listKind may not be the same',
    ]);

    const kind = podSequenceCRD();
    kind.spec!.names!.kind = 'Pod_Sequence';
    assert.match(
      lines(kind)[0]!,
      /^spec\.names\.kind: Invalid value: "Pod_Sequence": may have mixed case, but should otherwise match: a DNS-1035 label/,
    );
  });

  test('group must be a dotted DNS subdomain', () => {
    const crd = podSequenceCRD();
    crd.spec!.group = 'example';
    crd.metadata!.name = 'podsequences.example';
    assert.deepEqual(lines(crd), [
      'spec.group: Invalid value: "example": should be a domain with at least one dot',
    ]);
  });

  test('scope must be Cluster or Namespaced', () => {
    const crd = podSequenceCRD();
    crd.spec!.scope = 'Node';
    assert.deepEqual(lines(crd), [
      'spec.scope: Unsupported value: "Node": supported values: "Cluster", "Namespaced"',
    ]);
    delete crd.spec!.scope;
    assert.deepEqual(lines(crd), ['spec.scope: Required value']);
  });

  test('exactly one storage version, unique names, schemas required', () => {
    const crd = podSequenceCRD();
    crd.spec!.versions!.push({ name: 'v1alpha1', served: true, storage: true });
    const out = lines(crd);
    assert.ok(
      out.includes('spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required'),
      out.join('\n'),
    );
    assert.ok(
      out.some((l) => /^spec\.versions: Invalid value: .*: must contain unique version names$/.test(l)),
    );
    assert.ok(
      out.some((l) =>
        /^spec\.versions: Invalid value: .*: must have exactly one version marked as storage version$/.test(
          l,
        ),
      ),
    );

    const none = podSequenceCRD();
    none.spec!.versions![0]!.storage = false;
    const noneOut = lines(none);
    assert.ok(noneOut.some((l) => l.endsWith('must have exactly one version marked as storage version')));
    assert.ok(
      noneOut.includes(
        'status.storedVersions: Invalid value: []string(nil): must have at least one stored version',
      ),
    );
  });

  test('structural schema: type required for specified object fields', () => {
    const crd = podSequenceCRD();
    specSchema(crd).properties!.namespace = { description: 'no type' };
    assert.deepEqual(lines(crd), [
      `${SCHEMA}.properties[namespace].type: Required value: must not be empty for specified object fields`,
    ]);
  });

  test('with versions that differ, errors are reported per version', () => {
    const crd = podSequenceCRD();
    const v2 = structuredClone(crd.spec!.versions![0]!);
    v2.name = 'v1beta1';
    v2.storage = false;
    crd.spec!.versions!.push(v2);
    specSchema(crd).properties!.namespace = {};
    assert.deepEqual(lines(crd), [
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[namespace].type: Required value: must not be empty for specified object fields',
    ]);
  });

  test('structural schema: array items, nested value validation, int-or-string', () => {
    const crd = podSequenceCRD();
    const spec = specSchema(crd);
    spec.properties!.list = { type: 'array' };
    spec.properties!.port = {
      'x-kubernetes-int-or-string': true,
      anyOf: [{ type: 'integer' }, { type: 'string' }],
    };
    spec.anyOf = [{ type: 'object', properties: { undeclared: { minLength: 1 } } }];
    assert.deepEqual(lines(crd), [
      `${SCHEMA}.anyOf[0].type: Forbidden: must be empty to be structural`,
      `${SCHEMA}.properties[list].items: Required value: must be specified`,
      `${SCHEMA}.properties[undeclared]: Required value: because it is defined in ${SCHEMA}.anyOf[0].properties[undeclared]`,
    ]);
  });

  test('additionalProperties and properties are mutually exclusive; uniqueItems is forbidden', () => {
    const crd = podSequenceCRD();
    const spec = specSchema(crd);
    spec.additionalProperties = { type: 'string' };
    spec.properties!.tags = { type: 'array', items: { type: 'string' }, uniqueItems: true };
    assert.deepEqual(lines(crd), [
      `${SCHEMA}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
      `${SCHEMA}.properties[tags].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
    ]);
  });

  test('root metadata may only restrict name and generateName', () => {
    const crd = podSequenceCRD();
    crd.spec!.versions![0]!.schema!.openAPIV3Schema!.properties!.metadata = {
      type: 'object',
      properties: { labels: { type: 'object' } },
    };
    assert.deepEqual(lines(crd), [
      'spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified',
    ]);
  });

  test('defaults must validate against their schema', () => {
    const crd = podSequenceCRD();
    specSchema(crd).properties!.scope!.default = 'Everywhere';
    assert.deepEqual(lines(crd), [
      `${SCHEMA}.properties[scope].default: Unsupported value: "Everywhere": supported values: "Cluster", "Node"`,
    ]);
  });

  test('invalid patterns are rejected with the RE2 error', () => {
    const crd = podSequenceCRD();
    specSchema(crd).properties!.namespace!.pattern = '[a-';
    assert.deepEqual(lines(crd), [
      `${SCHEMA}.properties[namespace].pattern: Invalid value: "[a-": must be a valid regular expression, but isn't: error parsing regexp: missing closing ]: \`[a-\``,
    ]);
  });

  test('CEL rules: compile errors, unknown fields, reasons, oldSelf where it cannot correlate', () => {
    const crd = podSequenceCRD();
    const spec = specSchema(crd);
    spec['x-kubernetes-validations']!.push(
      { rule: 'self.scop == "Node"' },
      { rule: 'self.scope ==' },
      { rule: 'self.scope == "Node"', reason: 'FieldValueOops' },
    );
    (spec.properties!.podGroups!.items as JSONSchemaProps)['x-kubernetes-validations']!.push({
      rule: 'self.name == oldSelf.name',
    });
    const out = lines(crd);
    assert.deepEqual(out.slice(0, 1), [
      `${SCHEMA}.x-kubernetes-validations[3].reason: Unsupported value: "FieldValueOops": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
    ]);
    // The reason error stops rule compilation at that node, as in kube-apiserver.
    spec['x-kubernetes-validations']!.pop();
    const cel = lines(crd);
    assert.equal(cel.length, 3, cel.join('\n'));
    assert.equal(
      cel[0],
      `${SCHEMA}.properties[podGroups].items.x-kubernetes-validations[1].rule: Invalid value: "self.name == oldSelf.name": oldSelf cannot be used on the uncorrelatable portion of the schema within ${SCHEMA}.properties[podGroups]`,
    );
    assert.equal(
      cel[1],
      `${SCHEMA}.x-kubernetes-validations[1].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.scop == \\"Node\\"", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: undefined field 'scop'\n | self.scop == "Node"\n | ....^`,
    );
    assert.match(
      cel[2]!,
      /x-kubernetes-validations\[2\]\.rule: Invalid value: .*compilation failed: ERROR: <input>:1:\d+: Syntax error/,
    );
  });

  test('messageExpression must compile too', () => {
    const crd = podSequenceCRD();
    specSchema(crd)['x-kubernetes-validations']![0]!.messageExpression = 'self.nope + "x"';
    const out = lines(crd);
    assert.equal(out.length, 1, out.join('\n'));
    assert.match(
      out[0]!,
      /^spec\.validation\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.messageExpression: Invalid value: apiextensions\.ValidationRule\{.*\}: messageExpression compilation failed: ERROR: <input>:1:5: undefined field 'nope'/,
    );
  });

  test('status subresource restricts the root schema', () => {
    const crd = podSequenceCRD();
    crd.spec!.versions![0]!.schema!.openAPIV3Schema!.nullable = true;
    assert.ok(
      lines(crd).includes(
        'spec.validation.openAPIV3Schema: Invalid value: apiextensions.JSONSchemaProps{...}: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled',
      ),
    );
  });

  test('scale subresource paths and printer columns', () => {
    const crd = podSequenceCRD();
    crd.spec!.versions![0]!.subresources!.scale = {
      specReplicasPath: 'spec.replicas',
      statusReplicasPath: '.spec.replicas',
    };
    crd.spec!.versions![0]!.additionalPrinterColumns!.push({ name: 'Bad', type: 'text', jsonPath: 'status' });
    assert.deepEqual(lines(crd), [
      'spec.subresources.scale.specReplicasPath: Invalid value: "spec.replicas": must be a simple json path starting with .',
      'spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.replicas": should be a json path under .status',
      'spec.additionalPrinterColumns[4].type: Invalid value: "text": must be one of boolean,date,integer,number,string',
      'spec.additionalPrinterColumns[4].JSONPath: Invalid value: "status": must be a simple json path starting with .',
    ]);
  });

  test('update: group and plural are immutable, stored versions must stay', () => {
    const old = podSequenceCRD();
    old.status = { storedVersions: ['v1alpha1'], conditions: [{ type: 'Established', status: 'True' }] };
    const renamed = podSequenceCRD();
    renamed.spec!.names!.plural = 'sequences';
    renamed.metadata!.name = 'sequences.scheduling.example.com';
    const out = lines(renamed, old);
    assert.ok(
      out.includes('spec.names.plural: Invalid value: "sequences": field is immutable'),
      out.join('\n'),
    );

    const dropped = podSequenceCRD();
    dropped.spec!.versions![0]!.name = 'v1';
    assert.ok(
      lines(dropped, old).includes(
        'status.storedVersions[0]: Invalid value: "v1alpha1": missing from spec.versions; v1alpha1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1alpha1 and removes v1alpha1 from status.storedVersions',
      ),
    );
  });

  test('protected groups need the api-approved annotation', () => {
    const crd = podSequenceCRD();
    crd.spec!.group = 'scheduling.k8s.io';
    crd.metadata!.name = 'podsequences.scheduling.k8s.io';
    assert.deepEqual(lines(crd), [
      'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
    ]);
  });
});
