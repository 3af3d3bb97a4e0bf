/**
 * The PodSequence CustomResourceDefinition, config/crd/podsequence-crd.yaml. The schema
 * rejects what it can with clear messages: no groups, a group with both or neither of
 * pods/podSelector, an empty selector, an unknown scope, malformed names. The rest (a pod
 * named in two groups) is reported by the controller as a Failed sequence.
 */

import type { KubeObject } from '../../runtime/index.ts';
import { loadCrds } from '../crds.ts';

export const PODSEQUENCE_CRD_FILE = 'podsequence-crd.yaml';

export const podSequenceCrd: KubeObject = loadCrds(PODSEQUENCE_CRD_FILE)[0]!;
