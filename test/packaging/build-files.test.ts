/**
 * The Dockerfile, parsed, since no container engine runs here. The Makefile's targets are
 * tested in make-targets.test.ts.
 */

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { DockerfileParser } from 'dockerfile-ast';

const ROOT = resolve(import.meta.dirname, '../..');

describe('Dockerfile', async () => {
  const text = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
  const dockerfile = DockerfileParser.parse(text);
  const instructions = dockerfile.getInstructions();

  test('is multi-stage on Node 24 slim', () => {
    const froms = dockerfile.getFROMs();
    assert.ok(froms.length >= 2, 'a build stage and a runtime stage');
    for (const f of froms) assert.equal(`${f.getImageName()}:${f.getImageTag()}`, 'node:24-slim');
    // Every instruction is one Docker knows.
    const known = new Set([
      'FROM',
      'WORKDIR',
      'COPY',
      'RUN',
      'ENV',
      'USER',
      'EXPOSE',
      'ENTRYPOINT',
      'CMD',
      'ARG',
      'LABEL',
    ]);
    for (const i of instructions) assert.ok(known.has(i.getKeyword()), i.getKeyword());
  });

  test('copies only files that exist and are not excluded from the build context', async () => {
    const ignored = (await readFile(join(ROOT, '.dockerignore'), 'utf8')).split('\n').filter(Boolean);
    for (const i of instructions.filter((x) => x.getKeyword() === 'COPY')) {
      // COPY --from=<stage> copies from an earlier stage, not from the context.
      if ((i as unknown as { getFromFlag(): unknown }).getFromFlag()) continue;
      const args = i.getArguments().map((a) => a.getValue());
      for (const src of args.slice(0, -1)) {
        assert.ok(existsSync(join(ROOT, src)), `COPY ${src}: no such file`);
        assert.ok(!ignored.includes(src), `COPY ${src}: excluded by .dockerignore`);
      }
    }
  });

  test('builds the code and the dashboard page, and runs troupe as a numeric non-root user', () => {
    const runs = instructions
      .filter((i) => i.getKeyword() === 'RUN')
      .map((i) => i.getArgumentsContent() ?? '');
    assert.ok(runs.some((r) => r.includes('npm run build') && r.includes('scripts/build-web.ts')));
    assert.ok(runs.some((r) => r.includes('npm ci --omit=dev')));
    const lastFrom = instructions.lastIndexOf(instructions.filter((i) => i.getKeyword() === 'FROM').at(-1)!);
    const final = instructions.slice(lastFrom);
    const user = final.find((i) => i.getKeyword() === 'USER')?.getArgumentsContent() ?? '';
    assert.match(user, /^[1-9]\d*(:\d+)?$/, 'numeric, non-zero uid');
    const entry = final.find((i) => i.getKeyword() === 'ENTRYPOINT')?.getArgumentsContent() ?? '';
    assert.deepEqual(JSON.parse(entry), ['node', 'bin/troupe.js']);
    assert.ok(existsSync(join(ROOT, 'bin', 'troupe.js')));
  });
});
