/** The simulated kubelet's shell (pods/exec, ephemeral containers): its sleeps on the cluster's clock. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { execInContainer } from '../../../src/cluster/kubelet/exec.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { waitFor } from '../../support/wait.ts';

const pod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
};

test('sleep is simulated time: at --time-scale 10, `sleep 10` waits one second of the clock', async () => {
  const clock = new ManualClock(0);
  let out = '';
  const io = {
    tty: false,
    signal: new AbortController().signal,
    write: (_s: string, t: string) => (out += t),
  };
  const done = execInContainer(pod, 'c', ['sh', '-c', 'sleep 10; echo woke'], io, clock, 10);
  const due = await waitFor('the shell to sleep', () => clock.nextTimerAt());
  const before = out;
  clock.advanceTo(due);
  const code = await done;
  assert.equal(due, 1000);
  assert.equal(before, '');
  assert.deepEqual({ code, out }, { code: 0, out: 'woke\n' });
});
