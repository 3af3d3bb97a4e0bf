/**
 * Runs every shell command of docs/persistence.md, in order, in a scratch checkout (so its
 * `.troupe/` is apart from the developer's): commands that start a cluster run in the
 * background until a comment says to stop it with Ctrl+C (SIGTERM here) or the next one starts;
 * the others must exit 0. Then checks what the page promises happened.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { ROOT, scratchCheckout, spawnTroupe, type TroupeProcess } from '../support/troupe-process.ts';

function shellBlocks(markdown: string): string[][] {
  const blocks: string[][] = [];
  for (const m of markdown.matchAll(/```sh\n([\s\S]*?)```/g)) {
    blocks.push(
      m[1]!
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== ''),
    );
  }
  return blocks;
}

const startsCluster = (line: string) => /^npm (start|run troupe -- (cluster|up))\b/.test(line);

test('every command of docs/persistence.md runs as written and does what the page says', async () => {
  const blocks = shellBlocks(await readFile(join(ROOT, 'docs/persistence.md'), 'utf8'));
  assert.ok(blocks.length >= 4);
  const scratch = await scratchCheckout();
  const env = {
    ...process.env,
    PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}`,
    KUBECONFIG: join(scratch.dir, '.troupe/kubeconfig'),
  };
  let server: TroupeProcess | undefined;
  const outputs: string[] = [];
  try {
    for (const block of blocks) {
      for (const line of block) {
        if (line.startsWith('#')) {
          if (/Ctrl\+C/.test(line) && server) {
            assert.equal(await server.stop(), 0, 'a clean stop');
            server = undefined;
          }
          continue;
        }
        if (startsCluster(line)) {
          if (server) assert.equal(await server.stop(), 0, 'a clean stop');
          server = spawnTroupe(['-c', `exec ${line.replace(/\s+#.*$/, '')}`], {
            cwd: scratch.dir,
            env,
            command: 'bash',
          });
          outputs.push(await server.banner());
          continue;
        }
        const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
          execFile('bash', ['-c', line], { cwd: scratch.dir, env, timeout: 60_000 }, (err, stdout, stderr) =>
            resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
          ),
        );
        assert.equal(r.code, 0, `${line}\n${r.stderr}`);
        outputs.push(r.stdout);
      }
    }
    // The uid and resourceVersion printed before and after the first restart are the same.
    const ids = outputs.filter((o) => /^[0-9a-f-]{36} \d+$/.test(o));
    assert.equal(ids.length, 2, outputs.join('\n---\n'));
    assert.equal(ids[0], ids[1]);
    assert.ok(outputs.some((o) => /state: restored \d+ objects from /.test(o)));
    // After --reset, `kubectl get configmap hello --ignore-not-found` printed nothing.
    assert.equal(outputs.at(-1), '');
    // The backup holds the ConfigMap deleted after it was taken (and the restore brought it back).
    const backup = new DatabaseSync(join(scratch.dir, 'troupe-backup.db'), { readOnly: true });
    const rows = backup.prepare("SELECT key FROM objects WHERE storage = '/configmaps'").all() as {
      key: string;
    }[];
    backup.close();
    assert.deepEqual(
      rows.map((r) => r.key),
      ['default/hello'],
    );
  } finally {
    if (server) await server.stop();
    await scratch.remove();
  }
});
