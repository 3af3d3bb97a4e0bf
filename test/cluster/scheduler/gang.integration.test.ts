/**
 * Coscheduling on the whole embedded cluster (`gangScheduling`, the `--gang-scheduling`
 * flag), driven with kubectl: the deadlock demo's gangs end with no deadlocked gang.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseNodeConfig } from '../../../src/cluster/nodes/index.ts';
import { READY_LABEL } from '../../../src/controllers/podgroup/index.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import type { KubeObject } from '../../../src/runtime/index.ts';
import {
  type Env,
  eventsFor,
  POD,
  startClusterEnv,
  waitForPhase,
} from '../../controllers/podgroup/harness.ts';
import { waitFor } from '../../support/wait.ts';

const EXAMPLES = new URL('../../../examples/deadlock/', import.meta.url).pathname;

type Pod = KubeObject & { spec?: { nodeName?: string } };

async function pods(env: Env, ns: string, selector?: string): Promise<Pod[]> {
  return (await env.client.list<Pod>(POD, { namespace: ns, labelSelector: selector })).items;
}

const placed = (p: Pod) => Boolean(p.spec?.nodeName);

const MAIN = resolve(import.meta.dirname, '../../../src/cli/main.ts');

/** The troupe CLI; resolves with its stdout, rejects with its stderr on a non-zero exit. */
function troupe(args: string[]): Promise<string> {
  const env = { ...process.env };
  delete env.FORCE_COLOR;
  return new Promise((done, fail) => {
    execFile(process.execPath, [MAIN, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) fail(new Error(`troupe ${args.join(' ')}: ${stderr}`));
      else done(stdout);
    });
  });
}

describe('coscheduling with the deadlock demo', () => {
  let env: Env;
  before(async () => {
    const nodes = parseNodeConfig(readFileSync(`${EXAMPLES}nodes.yaml`, 'utf8'));
    env = await startClusterEnv({}, { nodes, gangScheduling: true });
  });
  after(async () => {
    await env?.stop();
  });

  test('ordered-ready gangs never form: nothing is placed, so no GPU is held by half a gang', async () => {
    const ns = await env.namespace('ordered');
    await env.kubectl(['apply', '-n', ns, '-f', `${EXAMPLES}gangs.yaml`]);
    const event = await waitFor('gang-a-0 rejected by pre-filter', async () =>
      (await eventsFor(env.client, ns, 'Pod', 'gang-a-0')).find((e) => e.reason === 'FailedScheduling'),
    );
    assert.equal(
      event.note,
      // UnschedulableAndUnresolvable on every node: DefaultPreemption says it cannot help.
      '0/2 nodes are available: pre-filter pod gang-a-0 cannot find enough sibling pods, current pods number: 1, minMember of group: 3. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
    );
    const described = await env.kubectl(['describe', 'pod', 'gang-a-0', '-n', ns]);
    assert.match(described, /cannot find enough sibling pods/);
    assert.deepEqual((await pods(env, ns)).filter(placed), [], 'no member holds a GPU');
    const pg = await waitForPhase(env.client, ns, 'gang-a', 'Pending', 'NotEnoughTasks');
    assert.equal(pg.status?.state?.message, '1 of 3 required members exist');
    await env.kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  test('parallel gangs: one runs whole, the other holds nothing, then runs when the GPUs free up', async () => {
    const ns = await env.namespace('cosched');
    await env.kubectl(['apply', '-n', ns, '-f', `${EXAMPLES}coscheduling.yaml`]);
    const winner = await waitFor('one gang placed whole', async () => {
      const all = await pods(env, ns);
      for (const g of ['gang-a', 'gang-b']) {
        if (all.filter((p) => p.metadata.labels?.app === g && placed(p)).length === 3) return g;
      }
      return undefined;
    });
    const loser = winner === 'gang-a' ? 'gang-b' : 'gang-a';
    await waitForPhase(env.client, ns, winner, 'Running', 'MembersRunning', 30_000);
    await waitFor(
      `${winner} released`,
      async () =>
        (await pods(env, ns, `app=${winner}`)).filter((p) => p.metadata.labels?.[READY_LABEL] === 'true')
          .length === 3,
    );
    // The loser's verdict names the gang; none of its pods keeps a GPU while it waits. Its
    // members held until another could not be placed are released, so all 3 count unplaced
    // however many were held.
    const verdict = await waitFor(`${loser}'s gang verdict`, async () => {
      for (const i of [0, 1, 2]) {
        const e = (await eventsFor(env.client, ns, 'Pod', `${loser}-${i}`)).find((x) =>
          String(x.note).includes(`pods of ${loser} could not be placed`),
        );
        if (e) return String(e.note);
      }
      return undefined;
    });
    assert.match(
      verdict,
      new RegExp(
        `^3/3 pods of ${loser} could not be placed: 0/2 nodes are available: 2 Insufficient nvidia\\.com/gpu\\. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod\\.$`,
      ),
    );
    // No deadlock: held members are never bound, so the waiting gang has no pod on a node.
    assert.deepEqual((await pods(env, ns, `app=${loser}`)).filter(placed), []);
    // troupe's PodGroup status quotes the verdict: Pending (it holds nothing), not enough
    // resources, and kube-batch's Unschedulable condition.
    const waiting = await waitForPhase(env.client, ns, loser, 'Pending', 'NotEnoughResources');
    const quoted = new RegExp(`^3/3 pods of ${loser} could not be placed: 0/2 nodes are available: `);
    assert.match(waiting.status?.state?.message ?? '', quoted);
    const cond = waiting.status?.conditions?.find((c) => c.type === 'Unschedulable');
    assert.equal(cond?.status, 'True');
    assert.equal(cond?.reason, 'NotEnoughResources');
    assert.match(cond?.message ?? '', quoted);

    // `troupe explain` says why the gang waits.
    const dir = mkdtempSync(join(tmpdir(), 'gang-'));
    writeFileSync(join(dir, 'kubeconfig'), env.kubeconfig, { mode: 0o600 });
    const explain = (what: string) =>
      troupe(['explain', what, '-n', ns, '--kubeconfig', join(dir, 'kubeconfig')]);
    const [explained, member] = await Promise.all([explain(`pg/${loser}`), explain(`pod/${loser}-0`)]);
    rmSync(dir, { recursive: true, force: true });
    assert.match(
      member,
      new RegExp(
        `^PodGroup ${ns}/${loser}: Pending, 0/3 running \\(NotEnoughResources\\): 3/3 pods of ${loser} could not be placed: `,
        'm',
      ),
    );
    assert.match(
      explained,
      new RegExp(
        `PodGroup ${ns}/${loser}: Pending \\(NotEnoughResources\\): .*pods of ${loser} could not be placed: `,
      ),
    );

    await env.kubectl(['delete', 'statefulset', winner, '-n', ns]);
    await waitForPhase(env.client, ns, loser, 'Running', 'MembersRunning', 40_000);
    assert.equal((await pods(env, ns, `app=${loser}`)).filter(placed).length, 3);
  });
});

describe("coscheduling with scheduler-plugins' PodGroup", () => {
  let env: Env;
  before(async () => {
    const nodes = parseNodeConfig(readFileSync(`${EXAMPLES}nodes.yaml`, 'utf8'));
    env = await startClusterEnv({}, { nodes, gangScheduling: true });
  });
  after(async () => {
    await env?.stop();
  });

  const group = (name: string, spec: string) => `
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: ${name}}
spec: ${spec}
`;
  const member = (group: string, name: string, extra = '') => `
---
apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels: {scheduling.x-k8s.io/pod-group: ${group}}
spec:
  ${extra}
  containers:
  - name: c
    image: fake-image
    resources: {limits: {nvidia.com/gpu: 1}}
`;

  test('the CRD is served: kubectl lists the group', async () => {
    const ns = await env.namespace('xpg');
    await env.kubectl(['apply', '-n', ns, '-f', '-'], group('g', '{minMember: 2}'));
    // The podgroup controller makes a new group Pending; it has no members.
    const out = await waitFor('g Pending', async () => {
      const o = await env.kubectl(['get', 'podgroups.scheduling.x-k8s.io', '-n', ns]);
      return /\ng\s+Pending\s+2\s+/.test(o) ? o : undefined;
    });
    assert.match(out, /^NAME\s+PHASE\s+MINMEMBER\s+RUNNING\s+SUCCEEDED\s+FAILED\s+AGE\n/);
  });

  test("scheduler-plugins' podgroup controller writes the status: Pending, Scheduling, Running", async () => {
    const ns = await env.namespace('xstatus');
    const plain = (g: string, name: string) =>
      `---\napiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, labels: {scheduling.x-k8s.io/pod-group: ${g}}}\nspec: {containers: [{name: c, image: fake-image}]}\n`;
    await env.kubectl(
      ['apply', '-n', ns, '-f', '-'],
      group('ok', '{minMember: 2}') +
        plain('ok', 'ok-0') +
        plain('ok', 'ok-1') +
        `---${group('short', '{minMember: 3}')}`,
    );
    type Status = { phase?: string; running?: number; scheduleStartTime?: string };
    const statusOf = async (name: string) =>
      JSON.parse(await env.kubectl(['get', 'podgroups.scheduling.x-k8s.io', name, '-n', ns, '-o', 'json']))
        .status as Status | undefined;
    const running = await waitFor('ok Running', async () => {
      const s = await statusOf('ok');
      return s?.phase === 'Running' && s.running === 2 ? s : undefined;
    });
    assert.ok(running.scheduleStartTime, 'scheduleStartTime set when it turned Scheduling');
    await waitFor('short Pending', async () => (await statusOf('short'))?.phase === 'Pending');
    const table = await env.kubectl(['get', 'podgroups.scheduling.x-k8s.io', 'ok', '-n', ns]);
    assert.match(table, /\nok\s+Running\s+2\s+2\s+/);
  });

  test('held members are released after scheduleTimeoutSeconds when the gang cannot complete', async () => {
    const ns = await env.namespace('timeout');
    // The first member belongs to another scheduler: it counts for pre-filter but is never
    // placed here. Created first, so the last of the others sees all three, reaches Permit and
    // activates its sibling (a member turned away for want of siblings waits otherwise, as
    // upstream, for a pod to be placed, its PodGroup to change or the unschedulable flush).
    await env.kubectl(
      ['apply', '-n', ns, '-f', '-'],
      group('t', '{minMember: 3, scheduleTimeoutSeconds: 1}') +
        member('t', 't-2', 'schedulerName: elsewhere') +
        member('t', 't-0') +
        member('t', 't-1'),
    );
    const note = await waitFor('a timeout verdict', async () => {
      for (const p of ['t-0', 't-1']) {
        const e = (await eventsFor(env.client, ns, 'Pod', p)).find((x) =>
          String(x.note).includes('rejected due to timeout'),
        );
        if (e) return String(e.note);
      }
      return undefined;
    });
    // Two members were held, and released: none of the three is placed.
    assert.equal(note, '3/3 pods of t could not be placed: rejected due to timeout after waiting 1s');
    assert.deepEqual((await pods(env, ns)).filter(placed), [], 'held members are never bound');
  });

  test('troupe explain says why a scheduler-plugins gang waits: too few pods, the verdicts on its members', async () => {
    const ns = await env.namespace('xexplain');
    await env.kubectl(
      ['apply', '-n', ns, '-f', '-'],
      group('w', '{minMember: 3, scheduleTimeoutSeconds: 30}') + member('w', 'w-0') + member('w', 'w-1'),
    );
    await waitFor('the verdicts and the Pending phase', async () => {
      const o = await env.kubectl(['describe', 'pods', '-n', ns]);
      const phase = await env.kubectl([
        'get',
        'podgroups.scheduling.x-k8s.io',
        'w',
        '-n',
        ns,
        '-o',
        'jsonpath={.status.phase}',
      ]);
      return (o.match(/cannot find enough sibling pods/g) ?? []).length >= 2 && phase === 'Pending';
    });
    const dir = mkdtempSync(join(tmpdir(), 'xexplain-'));
    writeFileSync(join(dir, 'kubeconfig'), env.kubeconfig, { mode: 0o600 });
    const explain = (what: string) =>
      troupe(['explain', what, '-n', ns, '--kubeconfig', join(dir, 'kubeconfig')]).catch(
        (e: Error) => e.message,
      );
    const [group_, pod, missing] = await Promise.all([
      explain('podgroups.scheduling.x-k8s.io/w'),
      explain('pod/w-1'),
      explain('podgroups.scheduling.x-k8s.io/nope'),
    ]);
    rmSync(dir, { recursive: true, force: true });
    // Each member's verdict counts the pods that existed when it was last tried: w-0 may have
    // been tried alone (only a pod placed somewhere retries it while the gang stays short).
    const verdict = (p: string) =>
      `    the scheduler, on 1 member: 0/2 nodes are available: pre-filter pod ${p} cannot find enough sibling pods, current pods number: [12], minMember of group: 3\\.`;
    assert.match(
      group_,
      new RegExp(
        `^${[
          `PodGroup ${ns}/w \\(scheduling.x-k8s.io\\): Pending`,
          '  needs 3 members running; 0 running, 0 succeeded, 0 failed',
          '  scheduleTimeoutSeconds 30',
          '  Waiting:',
          '    1 more member pod needed: 2 of minMember 3 exist \\(pods labelled scheduling.x-k8s.io/pod-group=w\\)',
          verdict('w-0'),
        ].join('\n')}`,
      ),
    );
    assert.match(group_, new RegExp(verdict('w-1')));
    assert.match(
      group_,
      /\n {2}Members \(2\):\n {4}w-0: Pending: not scheduled \(Unschedulable: .*\n {4}w-1: /,
    );
    assert.match(pod, new RegExp(`^PodGroup ${ns}/w \\(scheduling.x-k8s.io\\): Pending, 0/3 running$`, 'm'));
    assert.match(missing, new RegExp(`PodGroup ${ns}/nope not found`));
  });

  test('a pod naming a PodGroup that does not exist is not bound until the PodGroup comes', async () => {
    const ns = await env.namespace('missing');
    await env.kubectl(['apply', '-n', ns, '-f', '-'], member('late', 'late-0'));
    const e = await waitFor('PodGroup not found', async () =>
      (await eventsFor(env.client, ns, 'Pod', 'late-0')).find((x) => x.reason === 'FailedScheduling'),
    );
    assert.equal(e.note, 'PodGroup not found');
    assert.deepEqual((await pods(env, ns)).filter(placed), []);
    await env.kubectl(['apply', '-n', ns, '-f', '-'], group('late', '{minMember: 1}'));
    await waitFor('late-0 bound once its PodGroup exists', async () => (await pods(env, ns)).some(placed));
  });

  test('minResources beyond the cluster rejects the gang in pre-filter', async () => {
    const ns = await env.namespace('minres');
    await env.kubectl(
      ['apply', '-n', ns, '-f', '-'],
      group('big', "{minMember: 2, minResources: {nvidia.com/gpu: '100'}}") +
        member('big', 'big-0') +
        member('big', 'big-1'),
    );
    // The member tried once both exist gets the verdict (one tried alone may keep its first).
    const e = await waitFor('a resource gap verdict', async () => {
      for (const p of ['big-0', 'big-1']) {
        const found = (await eventsFor(env.client, ns, 'Pod', p)).find((x) =>
          String(x.note).includes('resource gap'),
        );
        if (found) return found;
      }
      return undefined;
    });
    // The gap is what the free GPUs leave (at most four; other tests' gangs may hold some).
    const gap =
      /^0\/2 nodes are available: resource gap: \{"nvidia.com\/gpu":(\d+)\}\. preemption: 0\/2 nodes are available: 2 Preemption is not helpful for scheduling\.$/.exec(
        String(e.note),
      );
    assert.ok(gap && Number(gap[1]) >= 96 && Number(gap[1]) <= 100, String(e.note));
    assert.deepEqual((await pods(env, ns)).filter(placed), []);
  });
});

describe('on a clock that stands still (no backoff ever ends)', () => {
  let env: Env;
  // Whole seconds, as Events stamp their times.
  const clock = new ManualClock(Math.floor(Date.now() / 1000) * 1000);
  before(async () => {
    const nodes = parseNodeConfig(readFileSync(`${EXAMPLES}nodes.yaml`, 'utf8'));
    // The cluster's clock moves only when a test moves it: a member waiting out its backoff
    // would wait forever.
    env = await startClusterEnv({}, { nodes, gangScheduling: true, clock });
  });
  after(async () => {
    await env?.stop();
  });

  test('a sibling arriving completes the gang', async () => {
    const ns = await env.namespace('sibling');
    const pod = (name: string) =>
      `---\napiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, labels: {scheduling.x-k8s.io/pod-group: s}}\nspec: {containers: [{name: c, image: fake-image}]}\n`;
    await env.kubectl(
      ['apply', '-n', ns, '-f', '-'],
      `apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: s}\nspec: {minMember: 2}\n${pod('s-0')}`,
    );
    await waitFor('s-0 turned away for want of siblings', async () =>
      (await eventsFor(env.client, ns, 'Pod', 's-0')).some((e) =>
        String(e.note).includes('enough sibling pods'),
      ),
    );
    await env.kubectl(['apply', '-n', ns, '-f', '-'], pod('s-1'));
    await waitFor('both members bound', async () => (await pods(env, ns)).filter(placed).length === 2);
  });

  test('a pod created retries no parked member; a pod placed retries every one', async () => {
    const ns = await env.namespace('podadd');
    const pod = (name: string, extra: string, labels = '{scheduling.x-k8s.io/pod-group: a}') =>
      `---\napiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, labels: ${labels}}\nspec: {${extra}containers: [{name: c, image: fake-image}]}\n`;
    const huge = (name: string) =>
      pod(name, '', '{app: huge}').replace(
        'image: fake-image',
        "image: fake-image, resources: {requests: {cpu: '1000'}}",
      );
    const turnedAway = (name: string) => async () =>
      (await eventsFor(env.client, ns, 'Pod', name)).some((e) => e.reason === 'FailedScheduling');
    await env.kubectl(
      ['apply', '-n', ns, '-f', '-'],
      `apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: a}\nspec: {minMember: 3}\n${pod('a-0', '')}`,
    );
    const verdict = (n: number) => async () =>
      (await eventsFor(env.client, ns, 'Pod', 'a-0')).find((e) =>
        String(e.note).includes(`current pods number: ${n},`),
      );
    await waitFor('a-0 turned away with no sibling', verdict(1));
    // A sibling created (another scheduler's) and a pod that fits nowhere: kube-scheduler's
    // queue moves nothing when an unscheduled pod arrives.
    await env.kubectl(
      ['apply', '-n', ns, '-f', '-'],
      pod('a-1', 'schedulerName: elsewhere, ') + huge('huge-0'),
    );
    await waitFor('huge-0 tried', turnedAway('huge-0'));
    // a-0's backoff is over: a move would have it tried now. A pod tried after this instant
    // shows that the scheduler has taken its turns since.
    clock.advance(2000);
    await env.kubectl(['apply', '-n', ns, '-f', '-'], huge('huge-1'));
    await waitFor('huge-1 tried', turnedAway('huge-1'));
    clock.advance(8000);
    const placedAt = clock.now();
    // A pod placed (AssignedPodAdd) moves every pod coscheduling turned away.
    await env.kubectl(['apply', '-n', ns, '-f', '-'], pod('plain', '', '{app: plain}'));
    const retried = await waitFor('a-0 tried again, seeing its sibling', verdict(2));
    assert.ok(
      Date.parse(String(retried.eventTime)) >= placedAt,
      `a-0 was tried again before a pod was placed: ${JSON.stringify(retried)}`,
    );
  });

  test('a PodGroup created or changed retries its members at once', async () => {
    const ns = await env.namespace('pgevent');
    await env.kubectl(
      ['apply', '-n', ns, '-f', '-'],
      'apiVersion: v1\nkind: Pod\nmetadata: {name: p-0, labels: {scheduling.x-k8s.io/pod-group: p}}\nspec: {containers: [{name: c, image: fake-image}]}\n',
    );
    await waitFor('p-0 turned away: no PodGroup', async () =>
      (await eventsFor(env.client, ns, 'Pod', 'p-0')).some((e) => e.note === 'PodGroup not found'),
    );
    await env.kubectl(
      ['apply', '-n', ns, '-f', '-'],
      'apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: p}\nspec: {minMember: 2}\n',
    );
    await waitFor('p-0 turned away for want of siblings', async () =>
      (await eventsFor(env.client, ns, 'Pod', 'p-0')).some((e) =>
        String(e.note).includes('enough sibling pods'),
      ),
    );
    await env.kubectl([
      'patch',
      'podgroups.scheduling.x-k8s.io',
      'p',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"spec":{"minMember":1}}',
    ]);
    await waitFor('p-0 bound', async () => (await pods(env, ns)).some(placed));
  });
});

describe('preemption and gang quorum', () => {
  let env: Env;
  before(async () => {
    const nodes = parseNodeConfig(readFileSync(`${EXAMPLES}nodes.yaml`, 'utf8'));
    env = await startClusterEnv({}, { nodes, gangScheduling: true });
    await env.kubectl(
      ['apply', '-f', '-'],
      'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: gang-test-high}\nvalue: 1000\n',
    );
  });
  after(async () => {
    await env?.stop();
  });

  /** A gang of four one-GPU pods filling the four GPUs, then a high-priority pod wanting one. */
  async function fillThenPreempt(minMember: number): Promise<{ ns: string; pod: () => Promise<Pod> }> {
    const ns = await env.namespace('quorum');
    let manifest = `apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: q}\nspec: {minMember: ${minMember}}\n`;
    for (const i of [0, 1, 2, 3]) {
      manifest += `---\napiVersion: v1\nkind: Pod\nmetadata: {name: q-${i}, labels: {scheduling.x-k8s.io/pod-group: q}}\nspec:\n  containers: [{name: c, image: fake-image, resources: {limits: {nvidia.com/gpu: 1}}}]\n`;
    }
    await env.kubectl(['apply', '-n', ns, '-f', '-'], manifest);
    await waitFor('the gang placed', async () => (await pods(env, ns)).filter(placed).length === 4);
    await env.kubectl(
      ['apply', '-n', ns, '-f', '-'],
      'apiVersion: v1\nkind: Pod\nmetadata: {name: urgent}\nspec:\n  priorityClassName: gang-test-high\n  containers: [{name: c, image: fake-image, resources: {limits: {nvidia.com/gpu: 1}}}]\n',
    );
    const pod = async () =>
      (await env.client.list<Pod>(POD, { namespace: ns })).items.find((p) => p.metadata.name === 'urgent')!;
    return { ns, pod };
  }

  test('preemption takes no member of a gang at its quorum', async () => {
    const { ns, pod } = await fillThenPreempt(4);
    const urgent = await waitFor('urgent found unschedulable', async () => {
      const p = await pod();
      const conds = (p.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
      return conds?.some((c) => c.type === 'PodScheduled' && c.status === 'False') ? p : undefined;
    });
    assert.equal((urgent.status as { nominatedNodeName?: string }).nominatedNodeName, undefined);
    const gang = (await pods(env, ns)).filter((p) => p.metadata.name?.startsWith('q-'));
    assert.equal(gang.length, 4);
    for (const p of gang) {
      const conds = (p.status as { conditions?: { type: string }[] } | undefined)?.conditions ?? [];
      assert.ok(!conds.some((c) => c.type === 'DisruptionTarget'), `${p.metadata.name} is no victim`);
    }
    await env.kubectl(['delete', 'pods', '--all', '-n', ns, '--grace-period=0']);
  });

  test('preemption takes a pod outside a gang at its quorum, not none', async () => {
    const ns = await env.namespace('quorum');
    // A lone pod first, then a gang of three at its quorum on the three GPUs left: the node
    // they share offers the lone pod as a victim, the other node none.
    const gpuPod = (name: string, extra: string) =>
      `---\napiVersion: v1\nkind: Pod\nmetadata: {name: ${name}${extra}}\nspec:\n  containers: [{name: c, image: fake-image, resources: {limits: {nvidia.com/gpu: 1}}}]\n`;
    await env.kubectl(['apply', '-n', ns, '-f', '-'], gpuPod('lone', ''));
    await waitFor('the lone pod placed', async () => (await pods(env, ns)).filter(placed).length === 1);
    let gang =
      'apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: q}\nspec: {minMember: 3}\n';
    for (const i of [0, 1, 2]) gang += gpuPod(`q-${i}`, ', labels: {scheduling.x-k8s.io/pod-group: q}');
    await env.kubectl(['apply', '-n', ns, '-f', '-'], gang);
    await waitFor('the gang placed', async () => (await pods(env, ns)).filter(placed).length === 4);
    await env.kubectl(
      ['apply', '-n', ns, '-f', '-'],
      gpuPod('urgent', '').replace('spec:\n', 'spec:\n  priorityClassName: gang-test-high\n'),
    );
    await waitFor("urgent bound in the lone pod's place", async () => {
      const all = await pods(env, ns);
      return (
        placed(all.find((p) => p.metadata.name === 'urgent')!) && !all.some((p) => p.metadata.name === 'lone')
      );
    });
    const members = (await pods(env, ns)).filter((p) => p.metadata.name?.startsWith('q-'));
    assert.deepEqual(
      members
        .filter(placed)
        .map((p) => p.metadata.name)
        .sort(),
      ['q-0', 'q-1', 'q-2'],
    );
    await env.kubectl(['delete', 'pods', '--all', '-n', ns, '--grace-period=0']);
  });

  test('a gang above its quorum can lose a member to a higher-priority pod', async () => {
    const { ns, pod } = await fillThenPreempt(3);
    await waitFor('urgent bound after preempting one member', async () => placed(await pod()));
    await waitFor(
      'one member preempted',
      async () => (await pods(env, ns)).filter((p) => p.metadata.name?.startsWith('q-')).length === 3,
    );
  });
});

test('troupe cluster --gang-scheduling runs the scheduler with coscheduling, with the plugin args as flags', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gang-cli-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const child = spawn(
    process.execPath,
    [
      MAIN,
      'cluster',
      '--port',
      '0',
      '--ephemeral',
      '--data-dir',
      dir,
      '--gang-scheduling',
      '--nodes',
      '1',
      '--permit-waiting-time-seconds',
      '1',
      '--pod-group-backoff-seconds',
      '600',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  try {
    await waitFor('the cluster to serve', () => out.includes('Press Ctrl+C'), { timeoutMs: 60_000 });
    const kubectl = (args: string[], input?: string) =>
      new Promise<string>((done, fail) => {
        const c = execFile('kubectl', ['--kubeconfig', kubeconfig, ...args], (err, stdout, stderr) =>
          err ? fail(new Error(stderr)) : done(stdout),
        );
        if (input !== undefined) c.stdin?.end(input);
      });
    await kubectl(
      ['apply', '-f', '-'],
      'apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: pair, namespace: default}\nspec: {minMember: 2}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: alone, namespace: default, labels: {scheduling.x-k8s.io/pod-group: pair}}\nspec: {containers: [{name: c, image: fake-image}]}\n',
    );
    await waitFor('the lone member rejected for want of siblings', async () =>
      (await kubectl(['describe', 'pod', 'alone'])).includes(
        'pre-filter pod alone cannot find enough sibling pods, current pods number: 1, minMember of group: 2',
      ),
    );
    const pod = (name: string, group: string, extra = '') =>
      `---\napiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: default, labels: {scheduling.x-k8s.io/pod-group: ${group}}}\nspec: {${extra}containers: [{name: c, image: fake-image, resources: {requests: {cpu: '20'}}}]}\n`;
    const group = (name: string) =>
      `---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: ${name}, namespace: default}\nspec: {minMember: 2}\n`;
    // --permit-waiting-time-seconds: a member placed while its sibling belongs to another
    // scheduler is released after 1 s (the PodGroup sets no scheduleTimeoutSeconds).
    await kubectl(
      ['apply', '-f', '-'],
      group('slow') + pod('slow-1', 'slow', 'schedulerName: elsewhere, ') + pod('slow-0', 'slow'),
    );
    await waitFor('the permit timeout', async () =>
      (await kubectl(['describe', 'pod', 'slow-0'])).includes('rejected due to timeout after waiting 1s'),
    );
    await kubectl(['delete', 'pod', 'slow-0', 'slow-1', '--wait=false']);
    // --pod-group-backoff-seconds: two members of 20 CPUs on one 32-CPU node reject their gang,
    // which then backs off; its PodGroup updated retries the members (a cluster event the
    // plugin registers), which the backoff turns away.
    await kubectl(['apply', '-f', '-'], group('big') + pod('big-0', 'big') + pod('big-1', 'big'));
    await waitFor('the gang rejected', async () =>
      (await kubectl(['describe', 'pod', 'big-0', 'big-1'])).includes('2/2 pods of big could not be placed'),
    );
    await kubectl([
      'patch',
      'podgroups.scheduling.x-k8s.io',
      'big',
      '--type=merge',
      '-p',
      '{"spec":{"scheduleTimeoutSeconds":30}}',
    ]);
    await waitFor('the backoff verdict', async () =>
      (await kubectl(['describe', 'pod', 'big-0', 'big-1'])).includes('podGroup default/big failed recently'),
    );
  } finally {
    // A child that failed to start has exited already: waiting for its exit would hang.
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the plugin args' flags: a bad value, or coscheduling off, is named with the fix", async () => {
  const run = (...args: string[]) =>
    troupe(['cluster', '--ephemeral', '--port', '0', ...args]).then(
      () => assert.fail(`troupe cluster ${args.join(' ')} started`),
      (err: Error) => err.message,
    );
  assert.match(
    await run('--gang-scheduling', '--permit-waiting-time-seconds=-1'),
    /--permit-waiting-time-seconds <s>' argument '-1' is invalid\. "-1" is not a non-negative integer\./,
  );
  assert.match(
    await run('--pod-group-backoff-seconds', '10'),
    /--pod-group-backoff-seconds sets coscheduling, which is off: add --gang-scheduling/,
  );
});
