import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AW_KIND, appWrapperCrdManifests } from '../../src/controllers/appwrapper/index.ts';
import { GROUP_LABEL, PODGROUP_KIND, podGroupCrdManifests } from '../../src/controllers/podgroup/index.ts';
import { DEFAULT_GATE, ensurePodSequenceCrd, PODSEQUENCE } from '../../src/controllers/podsequence/index.ts';
import { Client, type KindRef, type KubeObject, kubeConfigFromString } from '../../src/runtime/index.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { pod as buildPod } from '../support/objects.ts';
import { waitFor } from '../support/wait.ts';

const MAIN = resolve(import.meta.dirname, '../../src/cli/main.ts');

function troupe(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.FORCE_COLOR;
  return new Promise((done) => {
    execFile(process.execPath, [MAIN, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

async function served(client: Client, kind: KindRef): Promise<void> {
  await waitFor(`${kind.kind} to be served`, async () => {
    await client.list(kind, { limit: 1 });
    return true;
  });
}

function pod(name: string, extra: Partial<KubeObject['metadata']> = {}, gated = false): KubeObject {
  return buildPod<KubeObject>(name, {
    image: 'busybox',
    ...(gated ? { gates: [DEFAULT_GATE] } : {}),
    metadata: extra,
  });
}

describe('troupe explain', () => {
  let tc: TestCluster;
  let client: Client;
  let kc: string[];

  before(async () => {
    tc = await startTestCluster();
    client = Client.fromKubeConfig(kubeConfigFromString(tc.cluster.server.kubeconfig));
    kc = ['--kubeconfig', tc.kubeconfigPath];
  });
  after(async () => {
    await client?.rest.close();
    await tc?.close();
  });

  test('a bad argument exits 2 with a usage message, before touching the cluster', async () => {
    for (const args of [['explain', 'foo'], ['explain', 'widget/x'], ['explain', 'pod/'], ['explain']]) {
      const r = await troupe([...args, '--kubeconfig', '/does/not/exist']);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
    }
    const r = await troupe(['explain', 'foo']);
    assert.match(
      r.stderr,
      /"foo" is not an object reference: expected <kind>\/<name>, where kind is podsequence/,
    );
  });

  test('a missing object or an uninstalled kind exits 1', async () => {
    const missing = await troupe(['explain', 'pod/nope', ...kc]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^troupe: Pod default\/nope not found$/m);
    const uninstalled = await troupe(['explain', 'pg/x', ...kc]);
    assert.equal(uninstalled.code, 1);
    assert.match(uninstalled.stderr, /PodGroup is not installed in this cluster/);
  });

  test('PodSequence and Pod: which tier waits for what', async () => {
    await ensurePodSequenceCrd(client);
    await client.create(pod('db-0', {}, true));
    await client.create(pod('app-0', {}, true));
    await client.create({
      ...PODSEQUENCE,
      metadata: { name: 'db-first', namespace: 'default' },
      spec: {
        podGroups: [
          { name: 'db', pods: ['db-0'] },
          { name: 'app', pods: ['app-0'] },
        ],
      },
    });
    const seq = await troupe(['explain', 'podseq/db-first', ...kc]);
    assert.equal(seq.code, 0, seq.stderr);
    assert.match(seq.stdout, /^PodSequence default\/db-first: /);
    assert.match(seq.stdout, /db-0/);
    assert.match(seq.stdout, /app-0/);

    const p = await troupe(['explain', 'pod/app-0', '-n', 'default', ...kc]);
    assert.equal(p.code, 0, p.stderr);
    assert.match(p.stdout, /^Pod default\/app-0: gated by podsequence\.example\.com\/sequence-gate/);
    assert.match(p.stdout, /PodSequence default\/db-first .*group .*app/);
    assert.match(p.stdout, /group .*db.* must be Ready first/);
    assert.match(
      p.stdout,
      /^Progress: Pending: held by scheduling gate podsequence\.example\.com\/sequence-gate$/m,
    );
  });

  test('PodGroup: phase, reason and members', async () => {
    for (const crd of podGroupCrdManifests()) await client.create(crd);
    await served(client, PODGROUP_KIND);
    const created = await client.create({
      ...PODGROUP_KIND,
      metadata: { name: 'trainers', namespace: 'default' },
      spec: { minMember: 3 },
    });
    await client.updateStatus({
      ...created,
      status: {
        state: { phase: 'Pending', reason: 'NotEnoughTasks', message: '2 of 3 members exist' },
        running: 0,
      },
    });
    await client.create(pod('trainer-0', { labels: { [GROUP_LABEL]: 'trainers' } }, true));
    await client.create(pod('trainer-1', { labels: { [GROUP_LABEL]: 'trainers' } }, true));
    const r = await troupe(['explain', 'podgroup/trainers', ...kc]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^PodGroup default\/trainers: Pending \(NotEnoughTasks\): 2 of 3 members exist$/m);
    assert.match(r.stdout, /needs 3 members running; 0 running/);
    assert.match(r.stdout, /waiting for 3 more running members/);
    assert.match(
      r.stdout,
      /Members \(2\):\n {4}trainer-0: Pending: held by scheduling gate .*\n {4}trainer-1: /,
    );
  });

  test('AppWrapper: phase, conditions and components', async () => {
    for (const crd of appWrapperCrdManifests()) await client.create(crd);
    await served(client, AW_KIND);
    const created = await client.create({
      ...AW_KIND,
      metadata: { name: 'batch', namespace: 'default' },
      spec: {
        components: [
          {
            template: {
              apiVersion: 'batch/v1',
              kind: 'Job',
              metadata: { name: 'work' },
              spec: {
                template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
              },
            },
          },
        ],
      },
    });
    await client.updateStatus({
      ...created,
      status: {
        phase: 'Running',
        conditions: [
          {
            type: 'QuotaReserved',
            status: 'True',
            reason: 'Admitted',
            message: 'admitted by queue',
            lastTransitionTime: new Date().toISOString(),
          },
        ],
      },
    });
    const r = await troupe(['explain', 'aw/batch', ...kc]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^AppWrapper default\/batch: Running, no queue$/m);
    assert.match(r.stdout, /^ {4}QuotaReserved: True \(Admitted\) admitted by queue$/m);
    assert.match(r.stdout, /^ {2}Components \(1\):\n {4}1\. Job work, not deployed$/m);
  });
});
