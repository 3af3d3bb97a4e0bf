import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

const ZONE = 'topology.kubernetes.io/zone';

function pod(name: string, labels: Record<string, string>, affinity: unknown): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: { affinity, containers: [{ name: 'c', image: 'busybox' }] },
  });
}

describe('matchLabelKeys and mismatchLabelKeys in pod (anti-)affinity terms', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  const create = (body: string) => t.request('POST', '/api/v1/namespaces/default/pods', { body });

  test('a created pod carries them in its selectors as In / NotIn its own label values', async () => {
    const created = await create(
      pod(
        'merged',
        { app: 'train', job: 'j1', team: 'red' },
        {
          podAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              {
                labelSelector: { matchLabels: { app: 'train' } },
                topologyKey: ZONE,
                // `absent` is not among the pod's labels: it adds nothing.
                matchLabelKeys: ['job', 'absent'],
                mismatchLabelKeys: ['team'],
              },
            ],
          },
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 10,
                podAffinityTerm: {
                  labelSelector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] },
                  topologyKey: 'kubernetes.io/hostname',
                  mismatchLabelKeys: ['job'],
                },
              },
            ],
          },
        },
      ),
    );
    assert.equal(created.status, 201, created.text);
    const got = (await t.request('GET', '/api/v1/namespaces/default/pods/merged')).json();
    const affinity = (got.spec as { affinity: Record<string, Record<string, unknown[]>> }).affinity;
    assert.deepEqual(affinity.podAffinity!.requiredDuringSchedulingIgnoredDuringExecution, [
      {
        labelSelector: {
          matchLabels: { app: 'train' },
          matchExpressions: [
            { key: 'job', operator: 'In', values: ['j1'] },
            { key: 'team', operator: 'NotIn', values: ['red'] },
          ],
        },
        topologyKey: ZONE,
        matchLabelKeys: ['job', 'absent'],
        mismatchLabelKeys: ['team'],
      },
    ]);
    assert.deepEqual(affinity.podAntiAffinity!.preferredDuringSchedulingIgnoredDuringExecution, [
      {
        weight: 10,
        podAffinityTerm: {
          labelSelector: {
            matchExpressions: [
              { key: 'app', operator: 'Exists' },
              { key: 'job', operator: 'NotIn', values: ['j1'] },
            ],
          },
          topologyKey: 'kubernetes.io/hostname',
          mismatchLabelKeys: ['job'],
        },
      },
    ]);
  });

  test('a pod template keeps them as written', async () => {
    const template = {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [{ name: 'c', image: 'nginx' }],
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              {
                labelSelector: { matchLabels: { app: 'web' } },
                topologyKey: ZONE,
                matchLabelKeys: ['pod-template-hash'],
              },
            ],
          },
        },
      },
    };
    const created = await t.request('POST', '/apis/apps/v1/namespaces/default/deployments', {
      body: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: { selector: { matchLabels: { app: 'web' } }, template },
      }),
    });
    assert.equal(created.status, 201, created.text);
    const spec = created.json().spec as { template: { spec: { affinity: unknown } } };
    assert.deepEqual(spec.template.spec.affinity, template.spec.affinity);
  });

  test('they are validated as kube-apiserver does', async () => {
    const refused = await create(
      pod(
        'refused',
        { job: 'j1' },
        {
          podAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              {
                labelSelector: { matchExpressions: [{ key: 'job', operator: 'In', values: ['j1', 'j2'] }] },
                topologyKey: ZONE,
                matchLabelKeys: ['job', 'Bad Key'],
                mismatchLabelKeys: ['job'],
              },
            ],
          },
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 0, podAffinityTerm: { topologyKey: ZONE, mismatchLabelKeys: ['job'] } },
            ],
          },
        },
      ),
    );
    assert.equal(refused.status, 422, refused.text);
    const status = refused.json();
    const required = 'spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]';
    const preferred = 'spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]';
    assert.deepEqual((status.details as { causes: unknown }).causes, [
      {
        reason: 'FieldValueInvalid',
        message:
          "Invalid value: \"Bad Key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        field: `${required}.matchLabelKeys[1]`,
      },
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "job": exists in both matchLabelKeys and labelSelector',
        field: `${required}[0]`,
      },
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "job": exists in both matchLabelKeys and mismatchLabelKeys',
        field: `${required}.matchLabelKeys[0]`,
      },
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: 0: must be in the range 1-100',
        field: `${preferred}.weight`,
      },
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: must not be specified when labelSelector is not set',
        field: `${preferred}.podAffinityTerm.mismatchLabelKeys`,
      },
    ]);
    assert.equal((await t.request('GET', '/api/v1/namespaces/default/pods/refused')).status, 404);
  });
});
