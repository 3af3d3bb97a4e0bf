/**
 * The AppWrapper admission webhooks, as upstream serves them: defaulting on create (queue
 * name, suspend for Kueue, the creator's labels, the finalizer) and validation on create and
 * update (no nested AppWrappers, own namespace only, the creator may create every wrapped
 * kind, pod-set paths that reach a PodSpec, 1 to 8 pod specs, immutable components).
 */

import {
  type AppWrapper,
  type AppWrapperPodSet,
  AW_API_VERSION,
  AW_FINALIZER,
  AW_USERID_LABEL,
  AW_USERNAME_LABEL,
  QUEUE_NAME_LABEL,
} from '../../apis/workload.codeflare.dev/v1beta2.ts';
import { canonicalJson, isObject } from '../../lib/json.ts';
import {
  type AdmissionHandler,
  type AdmissionRequest,
  allowed,
  type Client,
  denied,
  type KubeObject,
  patched,
  type WebhookServer,
} from '../../runtime/index.ts';
import { type AppWrapperConfig, type AppWrapperConfigInput, resolveConfig } from './config.ts';
import { managedElsewhere, shouldSuspend } from './core.ts';
import { checkPodSpecAt, gvkOf, inferPodSets, replicasOf, validatePodSets } from './podsets.ts';

export const MUTATING_PATH = '/mutate-workload-codeflare-dev-v1beta2-appwrapper';
export const VALIDATING_PATH = '/validate-workload-codeflare-dev-v1beta2-appwrapper';
export const MUTATING_WEBHOOK_NAME = 'mappwrapper.kb.io';
export const VALIDATING_WEBHOOK_NAME = 'vappwrapper.kb.io';
export const MUTATING_CONFIG_NAME = 'appwrapper-mutating-webhook-configuration';
export const VALIDATING_CONFIG_NAME = 'appwrapper-validating-webhook-configuration';

const MAX_POD_SETS = 8;

/** Upstream's SanitizeLabel: at most 63 characters of [-_.A-Za-z0-9], trimmed of -_. at the ends. */
export function sanitizeLabel(label: string): string {
  return label
    .slice(0, 63)
    .replace(/[^-_.\w]/g, '_')
    .replace(/^[-_.]+|[-_.]+$/g, '');
}

/** One field error, formatted as apimachinery's field.Error. */
function fieldError(
  path: string,
  type: 'Forbidden' | 'Invalid' | 'Required' | 'Internal',
  detail: string,
  value?: unknown,
): string {
  if (type === 'Invalid') {
    const v =
      typeof value === 'string'
        ? JSON.stringify(value)
        : isObject(value) || Array.isArray(value)
          ? '"object"'
          : String(value);
    return `${path}: Invalid value: ${v}: ${detail}`;
  }
  if (type === 'Required') return `${path}: Required value: ${detail}`;
  if (type === 'Internal') return `${path}: Internal error: ${detail}`;
  return `${path}: Forbidden: ${detail}`;
}

/** utilerrors.NewAggregate(...).Error(): one error as is, several in brackets. */
function aggregate(errs: string[]): string {
  return errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`;
}

export interface WebhookDeps {
  /** Reads namespaces, resolves kinds to resources and posts SubjectAccessReviews. */
  client: Client;
  config: AppWrapperConfig;
}

async function namespaceLabels(client: Client, ns: string): Promise<Record<string, string>> {
  const obj = await client.tryGet({ apiVersion: 'v1', kind: 'Namespace' }, ns);
  return obj?.metadata.labels ?? {};
}

/** The defaulting webhook (CREATE). */
export function defaultingHandler(deps: WebhookDeps): AdmissionHandler {
  return async (req) => {
    if (req.operation !== 'CREATE' || !req.object) return allowed();
    const original = req.object as AppWrapper;
    const aw = structuredClone(original);
    const { config } = deps;
    let labels = { ...(aw.metadata.labels ?? {}) };
    if (config.enableKueueIntegrations) {
      if (config.defaultQueueName && !labels[QUEUE_NAME_LABEL])
        labels[QUEUE_NAME_LABEL] = config.defaultQueueName;
      const ns = aw.metadata.namespace || req.namespace || '';
      const needNs =
        !labels[QUEUE_NAME_LABEL] && config.manageJobsWithoutQueueName && config.manageJobsNamespaceSelector;
      const nsLabels = needNs ? await namespaceLabels(deps.client, ns) : undefined;
      if (!aw.spec?.suspend && shouldSuspend(labels, config, nsLabels)) {
        aw.spec = { ...aw.spec, suspend: true };
      }
    }
    // The creator's identity always wins over labels the user wrote.
    labels = {
      ...labels,
      [AW_USERNAME_LABEL]: sanitizeLabel(req.userInfo?.username ?? ''),
      [AW_USERID_LABEL]: sanitizeLabel(req.userInfo?.uid ?? ''),
    };
    aw.metadata.labels = labels;
    if (!managedElsewhere(aw) && !(aw.metadata.finalizers ?? []).includes(AW_FINALIZER)) {
      aw.metadata.finalizers = [...(aw.metadata.finalizers ?? []), AW_FINALIZER];
    }
    return patched(original, aw);
  };
}

async function resourceOf(client: Client, apiVersion: string, kind: string): Promise<string> {
  try {
    return (await client.mapper.resourceFor({ apiVersion, kind })).plural;
  } catch {
    return '*';
  }
}

async function validateCreate(deps: WebhookDeps, req: AdmissionRequest, aw: AppWrapper): Promise<string[]> {
  const errs: string[] = [];
  const components = Array.isArray(aw.spec?.components) ? aw.spec.components : [];
  const ns = aw.metadata.namespace || req.namespace || '';
  let podSpecCount = 0;
  for (let idx = 0; idx < components.length; idx++) {
    const c = components[idx]!;
    const compPath = `spec.components[${idx}]`;
    const template = c.template;
    if (!isObject(template) || typeof template.apiVersion !== 'string' || typeof template.kind !== 'string') {
      errs.push(fieldError(`${compPath}.template`, 'Invalid', 'failed to decode as JSON', template));
      continue;
    }
    const { apiVersion, kind } = gvkOf(template);
    if (apiVersion === AW_API_VERSION && kind === 'AppWrapper') {
      errs.push(fieldError(`${compPath}.template`, 'Forbidden', 'Nested AppWrappers are forbidden'));
    }
    const meta = isObject(template.metadata) ? template.metadata : {};
    if (typeof meta.namespace === 'string' && meta.namespace !== '' && meta.namespace !== ns) {
      errs.push(
        fieldError(
          `${compPath}.template.metadata.namespace`,
          'Forbidden',
          'AppWrappers cannot create objects in other namespaces',
        ),
      );
    }
    if (deps.config.userRBACAdmissionCheck) {
      const slash = apiVersion.indexOf('/');
      const group = slash < 0 ? '' : apiVersion.slice(0, slash);
      const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
      const resource = await resourceOf(deps.client, apiVersion, kind);
      const user = req.userInfo ?? {};
      try {
        const sar = await deps.client.create<KubeObject & { status?: { allowed?: boolean } }>({
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          metadata: {},
          spec: {
            resourceAttributes: { namespace: ns, verb: 'create', group, version, resource },
            user: user.username,
            uid: user.uid,
            groups: user.groups,
            extra: user.extra && Object.keys(user.extra).length > 0 ? user.extra : undefined,
          },
        });
        if (!sar.status?.allowed) {
          errs.push(
            fieldError(
              `${compPath}.template`,
              'Forbidden',
              `User ${user.username ?? ''} is not authorized to create ${resource} in ${ns}`,
            ),
          );
        }
      } catch (err) {
        errs.push(
          fieldError(`${compPath}.template`, 'Internal', err instanceof Error ? err.message : String(err)),
        );
      }
    }
    const declared: AppWrapperPodSet[] = Array.isArray(c.podSets) ? c.podSets : [];
    declared.forEach((ps, i) => {
      const p = `${compPath}.podSets[${i}].path`;
      if (!ps.path) errs.push(fieldError(p, 'Required', 'podspec must specify path'));
      try {
        checkPodSpecAt(template, ps.path ?? '');
      } catch (err) {
        errs.push(
          fieldError(
            p,
            'Invalid',
            `path does not refer to a v1.PodSpecTemplate: ${(err as Error).message}`,
            ps.path,
          ),
        );
      }
    });
    let inferred: AppWrapperPodSet[];
    try {
      inferred = inferPodSets(template);
    } catch (err) {
      errs.push(
        fieldError(
          `${compPath}.template`,
          'Invalid',
          `error inferring PodSets: ${(err as Error).message}`,
          template,
        ),
      );
      continue;
    }
    podSpecCount += Math.max(declared.length, inferred.length);
    const mismatch = validatePodSets(declared, inferred);
    if (mismatch) errs.push(fieldError(`${compPath}.podSets`, 'Invalid', mismatch, declared));
  }
  if (podSpecCount === 0)
    errs.push(fieldError('spec.components', 'Invalid', 'components contains no podspecs', components));
  if (podSpecCount > MAX_POD_SETS) {
    errs.push(
      fieldError(
        'spec.components',
        'Invalid',
        `components contains ${podSpecCount} podspecs; at most ${MAX_POD_SETS} are allowed`,
        components,
      ),
    );
  }
  return errs;
}

function validateUpdate(old: AppWrapper, cur: AppWrapper): string[] {
  const msg = 'attempt to change immutable field';
  const oc = old.spec?.components ?? [];
  const nc = cur.spec?.components ?? [];
  if (oc.length !== nc.length) return [fieldError('spec.components', 'Forbidden', msg)];
  const errs: string[] = [];
  for (let i = 0; i < nc.length; i++) {
    const o = oc[i]!;
    const n = nc[i]!;
    const p = `spec.components[${i}]`;
    if (canonicalJson(o.template) !== canonicalJson(n.template))
      errs.push(fieldError(`${p}.template.raw`, 'Forbidden', msg));
    const op = o.podSets ?? [];
    const np = n.podSets ?? [];
    if (op.length !== np.length) {
      errs.push(fieldError(`${p}.podsets`, 'Forbidden', msg));
      continue;
    }
    for (let j = 0; j < np.length; j++) {
      if (replicasOf(op[j]!) !== replicasOf(np[j]!))
        errs.push(fieldError(`${p}.podsets[${j}].replicas`, 'Forbidden', msg));
      if (op[j]!.path !== np[j]!.path) errs.push(fieldError(`${p}.podsets[${j}].path`, 'Forbidden', msg));
    }
  }
  for (const label of [AW_USERNAME_LABEL, AW_USERID_LABEL]) {
    if (old.metadata.labels?.[label] !== cur.metadata.labels?.[label]) {
      errs.push(fieldError(`metadata.labels[${label}]`, 'Forbidden', msg));
    }
  }
  if ((old.spec?.managedBy ?? '') !== (cur.spec?.managedBy ?? ''))
    errs.push(fieldError('spec.managedBy', 'Forbidden', msg));
  // Kueue's rule: a running workload cannot move to another queue.
  if (
    !old.spec?.suspend &&
    (old.metadata.labels?.[QUEUE_NAME_LABEL] ?? '') !== (cur.metadata.labels?.[QUEUE_NAME_LABEL] ?? '')
  ) {
    errs.push(
      fieldError(
        `metadata.labels[${QUEUE_NAME_LABEL}]`,
        'Invalid',
        'field is immutable',
        cur.metadata.labels?.[QUEUE_NAME_LABEL] ?? '',
      ),
    );
  }
  return errs;
}

/** The validating webhook (CREATE and UPDATE). */
export function validatingHandler(deps: WebhookDeps): AdmissionHandler {
  return async (req) => {
    const aw = req.object as AppWrapper | undefined;
    if (!aw) return allowed();
    let errs: string[];
    if (req.operation === 'CREATE') errs = await validateCreate(deps, req, aw);
    else if (req.operation === 'UPDATE' && req.oldObject)
      errs = validateUpdate(req.oldObject as AppWrapper, aw);
    else return allowed();
    return errs.length === 0 ? allowed() : denied(aggregate(errs));
  };
}

/** Serves both webhooks on a runtime WebhookServer (the manager's `webhooks`). */
export function registerAppWrapperWebhooks(
  server: WebhookServer,
  client: Client,
  options: AppWrapperConfigInput = {},
): void {
  const deps = { client, config: resolveConfig(options) };
  server.register(MUTATING_PATH, defaultingHandler(deps));
  server.register(VALIDATING_PATH, validatingHandler(deps));
}

export interface WebhookClientTarget {
  /** `https://host:port` of the webhook server (the paths are appended). */
  url?: string;
  /** Or a Service in front of it. */
  service?: { namespace: string; name: string; port?: number };
  /** PEM of the CA that signed the serving certificate. */
  caBundle?: string;
}

/** The MutatingWebhookConfiguration and ValidatingWebhookConfiguration that route AppWrappers here. */
export function appWrapperWebhookConfigurations(target: WebhookClientTarget): KubeObject[] {
  const clientConfig = (path: string) => {
    const cc: Record<string, unknown> = {};
    if (target.url) cc.url = `${target.url.replace(/\/$/, '')}${path}`;
    else if (target.service) cc.service = { ...target.service, path };
    if (target.caBundle) cc.caBundle = Buffer.from(target.caBundle).toString('base64');
    return cc;
  };
  const rule = (operations: string[]) => [
    {
      apiGroups: ['workload.codeflare.dev'],
      apiVersions: ['v1beta2'],
      operations,
      resources: ['appwrappers'],
    },
  ];
  const common = { admissionReviewVersions: ['v1'], failurePolicy: 'Fail', sideEffects: 'None' };
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: MUTATING_CONFIG_NAME },
      webhooks: [
        {
          name: MUTATING_WEBHOOK_NAME,
          clientConfig: clientConfig(MUTATING_PATH),
          rules: rule(['CREATE']),
          ...common,
        },
      ],
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: VALIDATING_CONFIG_NAME },
      webhooks: [
        {
          name: VALIDATING_WEBHOOK_NAME,
          clientConfig: clientConfig(VALIDATING_PATH),
          rules: rule(['CREATE', 'UPDATE']),
          ...common,
        },
      ],
    },
  ];
}
