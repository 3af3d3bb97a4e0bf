/**
 * `troupe up` as a user starts it: two instances side by side on one machine (every port
 * comes from `up`'s own free-port defaults), and `npm start` stopped by a supervisor's
 * SIGTERM leaves no troupe process behind.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { alive, descendants, scratchCheckout, spawnTroupe } from '../support/troupe-process.ts';
import { waitFor } from '../support/wait.ts';

const run = promisify(execFile);

/** The kubeconfig path `up` printed in its banner. */
function kubeconfigOf(banner: string): string {
  const m = /export KUBECONFIG=(\S+)/.exec(banner);
  assert.ok(m, `no KUBECONFIG in the banner:\n${banner}`);
  return m[1] as string;
}

test('two troupe up run side by side, each on ports of its own', async () => {
  const a = await scratchCheckout();
  const b = await scratchCheckout();
  // Every capability runs, so the webhook server listens too (up serves AppWrapper's webhooks).
  const first = spawnTroupe(['up', '--nodes=1', '--log-level=warn'], { cwd: a.dir });
  const second = spawnTroupe(['up', '--nodes=1', '--log-level=warn'], { cwd: b.dir });
  try {
    const banners = await Promise.all([first.banner(), second.banner()]);
    const urls = banners.map((t) => /embedded cluster at (\S+)/.exec(t)?.[1]);
    assert.notEqual(urls[0], urls[1]);
    for (const banner of banners) {
      const { stdout } = await run('kubectl', [
        '--kubeconfig',
        kubeconfigOf(banner),
        'get',
        'nodes',
        '-o',
        'name',
      ]);
      assert.match(stdout, /^node\/node-0$/m);
    }
  } finally {
    const codes = await Promise.all([first.stop(), second.stop()]);
    await a.remove();
    await b.remove();
    assert.deepEqual(codes, [0, 0], `${first.stderr()}\n${second.stderr()}`);
  }
});

test('SIGTERM to npm start stops troupe up too', async () => {
  const scratch = await scratchCheckout();
  const npm = spawnTroupe(['start', '--', '--nodes=1', '--log-level=warn'], {
    cwd: scratch.dir,
    command: 'npm',
  });
  try {
    const banner = await npm.banner();
    assert.equal(kubeconfigOf(banner), join(scratch.dir, '.troupe/kubeconfig'));
    const below = descendants(npm.child.pid as number);
    assert.ok(below.length > 0, 'npm start has no child process');
    // What a supervisor, a terminal multiplexer or an IDE does: signal npm alone.
    npm.child.kill('SIGTERM');
    assert.equal(await npm.exited, 0, npm.stderr());
    await waitFor('every process below npm start to exit', () => below.every((pid) => !alive(pid)));
  } finally {
    await npm.stop();
    await scratch.remove();
  }
});
