/**
 * Generates dist/install.yaml, the one-file install of troupe on a real cluster, as
 * kubebuilder's `make build-installer` does: it is `kubectl kustomize config/default` (kubectl
 * has kustomize built in) under a short header. The kustomize layout under config/ is the
 * source; this file only renders it, so the two cannot disagree.
 *
 *   node scripts/gen-install.ts           # writes dist/install.yaml
 *   node scripts/gen-install.ts --check   # exits 1 when dist/install.yaml is out of date
 *   node scripts/gen-install.ts --stdout  # prints it
 *
 * KUBECTL names the kubectl binary (default `kubectl` on the PATH).
 */

import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual, promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';

const run = promisify(execFile);

export const ROOT = resolve(import.meta.dirname, '..');
export const INSTALL_PATH = join(ROOT, 'dist', 'install.yaml');
/** The kustomization dist/install.yaml renders. */
export const DEFAULT_KUSTOMIZATION = join(ROOT, 'config', 'default');

export const HEADER = [
  '# troupe: CRDs, RBAC and the controller manager, in namespace troupe-system.',
  '# Generated from config/default by scripts/gen-install.ts (kubectl kustomize); do not edit.',
  '#   kubectl apply --server-side -f dist/install.yaml',
  '# Image troupe:latest; `make deploy IMG=<registry>/troupe:<tag>` installs with yours.',
  '',
].join('\n');

/** `kubectl kustomize <dir>`: the rendered YAML stream. */
export async function kustomize(dir: string = DEFAULT_KUSTOMIZATION): Promise<string> {
  const kubectl = process.env.KUBECTL || 'kubectl';
  const { stdout } = await run(kubectl, ['kustomize', dir], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** The text dist/install.yaml must hold. */
export async function renderInstall(): Promise<string> {
  return HEADER + (await kustomize());
}

export interface KubeDoc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
  [k: string]: unknown;
}

/** The objects of a YAML stream, in order (comments and empty documents dropped). */
export function parseManifests(text: string): KubeDoc[] {
  return parseAllDocuments(text)
    .map((d) => {
      if (d.errors.length > 0) throw d.errors[0];
      return d.toJSON() as KubeDoc | null;
    })
    .filter((d): d is KubeDoc => d !== null);
}

/**
 * How two manifests differ as objects (undefined when they hold the same objects in the same
 * order). Compared as data rather than text, so another kubectl's formatting of the same
 * rendering is not a difference.
 */
export function manifestDifference(actual: string, expected: string): string | undefined {
  const a = parseManifests(actual);
  const e = parseManifests(expected);
  const id = (d: KubeDoc | undefined) =>
    d ? `${d.kind} ${d.metadata.namespace ? `${d.metadata.namespace}/` : ''}${d.metadata.name}` : 'nothing';
  for (let i = 0; i < Math.max(a.length, e.length); i++) {
    if (!isDeepStrictEqual(a[i], e[i])) {
      return id(a[i]) === id(e[i])
        ? `${id(e[i])} differs`
        : `object ${i + 1} is ${id(a[i])}, expected ${id(e[i])}`;
    }
  }
  return undefined;
}

async function main(): Promise<void> {
  const text = await renderInstall();
  const arg = process.argv[2];
  if (arg === '--stdout') {
    process.stdout.write(text);
  } else if (arg === '--check') {
    const current = await readFile(INSTALL_PATH, 'utf8').catch(() => '');
    const diff = manifestDifference(current, text);
    if (diff) {
      process.stderr.write(`dist/install.yaml is out of date (${diff}): run make build-installer\n`);
      process.exit(1);
    }
  } else if (arg === undefined) {
    await writeFile(INSTALL_PATH, text);
    process.stdout.write(`wrote ${INSTALL_PATH}\n`);
  } else {
    process.stderr.write(`unknown argument ${arg}; use --check or --stdout\n`);
    process.exit(2);
  }
}

if (import.meta.main) await main();
