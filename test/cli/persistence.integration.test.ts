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
import { type ClusterProcess, kubectlAt, startClusterProcess, troupe } from '../support/cluster-process.ts';
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
interface Svc extends Obj {
  spec: { clusterIP: string; ports: { nodePort?: number }[] };
}
interface Lease extends Obj {
  spec: { renewTime: string; holderIdentity: string };
}
interface RunPod extends Obj {
  status: {
    phase: string;
    startTime: string;
    conditions?: { type: string; status: string; lastTransitionTime: string }[];
    containerStatuses: { state: { running?: { startedAt: string } } }[];
  };
}
const runningSince = (p: RunPod) => p.status.containerStatuses[0]!.state.running!.startedAt;

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
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app}
spec: {type: NodePort, selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
`;
const WIDGET = `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: app}
spec: {size: 3}
`;
/**
 * Created last, just before the crash: a batch pod that runs 6 s (due to finish while the
 * cluster is down) and a pod that turns Ready 12 s after it starts (due after the restart).
 */
const BATCH = `
apiVersion: v1
kind: Pod
metadata: {name: batch, namespace: app, annotations: {troupe.dev/run-duration: 6s}}
spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: Pod
metadata: {name: slow-ready, namespace: app}
spec:
  containers:
  - name: c
    image: nginx
    readinessProbe: {httpGet: {path: /, port: 80}, initialDelaySeconds: 12}
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
  await k(['wait', '--for=condition=Established', 'crd/widgets.example.com']);
  await k(['apply', '-f', '-'], WIDGET);
  const before = {
    svc: json<Svc>(await k(['get', 'svc', '-n', 'app', 'web', '-o', 'json'])),
    widget: json<Obj>(await k(['get', 'widget', '-n', 'app', 'w1', '-o', 'json'])),
    leases: json<{ items: Lease[] }>(await k(['get', 'leases', '-n', 'kube-node-lease', '-o', 'json'])).items,
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
  const [batchBefore, slowBefore] = (await waitFor('the batch and slow-ready pods Running', async () => {
    const ps = await Promise.all(
      ['batch', 'slow-ready'].map(async (n) =>
        json<RunPod>(await k(['get', 'pod', '-n', 'app', n, '-o', 'json'])),
      ),
    );
    return ps.every((p) => p.status?.phase === 'Running') ? ps : undefined;
  })) as [RunPod, RunPod];
  assert.equal(await first.stop('SIGKILL'), 'SIGKILL');
  // Down until the batch pod was due to finish: it must finish at start, at its stored time.
  const batchStarted = Date.parse(runningSince(batchBefore));
  await waitFor('the batch pod to be due while down', () => Date.now() > batchStarted + 7000 || undefined, {
    timeoutMs: 30_000,
  });

  const secondStart = Date.now();
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

  // The Service keeps its cluster IP and node port, and they stay taken: a new Service gets
  // others, and one asking for them is refused as kube-apiserver's allocators refuse it.
  const svc = json<Svc>(await k(['get', 'svc', '-n', 'app', 'web', '-o', 'json']));
  assert.equal(svc.metadata.uid, before.svc.metadata.uid);
  assert.equal(svc.spec.clusterIP, before.svc.spec.clusterIP);
  assert.equal(svc.spec.ports[0]!.nodePort, before.svc.spec.ports[0]!.nodePort);
  const other = json<Svc>(
    await k(['create', 'service', 'nodeport', 'other', '-n', 'app', '--tcp=80', '-o', 'json']),
  );
  assert.notEqual(other.spec.clusterIP, svc.spec.clusterIP);
  assert.notEqual(other.spec.ports[0]!.nodePort, svc.spec.ports[0]!.nodePort);
  const clash = await kubectlAt(
    join(dir, 'kubeconfig'),
    join(dir, '.kubectl-cache'),
    ['create', '-f', '-'],
    `apiVersion: v1
kind: Service
metadata: {name: clash, namespace: app}
spec: {clusterIP: ${svc.spec.clusterIP}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: clash-port, namespace: app}
spec: {type: NodePort, ports: [{port: 80, nodePort: ${svc.spec.ports[0]!.nodePort}}]}
`,
  );
  assert.match(clash.stderr, /provided IP is already allocated/);
  assert.match(clash.stderr, /provided port is already allocated/);
  // The CRD is served again and its instance with it.
  const widget = json<Obj & { spec: { size: number } }>(
    await k(['get', 'widget', '-n', 'app', 'w1', '-o', 'json']),
  );
  assert.equal(widget.metadata.uid, before.widget.metadata.uid);
  assert.equal(widget.metadata.resourceVersion, before.widget.metadata.resourceVersion);
  assert.equal(widget.spec.size, 3);

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
  assert.equal(term.startedAt, runningSince(batchBefore));
  assert.equal(Date.parse(term.finishedAt) - Date.parse(term.startedAt), 6000);
  assert.ok(Date.parse(term.finishedAt) < secondStart, 'finished at the time it was due, while down');
  // The readiness delay counts from the stored start too: Ready 12 s after it, not 12 s
  // after the restart (the restart came more than 7 s after the start).
  const slowStarted = Date.parse(runningSince(slowBefore));
  const slowReady = await waitFor(
    'slow-ready to turn Ready',
    async () => {
      const p = json<RunPod>(await k(['get', 'pod', '-n', 'app', 'slow-ready', '-o', 'json']));
      const c = p.status.conditions?.find((x) => x.type === 'Ready' && x.status === 'True');
      return c && Date.parse(c.lastTransitionTime);
    },
    { timeoutMs: 60_000 },
  );
  assert.equal(
    runningSince(json<RunPod>(await k(['get', 'pod', '-n', 'app', 'slow-ready', '-o', 'json']))),
    runningSince(slowBefore),
  );
  assert.ok(slowReady >= slowStarted + 12_000, `not early: ${slowReady - slowStarted} ms after the start`);
  assert.ok(
    slowReady < secondStart + 12_000,
    `counted from the stored start: ${slowReady - secondStart} ms after the restart`,
  );
  // The web pods stay Running with their start times; the nodes are Ready with fresh Leases.
  const pods = json<{ items: (Obj & { status: { phase: string } })[] }>(
    await k(['get', 'pods', '-n', 'app', '-l', 'app=web', '-o', 'json']),
  ).items;
  assert.equal(pods.length, 3);
  assert.ok(pods.every((p) => p.status.phase === 'Running'));
  // The nodes re-take their own Leases (the same objects and holders), renewed by the new process.
  const leases = await waitFor('every node lease renewed after the restart', async () => {
    const items = json<{ items: Lease[] }>(
      await k(['get', 'leases', '-n', 'kube-node-lease', '-o', 'json']),
    ).items;
    return items.length === 3 && items.every((l) => Date.parse(l.spec.renewTime) >= secondStart) && items;
  });
  const holders = (ls: Lease[]) =>
    ls.map((l) => `${l.metadata.name} ${l.metadata.uid} ${l.spec.holderIdentity}`).sort();
  assert.deepEqual(holders(leases), holders(before.leases));
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
  // --reset refuses like any start: the running instance's state stays on disk.
  await kubectl(dir)(['create', 'cm', 'kept']);
  const resetting = await start(dir, ['--no-data-plane', '--reset']);
  assert.equal(await resetting.exited, 1);
  assert.match(resetting.stderr, new RegExp(`in use by troupe process ${first.child.pid}`));
  const stored = new DatabaseSync(join(dir, 'state.db'), { readOnly: true });
  const keys = stored.prepare("SELECT key FROM objects WHERE storage = '/configmaps'").all();
  stored.close();
  assert.ok(
    keys.some((r) => r.key === 'default/kept'),
    'the stored cluster is still there',
  );
  assert.equal(await readFile(kubeconfig, 'utf8'), bytes);
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
    return p.stderr;
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
  assert.match(
    await refused('newer schema'),
    /written by a newer troupe \(schema version 99; this troupe reads up to 1\)/,
  );
  // Another program's SQLite file: valid, but not troupe's. Not even switched to WAL.
  await rm(db);
  const foreign = new DatabaseSync(db);
  foreign.exec("CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('soup')");
  foreign.close();
  assert.match(
    await refused('foreign'),
    /an SQLite database troupe did not write \(it holds the tables recipes and no troupe schema version\)/,
  );

  const reset = await start(dir, ['--no-data-plane', '--reset']);
  assert.match(reset.stdout, /state: kept in /);
  const r = await kubectlAt(join(dir, 'kubeconfig'), join(dir, '.kc'), ['get', 'cm', 'keep-me']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /NotFound|not found/);
  assert.equal(await reset.stop(), 0);
});

const EVENT = `
apiVersion: v1
kind: Event
metadata: {name: note, namespace: default}
involvedObject: {kind: ConfigMap, name: kept, namespace: default}
reason: Noted
message: kept across a restart
type: Normal
`;

test('--ephemeral keeps nothing; a port taken while down is replaced and the kubeconfig rewritten; --event-ttl expires stored Events', async () => {
  const dir = await tempDir();
  const both = await troupe(['cluster', '--data-dir', dir, '--ephemeral', '--reset']);
  assert.equal(both.code, 1);
  assert.match(both.stderr, /--reset deletes stored state and --ephemeral stores none: give one of them/);
  await assert.rejects(stat(join(dir, 'owner.json')));
  const badTtl = await troupe(['cluster', '--data-dir', dir, '--event-ttl=soon']);
  assert.equal(badTtl.code, 1);
  assert.match(
    badTtl.stderr,
    /'--event-ttl <duration>' argument 'soon' is invalid\. expected a duration above zero, such as 1h/,
  );

  const eph = await start(dir, ['--no-data-plane', '--ephemeral']);
  assert.match(eph.stdout, /in memory only/);
  await kubectl(dir)(['create', 'cm', 'gone']);
  assert.equal(await eph.stop(), 0);
  await assert.rejects(stat(join(dir, 'state.db')));

  const first = await start(dir, ['--no-data-plane']);
  await kubectl(dir)(['create', 'cm', 'kept']);
  await kubectl(dir)(['create', '-f', '-'], EVENT);
  const port = Number(new URL(/API server at (\S+)/.exec(first.stdout)![1]!).port);
  assert.equal(await first.stop(), 0);
  const squatter = createServer();
  await new Promise<void>((r) => squatter.listen(port, '127.0.0.1', r));
  try {
    // --event-ttl (kube-apiserver's flag) reaches the restarted server: the Event kept from the
    // first run has outlived one second, so it goes once restored (kept an hour by default).
    // When exactly a restored Event expires: test/cluster/apiserver/event-ttl.integration.test.ts.
    const second = await start(dir, ['--no-data-plane', '--event-ttl=1s']);
    assert.match(second.stdout, new RegExp(`port ${port} of the previous run is taken; serving on \\d+`));
    assert.doesNotMatch(await readFile(join(dir, 'kubeconfig'), 'utf8'), new RegExp(`:${port}\\b`));
    assert.match(await kubectl(dir)(['get', 'cm', 'kept', '-o', 'name']), /configmap\/kept/);
    await waitFor(
      'the stored Event to expire',
      async () => (await kubectl(dir)(['get', 'event', 'note', '--ignore-not-found', '-o', 'name'])) === '',
    );
    assert.equal(await second.stop(), 0);
  } finally {
    squatter.close();
  }
});

test('a commit that fails stops troupe at once, naming the file and the error; acknowledged writes are kept', async () => {
  const dir = await tempDir();
  const first = await start(dir, ['--no-data-plane']);
  const k = kubectl(dir);
  await k(['create', 'cm', 'acknowledged']);
  // Another program takes the database's write lock and holds it beyond troupe's busy timeout
  // (5 s): troupe's next commit fails with SQLITE_BUSY, as a full disk or a read-only file
  // would fail it (the suite may run as root, whom file modes do not stop).
  const locker = new DatabaseSync(join(dir, 'state.db'));
  let attempt: { code: number; stderr: string };
  try {
    locker.exec('PRAGMA busy_timeout = 5000');
    locker.exec('BEGIN IMMEDIATE');
    attempt = await kubectlAt(join(dir, 'kubeconfig'), join(dir, '.kubectl-cache'), [
      'create',
      'cm',
      'never-acknowledged',
    ]);
    await first.exited;
  } finally {
    locker.exec('ROLLBACK');
    locker.close();
  }
  assert.equal(await first.exited, 1);
  assert.notEqual(attempt.code, 0, 'the write was not acknowledged');
  const file = join(dir, 'state.db').replace(/[.]/g, '\\.');
  assert.match(
    first.stderr,
    new RegExp(`troupe: cannot commit to the cluster state in ${file}: database is locked`),
  );
  assert.match(first.stderr, /never acknowledged/);
  assert.doesNotMatch(first.stderr, /\n\s+at /, 'no stack trace');
  await assert.rejects(stat(join(dir, 'owner.json')), 'the directory is released');

  const second = await start(dir, ['--no-data-plane']);
  assert.match(await k(['get', 'cm', 'acknowledged', '-o', 'name']), /configmap\/acknowledged/);
  assert.equal(await k(['get', 'cm', 'never-acknowledged', '--ignore-not-found', '-o', 'name']), '');
  assert.equal(await second.stop(), 0);
});

test('SIGKILL during random writes loses no acknowledged write and leaves nothing half-written', async () => {
  const dir = await tempDir();
  const r = await crashRound({ seed: 7, writes: 200, dataDir: dir });
  assert.ok(r.acknowledged > 0 || r.attempted > 0);
  assert.deepEqual(r.violations, []);
  assert.ok(r.rvAfter > r.rvBefore);
});
