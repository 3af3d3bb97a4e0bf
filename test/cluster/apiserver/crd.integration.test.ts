import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';
import { waitFor } from '../../support/wait.ts';

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wd]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Size
      type: string
      jsonPath: .spec.size
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.replicas <= 10 || self.size == 'large'"
              message: "more than 10 replicas need size large"
            required: [size]
            properties:
              size:
                type: string
                enum: [small, large]
              replicas:
                type: integer
                minimum: 0
                default: 1
          status:
            type: object
            properties:
              replicas: {type: integer}
`;

const widget = (name: string, spec: string) => `apiVersion: example.com/v1
kind: Widget
metadata:
  name: ${name}
  namespace: default
spec:
${spec}
`;

describe('CustomResourceDefinitions', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
    await t.kubectl(['apply', '-f', '-'], CRD);
  });
  after(() => t.close());

  test('a new CRD is served at once and becomes Established', async () => {
    await t.kubectl(['wait', '--for=condition=Established', 'crd/widgets.example.com', '--timeout=10s']);
    const r = await t.kubectl(['api-resources', '--api-group=example.com', '--no-headers']);
    assert.match(r.stdout, /^widgets\s+wd\s+example.com\/v1\s+true\s+Widget$/m);
  });

  test('schema defaults apply and printer columns show in kubectl get', async () => {
    await t.kubectl(['apply', '-f', '-'], widget('w1', '  size: small'));
    const replicas = await t.kubectl(['get', 'wd', 'w1', '-o', 'jsonpath={.spec.replicas}']);
    assert.equal(replicas.stdout, '1');
    const table = await t.kubectl(['get', 'widgets']);
    assert.match(table.stdout, /^NAME\s+SIZE\s+REPLICAS\s+AGE$/m);
    assert.match(table.stdout, /^w1\s+small\s+1\s+\S+$/m);
  });

  test('schema and CEL violations are 422 with clear messages', async () => {
    const badEnum = await t.kubectlResult(['apply', '-f', '-'], widget('w2', '  size: medium'));
    assert.notEqual(badEnum.code, 0);
    assert.match(
      badEnum.stderr,
      /spec.size: Unsupported value: "medium": supported values: "small", "large"/,
    );
    const cel = await t.kubectlResult(['apply', '-f', '-'], widget('w3', '  size: small\n  replicas: 11'));
    assert.notEqual(cel.code, 0);
    assert.match(cel.stderr, /more than 10 replicas need size large/);
    const missing = await t.kubectlResult(['apply', '-f', '-'], widget('w4', '  replicas: 2'));
    assert.match(missing.stderr, /spec.size: Required value/);
  });

  test('status is only written through /status, and scale works', async () => {
    await t.kubectl(['patch', 'wd', 'w1', '--type=merge', '-p', '{"status":{"replicas":5}}']);
    assert.equal((await t.kubectl(['get', 'wd', 'w1', '-o', 'jsonpath={.status.replicas}'])).stdout, '');
    await t.kubectl([
      'patch',
      'wd',
      'w1',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"replicas":5}}',
    ]);
    assert.equal((await t.kubectl(['get', 'wd', 'w1', '-o', 'jsonpath={.status.replicas}'])).stdout, '5');
    await t.kubectl(['scale', 'wd', 'w1', '--replicas=3']);
    assert.equal((await t.kubectl(['get', 'wd', 'w1', '-o', 'jsonpath={.spec.replicas}'])).stdout, '3');
    const gen = await t.kubectl(['get', 'wd', 'w1', '-o', 'jsonpath={.metadata.generation}']);
    assert.equal(gen.stdout, '2');
  });

  test('explain reads the CRD schema', async () => {
    const r = await t.kubectl(['explain', 'widgets.spec']);
    assert.match(r.stdout, /replicas\s+<integer>/);
    assert.match(r.stdout, /size\s+<string>.*-required-/s);
  });

  test('deleting the CRD deletes its objects and stops serving it', async () => {
    await t.kubectl(['delete', 'crd', 'widgets.example.com', '--wait=false']);
    await waitFor(
      'the CRD to be gone',
      async () => (await t.kubectlResult(['get', 'crd', 'widgets.example.com'])).code !== 0,
    );
    const r = await t.kubectlResult(['get', 'widgets']);
    assert.notEqual(r.code, 0);
    // kubectl says either, depending on whether its discovery cache saw the CRD go.
    assert.match(
      r.stderr,
      /the server doesn't have a resource type "widgets"|the server could not find the requested resource/,
    );
  });
});
