/** The defaulting webhook's creator labels, sanitised as upstream's webhook does (pkg/utils SanitizeLabel). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveConfig } from '../../../src/controllers/appwrapper/config.ts';
import { defaultingHandler, sanitizeLabel } from '../../../src/controllers/appwrapper/webhook.ts';
import { type Client, silentLogger } from '../../../src/runtime/index.ts';
import { appWrapper } from './fixtures.ts';

test('sanitizeLabel: at most 63 characters, invalid ones as _, no -_. at the ends', () => {
  assert.equal(sanitizeLabel('system:serviceaccount:ns:sa'), 'system_serviceaccount_ns_sa');
  assert.equal(sanitizeLabel('-_.x.y_-'), 'x.y');
  assert.equal(sanitizeLabel('a'.repeat(70)), 'a'.repeat(63));
});

test('the creator user name and uid labels are both sanitised', async () => {
  const handler = defaultingHandler({
    client: {} as Client,
    config: resolveConfig({ enableKueueIntegrations: false }),
  });
  const res = await handler(
    {
      uid: 'r1',
      kind: { group: 'workload.codeflare.dev', version: 'v1beta2', kind: 'AppWrapper' },
      resource: { group: 'workload.codeflare.dev', version: 'v1beta2', resource: 'appwrappers' },
      operation: 'CREATE',
      namespace: 'default',
      userInfo: { username: 'oidc:alice@example.com', uid: 'CN=alice,OU=people/42' },
      object: appWrapper(),
    } as Parameters<typeof handler>[0],
    { log: silentLogger(), signal: new AbortController().signal },
  );
  const value = (path: string) => (res.patch ?? []).find((op) => op.path === path)?.value;
  assert.equal(value('/metadata/labels/workload.codeflare.dev~1user'), 'oidc_alice_example.com');
  assert.equal(value('/metadata/labels/workload.codeflare.dev~1userid'), 'CN_alice_OU_people_42');
});
