/** The CustomResourceDefinition the AppWrapper controller needs installed: config/crd/appwrapper-crd.yaml. */

import { crdPath, loadCrds } from '../crds.ts';

export const APPWRAPPER_CRD_FILE = 'appwrapper-crd.yaml';

/** Absolute path of config/crd/appwrapper-crd.yaml. */
export const APPWRAPPER_CRD_PATH = crdPath(APPWRAPPER_CRD_FILE);

/** The CRD manifests the controller needs, parsed from APPWRAPPER_CRD_PATH. */
export function appWrapperCrdManifests() {
  return loadCrds(APPWRAPPER_CRD_FILE);
}
