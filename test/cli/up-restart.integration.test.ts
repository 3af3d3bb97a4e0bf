/**
 * `troupe up` killed in the middle of a PodSequence and started again on the same data
 * directory: the controllers pick up where they were, the tiers still start in order, and the
 * pods' readiness delays count from their stored start times. A second `troupe up` on the
 * directory while it runs refuses.
 */
import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { kubectlAt } from '../support/cluster-process.ts';
import { ROOT, scratchCheckout, spawnTroupe } from '../support/troupe-process.ts';
import { waitFor } from '../support/wait.ts';

interface Pod {
  metadata: { name: string };
  spec: { schedulingGates?: unknown[] };
  status: {
    phase?: string;
    conditions?: { type: string; status: string; lastTransitionTime: string }[];
    containerStatuses?: { state: { running?: { startedAt: string } } }[];
  };
}

const condTime = (p: Pod, type: string) =>
  Date.parse(
    p.status.conditions?.find((c) => c.type === type && c.status === 'True')?.lastTransitionTime ?? '',
  );

test('a PodSequence interrupted by a SIGKILL of troupe up continues in order after the restart; a second up refuses', async () => {
  const scratch = await scratchCheckout();
  const kubeconfig = join(scratch.dir, '.troupe/kubeconfig');
  const k = async (args: string[]) => {
    const r = await kubectlAt(kubeconfig, join(scratch.dir, '.kubectl-cache'), args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const pods = async () =>
    new Map(
      (JSON.parse(await k(['get', 'pods', '-n', 'default', '-o', 'json'])) as { items: Pod[] }).items.map(
        (p) => [p.metadata.name, p],
      ),
    );
  let up = spawnTroupe(['up', '--nodes=2', '--log-level=warn'], { cwd: scratch.dir });
  try {
    await up.banner();
    await k(['apply', '-f', join(ROOT, 'config/samples/podgroups-example.yaml')]);
    // The first tier released and running (ready 5 s later), the second still gated.
    const before = await waitFor(
      'the first tier to run',
      async () => {
        const p = await pods();
        const first = ['pod-1', 'pod-2'].map((n) => p.get(n));
        return first.every((x) => x?.status.phase === 'Running') && p;
      },
      { timeoutMs: 60_000 },
    );
    assert.ok((before.get('pod-3')?.spec.schedulingGates?.length ?? 0) > 0, 'the second tier is still gated');
    const started = before.get('pod-1')!.status.containerStatuses![0]!.state.running!.startedAt;
    up.child.kill('SIGKILL');
    await up.exited;

    up = spawnTroupe(['up', '--nodes=2', '--log-level=warn'], { cwd: scratch.dir });
    const banner = await up.banner();
    assert.match(banner, /state: restored \d+ objects/);
    // A second `troupe up` on the same directory refuses at once, naming this one, and leaves
    // its kubeconfig alone.
    const kubeconfigBytes = await readFile(kubeconfig, 'utf8');
    const kubeconfigMtime = (await stat(kubeconfig)).mtimeMs;
    const again = spawnTroupe(['up', '--nodes=2', '--log-level=warn'], { cwd: scratch.dir });
    assert.equal(await again.exited, 1);
    assert.match(again.stderr(), new RegExp(`in use by troupe process ${up.child.pid} `));
    assert.match(again.stderr(), new RegExp(`its kubeconfig is ${kubeconfig.replace(/[.]/g, '\\.')}\\.`));
    assert.match(again.stderr(), /Nothing was changed/);
    assert.equal(await readFile(kubeconfig, 'utf8'), kubeconfigBytes);
    assert.equal((await stat(kubeconfig)).mtimeMs, kubeconfigMtime);
    const after = await waitFor(
      'every tier Ready',
      async () => {
        const p = await pods();
        return [1, 2, 3, 4, 5].every((i) => condTime(p.get(`pod-${i}`)!, 'Ready') > 0) && p;
      },
      { timeoutMs: 120_000 },
    );
    const ready = (n: string) => condTime(after.get(n)!, 'Ready');
    const scheduled = (n: string) => condTime(after.get(n)!, 'PodScheduled');
    // Each tier is released only once the tier before it is Ready.
    for (const n of ['pod-3', 'pod-4'])
      assert.ok(scheduled(n) >= Math.max(ready('pod-1'), ready('pod-2')), n);
    assert.ok(scheduled('pod-5') >= Math.max(ready('pod-3'), ready('pod-4')));
    // pod-1 kept its start time, and its 5 s readiness delay counted from it.
    assert.equal(after.get('pod-1')!.status.containerStatuses![0]!.state.running!.startedAt, started);
    const status = JSON.parse(await k(['get', 'podseq', 'podgroups-example', '-o', 'json'])) as {
      status?: Record<string, unknown>;
    };
    assert.ok(status.status, 'the PodSequence has a status');
    assert.equal(await up.stop(), 0);
  } finally {
    await up.stop();
    await scratch.remove();
  }
});
