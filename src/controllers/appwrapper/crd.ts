/**
 * The CustomResourceDefinition the AppWrapper controller needs installed. The YAML under
 * config/crd/ is the single source: users `kubectl apply` it and the CLI installs it from here.
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../runtime/index.ts';

// Three levels up is the package root both from src/controllers/appwrapper and from the
// build output (build/controllers/appwrapper).
const CRD_URL = new URL('../../../config/crd/appwrapper-crd.yaml', import.meta.url);

/** Absolute path of config/crd/appwrapper-crd.yaml. */
export const APPWRAPPER_CRD_PATH = fileURLToPath(CRD_URL);

/** The CRD manifests the controller needs, parsed from APPWRAPPER_CRD_PATH. */
export function appWrapperCrdManifests(): KubeObject[] {
  const out: KubeObject[] = [];
  for (const doc of parseAllDocuments(readFileSync(CRD_URL, 'utf8'))) {
    if (doc.errors.length > 0) {
      throw new Error(`${APPWRAPPER_CRD_PATH}: ${doc.errors.map((e) => e.message).join('; ')}`);
    }
    const obj = doc.toJS() as KubeObject | null;
    if (obj) out.push(obj);
  }
  return out;
}
