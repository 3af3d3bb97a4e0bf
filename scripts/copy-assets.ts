/**
 * `tsc` only emits JavaScript; data files that sources read next to themselves
 * (OpenAPI schemas, default KWOK Stages) are copied into build/ by this step.
 */
import { cp, readdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const src = join(root, 'src');
const out = join(root, 'build');

async function* assets(dir: string): AsyncGenerator<string> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* assets(p);
    else if (!p.endsWith('.ts')) yield p;
  }
}

let n = 0;
for await (const file of assets(src)) {
  await cp(file, join(out, relative(src, file)));
  n++;
}
console.log(`copied ${n} asset files into build/`);
