import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { claimDataDir, DataDirInUseError } from '../../../src/cluster/state/data-dir.ts';

test('a data directory has one owner; a dead owner is replaced; release lets the next one in', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-claim-'));
  try {
    const first = claimDataDir(dir, { kubeconfig: join(dir, 'kubeconfig') });
    first.update({ url: 'https://127.0.0.1:1234' });
    assert.throws(
      () => claimDataDir(dir),
      (err: unknown) =>
        err instanceof DataDirInUseError &&
        err.owner.pid === process.pid &&
        /serving https:\/\/127\.0\.0\.1:1234/.test(err.message) &&
        err.message.includes(`its kubeconfig is ${join(dir, 'kubeconfig')}`),
    );
    first.release();
    // A holder that died without releasing (no such pid) is taken over.
    await writeFile(
      join(dir, 'owner.json'),
      JSON.stringify({ pid: 2 ** 22 + 1, command: 'x', startedAt: '' }),
    );
    const second = claimDataDir(dir);
    assert.equal(JSON.parse(await readFile(join(dir, 'owner.json'), 'utf8')).pid, process.pid);
    second.release();
    // A half-written owner file names nobody: taken over too.
    await writeFile(join(dir, 'owner.json'), '{"pid": 12');
    claimDataDir(dir).release();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
