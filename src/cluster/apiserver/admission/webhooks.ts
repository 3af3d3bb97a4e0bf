/**
 * Dynamic admission: calls the registered mutating, then validating, webhooks over
 * HTTPS with AdmissionReview v1, as kube-apiserver does (rules, namespaceSelector,
 * objectSelector, failurePolicy, timeoutSeconds, JSONPatch responses).
 */
import { request as httpsRequest } from 'node:https';
import fastJsonPatch from 'fast-json-patch';
import { type LabelSelectorObject, selectorFromObject } from '../../../kube/labels.ts';
import { holdClock } from '../../../lib/clock.ts';
import { randomUUID } from '../../../lib/random.ts';
import type { AdmissionRequest, Api } from '../api.ts';
import { ApiError, errors, type StatusObject } from '../errors.ts';
import { Lister } from '../listers.ts';
import type { KubeObject } from '../types.ts';

interface RuleWithOperations {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: '*' | 'Cluster' | 'Namespaced';
}

interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  caBundle?: string;
}

interface Webhook {
  name: string;
  clientConfig: WebhookClientConfig;
  rules?: RuleWithOperations[];
  failurePolicy?: 'Fail' | 'Ignore';
  namespaceSelector?: LabelSelectorObject;
  objectSelector?: LabelSelectorObject;
  timeoutSeconds?: number;
  sideEffects?: string;
  admissionReviewVersions?: string[];
}

interface AdmissionResponse {
  uid?: string;
  allowed?: boolean;
  status?: Partial<StatusObject>;
  patch?: string;
  patchType?: string;
  warnings?: string[];
}

/** How a webhook's service reference reaches a loopback listener: through its Endpoints. */
export type ServiceResolver = (
  namespace: string,
  name: string,
  port: number,
) => { host: string; port: number } | undefined;

export class WebhookAdmission {
  private readonly api: Api;
  private readonly resolveService: ServiceResolver;
  /**
   * The configurations, from listers as kube-apiserver's webhook configuration managers keep
   * them from informers (staging/src/k8s.io/apiserver/pkg/admission/configuration): every
   * admitted write reads them all, and they change rarely.
   */
  private readonly configs: Record<string, Lister>;
  /** Each configuration list's webhooks, flattened once per list. */
  private readonly flattened = new WeakMap<readonly KubeObject[], Webhook[]>();

  constructor(api: Api, resolveService?: ServiceResolver) {
    this.api = api;
    const lister = (resource: string) => new Lister(api, 'admissionregistration.k8s.io', 'v1', resource);
    this.configs = {
      mutatingwebhookconfigurations: lister('mutatingwebhookconfigurations'),
      validatingwebhookconfigurations: lister('validatingwebhookconfigurations'),
    };
    this.resolveService = resolveService ?? ((ns, name, port) => endpointsResolver(api, ns, name, port));
  }

  async mutate(req: AdmissionRequest): Promise<KubeObject> {
    let obj = req.object!;
    for (const hook of this.webhooks('mutatingwebhookconfigurations')) {
      if (!this.matches(hook, { ...req, object: obj })) continue;
      const resp = await this.call(hook, { ...req, object: obj });
      if (!resp) continue;
      if (resp.allowed === false) throw denied(hook.name, resp.status);
      if (resp.patch) {
        if (resp.patchType && resp.patchType !== 'JSONPatch') {
          throw errors.internal(
            `failed calling webhook "${hook.name}": unsupported patch type "${resp.patchType}"`,
          );
        }
        try {
          const ops = JSON.parse(
            Buffer.from(resp.patch, 'base64').toString('utf8'),
          ) as fastJsonPatch.Operation[];
          obj = fastJsonPatch.applyPatch(structuredClone(obj), ops, true, false).newDocument as KubeObject;
        } catch (err) {
          throw errors.internal(
            `failed calling webhook "${hook.name}": invalid JSON patch: ${err instanceof Error ? err.message : String(err)}`,
          );
        }
      }
    }
    return obj;
  }

  async validate(req: AdmissionRequest): Promise<void> {
    const hooks = this.webhooks('validatingwebhookconfigurations').filter((h) => this.matches(h, req));
    // Validating webhooks run in parallel, as in kube-apiserver.
    const results = await Promise.all(hooks.map(async (h) => ({ h, resp: await this.call(h, req) })));
    for (const { h, resp } of results) {
      if (resp && resp.allowed === false) throw denied(h.name, resp.status);
    }
  }

  private webhooks(resource: string): Webhook[] {
    const configs = this.configs[resource]?.list() ?? [];
    let hooks = this.flattened.get(configs);
    if (!hooks) {
      hooks = configs.flatMap((c) => (c.webhooks as Webhook[] | undefined) ?? []);
      this.flattened.set(configs, hooks);
    }
    return hooks;
  }

  private matches(h: Webhook, req: AdmissionRequest): boolean {
    // Webhook configurations never intercept themselves, so a broken webhook can be removed.
    if (req.rt.group === 'admissionregistration.k8s.io') return false;
    return (
      rulesMatch(h.rules, req) &&
      selectorsMatch(
        this.api,
        { objectSelector: h.objectSelector, namespaceSelector: h.namespaceSelector },
        req,
      )
    );
  }

  private async call(h: Webhook, req: AdmissionRequest): Promise<AdmissionResponse | undefined> {
    // A write the server makes on its own (no request or client holding the clock) must not
    // let virtual time move while the webhook answers.
    const release = holdClock(this.api.clock, `apiserver webhook ${h.name}`);
    try {
      return await this.callOnce(h, req);
    } finally {
      release();
    }
  }

  private async callOnce(h: Webhook, req: AdmissionRequest): Promise<AdmissionResponse | undefined> {
    const uid = randomUUID();
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid,
        kind: { group: req.rt.group, version: req.rt.version, kind: req.rt.kind },
        resource: { group: req.rt.group, version: req.rt.version, resource: req.rt.resource },
        ...(req.subresource ? { subResource: req.subresource } : {}),
        requestKind: { group: req.rt.group, version: req.rt.version, kind: req.rt.kind },
        requestResource: { group: req.rt.group, version: req.rt.version, resource: req.rt.resource },
        name: req.name,
        ...(req.namespace ? { namespace: req.namespace } : {}),
        operation: req.operation,
        userInfo: { username: req.user, groups: req.groups },
        object: req.object ?? null,
        oldObject: req.oldObject ?? null,
        dryRun: req.dryRun,
        options: null,
      },
    };
    try {
      const resp = await this.post(h, JSON.stringify(review));
      const parsed = JSON.parse(resp) as { response?: AdmissionResponse };
      if (!parsed.response) throw new Error('webhook response was absent');
      if (parsed.response.uid !== uid)
        throw new Error(`expected response.uid="${uid}", got "${parsed.response.uid}"`);
      return parsed.response;
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if ((h.failurePolicy ?? 'Fail') === 'Ignore') return undefined;
      throw errors.internal(
        `failed calling webhook "${h.name}": ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  private post(h: Webhook, body: string): Promise<string> {
    const cc = h.clientConfig;
    let url: URL;
    let servername: string | undefined;
    if (cc.url) url = new URL(cc.url);
    else if (cc.service) {
      const port = cc.service.port ?? 443;
      const target = this.resolveService(cc.service.namespace, cc.service.name, port);
      if (!target) {
        return Promise.reject(
          new Error(`service "${cc.service.name}" in namespace "${cc.service.namespace}" has no endpoints`),
        );
      }
      url = new URL(`https://${target.host}:${target.port}${cc.service.path ?? '/'}`);
      servername = `${cc.service.name}.${cc.service.namespace}.svc`;
    } else return Promise.reject(new Error('webhook has neither url nor service'));
    const ca = cc.caBundle ? Buffer.from(cc.caBundle, 'base64').toString('utf8') : undefined;
    const timeoutMs = (h.timeoutSeconds ?? 10) * 1000;
    return new Promise((resolve, reject) => {
      const r = httpsRequest(
        url,
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
          ca,
          servername,
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if ((res.statusCode ?? 0) >= 300)
              reject(new Error(`the server responded with status ${res.statusCode}: ${text.slice(0, 200)}`));
            else resolve(text);
          });
        },
      );
      r.on('timeout', () => r.destroy(new Error(`context deadline exceeded (timeout ${timeoutMs / 1000}s)`)));
      r.on('error', reject);
      r.end(body);
    });
  }
}

/** Whether any rule names the request's operation, group, version, resource and scope. */
export function rulesMatch(
  rules: (RuleWithOperations & { resourceNames?: string[] })[] | undefined,
  req: AdmissionRequest,
): boolean {
  const resource = req.subresource ? `${req.rt.resource}/${req.subresource}` : req.rt.resource;
  return (rules ?? []).some((r) => {
    const ops = r.operations ?? [];
    if (!ops.includes('*') && !ops.includes(req.operation)) return false;
    if (!listHas(r.apiGroups, req.rt.group) || !listHas(r.apiVersions, req.rt.version)) return false;
    const res = r.resources ?? [];
    const resOk =
      res.includes('*') ||
      res.includes('*/*') ||
      res.includes(resource) ||
      (req.subresource !== '' &&
        (res.includes(`${req.rt.resource}/*`) || res.includes(`*/${req.subresource}`)));
    if (!resOk) return false;
    if (r.resourceNames?.length && !r.resourceNames.includes(req.name)) return false;
    const scope = r.scope ?? '*';
    return scope === '*' || (scope === 'Namespaced') === req.rt.namespaced;
  });
}

/** The objectSelector and namespaceSelector of a webhook or a policy's match resources. */
export function selectorsMatch(
  api: Api,
  m: { objectSelector?: LabelSelectorObject; namespaceSelector?: LabelSelectorObject },
  req: AdmissionRequest,
): boolean {
  const obj = req.object ?? req.oldObject;
  if (m.objectSelector && !isEmptySelector(m.objectSelector)) {
    const sel = selectorFromObject(m.objectSelector);
    if (!sel.matches(req.object?.metadata.labels) && !sel.matches(req.oldObject?.metadata.labels))
      return false;
  }
  if (m.namespaceSelector && !isEmptySelector(m.namespaceSelector)) {
    let nsLabels: Record<string, string> | undefined;
    if (req.rt.group === '' && req.rt.resource === 'namespaces') nsLabels = obj?.metadata.labels;
    else if (req.rt.namespaced) {
      const nsType = api.registry.get('', 'v1', 'namespaces')!;
      nsLabels = api.tryGet(nsType, '', req.namespace)?.metadata.labels;
    } else return true;
    if (!selectorFromObject(m.namespaceSelector).matches(nsLabels)) return false;
  }
  return true;
}

function listHas(list: string[] | undefined, v: string): boolean {
  return !!list && (list.includes('*') || list.includes(v));
}

function isEmptySelector(s: LabelSelectorObject): boolean {
  return Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;
}

function denied(name: string, status: Partial<StatusObject> | undefined): ApiError {
  const code = status?.code && status.code >= 400 ? status.code : 400;
  const base = `admission webhook "${name}" denied the request`;
  const message = status?.message
    ? `${base}: ${status.message}`
    : status?.reason
      ? `${base}: ${status.reason}`
      : `${base} without explanation`;
  const e = new ApiError(code, (status?.reason as never) ?? 'BadRequest', message);
  if (status?.details) e.status.details = status.details;
  return e;
}

/** Resolves a Service to the first ready address of its Endpoints (loopback in the embedded cluster). */
function endpointsResolver(
  api: Api,
  namespace: string,
  name: string,
  port: number,
): { host: string; port: number } | undefined {
  const rt = api.registry.get('', 'v1', 'endpoints');
  const svcType = api.registry.get('', 'v1', 'services');
  if (!rt) return undefined;
  const ep = api.tryGet(rt, namespace, name) as
    | (KubeObject & {
        subsets?: { addresses?: { ip: string }[]; ports?: { port: number; name?: string }[] }[];
      })
    | undefined;
  const subset = ep?.subsets?.find((s) => (s.addresses?.length ?? 0) > 0);
  if (!subset) return undefined;
  // Map the service port to its target port through the Service, when there is one.
  let target = subset.ports?.[0]?.port ?? port;
  const svc = svcType
    ? (api.tryGet(svcType, namespace, name) as
        | (KubeObject & {
            spec?: { ports?: { port: number; targetPort?: number | string; name?: string }[] };
          })
        | undefined)
    : undefined;
  const sp = svc?.spec?.ports?.find((p) => p.port === port);
  if (sp) {
    const byName = subset.ports?.find((p) => p.name !== undefined && p.name === sp.name);
    if (byName) target = byName.port;
    else if (typeof sp.targetPort === 'number') target = sp.targetPort;
  }
  return { host: subset.addresses![0]!.ip, port: target };
}
