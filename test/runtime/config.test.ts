import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { loadKubeConfig } from '../../src/runtime/config.ts';
import { createLogger } from '../../src/runtime/log.ts';

function kubeconfig(name: string, server: string, namespace?: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server } }],
    users: [{ name, user: { token: `token-${name}` } }],
    contexts: [{ name, context: { cluster: name, user: name, ...(namespace ? { namespace } : {}) } }],
    'current-context': name,
  });
}

describe('loadKubeConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-kc-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const a = join(dir, 'a.yaml');
  const b = join(dir, 'b.yaml');
  writeFileSync(a, kubeconfig('a', 'https://a.example:6443', 'team-a'));
  writeFileSync(b, kubeconfig('b', 'https://b.example:6443'));
  const home = join(dir, 'home');
  mkdirSync(join(home, '.kube'), { recursive: true });
  writeFileSync(join(home, '.kube', 'config'), kubeconfig('h', 'https://home.example:6443'));

  test('an explicit path wins over KUBECONFIG', () => {
    const r = loadKubeConfig({ kubeconfig: b, env: { KUBECONFIG: a }, home });
    assert.equal(r.source, 'explicit');
    assert.equal(r.kubeConfig.getCurrentCluster()?.server, 'https://b.example:6443');
  });

  test('KUBECONFIG lists are merged, the first file winning', () => {
    const r = loadKubeConfig({
      env: { KUBECONFIG: [join(dir, 'missing.yaml'), a, b].join(delimiter) },
      home,
    });
    assert.equal(r.source, 'env');
    assert.equal(r.kubeConfig.getCurrentCluster()?.server, 'https://a.example:6443');
    assert.equal(r.namespace, 'team-a');
    assert.deepEqual(
      r.kubeConfig
        .getContexts()
        .map((c) => c.name)
        .sort(),
      ['a', 'b'],
    );
  });

  test('a context can be chosen', () => {
    const r = loadKubeConfig({ env: { KUBECONFIG: [a, b].join(delimiter) }, context: 'b', home });
    assert.equal(r.kubeConfig.getCurrentCluster()?.server, 'https://b.example:6443');
    assert.throws(() => loadKubeConfig({ kubeconfig: a, context: 'zzz', home }), /context zzz not found/);
  });

  test('in-cluster config is used when the service account is mounted', () => {
    const prefix = join(dir, 'pod');
    const sa = join(prefix, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), 'sa-token');
    writeFileSync(join(sa, 'ca.crt'), '');
    writeFileSync(join(sa, 'namespace'), 'troupe-system\n');
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    process.env.KUBERNETES_SERVICE_HOST = '10.0.0.1';
    process.env.KUBERNETES_SERVICE_PORT = '443';
    try {
      const r = loadKubeConfig({ env: process.env, pathPrefix: prefix, home });
      assert.equal(r.source, 'in-cluster');
      assert.equal(r.kubeConfig.getCurrentCluster()?.server, 'https://10.0.0.1:443');
      assert.equal(r.namespace, 'troupe-system');
    } finally {
      if (saved.host === undefined) delete process.env.KUBERNETES_SERVICE_HOST;
      else process.env.KUBERNETES_SERVICE_HOST = saved.host;
      if (saved.port === undefined) delete process.env.KUBERNETES_SERVICE_PORT;
      else process.env.KUBERNETES_SERVICE_PORT = saved.port;
    }
  });

  test('falls back to ~/.kube/config, and explains when nothing is found', () => {
    assert.equal(loadKubeConfig({ env: {}, home }).source, 'home');
    assert.throws(() => loadKubeConfig({ env: {}, home: join(dir, 'nowhere') }), /no cluster configuration/);
  });
});

describe('createLogger', () => {
  function capture() {
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk, _enc, cb) {
        for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
        cb();
      },
    });
    return { lines, destination };
  }

  test('writes JSON lines at the configured level', () => {
    const { lines, destination } = capture();
    const log = createLogger({ level: 'warn', destination });
    log.info('hidden');
    log.warn({ controller: 'x' }, 'shown');
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.msg, 'shown');
    assert.equal(lines[0]?.controller, 'x');
  });

  test('never writes credentials or Secret data', () => {
    const { lines, destination } = capture();
    const log = createLogger({ destination });
    log.info(
      { token: 'abc', user: { password: 'p', name: 'n' }, headers: { authorization: 'Bearer t' } },
      'm',
    );
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'd' },
      data: { k: 'c2VjcmV0' },
    };
    log.info({ obj: secret }, 'secret seen');
    const text = JSON.stringify(lines);
    assert.doesNotMatch(text, /abc|"p"|Bearer t|c2VjcmV0/);
    assert.deepEqual(lines[1]?.obj, { apiVersion: 'v1', kind: 'Secret', namespace: 'd', name: 's' });
  });
});
