/**
 * The embedded cluster's state on disk, through real `troupe cluster` processes and kubectl:
 * restarts (SIGTERM and SIGKILL), one owner per data directory, damaged state, --reset,
 * --ephemeral, and a port taken while the cluster was down.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { crashRound } from '../../bench/crash-round.ts';
import { type ClusterProcess, kubectlAt, startClusterProcess } from '../support/cluster-process.ts';
import { waitFor } from '../support/wait.ts';

const dirs: string[] = [];
const procs: ClusterProcess[] = [];
after(async () => {
  for (const p of procs) await p.stop('SIGKILL');
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'troupe-persist-'));
  dirs.push(d);
  return d;
}

async function start(dir: string, args: string[] = []): Promise<ClusterProcess> {
  const p = await startClusterProcess(dir, args);
  procs.push(p);
  return p;
}

function kubectl(dir: string) {
  return async (args: string[], input?: string) => {
    const r = await kubectlAt(join(dir, 'kubeconfig'), join(dir, '.kubectl-cache'), args, input);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
}

const json = <T>(s: string) => JSON.parse(s) as T;
interface Obj {
  metadata: {
    uid: string;
    resourceVersion: string;
    generation?: number;
    managedFields?: unknown[];
    name: string;
  };
  status?: Record<string, unknown>;
}

const MANIFESTS = `
apiVersion: v1
kind: Namespace
metadata: {name: app}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: app}
data: {color: blue}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: app}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
`;
/** Runs 6 s: created last, just before the crash, so that it is still running then. */
const BATCH = `
apiVersion: v1
kind: Pod
metadata: {name: batch, namespace: app, annotations: {troupe.dev/run-duration: 6s}}
spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}
`;

test('a restarted cluster keeps its objects, uids, resourceVersions, port and token; the data plane resumes', async () => {
  const dir = await tempDir();
  const first = await start(dir);
  assert.match(first.stdout, /state: kept in /);
  const k = kubectl(dir);
  await k(['apply', '-f', '-'], MANIFESTS);
  await k(['scale', '-n', 'app', 'deployment/web', '--replicas=3']);
  await waitFor('three web pods Running', async () => {
    const pods = json<{ items: Obj[] }>(await k(['get', 'pods', '-n', 'app', '-o', 'json'])).items;
    return pods.length === 3 && pods.every((p) => p.status?.phase === 'Running');
  });
  const before = {
    cm: json<Obj>(await k(['get', 'cm', '-n', 'app', 'settings', '-o', 'json'])),
    deploy: json<Obj>(await k(['get', 'deploy', '-n', 'app', 'web', '-o', 'json'])),
    events: json<{ items: Obj[] }>(await k(['get', 'events', '-n', 'app', '-o', 'json'])).items.length,
  };
  const listRv = Number(
    json<Obj>(await k(['get', '--raw', '/api/v1/namespaces/app/configmaps'])).metadata.resourceVersion,
  );
  const kubeconfigBefore = await readFile(join(dir, 'kubeconfig'), 'utf8');
  assert.equal(before.deploy.metadata.generation, 2);
  // A crash, not a clean stop, as soon as the batch pod runs: it is still running when the
  // process dies (and if a slow machine let it finish first, what follows still holds).
  await k(['apply', '-f', '-'], BATCH);
  const batchBefore = await waitFor('the batch pod Running', async () => {
    const p = json<Obj & { status: { phase: string; startTime: string } }>(
      await k(['get', 'pod', '-n', 'app', 'batch', '-o', 'json']),
    );
    return p.status?.phase === 'Running' && p;
  });
  assert.equal(await first.stop('SIGKILL'), 'SIGKILL');

  const second = await start(dir);
  const restoredRv = Number(
    /state: restored \d+ objects from .* \(resourceVersion (\d+)\)/.exec(second.stdout)?.[1],
  );
  assert.ok(restoredRv >= listRv, second.stdout);
  // Same port, token and CA: the kubeconfig of the first run keeps working unchanged.
  assert.equal(await readFile(join(dir, 'kubeconfig'), 'utf8'), kubeconfigBefore);
  const cm = json<Obj>(await k(['get', 'cm', '-n', 'app', 'settings', '-o', 'json']));
  assert.equal(cm.metadata.uid, before.cm.metadata.uid);
  assert.equal(cm.metadata.resourceVersion, before.cm.metadata.resourceVersion);
  assert.deepEqual(cm.metadata.managedFields, before.cm.metadata.managedFields);
  const deploy = json<Obj>(await k(['get', 'deploy', '-n', 'app', 'web', '-o', 'json']));
  assert.equal(deploy.metadata.uid, before.deploy.metadata.uid);
  assert.equal(deploy.metadata.generation, 2);
  const events = json<{ items: Obj[] }>(await k(['get', 'events', '-n', 'app', '-o', 'json'])).items.length;
  assert.ok(events >= before.events, `events kept: ${events} >= ${before.events}`);

  // resourceVersions continue, never reused.
  const created = json<Obj>(await k(['create', 'cm', '-n', 'app', 'later', '-o', 'json']));
  assert.ok(Number(created.metadata.resourceVersion) > listRv);

  // A watch from before the restart is expired, as after an etcd compaction.
  const watch = await k([
    'get',
    '--raw',
    `/api/v1/namespaces/app/configmaps?watch=1&resourceVersion=${listRv - 1}&timeoutSeconds=2`,
  ]);
  assert.match(watch, /"type":"ERROR"/);
  assert.match(watch, /"reason":"Expired"/);
  assert.match(watch, /"code":410/);
  assert.match(watch, new RegExp(`"message":"too old resource version: ${listRv - 1} \\(${restoredRv}\\)"`));

  // The batch pod ran 6 s counted from its stored start, not from the restart.
  const batch = await waitFor('the batch pod to finish', async () => {
    const p = json<{
      status: {
        phase: string;
        startTime: string;
        containerStatuses: { state: { terminated?: { startedAt: string; finishedAt: string } } }[];
      };
    }>(await k(['get', 'pod', '-n', 'app', 'batch', '-o', 'json']));
    return p.status.phase === 'Succeeded' && p;
  });
  assert.equal(batch.status.startTime, batchBefore.status.startTime);
  const term = batch.status.containerStatuses[0]!.state.terminated!;
  assert.equal(Date.parse(term.finishedAt) - Date.parse(term.startedAt), 6000);
  // The web pods stay Running with their start times; the nodes are Ready with fresh Leases.
  const pods = json<{ items: (Obj & { status: { phase: string } })[] }>(
    await k(['get', 'pods', '-n', 'app', '-l', 'app=web', '-o', 'json']),
  ).items;
  assert.equal(pods.length, 3);
  assert.ok(pods.every((p) => p.status.phase === 'Running'));
  const restartedAt = Date.now() - 1000;
  await waitFor('every node lease renewed after the restart', async () => {
    const leases = json<{ items: { spec: { renewTime: string } }[] }>(
      await k(['get', 'leases', '-n', 'kube-node-lease', '-o', 'json']),
    ).items;
    return leases.length === 3 && leases.every((l) => Date.parse(l.spec.renewTime) >= restartedAt - 10_000);
  });
  const nodes = await k(['get', 'nodes', '--no-headers']);
  assert.equal(
    nodes
      .trim()
      .split('\n')
      .filter((l) => / Ready /.test(l)).length,
    3,
  );
  assert.equal(await second.stop(), 0);
});

/** A pod Stage marking pods labelled timer=<label> with the time it plays, `delayS` after they run. */
function markStage(label: string, delayS: number): string {
  return `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: mark-${label}}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchLabels: {timer: ${label}}
    matchExpressions:
    - {key: .status.phase, operator: In, values: [Running]}
    - {key: '.metadata.annotations["marked"]', operator: DoesNotExist}
  delay: {durationMilliseconds: ${delayS * 1000}}
  next:
    patches:
    - root: metadata
      type: merge
      template: |
        annotations: {marked: {{ Now | Quote }}}
---
apiVersion: v1
kind: Pod
metadata: {name: ${label}, labels: {timer: ${label}}}
spec: {containers: [{name: c, image: nginx}]}
`;
}

test('Stage delays continue from the stored objects across a SIGKILL: due while down plays at start, a later one when it was due', async () => {
  const dir = await tempDir();
  const first = await start(dir);
  const k = kubectl(dir);
  await k(['apply', '-f', '-'], `${markStage('late', 30)}---\n${markStage('due', 10)}`);
  // When each pod's current state was stored: its latest managedFields time (to the second).
  const lastWrite = async (name: string) => {
    const p = json<{ metadata: { managedFields: { time: string }[]; annotations?: Record<string, string> } }>(
      await k(['get', 'pod', name, '-o', 'json', '--show-managed-fields']),
    );
    return Math.max(...p.metadata.managedFields.map((m) => Date.parse(m.time)));
  };
  const running = await waitFor('both pods Running', async () => {
    const pods = json<{ items: (Obj & { status: { phase: string } })[] }>(
      await k(['get', 'pods', '-l', 'timer', '-o', 'json']),
    ).items;
    return pods.length === 2 && pods.every((p) => p.status.phase === 'Running') && pods;
  });
  assert.ok(running.every((p) => !(p.metadata as { annotations?: { marked?: string } }).annotations?.marked));
  const lateSince = await lastWrite('late');
  const dueSince = await lastWrite('due');
  // Down until the short delay has passed (the late one has not).
  await waitFor('a few seconds after the pods ran', () => Date.now() > lateSince + 4000 || undefined);
  assert.equal(await first.stop('SIGKILL'), 'SIGKILL');
  const since = Math.max(lateSince, dueSince);
  await waitFor('the short delay to pass while down', () => Date.now() > since + 12_000 || undefined);

  await start(dir);
  // Yardsticks from after the restart, timed by the same process's timers: a Stage that
  // plays 5 s after its pod runs, and one that plays 20 s after. A stored delay that was
  // due while down plays at start, before the first; one counted from before the restart
  // (due at lateSince + 30 s, and the yardstick runs after since + 12 s) before the second.
  // Were delays restarted with the process, the stored ones would come after each: no
  // threshold on how long anything took, so a slow machine cannot fail it.
  await k(['apply', '-f', '-'], `${markStage('yardstick-5s', 5)}---\n${markStage('yardstick-20s', 20)}`);
  const marked = async (name: string) =>
    json<{ metadata: { annotations?: { marked?: string } } }>(await k(['get', 'pod', name, '-o', 'json']))
      .metadata.annotations?.marked;
  const markedAt = async (name: string) =>
    Date.parse(await waitFor(`${name} marked`, () => marked(name), { timeoutMs: 120_000 }));
  const due = await markedAt('due');
  const late = await markedAt('late');
  const after5s = await markedAt('yardstick-5s');
  const after20s = await markedAt('yardstick-20s');
  assert.ok(due < after5s, `the due stage played at start: ${due - after5s} ms before the 5 s yardstick`);
  assert.ok(
    late < after20s,
    `the late stage counted from its stored time: ${late - after20s} ms before the 20 s one`,
  );
  // And never early: its original due time (the stored time is to the second).
  assert.ok(late >= lateSince + 29_000, `late stage not early: ${late - lateSince} ms`);
});

test('a second instance on the same data directory refuses, naming the first, and touches nothing', async () => {
  const dir = await tempDir();
  const first = await start(dir, ['--no-data-plane']);
  const kubeconfig = join(dir, 'kubeconfig');
  const bytes = await readFile(kubeconfig, 'utf8');
  const mtime = (await stat(kubeconfig)).mtimeMs;
  const second = await start(dir, ['--no-data-plane']);
  assert.equal(await second.exited, 1);
  assert.match(second.stderr, new RegExp(`in use by troupe process ${first.child.pid}`));
  assert.match(second.stderr, new RegExp(`its kubeconfig is ${kubeconfig.replace(/[.]/g, '\\.')}`));
  assert.match(second.stderr, /Nothing was changed/);
  assert.equal(await readFile(kubeconfig, 'utf8'), bytes);
  assert.equal((await stat(kubeconfig)).mtimeMs, mtime);
  assert.match(await kubectl(dir)(['get', 'ns', 'default', '-o', 'name']), /namespace\/default/);
  assert.equal(await first.stop(), 0);
});

test('damaged or newer state is refused with the file and the way out, and left as it is; --reset starts afresh', async () => {
  const dir = await tempDir();
  const first = await start(dir, ['--no-data-plane']);
  await kubectl(dir)(['create', 'cm', 'keep-me']);
  assert.equal(await first.stop(), 0);
  const db = join(dir, 'state.db');
  const good = await readFile(db);

  const refused = async (what: string) => {
    const content = await readFile(db);
    const p = await start(dir, ['--no-data-plane']);
    assert.equal(await p.exited, 1, `${what}: exit code`);
    assert.match(p.stderr, new RegExp(`cannot use the cluster state in ${db.replace(/[.]/g, '\\.')}`), what);
    assert.match(p.stderr, /--reset/, what);
    assert.match(p.stderr, /--data-dir/, what);
    assert.deepEqual(await readFile(db), content, `${what}: the file is left as it was`);
  };

  await writeFile(db, 'this is not a database, it is a shopping list\n'.repeat(200));
  await refused('garbage');
  await writeFile(db, good);
  await truncate(db, Math.floor(good.length / 2));
  await refused('truncated');
  await writeFile(db, good);
  const raw = new DatabaseSync(db);
  raw.exec('PRAGMA user_version = 99');
  raw.close();
  await refused('newer schema');
  const p = await start(dir, ['--no-data-plane']);
  await p.exited;
  assert.match(p.stderr, /written by a newer troupe \(schema version 99; this troupe reads up to 1\)/);

  const reset = await start(dir, ['--no-data-plane', '--reset']);
  assert.match(reset.stdout, /state: kept in /);
  const r = await kubectlAt(join(dir, 'kubeconfig'), join(dir, '.kc'), ['get', 'cm', 'keep-me']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /NotFound|not found/);
  assert.equal(await reset.stop(), 0);
});

test('--ephemeral keeps nothing; a port taken while down is replaced and the kubeconfig rewritten', async () => {
  const dir = await tempDir();
  const eph = await start(dir, ['--no-data-plane', '--ephemeral']);
  assert.match(eph.stdout, /in memory only/);
  await kubectl(dir)(['create', 'cm', 'gone']);
  assert.equal(await eph.stop(), 0);
  await assert.rejects(stat(join(dir, 'state.db')));

  const first = await start(dir, ['--no-data-plane']);
  await kubectl(dir)(['create', 'cm', 'kept']);
  const port = Number(new URL(/API server at (\S+)/.exec(first.stdout)![1]!).port);
  assert.equal(await first.stop(), 0);
  const squatter = createServer();
  await new Promise<void>((r) => squatter.listen(port, '127.0.0.1', r));
  try {
    const second = await start(dir, ['--no-data-plane']);
    assert.match(second.stdout, new RegExp(`port ${port} of the previous run is taken; serving on \\d+`));
    assert.doesNotMatch(await readFile(join(dir, 'kubeconfig'), 'utf8'), new RegExp(`:${port}\\b`));
    assert.match(await kubectl(dir)(['get', 'cm', 'kept', '-o', 'name']), /configmap\/kept/);
    assert.equal(await second.stop(), 0);
  } finally {
    squatter.close();
  }
});

test('SIGKILL during random writes loses no acknowledged write and leaves nothing half-written', async () => {
  const dir = await tempDir();
  const r = await crashRound({ seed: 7, writes: 200, dataDir: dir });
  assert.ok(r.acknowledged > 0 || r.attempted > 0);
  assert.deepEqual(r.violations, []);
  assert.ok(r.rvAfter > r.rvBefore);
});
