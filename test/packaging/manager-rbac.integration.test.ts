/**
 * The manager runs with exactly the rights dist/install.yaml gives it. The file is applied
 * with kubectl to the embedded cluster with RBAC enforced; the manager is started as its
 * Deployment would start it (the same args and environment) with a token of the
 * Deployment's ServiceAccount; the seeds' samples then go through every capability it runs.
 * Every request the API server forbade fails the test, and a few rights it must not have
 * are checked to be absent.
 */

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { INSTALL_PATH, type KubeDoc, parseManifests, ROOT } from '../../scripts/gen-install.ts';
import { type BuiltManager, buildManager } from '../../src/cli/manager.ts';
import { kubeConfigFromString } from '../../src/runtime/index.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { waitFor } from '../support/wait.ts';
import { type Deployment, deploymentFlags } from './deployment-flags.ts';

describe('the manager under the RBAC of dist/install.yaml', () => {
  let t: TestCluster;
  let built: BuiltManager | undefined;
  let dep: Deployment;
  let sa: string;
  let manifests: KubeDoc[] = [];
  const forbidden: string[] = [];

  before(async () => {
    t = await startTestCluster({
      authorizationMode: 'RBAC',
      timeScale: 10,
      // The admin (kubectl here, and the in-process data plane) is never forbidden: every 403
      // is the manager's.
      log: (msg, f) => {
        if (msg === 'request' && f.code === 403) forbidden.push(`${f.method} ${f.path}`);
      },
    });
    await t.kubectl(['apply', '--server-side', '-f', INSTALL_PATH]);
    const docs = parseManifests(await readFile(INSTALL_PATH, 'utf8'));
    dep = docs.find((d) => d.kind === 'Deployment') as Deployment;
    manifests = docs;
    sa = dep.spec.template.spec.serviceAccountName;
  });

  after(async () => {
    await built?.stop();
    await t?.close();
  });

  test('leads through its Lease and takes the seed samples through every capability it runs', async () => {
    const flags = deploymentFlags(dep, [], manifests);
    // The AppWrapper operator configuration of the manifests reached the manager.
    assert.deepEqual(flags.appwrapperConfig, {});
    const ns = dep.metadata.namespace ?? '';
    const { server } = t.cluster;
    const token = server.mintServiceAccountToken(ns, sa);
    built = buildManager(kubeConfigFromString(server.kubeconfigFor(token)), flags);
    assert.deepEqual(
      built.capabilities.map((c) => c.name),
      flags.controllers.split(','),
    );
    await built.manager.start();

    const lease = await waitFor('the manager to hold its Lease', async () => {
      const r = await t.kubectlResult(['-n', ns, 'get', 'lease', flags.leaderElectionId, '-o', 'json']);
      const holder = r.code === 0 ? JSON.parse(r.stdout).spec?.holderIdentity : undefined;
      return holder || undefined;
    });
    assert.ok(lease);

    await t.kubectl(['apply', '-f', join(ROOT, 'config/samples/example-podsequence.yaml')]);
    await t.kubectl(['apply', '-f', join(ROOT, 'config/samples/podgroup/seed-example.yaml')]);
    await t.kubectl(['apply', '-f', join(ROOT, 'samples/appwrapper.yaml')]);

    // Waits for a condition, or stops at the first forbidden request (with its path in the
    // failure) rather than waiting for what the forbidden request never let happen.
    const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 60_000) => {
      await waitFor(what, async () => forbidden.length > 0 || (await check()), {
        timeoutMs,
        intervalMs: 200,
      });
      assert.deepEqual(forbidden, [], `requests the RBAC of dist/install.yaml forbade, waiting for ${what}`);
    };
    const jsonpath = async (args: string[], path: string) =>
      (await t.kubectl([...args, '-o', `jsonpath=${path}`])).trim();
    // podsequence: the three tiers released one by one until the sequence completes.
    await until(
      'PodSequence example-sequence Completed',
      async () => (await jsonpath(['get', 'podseq', 'example-sequence'], '{.status.phase}')) === 'Completed',
    );
    // podgroup: the gang labelled ready, and its PodGroup created with a Running status.
    await until(
      'the gang labelled ready',
      async () =>
        (
          await jsonpath(
            ['get', 'pods', '-l', 'podgroup.jhwagner.github.io/ready=true'],
            '{.items[*].metadata.name}',
          )
        )
          .split(' ')
          .sort()
          .join(',') === 'worker-1,worker-2,worker-3',
    );
    await until(
      'PodGroup training-job-1 Running',
      async () => (await jsonpath(['get', 'pg', 'training-job-1'], '{.status.state.phase}')) === 'Running',
    );
    // appwrapper: admitted by Kueue, its pod created, run, and the wrapper Succeeded.
    await until(
      'AppWrapper sample Succeeded',
      async () => (await jsonpath(['get', 'appwrapper', 'sample'], '{.status.phase}')) === 'Succeeded',
    );
    // Deleting it makes the controller delete its pod and then lift its finalizer.
    await t.kubectl(['delete', 'appwrapper', 'sample', '--wait=false']);
    await until(
      'AppWrapper sample gone',
      async () => (await t.kubectlResult(['get', 'appwrapper', 'sample'])).code !== 0,
    );

    // The controllers' Events were recorded under the same rights.
    const reasons = await jsonpath(
      ['get', 'events.events.k8s.io', '--field-selector', 'regarding.name=example-sequence'],
      '{.items[*].reason}',
    );
    assert.match(reasons, /Completed/);
    const ready = await fetch(`${built.manager.healthServer!.url}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
    assert.deepEqual(forbidden, [], 'requests the RBAC of dist/install.yaml forbade');
  });

  test('holds no right beyond what its capabilities use', async () => {
    const as = `--as=system:serviceaccount:${dep.metadata.namespace}:${sa}`;
    const canI = async (...args: string[]) =>
      (await t.kubectlResult(['auth', 'can-i', ...args, as])).stdout.trim();
    // Secrets, node writes (PodSequence lite mode has no taints), Leases outside its namespace.
    assert.equal(await canI('get', 'secrets', '-A'), 'no');
    assert.equal(await canI('patch', 'nodes'), 'no');
    assert.equal(await canI('create', 'leases', '-n', 'default'), 'no');
    assert.equal(await canI('update', 'leases/some-other-lease', '-n', dep.metadata.namespace ?? ''), 'no');
    assert.equal(await canI('create', 'podsequences.scheduling.example.com'), 'no');
    assert.equal(await canI('update', 'pods'), 'no');
    // And the rights it does use are there.
    assert.equal(await canI('patch', 'pods'), 'yes');
    assert.equal(await canI('patch', 'podsequences.scheduling.example.com', '--subresource=status'), 'yes');
    assert.equal(await canI('create', 'leases', '-n', dep.metadata.namespace ?? ''), 'yes');
  });
});
