/** The CRD, through a real API server: schema rejections with clear messages, printer columns, defaults. */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { startApiServer } from '../../../src/cluster/apiserver/server.ts';
import {
  ensurePodSequenceCrd,
  PODSEQUENCE,
  podSequenceCrd,
} from '../../../src/controllers/podsequence/index.ts';
import { Client, kubeConfigFromString } from '../../../src/runtime/index.ts';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

const root = new URL('../../../', import.meta.url);

test('config/crd/podsequence-crd.yaml is the exported CRD', () => {
  const file = parse(readFileSync(new URL('config/crd/podsequence-crd.yaml', root), 'utf8'));
  assert.deepEqual(file, podSequenceCrd);
});

test('ensurePodSequenceCrd installs the CRD and returns once the kind is served', async () => {
  const server = await startApiServer({ port: 0 });
  const client = Client.fromKubeConfig(kubeConfigFromString(server.kubeconfig));
  try {
    await ensurePodSequenceCrd(client);
    const list = await client.list(PODSEQUENCE);
    assert.deepEqual(list.items, []);
    await ensurePodSequenceCrd(client); // idempotent
  } finally {
    await client.rest.close();
    await server.close();
  }
});

describe('PodSequence schema', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
    await t.kubectl(['apply', '-f', new URL('config/crd/podsequence-crd.yaml', root).pathname]);
    await t.kubectl([
      'wait',
      '--for=condition=Established',
      'crd/podsequences.scheduling.example.com',
      '--timeout=20s',
    ]);
  });
  after(() => t?.close());

  const apply = (spec: unknown, name = 'bad') =>
    t.kubectlResult(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'scheduling.example.com/v1alpha1',
        kind: 'PodSequence',
        metadata: { name, namespace: 'default' },
        spec,
      }),
    );

  const rejected: [string, unknown, RegExp][] = [
    [
      'empty podGroups',
      { podGroups: [] },
      /spec.podGroups: Invalid value: 0: spec.podGroups in body should have at least 1 items/,
    ],
    ['missing podGroups', {}, /spec.podGroups: Required value/],
    [
      'both pods and podSelector',
      { podGroups: [{ pods: ['a'], podSelector: { matchLabels: { app: 'a' } } }] },
      /spec.podGroups\[0\]: Invalid value: (?:"object": )?set either pods or podSelector, not both/,
    ],
    [
      'neither pods nor podSelector',
      { podGroups: [{ name: 'x' }] },
      /spec.podGroups\[0\]: Invalid value: (?:"object": )?one of pods or podSelector is required/,
    ],
    [
      'bad scope',
      { podGroups: [{ pods: ['a'] }], scope: 'Zone' },
      /spec.scope: Unsupported value: "Zone": supported values: "Cluster", "Node"/,
    ],
    [
      'empty pods list',
      { podGroups: [{ pods: [] }] },
      /spec.podGroups\[0\].pods: Invalid value: 0: spec.podGroups\[0\].pods in body should have at least 1 items/,
    ],
    [
      'duplicate pod in a group',
      { podGroups: [{ pods: ['a', 'a'] }] },
      /spec.podGroups\[0\].pods\[1\]: Duplicate value: "a"/,
    ],
    ['empty selector', { podGroups: [{ podSelector: {} }] }, /podSelector must not be empty/],
    [
      'bad selector operator',
      { podGroups: [{ podSelector: { matchExpressions: [{ key: 'a', operator: 'Near' }] } }] },
      /operator: Unsupported value: "Near"/,
    ],
    [
      'bad gate name',
      { podGroups: [{ pods: ['a'] }], schedulingGateName: 'not a gate!' },
      /spec.schedulingGateName: Invalid value: "not a gate!"/,
    ],
    [
      'bad pod name',
      { podGroups: [{ pods: ['Pod_1'] }] },
      /spec.podGroups\[0\].pods\[0\]: Invalid value: "Pod_1"/,
    ],
  ];
  for (const [what, spec, re] of rejected) {
    test(`rejects ${what}`, async () => {
      const r = await apply(spec);
      assert.notEqual(r.code, 0, r.stdout);
      assert.match(r.stderr, re);
    });
  }

  test('defaults scope to Cluster and prints useful columns', async () => {
    const r = await apply({ podGroups: [{ name: 'DB', pods: ['db-0'] }] }, 'good');
    assert.equal(r.code, 0, r.stderr);
    const got = JSON.parse((await t.kubectl(['get', 'podseq', 'good', '-o', 'json'])).stdout);
    assert.equal(got.spec.scope, 'Cluster');
    const table = (await t.kubectl(['get', 'podseq', '-o', 'wide'])).stdout;
    assert.match(table.split('\n')[0]!, /^NAME\s+SCOPE\s+PHASE\s+GROUP\s+CURRENT\s+READY\s+AGE\s+MESSAGE/);
    assert.match(table, /good\s+Cluster/);
  });
});
