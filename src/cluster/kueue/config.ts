/**
 * Kueue's own configuration file (`config.kueue.x-k8s.io/v1beta2` Configuration, the
 * `controller_manager_config.yaml` of Kueue's `kueue-manager-config` ConfigMap), read as
 * Kueue v0.19 reads it (pkg/config/config.go: strict decoding, then
 * apis/config/v1beta2/defaults.go and pkg/config/validation.go). The stand-in takes its
 * `waitForPodsReady` section; the other sections are Kueue's and accepted as they are.
 *
 * In v1beta2 the section has no `enable` (removed in v0.15): since v0.19 an absent section
 * defaults to `{}`, so a Configuration turns waitForPodsReady on with a 30m timeout unless
 * `featureGates: {DisableWaitForPodsReady: true}` (pkg/util/waitforpodsready).
 */
import { Ajv, type ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { podsReadySettings, type WaitForPodsReadyConfig } from './podsready.ts';

export const KUEUE_CONFIG_API_VERSION = 'config.kueue.x-k8s.io/v1beta2';

/** What the stand-in takes from a Kueue Configuration. */
export interface KueueConfiguration {
  /** Absent: waitForPodsReady is off (the DisableWaitForPodsReady feature gate). */
  waitForPodsReady?: WaitForPodsReadyConfig;
}

const section = { type: 'object' } as const;
const int32 = { type: 'integer', minimum: 0, maximum: 2_147_483_647 } as const;

/** The v1beta2 Configuration's fields (configuration_types.go, ControllerManager inlined). */
const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['apiVersion', 'kind'],
  properties: {
    apiVersion: { type: 'string' },
    kind: { const: 'Configuration' },
    namespace: { type: 'string' },
    manageJobsWithoutQueueName: { type: 'boolean' },
    managedJobsNamespaceSelector: section,
    internalCertManagement: section,
    clientConnection: section,
    integrations: section,
    multiKueue: section,
    fairSharing: section,
    admissionFairSharing: section,
    resources: section,
    objectRetentionPolicies: section,
    visibilityServer: section,
    webhook: section,
    leaderElection: section,
    metrics: section,
    health: section,
    controller: section,
    tls: section,
    pprofBindAddress: { type: 'string' },
    featureGates: { type: 'object', additionalProperties: { type: 'boolean' } },
    waitForPodsReady: {
      type: 'object',
      additionalProperties: false,
      properties: {
        timeout: { type: 'string' },
        blockAdmission: { type: 'boolean' },
        recoveryTimeout: { type: 'string' },
        requeuingStrategy: {
          type: 'object',
          additionalProperties: false,
          properties: {
            timestamp: { enum: ['Eviction', 'Creation'] },
            backoffLimitCount: { ...int32, type: ['integer', 'null'] },
            backoffBaseSeconds: int32,
            backoffMaxSeconds: int32,
          },
        },
      },
    },
  },
} as const;

// Compiled on first use: every troupe command loads this file with its flags.
let compiled: ReturnType<Ajv['compile']> | undefined;
const validator = () =>
  (compiled ??= new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(SCHEMA));

/** The fix a misplaced field most likely needs, beside Kueue's "unknown field". */
const HINTS: Record<string, string> = {
  'waitForPodsReady.enable':
    'v1beta2 has no enable: the section turns waitForPodsReady on; featureGates: {DisableWaitForPodsReady: true} turns it off',
};

/**
 * Parses a Kueue Configuration (or the ConfigMap holding one); throws one message listing every
 * problem, each naming the field and what to write instead.
 */
export function parseKueueConfiguration(text: string): KueueConfiguration {
  return kueueConfiguration(yamlDocument(text, ''));
}

/** A YAML document, or an error saying it is not one (`where`: inside what, if anything). */
function yamlDocument(text: string, where: string): unknown {
  try {
    return parseYaml(text);
  } catch (err) {
    throw new Error(`${where}not valid YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The same for a document already parsed (a scenario's inline section, for instance). */
export function kueueConfiguration(doc: unknown): KueueConfiguration {
  const cfg = unwrapConfigMap(doc);
  const apiVersion = cfg.apiVersion;
  if (apiVersion !== undefined && apiVersion !== KUEUE_CONFIG_API_VERSION)
    throw new Error(
      `apiVersion: "${String(apiVersion)}" is not read; write apiVersion: ${KUEUE_CONFIG_API_VERSION}, kind: Configuration (Kueue v0.15+; v1beta1's waitForPodsReady.enable is gone: a present section turns it on)`,
    );
  const validate = validator();
  if (!validate(cfg)) throw new Error(problems(validate.errors ?? []).join('; '));
  const gates = (cfg.featureGates ?? {}) as Record<string, boolean>;
  if (gates.DisableWaitForPodsReady === true) return {};
  const wfpr = (cfg.waitForPodsReady ?? {}) as WaitForPodsReadyConfig & {
    requeuingStrategy?: { backoffLimitCount?: number | null };
  };
  const out: WaitForPodsReadyConfig = { ...wfpr };
  if (wfpr.requeuingStrategy) {
    const { backoffLimitCount, ...rest } = wfpr.requeuingStrategy;
    // null is Kueue's "no limit", as absent.
    out.requeuingStrategy =
      backoffLimitCount === null || backoffLimitCount === undefined ? rest : { ...rest, backoffLimitCount };
  }
  podsReadySettings(out); // durations: refused here, with the field, rather than at start
  return { waitForPodsReady: out };
}

function unwrapConfigMap(doc: unknown): Record<string, unknown> {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new Error(`expected a mapping: apiVersion: ${KUEUE_CONFIG_API_VERSION}, kind: Configuration`);
  const obj = doc as Record<string, unknown>;
  if (obj.kind !== 'ConfigMap') return obj;
  // Kueue's install ships its Configuration in the kueue-manager-config ConfigMap.
  const values = Object.values((obj.data ?? {}) as Record<string, unknown>);
  if (values.length !== 1 || typeof values[0] !== 'string')
    throw new Error(
      'a ConfigMap must hold exactly one data key, the Configuration (Kueue: controller_manager_config.yaml)',
    );
  const key = Object.keys(obj.data as Record<string, unknown>)[0];
  return unwrapConfigMap(yamlDocument(values[0], `the ConfigMap's data.${key}: `));
}

function problems(errors: ErrorObject[]): string[] {
  const out = errors.map((e) => {
    const field = e.instancePath.split('/').slice(1).join('.');
    const at = (f: string) => (f ? `${f}: ` : '');
    if (e.keyword === 'additionalProperties') {
      const extra = (e.params as { additionalProperty: string }).additionalProperty;
      const path = field ? `${field}.${extra}` : extra;
      return `unknown field "${path}"${HINTS[path] ? ` (${HINTS[path]})` : ''}`;
    }
    if (e.keyword === 'required')
      return `${(e.params as { missingProperty: string }).missingProperty}: required`;
    if (e.keyword === 'enum')
      return `${at(field)}must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    if (e.keyword === 'const')
      return `${at(field)}must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
    if (e.keyword === 'minimum') return `${at(field)}must be greater than or equal to 0`;
    return `${at(field)}${e.message ?? 'is invalid'}`;
  });
  return [...new Set(out)];
}
