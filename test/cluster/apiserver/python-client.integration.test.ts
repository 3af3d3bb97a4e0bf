/**
 * The second official client: Debian's python3-kubernetes (installed by
 * scripts/ensure-python-client.sh, which `npm test` runs) drives the embedded cluster through
 * test/cluster/apiserver/python/client_conformance.py, one scenario per test. The client sends its
 * own spellings (`watch=True`, `allowWatchBookmarks=True`, `force=True`), decodes every
 * response into its typed models, and runs its own leader election, so these cases check the
 * server as a client other than kubectl and @kubernetes/client-node sees it.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { startTestCluster, type TestCluster } from '../../support/cluster.ts';
import { waitFor } from '../../support/wait.ts';

const run = promisify(execFile);
/** Debian's package belongs to the system interpreter, whatever `python3` is on PATH. */
const PYTHON = process.env.TROUPE_PYTHON ?? '/usr/bin/python3';
const SCRIPT = join(import.meta.dirname, 'python', 'client_conformance.py');

type Observed = Record<string, any>;

describe('the Python client (python3-kubernetes) against the embedded cluster', () => {
  let t: TestCluster;
  let namespaces = 0;
  const kubectl = (args: string[]) => t.kubectl(args);

  /** Runs one scenario in a fresh namespace and returns the JSON lines it printed. */
  const scenario = async (name: string, ...args: string[]): Promise<Observed[]> => {
    const ns = `py-${name}-${namespaces++}`;
    await kubectl(['create', 'namespace', ns]);
    const { stdout } = await run(PYTHON, [SCRIPT, name, t.kubeconfigPath, ns, ...args], {
      timeout: 120_000,
    });
    return lines(stdout);
  };

  before(async () => {
    t = await startTestCluster();
  });
  after(() => t.close());

  test('watch with allowWatchBookmarks=True gets events and a bookmark, and resumes from the last version', async () => {
    const [first, resumed] = await scenario('watch');
    assert.deepEqual(first!.events.slice(0, 2), [
      ['ADDED', 'w2'],
      ['MODIFIED', 'w1'],
    ]);
    assert.equal(first!.events.at(-1)[0], 'BOOKMARK');
    assert.deepEqual(resumed!.resumed, [['ADDED', 'w3']]);
  });

  test('a list is paged as one snapshot, with remainingItemCount', async () => {
    const [o] = await scenario('paging');
    assert.deepEqual(o!.first, ['p0', 'p1']);
    assert.equal(o!.remaining, 3);
    assert.deepEqual(o!.rest, ['p2', 'p3', 'p4'], 'the later page as of the first');
    assert.equal(o!.same_rv, true);
    assert.deepEqual(o!.now, ['p0', 'p1', 'p21', 'p3', 'p4']);
  });

  test('expired continue tokens and watch versions answer 410 as kube-apiserver does', async () => {
    const ns = `py-expired-${namespaces++}`;
    await kubectl(['create', 'namespace', ns]);
    const child = spawn(PYTHON, [SCRIPT, 'expired', t.kubeconfigPath, ns], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const output = collect(child);
    await waitFor('the scenario to be ready', () => output.lines().some((l) => l.ready), {
      timeoutMs: 60_000,
    });
    t.cluster.server.api.store.expireHistory();
    child.stdin!.end('go\n');
    const code = await exited(child);
    assert.equal(code, 0, output.stderr());
    const [, continued, watched, streamed] = output.lines();
    assert.equal(continued!.status, 410);
    assert.equal(continued!.reason, 'Expired');
    assert.match(continued!.message, /^The provided continue parameter is too old/);
    assert.deepEqual(continued!.rest, ['e1', 'e2', 'e9'], 'the returned token goes on with current data');
    assert.equal(watched!.watch_event.type, 'ERROR');
    assert.equal(watched!.watch_event.object.code, 410);
    assert.equal(watched!.watch_event.object.reason, 'Expired');
    assert.equal(streamed!.stream_status, 410);
  });

  test('server-side apply conflicts between managers, and force=True takes the field', async () => {
    const [conflict, forced] = await scenario('apply');
    assert.equal(conflict!.conflict, 409);
    assert.deepEqual(conflict!.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "manager-a"', field: '.data.k' },
    ]);
    assert.equal(forced!.value, 'from-b');
    assert.deepEqual(forced!.managers, ['manager-b']);
  });

  test('dryRun=All on create, patch, delete and pods/eviction stores nothing', async () => {
    const [o] = await scenario('dryrun');
    assert.equal(o!.created_name, 'dry');
    assert.equal(o!.stored, false);
    assert.equal(o!.kept, '1');
    assert.equal(o!.pod_deleting, false);
  });

  test('strategic merge patches of deployments/scale and /status', async () => {
    const [o] = await scenario('subresources');
    assert.deepEqual(o, {
      scale_kind: 'V1Scale',
      scale_replicas: 3,
      deployment_replicas: 3,
      status_generation: 1,
    });
  });

  test('the dynamic client discovers and drives resources', async () => {
    const [o] = await scenario('discovery');
    assert.deepEqual(o!.deployments, ['apps/v1', 'deployments', true]);
    assert.deepEqual(o!.configmap_versions, ['v1']);
    assert.deepEqual(o!.got, ['ConfigMap', 'dyn']);
    assert.deepEqual(o!.listed, ['dyn']);
  });

  test('typed reads of the served built-in kinds with workloads running', async () => {
    await kubectl(['create', 'namespace', 'typed']);
    await kubectl(['-n', 'typed', 'create', 'deployment', 'web', '--image=nginx', '--replicas=2']);
    await kubectl(['-n', 'typed', 'create', 'job', 'once', '--image=busybox']);
    await kubectl(['-n', 'typed', 'create', 'service', 'clusterip', 'web', '--tcp=80:80']);
    await kubectl(['-n', 'typed', 'create', 'role', 'reader', '--verb=get', '--resource=pods']);
    await kubectl(['-n', 'typed', 'create', 'rolebinding', 'reader', '--role=reader', '--user=u']);
    // A DaemonSet's status counters are always present (0, not absent): the typed model needs them.
    await t.kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'agent', namespace: 'typed' },
        spec: {
          selector: { matchLabels: { app: 'agent' } },
          template: {
            metadata: { labels: { app: 'agent' } },
            spec: { containers: [{ name: 'c', image: 'busybox' }] },
          },
        },
      }),
    );
    await waitFor(
      'two running pods',
      async () =>
        (await kubectl(['-n', 'typed', 'get', 'pods', '-o', 'jsonpath={.items[*].status.phase}']))
          .split(' ')
          .filter((p) => p === 'Running').length >= 2,
      { timeoutMs: 60_000 },
    );
    const [o] = await scenario('typed');
    const read = new Map<string, number>(o!.read);
    for (const kind of [
      'v1/Namespace',
      'v1/Node',
      // Running pods' containerStatuses carry every field Go always encodes (imageID, ...).
      'v1/Pod',
      'apps/v1/Deployment',
      'apps/v1/ReplicaSet',
      'apps/v1/DaemonSet',
      'batch/v1/Job',
    ]) {
      assert.ok((read.get(kind) ?? 0) > 0, `${kind} read: ${JSON.stringify(o!.read)}`);
    }
    // Listed in docs/api-conformance.md: events.k8s.io/v1 Events written as core/v1 Events have
    // eventTime null, which kube-apiserver serves too and this client refuses.
    const known = new Set(['events.k8s.io/v1/Event']);
    const unexpected = (o!.failed as [string, string][]).filter(([kind]) => !known.has(kind));
    assert.deepEqual(unexpected, []);
  });

  test('leader election between two processes: one leads, the other takes over when it dies', async () => {
    const ns = `py-leader-${namespaces++}`;
    await kubectl(['create', 'namespace', ns]);
    const start = (id: string) => {
      const child = spawn(PYTHON, [SCRIPT, 'leader', t.kubeconfigPath, ns, id], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      return { child, output: collect(child) };
    };
    const a = start('candidate-a');
    const b = start('candidate-b');
    try {
      // Leading now: its last word is `leader`, not `stopped` (a candidate starved past its
      // renew deadline on a busy machine steps down, and the other may take over: that is
      // leader election working, so the test follows who leads rather than expecting no change).
      const leading = (c: ReturnType<typeof start>) =>
        c.output.lines().findLast((l) => l.leader || l.stopped)?.leader !== undefined;
      const holder = async () => {
        const lock = JSON.parse(
          (await kubectl(['-n', ns, 'get', 'configmap', 'python-election', '-o', 'json'])) || '{}',
        ) as { metadata: { annotations: Record<string, string> } };
        const record = lock.metadata.annotations['control-plane.alpha.kubernetes.io/leader'];
        return (JSON.parse(record!) as { holderIdentity: string }).holderIdentity;
      };
      const byId = { 'candidate-a': a, 'candidate-b': b } as Record<string, ReturnType<typeof start>>;
      // One leads, the lock names it, and the other does not lead (read before the lock, so a
      // takeover in between cannot pass for two leaders).
      const [first, second] = await waitFor(
        'one candidate to lead, alone, as the lock says',
        async () => {
          const wasLeading = [leading(a), leading(b)];
          const id = await holder();
          const [x, y] = id === 'candidate-a' ? [a, b] : [b, a];
          const yWas = y === a ? wasLeading[0] : wasLeading[1];
          return byId[id] && leading(x) && !yWas && !leading(y) ? ([x, y] as const) : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      first.child.kill('SIGKILL');
      await exited(first.child);
      const secondId = second === a ? 'candidate-a' : 'candidate-b';
      await waitFor(
        'the other candidate to lead, as the lock says',
        async () => leading(second) && (await holder()) === secondId,
        { timeoutMs: 30_000, intervalMs: 200 },
      );
    } finally {
      for (const c of [a, b])
        if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    }
  });
});

function lines(stdout: string): Observed[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Observed);
}

function collect(child: ChildProcess): { lines(): Observed[]; stderr(): string } {
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  return { lines: () => lines(out), stderr: () => err };
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}
