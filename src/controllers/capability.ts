/**
 * The contract each capability folder fulfils (`<folder>/capability.ts`), and the one list
 * of them is `capabilities.ts`: the CLI, the install manifests and the tests iterate over
 * that list, as Kueue's pkg/controller/jobs/jobs.go lists its integrations, so adding a
 * capability is a folder plus one entry there (docs/architecture.md, "Adding a capability").
 */

import type { Check, ControllerDefinition, KindRef, KubeObject, Manager } from '../runtime/index.ts';

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
  /**
   * The CRDs of `crdFiles`, parsed by the one loader when the list builds the capability
   * (a capability declares only its files); `troupe up` and `--install-crds` install them.
   */
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
  /**
   * Its flags of `troupe run` and `troupe up` (each also read from TROUPE_<FLAG_NAME> and the
   * `--config` file); their parsed values come back to the capability's factory in
   * `CapabilityValues`, under the flag's camelCase name.
   */
  flags?: CapabilityFlag[];
  /** What `troupe explain` says about its kinds, and about a pod. */
  explain?: CapabilityExplain;
}

/** What a capability's folder declares: everything but what the list derives (`crds`, from `crdFiles`). */
export type CapabilityDeclaration = Omit<Capability, 'crds'>;

/**
 * The parsed values of every capability's flags, keyed by the flag's camelCase name
 * (`--max-gpu-price` is `maxGpuPrice`), with what a command sets beyond its command line
 * (`troupe up`: the RunPod stand-in's URL and key). Each capability reads its own keys.
 */
export type CapabilityValues = Readonly<Record<string, unknown>>;

/** One flag of `troupe run`/`troupe up`: the CLI adds it as commander options are added. */
export interface CapabilityFlag {
  /** As commander spells it: `--max-gpu-price <usd>`, or `--appwrapper-webhooks` for a switch. */
  flag: string;
  description: string;
  default?: string | number | boolean;
  choices?: readonly string[];
  /**
   * How the value is read: a kind of number, or a function that returns the value or throws an
   * Error saying what is wrong (the CLI reports it as a bad value of this flag).
   */
  value?: 'positive' | 'non-negative' | 'non-negative-int' | ((raw: string) => unknown);
  /**
   * Set while `--controllers` does not select the capability, the command refuses to start
   * with `<flag> <this>, but --controllers "…" does not select it`.
   */
  needsSelection?: string;
}

/** How `troupe explain` reads the cluster for a capability: as any client, through its kubeconfig. */
export interface ExplainReader {
  /** The object, or undefined when it does not exist; throws when the cluster cannot be read. */
  get<T extends KubeObject>(kind: KindRef, name: string, namespace: string): Promise<T | undefined>;
  /** Objects for context: undefined when their kind is not served or not readable. */
  list<T extends KubeObject>(
    kind: KindRef,
    namespace?: string,
    labelSelector?: string,
  ): Promise<T[] | undefined>;
  /** Emphasis for a terminal (plain text when piped). */
  paint: { bold(text: string): string; phase(status: string): string };
}

/** A kind `troupe explain <name>/<object>` explains. */
export interface ExplainKind {
  kind: KindRef;
  /** The names it answers to, lower case: singular, plural, short names (`podgroup`, `podgroups`, `pg`). */
  names: string[];
  /** How the usage message names it: `podgroup (pg)`. */
  usage: string;
  /** The explanation of `object` (already read: `troupe explain` says when it is missing). */
  explain(r: ExplainReader, object: KubeObject): Promise<string>;
}

export interface CapabilityExplain {
  kinds?: ExplainKind[];
  /**
   * Its lines about a pod in `troupe explain pod/<name>`. The capability whose lines `lead`
   * opens the explanation (and its kinds head the usage message); the pod's own progress follows,
   * then the other capabilities' lines in the list's order.
   */
  pod?: { lead?: boolean; lines(r: ExplainReader, pod: KubeObject): Promise<string[]> };
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

/** The rule every controller needs: it records events.k8s.io/v1 Events (one create, then patches). */
export const EVENTS_RULE: PolicyRule = {
  apiGroups: ['events.k8s.io'],
  resources: ['events'],
  verbs: ['create', 'patch'],
};

/** A status's conditions as `troupe explain` lists them: `    Type: Status (Reason) message`. */
export function conditionLines(
  conditions: readonly { type: string; status: string; reason?: string; message?: string }[] | undefined,
  paint: ExplainReader['paint'],
): string[] {
  return (conditions ?? []).map(
    (c) =>
      `    ${c.type}: ${paint.phase(c.status)}${c.reason ? ` (${c.reason})` : ''}${c.message ? ` ${c.message}` : ''}`,
  );
}
