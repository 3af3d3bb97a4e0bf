/**
 * The Dockerfile's steps, replayed without a container engine: each stage gets a scratch
 * directory standing for its filesystem, COPY copies from the checkout (minus
 * .dockerignore) or from an earlier stage, RUN runs in the stage's WORKDIR with its ENV
 * and the project's Node 24 first on PATH (what node:24-slim provides), and the final
 * stage's ENTRYPOINT runs `run --help`. So `npm ci`, the build and the production install
 * are the image's own, and the assembled layout must start.
 *
 * npm reads from its cache first (prefer-offline); only the npm registry is reached.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { DockerfileParser } from 'dockerfile-ast';
import { ROOT } from '../support/troupe-process.ts';

const run = promisify(execFile);

interface Stage {
  name: string;
  root: string;
  workdir: string;
  env: Record<string, string>;
}

/** `dest` inside the stage: absolute paths from its root, relative ones from WORKDIR. */
function inStage(stage: Stage, path: string): string {
  return path.startsWith('/') ? join(stage.root, path) : join(stage.root, stage.workdir, path);
}

test("the Dockerfile's steps, replayed, give a layout whose troupe starts", async () => {
  const text = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
  const ignored = new Set((await readFile(join(ROOT, '.dockerignore'), 'utf8')).split('\n').filter(Boolean));
  const scratch = await mkdtemp(join(tmpdir(), 'troupe-docker-replay-'));
  const stages: Stage[] = [];
  let entrypoint: string[] = [];
  try {
    for (const i of DockerfileParser.parse(text).getInstructions()) {
      const keyword = i.getKeyword();
      const args = i.getArguments().map((a) => a.getValue());
      if (keyword === 'FROM') {
        const as = args.findIndex((a) => a.toUpperCase() === 'AS');
        const name = as >= 0 ? (args[as + 1] ?? '') : String(stages.length);
        const root = join(scratch, `stage-${stages.length}`);
        await mkdir(root);
        stages.push({ name, root, workdir: '/', env: {} });
        continue;
      }
      const stage = stages.at(-1);
      assert.ok(stage, `${keyword} before FROM`);
      switch (keyword) {
        case 'WORKDIR':
          stage.workdir = args[0]!;
          await mkdir(inStage(stage, '.'), { recursive: true });
          break;
        case 'ENV':
          for (const a of args) {
            const [k, ...v] = a.split('=');
            stage.env[k!] = v.join('=');
          }
          break;
        case 'COPY': {
          const from = (i as unknown as { getFromFlag(): { getValue(): string } | null })
            .getFromFlag()
            ?.getValue();
          const source = from ? stages.find((s) => s.name === from) : undefined;
          if (from) assert.ok(source, `COPY --from=${from}: no such stage`);
          const paths = args.filter((a) => !a.startsWith('--'));
          const dest = paths.at(-1)!;
          for (const src of paths.slice(0, -1)) {
            const origin = source ? inStage(source, src) : join(ROOT, src);
            const target = dest.endsWith('/')
              ? inStage(stage, join(dest, basename(src)))
              : inStage(stage, dest);
            await mkdir(dirname(target), { recursive: true });
            await cp(origin, target, {
              recursive: true,
              // .dockerignore applies to the build context only.
              filter: (p) => source !== undefined || !ignored.has(relative(ROOT, p)),
            });
          }
          break;
        }
        case 'RUN': {
          const cmd = i.getArgumentsContent() ?? '';
          await run('bash', ['-e', '-o', 'pipefail', '-c', cmd], {
            cwd: inStage(stage, '.'),
            env: {
              PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
              HOME: process.env.HOME ?? tmpdir(),
              npm_config_prefer_offline: 'true',
              ...stage.env,
            },
            maxBuffer: 64 * 1024 * 1024,
          }).catch((err: { stdout?: string; stderr?: string }) => {
            assert.fail(`RUN ${cmd} failed:\n${err.stdout ?? ''}\n${err.stderr ?? ''}`);
          });
          break;
        }
        case 'ENTRYPOINT':
          entrypoint = JSON.parse(i.getArgumentsContent() ?? '[]') as string[];
          break;
        default:
          // USER, EXPOSE, CMD, LABEL, ARG: nothing to replay on a filesystem.
          break;
      }
    }
    const image = stages.at(-1)!;
    assert.deepEqual(entrypoint.slice(0, 1), ['node']);
    const { stdout } = await run(process.execPath, [...entrypoint.slice(1), 'run', '--help'], {
      cwd: inStage(image, '.'),
      env: { PATH: process.env.PATH ?? '', ...image.env },
    });
    assert.match(stdout, /^Usage: troupe run \[options\]/);
    assert.match(stdout, /--kubeconfig <file>/);
    // The production install holds no development tools.
    await assert.rejects(readFile(join(inStage(image, 'node_modules/typescript/package.json'))));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
});
