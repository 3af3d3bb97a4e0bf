/**
 * The Makefile's kubebuilder-style targets. install/deploy/undeploy/uninstall are run for
 * real against the embedded API server (KUBECTL points kubectl at it); the others are
 * checked with `make -n`.
 */

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { ROOT } from '../../scripts/gen-install.ts';
import { startTestServer, type TestServer } from '../support/apiserver.ts';

const run = promisify(execFile);
const make = (...args: string[]) =>
  run('make', ['--no-print-directory', ...args], {
    cwd: ROOT,
    timeout: 120_000,
    maxBuffer: 16 * 1024 * 1024,
  });

const CRDS = [
  'appwrappers.workload.codeflare.dev',
  'podgroups.scheduling.incubator.k8s.io',
  'podsequences.scheduling.example.com',
];

describe('Makefile', () => {
  test('has the kubebuilder targets the seeds and docs/install.md mention', async () => {
    for (const t of [
      'build',
      'test',
      'run',
      'install',
      'uninstall',
      'deploy',
      'undeploy',
      'manifests',
      'build-installer',
      'verify-manifests',
      'docker-build',
      'docker-push',
      'deploy-example',
      'kind-push',
    ]) {
      const { stdout } = await make('-n', t);
      assert.ok(stdout.trim().length > 0, `make ${t} does something`);
    }
  });

  test('run starts the manager with ARGS', async () => {
    assert.match(
      (await make('-n', 'run', 'ARGS=--controllers=podgroup')).stdout,
      /troupe -- run --controllers=podgroup/,
    );
  });

  test('verify-manifests passes: dist/install.yaml is up to date', async () => {
    await make('verify-manifests');
  });
});

describe('make install, deploy, undeploy, uninstall against a cluster', () => {
  let t: TestServer;
  let kubectlVar: string;

  before(async () => {
    t = await startTestServer();
    kubectlVar = `KUBECTL=kubectl --kubeconfig=${t.kubeconfigPath}`;
  });
  after(() => t?.close());

  const crdNames = async () =>
    (await t.kubectl(['get', 'crd', '-o', 'jsonpath={.items[*].metadata.name}'])).stdout
      .split(' ')
      .filter((n) => CRDS.includes(n))
      .sort();

  test('install applies config/crd, uninstall removes it', async () => {
    await make('install', kubectlVar);
    assert.deepEqual(await crdNames(), CRDS);
    await make('uninstall', kubectlVar);
    assert.deepEqual(await crdNames(), []);
  });

  test('deploy installs config/default with image IMG; undeploy removes it', async () => {
    await make('deploy', kubectlVar, 'IMG=registry.example/troupe:v9');
    assert.deepEqual(await crdNames(), CRDS);
    const image = (
      await t.kubectl([
        '-n',
        'troupe-system',
        'get',
        'deployment',
        'troupe-controller-manager',
        '-o',
        'jsonpath={.spec.template.spec.containers[0].image}',
      ])
    ).stdout;
    assert.equal(image, 'registry.example/troupe:v9');
    const sa = await t.kubectlResult([
      '-n',
      'troupe-system',
      'get',
      'serviceaccount',
      'troupe-controller-manager',
    ]);
    assert.equal(sa.code, 0, sa.stderr);

    await make('undeploy', kubectlVar);
    assert.deepEqual(await crdNames(), []);
    const role = await t.kubectlResult(['get', 'clusterrole', 'troupe-manager-role']);
    assert.notEqual(role.code, 0, 'the ClusterRole is gone');
    const ns = await t.kubectlResult(['get', 'namespace', 'troupe-system']);
    assert.notEqual(ns.code, 0, 'the namespace is gone');
  });
});
