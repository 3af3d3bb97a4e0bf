import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tableForColumns, toJSONPathPlus } from '../../../../src/cluster/apiserver/crd/index.ts';
import type { KubeObject } from '../../../../src/cluster/apiserver/types.ts';

const now = new Date('2025-01-10T12:00:00Z');

const obj: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: {
    name: 'w1',
    creationTimestamp: '2025-01-10T11:55:00Z',
    labels: { 'app.kubernetes.io/name': 'web' },
  },
  spec: { replicas: 3, ratio: 0.5, paused: false, tags: ['a', 'b'], selector: { app: 'web' } },
  status: {
    conditions: [
      { type: 'Progressing', status: 'True' },
      { type: 'Ready', status: 'False' },
    ],
  },
};

describe('printer columns', () => {
  test('without declared columns: Name and Age', () => {
    const t = tableForColumns(undefined);
    assert.deepEqual(
      t.columns.map((c) => [c.name, c.type, c.format]),
      [
        ['Name', 'string', 'name'],
        ['Age', 'date', undefined],
      ],
    );
    assert.deepEqual(t.cells(obj, now), ['w1', '5m']);
  });

  test('declared columns keep type, format and priority and type their cells', () => {
    const t = tableForColumns([
      { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
      { name: 'Ratio', type: 'number', format: 'float', jsonPath: '.spec.ratio', priority: 1 },
      { name: 'Paused', type: 'boolean', jsonPath: '.spec.paused' },
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: 'Tags', type: 'string', jsonPath: '.spec.tags' },
      { name: 'Selector', type: 'string', jsonPath: '.spec.selector' },
      { name: 'App', type: 'string', jsonPath: '.metadata.labels.app\\.kubernetes\\.io/name' },
      { name: 'Missing', type: 'string', jsonPath: '.status.phase' },
      { name: 'Created', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ]);
    assert.deepEqual(
      t.columns.map((c) => [c.name, c.type, c.priority ?? 0]),
      [
        ['Name', 'string', 0],
        ['Replicas', 'integer', 0],
        ['Ratio', 'number', 1],
        ['Paused', 'boolean', 0],
        ['Ready', 'string', 0],
        ['Tags', 'string', 0],
        ['Selector', 'string', 0],
        ['App', 'string', 0],
        ['Missing', 'string', 0],
        ['Created', 'date', 0],
      ],
    );
    assert.equal(t.columns[2]!.format, 'float');
    assert.deepEqual(t.cells(obj, now), [
      'w1',
      3,
      0.5,
      false,
      'False',
      '[a b]',
      'map[app:web]',
      'web',
      null,
      '5m',
    ]);
  });

  test('a cell of the wrong type is empty', () => {
    const t = tableForColumns([{ name: 'Replicas', type: 'integer', jsonPath: '.spec.tags' }]);
    assert.deepEqual(t.cells(obj, now), ['w1', null]);
  });

  test('kubectl JSONPath forms are translated', () => {
    assert.equal(toJSONPathPlus('.spec.replicas'), '$.spec.replicas');
    assert.equal(toJSONPathPlus('{.spec.replicas}'), '$.spec.replicas');
    assert.equal(
      toJSONPathPlus('.metadata.labels.app\\.kubernetes\\.io/name'),
      '$.metadata.labels["app.kubernetes.io/name"]',
    );
    assert.equal(
      toJSONPathPlus(".status.conditions[?(@.type=='Ready')].status"),
      "$.status.conditions[?(@.type=='Ready')].status",
    );
  });
});
