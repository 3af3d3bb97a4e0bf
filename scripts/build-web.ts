/**
 * Bundles the dashboard's page (web/) into build/web/ with esbuild: app.js, app.css and
 * index.html. `npm run build` runs it; an installed troupe serves these files.
 */
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { BUILT_WEB_DIR, WEB_DIR, webBuildOptions } from '../src/dashboard/assets.ts';

await rm(BUILT_WEB_DIR, { recursive: true, force: true });
await mkdir(BUILT_WEB_DIR, { recursive: true });
await build(webBuildOptions(BUILT_WEB_DIR));
await copyFile(join(WEB_DIR, 'index.html'), join(BUILT_WEB_DIR, 'index.html'));
console.log(`built the dashboard page into ${BUILT_WEB_DIR}`);
