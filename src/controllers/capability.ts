/**
 * The contract each capability folder fulfils (`<folder>/capability.ts`), and the one list
 * of them is `capabilities.ts`: the CLI, the install manifests and the tests iterate over
 * that list, as Kueue's pkg/controller/jobs/jobs.go lists its integrations, so adding a
 * capability is a folder plus one entry there (docs/architecture.md, "Adding a capability").
 */

import type { Clock } from '../lib/clock.ts';
import type { Check, ControllerDefinition, KindRef, KubeObject, Manager } from '../runtime/index.ts';
import type { AppWrapperConfigInput } from './appwrapper/config.ts';
import type { OffloadOptions } from './offload/options.ts';
import type { PodSequenceOptions } from './podsequence/options.ts';

/** One rule of a ClusterRole, as config/rbac/ writes it. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

export interface Capability {
  /** The name `--controllers` selects it by, and its folder under src/controllers/. */
  name: string;
  summary: string;
  controllers: ControllerDefinition[];
  /** Files under config/crd/ with the CRDs its controllers read or write (src/controllers/crds.ts loads them). */
  crdFiles: string[];
  /** The CRDs of `crdFiles`, parsed; `troupe up` and `--install-crds` install them. */
  crds: KubeObject[];
  /**
   * What the manager may do for it, and the file under config/ whose ClusterRole grants it:
   * that ClusterRole's rules are the union of the rules of the capabilities naming it
   * (test/controllers/capabilities.test.ts keeps them equal).
   */
  rbac: { file: string; rules: PolicyRule[] };
  readyChecks?: [string, Check][];
  /**
   * Why the capability cannot do its work yet (no credentials), or undefined when it can.
   * Such a capability's ready checks count only when the user asked for it by name.
   */
  unconfigured?(): string | undefined;
  /** Admission webhooks served by the manager's webhook server. */
  webhooks?: {
    register(manager: Manager): void;
    /** The webhook configurations pointing the API server at `url` (embedded mode registers them). */
    configurations(url: string, caBundle: string): KubeObject[];
  };
  stop?(): void | Promise<void>;
  /** Its sections of `troupe status`, in order. */
  status?: StatusView[];
}

/** One row of a `troupe status` section: the object's namespace and name, then the view's fields. */
export type StatusRow = { namespace: string; name: string } & Record<string, string | number>;

/**
 * A section of `troupe status`: the objects of one kind the capability manages, one row each.
 * `-o json` prints the rows under `key`; the text output prints `columns`.
 */
export interface StatusView {
  key: string;
  title: string;
  kind: KindRef;
  /** Which of the kind's objects are the capability's (all when absent). */
  select?(obj: KubeObject): boolean;
  /** The row's fields after namespace and name, read from the object as any client sees it. */
  row(obj: KubeObject): Record<string, string | number>;
  /** Text columns after NAMESPACE and NAME; a `phase` column is coloured by its value. */
  columns: { header: string; cell(row: StatusRow): string; phase?: boolean }[];
}

/** What the flags of `troupe run`/`up` set for the capabilities, each reading its own part. */
export interface CapabilityOptions {
  offload?: Partial<OffloadOptions>;
  podsequence?: PodSequenceOptions;
  /** Serve the AppWrapper defaulting/validating webhooks (embedded mode registers them). */
  appwrapperWebhooks?: boolean;
  /** Upstream AppWrapper's configuration (`--appwrapper-config`), for the controller and its webhooks. */
  appwrapper?: AppWrapperConfigInput;
  /** The manager's clock, for what a capability times outside reconciles (offload's provider and pending timers). */
  clock?: Clock;
}

/** The rule every controller needs: it records events.k8s.io/v1 Events (one create, then patches). */
export const EVENTS_RULE: PolicyRule = {
  apiGroups: ['events.k8s.io'],
  resources: ['events'],
  verbs: ['create', 'patch'],
};
