/**
 * The page's static files. In a checkout (web/ sources and esbuild present) they are
 * bundled in memory when the dashboard starts, so `npm start` never serves a stale page;
 * an installed troupe (no web/, no dev dependencies) serves what `npm run build` put in
 * build/web/.
 */

import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import type { BuildOptions } from 'esbuild';

export interface Asset {
  body: Buffer;
  contentType: string;
}

const ROOT = resolve(import.meta.dirname, '../..');
export const WEB_DIR = join(ROOT, 'web');
export const BUILT_WEB_DIR = join(ROOT, 'build', 'web');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.map': 'application/json',
};

/** The one esbuild configuration, shared by the in-memory build and scripts/build-web.ts. */
export function webBuildOptions(outdir: string): BuildOptions {
  return {
    entryPoints: { app: join(WEB_DIR, 'src', 'main.tsx') },
    bundle: true,
    outdir,
    format: 'esm',
    target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'silent',
  };
}

/** Bundles web/ with esbuild; undefined when this is not a checkout with dev dependencies. */
async function buildInMemory(): Promise<Map<string, Asset> | undefined> {
  if (!existsSync(join(WEB_DIR, 'src', 'main.tsx'))) return undefined;
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    return undefined;
  }
  const outdir = join(ROOT, 'build', 'web-memory');
  const result = await esbuild.build({ ...webBuildOptions(outdir), write: false });
  const assets = new Map<string, Asset>();
  for (const f of result.outputFiles) {
    const name = f.path.slice(outdir.length + 1);
    assets.set(`/${name}`, {
      body: Buffer.from(f.contents),
      contentType: TYPES[extname(name)] ?? 'application/octet-stream',
    });
  }
  assets.set('/', { body: await readFile(join(WEB_DIR, 'index.html')), contentType: TYPES['.html']! });
  return assets;
}

async function readBuilt(): Promise<Map<string, Asset> | undefined> {
  if (!existsSync(join(BUILT_WEB_DIR, 'index.html'))) return undefined;
  const assets = new Map<string, Asset>();
  for (const name of await readdir(BUILT_WEB_DIR)) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = await readFile(join(BUILT_WEB_DIR, name));
    assets.set(name === 'index.html' ? '/' : `/${name}`, { body, contentType: type });
  }
  return assets;
}

export async function loadAssets(): Promise<Map<string, Asset>> {
  const assets = (await buildInMemory()) ?? (await readBuilt());
  if (!assets) throw new Error(`dashboard page not found: run "npm run build" (looked in ${BUILT_WEB_DIR})`);
  return assets;
}
