/**
 * The one CRD loader: every capability's CustomResourceDefinitions are the YAML files under
 * config/crd/, parsed here. The files are the single source: users `kubectl apply` them,
 * `troupe up` and `--install-crds` install them from here, and tests create them.
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../runtime/index.ts';

// Two levels up is the package root both from src/controllers and from the build output
// (build/controllers).
const CRD_DIR = new URL('../../config/crd/', import.meta.url);

/** Absolute path of `config/crd/<file>`. */
export function crdPath(file: string): string {
  return fileURLToPath(new URL(file, CRD_DIR));
}

/** The manifests of `config/crd/<file>`, in file order; a malformed file throws naming it. */
export function loadCrds(file: string): KubeObject[] {
  const path = crdPath(file);
  const out: KubeObject[] = [];
  for (const doc of parseAllDocuments(readFileSync(path, 'utf8'))) {
    if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const obj = doc.toJS() as KubeObject | null;
    if (obj) out.push(obj);
  }
  return out;
}
