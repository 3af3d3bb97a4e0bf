/**
 * Regenerates the README's dashboard screenshot (docs/screenshots/dashboard.png) the way a
 * user would see it: `troupe up` in a scratch copy of the checkout, every capability's
 * sample applied (a PodSequence, a node-scoped one, a gang, an AppWrapper through Kueue's
 * stand-in, an offloaded GPU Job), and Debian's Chromium (scripts/ensure-chromium.sh) on the
 * printed URL once every section has something to show.
 *   ./node_modules/.bin/node scripts/screenshot-dashboard.ts [out.png]
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const OUT = resolve(process.argv[2] ?? join(ROOT, 'docs/screenshots/dashboard.png'));
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const SAMPLES = [
  'config/samples/podgroups-example.yaml',
  'config/samples/node-scoped-csi-example.yaml',
  'config/samples/podgroup/',
  'samples/appwrapper.yaml',
  'samples/offload/gpu-job.yaml',
];
// What the page shows once each section is populated and the runs have settled.
const SETTLED = [
  '[data-sequence="default/podgroups-example"][data-phase="Completed"]',
  '[data-sequence="default/csi-driver-sequence"][data-phase="Completed"]',
  '[data-podgroup="default/training-job-1"]',
  '#appwrappers [data-appwrapper]',
  '#queues [data-clusterqueue]',
  '#offloads [data-offload]',
];

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const scratch = await mkdtemp(join(tmpdir(), 'troupe-screenshot-'));
let up: ChildProcess | undefined;
try {
  for (const entry of await readdir(ROOT)) {
    if (entry !== '.troupe' && entry !== '.git') await symlink(join(ROOT, entry), join(scratch, entry));
  }
  up = spawn(process.execPath, [join(ROOT, 'src/cli/main.ts'), 'up', '--log-level=warn'], {
    cwd: scratch,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  up.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const url = await until('troupe up to print the dashboard URL', async () =>
    out.includes('Press Ctrl+C') ? /Dashboard: (\S+)/.exec(out)?.[1] : undefined,
  );
  const env = { ...process.env, KUBECONFIG: join(scratch, '.troupe/kubeconfig') };
  for (const sample of SAMPLES) await run('kubectl', ['apply', '-f', sample], { cwd: scratch, env });

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(url);
    for (const selector of SETTLED)
      await page.waitForSelector(selector, { timeout: 120_000, state: 'attached' });
    await page.screenshot({ path: OUT, fullPage: true });
    console.log(`wrote ${OUT}`);
  } finally {
    await browser.close();
  }
} finally {
  up?.kill('SIGTERM');
  if (up && up.exitCode === null) await new Promise((r) => up?.once('exit', r));
  await rm(scratch, { recursive: true, force: true });
}
