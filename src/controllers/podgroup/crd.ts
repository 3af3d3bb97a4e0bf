/** The CustomResourceDefinition the podgroup controller needs installed: config/crd/podgroup-crd.yaml. */

import { crdPath, loadCrds } from '../crds.ts';

export const PODGROUP_CRD_FILE = 'podgroup-crd.yaml';

/** Absolute path of config/crd/podgroup-crd.yaml. */
export const PODGROUP_CRD_PATH = crdPath(PODGROUP_CRD_FILE);

/** The CRD manifests the controller needs, parsed from PODGROUP_CRD_PATH. */
export function podGroupCrdManifests() {
  return loadCrds(PODGROUP_CRD_FILE);
}
