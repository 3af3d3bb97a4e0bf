import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AW_KIND, appWrapperCrdManifests, QUEUE_NAME_LABEL } from '../../src/controllers/appwrapper/index.ts';
import * as OFFLOAD from '../../src/controllers/offload/keys.ts';
import { PODGROUP_KIND, type PodGroup, podGroupCrdManifests } from '../../src/controllers/podgroup/index.ts';
import {
  ensurePodSequenceCrd,
  PODSEQUENCE,
  type PodSequence,
} from '../../src/controllers/podsequence/index.ts';
import { Client, type KindRef, type KubeObject, kubeConfigFromString } from '../../src/runtime/index.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { waitFor } from '../support/wait.ts';

const MAIN = resolve(import.meta.dirname, '../../src/cli/main.ts');
const ESC = '\x1b[';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI as a script sees it: piped stdout, colour variables controlled by the test. */
function troupe(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const base = { ...process.env };
  delete base.FORCE_COLOR;
  delete base.NO_COLOR;
  return new Promise((done) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env: { ...base, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

async function served(client: Client, kind: KindRef): Promise<void> {
  await waitFor(`${kind.kind} to be served`, async () => {
    await client.list(kind, { limit: 1 });
    return true;
  });
}

async function createWithStatus<T extends KubeObject>(
  client: Client,
  obj: T,
  status: unknown,
): Promise<void> {
  const created = await client.create(obj);
  await client.updateStatus({ ...created, status } as T);
}

describe('troupe status', () => {
  let tc: TestCluster;
  let client: Client;

  before(async () => {
    // No data plane: the test writes every status itself, and stand-ins must not race it.
    tc = await startTestCluster({ dataPlane: false });
    client = Client.fromKubeConfig(kubeConfigFromString(tc.cluster.server.kubeconfig));
  });
  after(async () => {
    await client?.rest.close();
    await tc?.close();
  });

  test('without troupe CRDs it reads the cluster and leaves the missing kinds out', async () => {
    const r = await troupe(['status', '--kubeconfig', tc.kubeconfigPath, '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.server, tc.cluster.server.url);
    assert.equal(report.namespace, null);
    assert.equal(report.podGroups, undefined);
    assert.equal(report.sequences, undefined);
    assert.equal(report.appWrappers, undefined);
    // Jobs are built in, so the offload section is always there.
    assert.deepEqual(report.offloads, []);
  });

  test('summarises groups, sequences, AppWrappers and offloads; plain when piped', async () => {
    for (const crd of [...podGroupCrdManifests(), ...appWrapperCrdManifests()]) await client.create(crd);
    await ensurePodSequenceCrd(client);
    await served(client, PODGROUP_KIND);
    await served(client, AW_KIND);
    await tc.kubectl(['create', 'namespace', 'team-b']);

    await createWithStatus<PodGroup>(
      client,
      {
        apiVersion: PODGROUP_KIND.apiVersion,
        kind: 'PodGroup',
        metadata: { name: 'trainers', namespace: 'default' },
        spec: { minMember: 3 },
      },
      { state: { phase: 'Pending', reason: 'NotEnoughTasks' }, running: 2 },
    );
    await createWithStatus<PodSequence>(
      client,
      {
        ...PODSEQUENCE,
        metadata: { name: 'db-first', namespace: 'team-b' },
        spec: {
          podGroups: [
            { name: 'db', pods: ['db-0'] },
            { name: 'app', pods: ['app-0'] },
          ],
        },
      },
      {
        phase: 'InProgress',
        currentIndex: 1,
        totalGroups: 2,
        progress: '2/2',
        currentGroupName: 'app',
        currentGroupReady: '0/1',
      },
    );
    // The embedded Kueue stand-in may admit (unsuspend) it at any time; the phase comes from status.
    await createWithStatus(
      client,
      {
        ...AW_KIND,
        metadata: { name: 'batch', namespace: 'default', labels: { [QUEUE_NAME_LABEL]: 'user-queue' } },
        spec: {
          suspend: true,
          components: [
            {
              template: {
                apiVersion: 'v1',
                kind: 'Pod',
                metadata: { name: 'p' },
                spec: { containers: [{ name: 'c', image: 'busybox' }] },
              },
            },
          ],
        },
      },
      { phase: 'Suspended' },
    );
    await client.create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'render',
        namespace: 'team-b',
        annotations: {
          [OFFLOAD.MANAGED]: 'true',
          [OFFLOAD.STATE]: 'Offloaded',
          [OFFLOAD.POD_ID]: 'rp-123',
          [OFFLOAD.PROVIDER]: 'runpod',
          [OFFLOAD.COST_PER_HR]: '0.44',
        },
      },
      spec: {
        suspend: true,
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
      },
    });
    // A Job troupe does not manage is not an offload.
    await client.create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'plain', namespace: 'default' },
      spec: {
        suspend: true,
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
      },
    });

    const json = await troupe(['status', '--kubeconfig', tc.kubeconfigPath, '-o', 'json']);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.deepEqual(report.podGroups, [
      {
        namespace: 'default',
        name: 'trainers',
        phase: 'Pending',
        running: 2,
        minMember: 3,
        reason: 'NotEnoughTasks',
      },
    ]);
    assert.deepEqual(report.sequences, [
      {
        namespace: 'team-b',
        name: 'db-first',
        phase: 'InProgress',
        tier: 'app',
        progress: '2/2',
        ready: '0/1',
      },
    ]);
    assert.deepEqual(report.appWrappers, [
      { namespace: 'default', name: 'batch', phase: 'Suspended', queue: 'user-queue' },
    ]);
    assert.deepEqual(report.offloads, [
      {
        namespace: 'team-b',
        name: 'render',
        state: 'Offloaded',
        remotePod: 'rp-123',
        provider: 'runpod',
        costPerHr: '0.44',
      },
    ]);

    const text = await troupe(['status', '--kubeconfig', tc.kubeconfigPath]);
    assert.equal(text.code, 0, text.stderr);
    assert.ok(!text.stdout.includes(ESC), 'no colour codes when piped');
    assert.ok(!text.stderr.includes(ESC), 'no progress line when stderr is not a terminal');
    const lines = text.stdout.split('\n');
    assert.match(text.stdout, /^Cluster https:\/\/127\.0\.0\.1:\d+ +all namespaces$/m);
    assert.ok(lines.includes('Pod groups (1)'));
    assert.match(text.stdout, /^ {2}NAMESPACE +NAME +PHASE +RUNNING\/MIN +REASON$/m);
    assert.match(text.stdout, /^ {2}default +trainers +Pending +2\/3 +NotEnoughTasks$/m);
    assert.match(text.stdout, /^ {2}team-b +db-first +InProgress +app +2\/2 +0\/1$/m);
    assert.match(text.stdout, /^ {2}default +batch +Suspended +user-queue$/m);
    assert.match(text.stdout, /^ {2}team-b +render +Offloaded +rp-123 +runpod +\$0\.44\/h$/m);
    assert.ok(!text.stdout.includes('plain'));
  });

  test('one namespace drops the namespace column and other namespaces', async () => {
    const r = await troupe(['status', '--kubeconfig', tc.kubeconfigPath, '--namespace', 'team-b']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /namespace team-b$/m);
    assert.match(r.stdout, /^ {2}NAME +PHASE +TIER +PROGRESS +READY$/m);
    assert.match(r.stdout, /^ {2}db-first +InProgress +app/m);
    assert.match(r.stdout, /^Pod groups \(0\)\n {2}none$/m);
    assert.ok(!r.stdout.includes('trainers'));
  });

  test('colour when forced, and NO_COLOR wins over it', async () => {
    const forced = await troupe(['status', '--kubeconfig', tc.kubeconfigPath], { FORCE_COLOR: '1' });
    assert.equal(forced.code, 0, forced.stderr);
    assert.ok(forced.stdout.includes(`${ESC}32mRunning`) || forced.stdout.includes(`${ESC}33mPending`));
    const off = await troupe(['status', '--kubeconfig', tc.kubeconfigPath], {
      FORCE_COLOR: '1',
      NO_COLOR: '1',
    });
    assert.equal(off.code, 0, off.stderr);
    assert.ok(!off.stdout.includes(ESC));
  });

  test('exit 1 with a clear message when the credentials are rejected', async () => {
    const kc = await readFile(tc.kubeconfigPath, 'utf8');
    const bad = `${tc.kubeconfigPath}.bad`;
    await writeFile(bad, kc.replace(/token: .*/, 'token: not-a-valid-token'), { mode: 0o600 });
    assert.notEqual(kc, await readFile(bad, 'utf8'), 'the kubeconfig uses a bearer token');
    const r = await troupe(['status', '--kubeconfig', bad]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(
      r.stderr,
      /^troupe: the API server at https:\/\/127\.0\.0\.1:\d+ rejected the credentials \(401 Unauthorized\)/,
    );
  });

  test('exit 1 when the cluster cannot be reached or configured, 2 on a bad flag', async () => {
    const kc = await readFile(tc.kubeconfigPath, 'utf8');
    const gone = `${tc.kubeconfigPath}.gone`;
    // Port 1 is privileged and unused here: the connection is refused at once.
    await writeFile(gone, kc.replace(/server: https:\/\/127\.0\.0\.1:\d+/, 'server: https://127.0.0.1:1'), {
      mode: 0o600,
    });
    const refused = await troupe(['status', '--kubeconfig', gone]);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /^troupe: cannot reach the API server at https:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/,
    );

    const missing = await troupe(['status', '--kubeconfig', `${tc.kubeconfigPath}.nope`]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^troupe: kubeconfig .*\.nope does not exist/);

    const badFlag = await troupe(['status', '--kubeconfig', tc.kubeconfigPath, '-o', 'yaml']);
    assert.equal(badFlag.code, 2);
    assert.match(badFlag.stderr, /argument 'yaml' is invalid\. Allowed choices are text, json/);
  });
});
