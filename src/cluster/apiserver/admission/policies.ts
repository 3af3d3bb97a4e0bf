/**
 * The ValidatingAdmissionPolicy plugin (staging/src/k8s.io/apiserver/pkg/admission/plugin/
 * policy/validating): every ValidatingAdmissionPolicyBinding whose policy's matchConstraints
 * and whose own matchResources match the request runs the policy's matchConditions, variables
 * and validations as CEL (`object`, `oldObject`, `request`, `params`, `namespaceObject`,
 * `variables`), with the CEL engine of CRD validation rules. A failed validation under a `Deny`
 * action refuses the write with upstream's message (`ValidatingAdmissionPolicy 'p' with
 * binding 'b' denied request: failed expression: …`); `Warn` and `Audit` do not refuse.
 * An expression that errors follows the policy's failurePolicy (Fail by default).
 */
import { isCelError, parse, plan } from '@bufbuild/cel';
import type { LabelSelectorObject } from '../../../kube/labels.ts';
import type { AdmissionRequest, Api } from '../api.ts';
import { ruleEnv } from '../crd/cel/library.ts';
import { toCel } from '../crd/cel/values.ts';
import { ApiError } from '../errors.ts';
import type { KubeObject } from '../types.ts';
import { Lister } from './listers.ts';
import { rulesMatch, selectorsMatch } from './webhooks.ts';

type Json = Record<string, unknown>;
const rec = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

interface MatchResources {
  namespaceSelector?: LabelSelectorObject;
  objectSelector?: LabelSelectorObject;
  resourceRules?: Json[];
  excludeResourceRules?: Json[];
}

type Program = (bindings: Record<string, unknown>) => unknown;

/** Compiled expressions, by source (policies change rarely; sources repeat). */
const compiled = new Map<string, Program | Error>();

function compile(source: string): Program | Error {
  let p = compiled.get(source);
  if (!p) {
    try {
      p = plan(ruleEnv(), parse(source)) as unknown as Program;
    } catch (err) {
      p = err instanceof Error ? err : new Error(String(err));
    }
    compiled.set(source, p);
  }
  return p;
}

/** Evaluates one expression; an Error when it does not compile or fails. */
function evaluate(source: string, bindings: Record<string, unknown>): unknown {
  const p = compile(source);
  if (p instanceof Error) return p;
  try {
    const r = p(bindings);
    return isCelError(r) ? new Error(String((r as { message?: string }).message ?? r)) : r;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** A binding's matchResources without resourceRules narrows by its selectors only. */
function matchesResources(
  api: Api,
  m: MatchResources | undefined,
  req: AdmissionRequest,
  rulesRequired: boolean,
): boolean {
  if (!m) return false;
  if ((rulesRequired || m.resourceRules?.length) && !rulesMatch(m.resourceRules as never, req)) return false;
  if (m.excludeResourceRules?.length && rulesMatch(m.excludeResourceRules as never, req)) return false;
  return selectorsMatch(api, m, req);
}

function denied(req: AdmissionRequest, message: string, reason: string): ApiError {
  const what = `${req.rt.resource}${req.rt.group ? `.${req.rt.group}` : ''} "${req.name}"`;
  if (reason === 'Forbidden')
    return new ApiError(403, 'Forbidden', `${what} is forbidden: ${message}`, {
      name: req.name,
      group: req.rt.group,
      kind: req.rt.resource,
    });
  return new ApiError(422, 'Invalid', `${what} is invalid: : ${message}`, {
    name: req.name,
    group: req.rt.group,
    kind: req.rt.kind,
    causes: [{ reason: 'FieldValueInvalid', message, field: '' }],
  });
}

export class PolicyAdmission {
  private readonly api: Api;
  /** Informers of the policies and bindings: read per request, decoded once per change. */
  private readonly listers: Record<string, Lister>;

  constructor(api: Api) {
    this.api = api;
    const lister = (resource: string) => new Lister(api, 'admissionregistration.k8s.io', 'v1', resource);
    this.listers = {
      validatingadmissionpolicies: lister('validatingadmissionpolicies'),
      validatingadmissionpolicybindings: lister('validatingadmissionpolicybindings'),
    };
  }

  private all(resource: string): readonly KubeObject[] {
    return this.listers[resource]?.list() ?? [];
  }

  validate(req: AdmissionRequest): void {
    // Policies and their bindings never apply to themselves, so a bad one can be removed.
    if (req.rt.group === 'admissionregistration.k8s.io') return;
    const bindings = this.all('validatingadmissionpolicybindings');
    if (bindings.length === 0) return;
    const policies = new Map(this.all('validatingadmissionpolicies').map((p) => [p.metadata.name!, p]));
    for (const binding of bindings) {
      const bspec = rec(binding.spec);
      const policy = policies.get(String(bspec.policyName ?? ''));
      if (!policy) continue;
      const pspec = rec(policy.spec);
      if (!matchesResources(this.api, pspec.matchConstraints as MatchResources, req, true)) continue;
      if (
        bspec.matchResources &&
        !matchesResources(this.api, bspec.matchResources as MatchResources, req, false)
      )
        continue;
      this.run(req, policy, binding);
    }
  }

  private run(req: AdmissionRequest, policy: KubeObject, binding: KubeObject): void {
    const pspec = rec(policy.spec);
    const bspec = rec(binding.spec);
    const actions = (bspec.validationActions as string[] | undefined) ?? [];
    const failClosed = (pspec.failurePolicy ?? 'Fail') === 'Fail';
    const header = `ValidatingAdmissionPolicy '${policy.metadata.name}' with binding '${binding.metadata.name}' denied request`;
    const params = this.params(pspec, bspec, req, header);
    if (params instanceof ApiError) throw params;
    const nsRt = this.api.registry.get('', 'v1', 'namespaces')!;
    const ns = req.namespace ? this.api.tryGet(nsRt, '', req.namespace) : undefined;
    const vars = new Map<string, unknown>();
    const bindings: Record<string, unknown> = {
      object: toCel(req.object ?? null, undefined),
      oldObject: toCel(req.oldObject ?? null, undefined),
      params: toCel(params ?? null, undefined),
      namespaceObject: toCel(ns ?? null, undefined),
      request: toCel(
        {
          kind: { group: req.rt.group, version: req.rt.version, kind: req.rt.kind },
          resource: { group: req.rt.group, version: req.rt.version, resource: req.rt.resource },
          subResource: req.subresource,
          name: req.name,
          namespace: req.namespace,
          operation: req.operation,
          userInfo: { username: req.user, groups: req.groups },
          dryRun: req.dryRun,
        },
        undefined,
      ),
      variables: vars,
    };
    const fail = (message: string) => {
      if (actions.includes('Deny')) throw denied(req, `${header}: ${message}`, 'Invalid');
    };
    for (const v of list(pspec.variables)) {
      const r = evaluate(String(v.expression ?? ''), bindings);
      vars.set(String(v.name), r instanceof Error ? null : r);
    }
    for (const c of list(pspec.matchConditions)) {
      const r = evaluate(String(c.expression ?? ''), bindings);
      if (r instanceof Error) {
        if (failClosed) fail(`expression '${c.expression}' resulted in error: ${r.message}`);
        return;
      }
      if (r !== true) return;
    }
    for (const v of list(pspec.validations)) {
      const expression = String(v.expression ?? '');
      const r = evaluate(expression, bindings);
      if (r instanceof Error) {
        if (failClosed) fail(`expression '${expression}' resulted in error: ${r.message}`);
        continue;
      }
      if (r === true) continue;
      let message =
        typeof v.message === 'string' && v.message.trim()
          ? v.message.trim()
          : `failed expression: ${expression}`;
      if (typeof v.messageExpression === 'string') {
        const m = evaluate(v.messageExpression, bindings);
        if (typeof m === 'string' && m.trim()) message = m.trim();
      }
      if (!actions.includes('Deny')) continue;
      const reason = typeof v.reason === 'string' ? v.reason : 'Invalid';
      throw denied(req, `${header}: ${message}`, reason);
    }
  }

  /** The binding's parameter object, or the Deny answer for a missing one. */
  private params(
    pspec: Json,
    bspec: Json,
    req: AdmissionRequest,
    header: string,
  ): KubeObject | undefined | ApiError {
    const kind = rec(pspec.paramKind);
    const ref = rec(bspec.paramRef);
    if (!pspec.paramKind || !bspec.paramRef) return undefined;
    const [group, version] = String(kind.apiVersion ?? '').includes('/')
      ? String(kind.apiVersion).split('/')
      : ['', String(kind.apiVersion ?? '')];
    const rt = this.api.registry.byKind(group ?? '', version ?? '', String(kind.kind ?? ''));
    const ns = rt?.namespaced ? String(ref.namespace ?? req.namespace) : '';
    const found = rt && typeof ref.name === 'string' ? this.api.tryGet(rt, ns, ref.name) : undefined;
    if (found) return found;
    if ((ref.parameterNotFoundAction ?? 'Deny') === 'Allow') return undefined;
    return denied(
      req,
      `${header}: failed to configure binding: no params found for policy binding with \`Deny\` parameterNotFoundAction`,
      'Invalid',
    );
  }
}
