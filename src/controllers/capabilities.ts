/**
 * Every capability troupe has, in one list: the CLI (`--controllers`, `troupe up`, readiness),
 * the install manifests and the tests iterate over it. A new capability is a folder under
 * src/controllers/ with a `capability.ts`, and one entry here (docs/architecture.md,
 * "Adding a capability"; test/controllers/capabilities.test.ts checks the rest).
 */

import type { Clock } from '../lib/clock.ts';
import { appWrapperCapability } from './appwrapper/capability.ts';
import type { Capability, CapabilityDeclaration, CapabilityValues } from './capability.ts';
import { loadCrds } from './crds.ts';
import { offloadCapability } from './offload/capability.ts';
import { podGroupCapability } from './podgroup/capability.ts';
import { podSequenceCapability } from './podsequence/capability.ts';

export type {
  Capability,
  CapabilityFlag,
  CapabilityValues,
  ExplainKind,
  ExplainReader,
  PolicyRule,
} from './capability.ts';

/**
 * Builds every capability from the values of their flags (defaults when absent); cheap,
 * nothing starts until the manager does.
 */
export function capabilities(values: CapabilityValues = {}, deps: { clock?: Clock } = {}): Capability[] {
  return [
    podGroupCapability(),
    podSequenceCapability(values),
    appWrapperCapability(values),
    offloadCapability(values, deps.clock),
  ].map(withCrds);
}

/**
 * The capability with its CRDs, read from its `crdFiles` by the one loader when first asked
 * for: every `troupe` command builds the list for its flags and `explain`, and most never
 * install a CRD (parsing them is most of the list's cost).
 */
function withCrds(c: CapabilityDeclaration): Capability {
  let crds: Capability['crds'] | undefined;
  return {
    ...c,
    get crds() {
      crds ??= c.crdFiles.flatMap((f) => loadCrds(f));
      return crds;
    },
  };
}
