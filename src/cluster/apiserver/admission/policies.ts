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

import { type CelEnv, isCelError, parse, plan } from '@bufbuild/cel';
import type { LabelSelectorObject } from '../../../kube/labels.ts';
import { recordOf as rec } from '../../../lib/json.ts';
import type { AdmissionRequest, Api } from '../api.ts';
import { Authorizer } from '../auth/rbac.ts';
import { labelSelectorString } from '../builtin/selector.ts';
import { ruleEnvWith } from '../crd/cel/library.ts';
import { toCel } from '../crd/cel/values.ts';
import { ApiError } from '../errors.ts';
import { Lister } from '../listers.ts';
import type { KubeObject } from '../types.ts';
import { authorizerFor, authorizerLibrary } from './policy-authorizer.ts';
import { rulesMatch, selectorsMatch } from './webhooks.ts';

type Json = Record<string, unknown>;
const list = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

interface MatchResources {
  namespaceSelector?: LabelSelectorObject;
  objectSelector?: LabelSelectorObject;
  resourceRules?: Json[];
  excludeResourceRules?: Json[];
}

type Program = (bindings: Record<string, unknown>) => unknown;

/** Expressions compiled in one environment, by source (policies change rarely; sources repeat). */
class Compiler {
  private readonly env: CelEnv;
  private readonly compiled = new Map<string, Program | Error>();

  constructor(env: CelEnv) {
    this.env = env;
  }

  private compile(source: string): Program | Error {
    let p = this.compiled.get(source);
    if (!p) {
      try {
        p = plan(this.env, parse(source)) as unknown as Program;
      } catch (err) {
        p = err instanceof Error ? err : new Error(String(err));
      }
      this.compiled.set(source, p);
    }
    return p;
  }

  /** Evaluates one expression; an Error when it does not compile or fails. */
  evaluate(source: string, bindings: Record<string, unknown>): unknown {
    const p = this.compile(source);
    if (p instanceof Error) return p;
    try {
      const r = p(bindings);
      return isCelError(r) ? new Error(String((r as { message?: string }).message ?? r)) : r;
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
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

/** One failed validation (or expression error under failurePolicy Fail). */
interface Decision {
  message: string;
  reason: string;
}

export class PolicyAdmission {
  private readonly api: Api;
  /** Informers of the policies and bindings: read per request, decoded once per change. */
  private readonly listers: Record<string, Lister>;
  private readonly cel: Compiler;

  constructor(api: Api) {
    this.api = api;
    const lister = (resource: string) => new Lister(api, 'admissionregistration.k8s.io', 'v1', resource);
    this.listers = {
      validatingadmissionpolicies: lister('validatingadmissionpolicies'),
      validatingadmissionpolicybindings: lister('validatingadmissionpolicybindings'),
    };
    this.cel = new Compiler(ruleEnvWith(authorizerLibrary(new Authorizer(api))));
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

  /**
   * The binding's decisions, then its validationActions applied to each as the dispatcher
   * does: `Warn` adds a `Warning` header per failure, `Deny` refuses with the first one,
   * `Audit` has no audit log to go to.
   */
  private run(req: AdmissionRequest, policy: KubeObject, binding: KubeObject): void {
    const actions = (rec(binding.spec).validationActions as string[] | undefined) ?? [];
    const header = `ValidatingAdmissionPolicy '${policy.metadata.name}' with binding '${binding.metadata.name}' denied request`;
    const params = this.params(rec(policy.spec), rec(binding.spec), req);
    const decisions: Decision[] = [];
    if (params instanceof Error) decisions.push({ message: params.message, reason: 'Invalid' });
    else for (const p of params) decisions.push(...this.decide(req, policy, p));
    if (decisions.length === 0) return;
    if (actions.includes('Warn')) {
      for (const d of decisions) {
        req.warnings?.push(
          `Validation failed for ValidatingAdmissionPolicy '${policy.metadata.name}' with binding '${binding.metadata.name}': ${d.message}`,
        );
      }
    }
    if (actions.includes('Deny'))
      throw denied(req, `${header}: ${decisions[0]!.message}`, decisions[0]!.reason);
  }

  /** The failed validations of one policy for one parameter object (null without params). */
  private decide(req: AdmissionRequest, policy: KubeObject, params: KubeObject | null): Decision[] {
    const pspec = rec(policy.spec);
    const failClosed = (pspec.failurePolicy ?? 'Fail') === 'Fail';
    const nsRt = this.api.registry.get('', 'v1', 'namespaces')!;
    const ns = req.namespace ? this.api.tryGet(nsRt, '', req.namespace) : undefined;
    const vars = new Map<string, unknown>();
    const bindings: Record<string, unknown> = {
      object: toCel(req.object ?? null, undefined),
      oldObject: toCel(req.oldObject ?? null, undefined),
      params: toCel(params, undefined),
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
      authorizer: authorizerFor(req.user, req.groups, {
        group: req.rt.group,
        resource: req.rt.resource,
        subresource: req.subresource,
        namespace: req.namespace,
        name: req.name,
      }),
      variables: vars,
    };
    const evaluate = (source: string) => this.cel.evaluate(source, bindings);
    const errored = (expression: unknown, r: Error): Decision[] =>
      failClosed
        ? [{ message: `expression '${expression}' resulted in error: ${r.message}`, reason: 'Invalid' }]
        : [];
    for (const v of list(pspec.variables)) {
      const r = evaluate(String(v.expression ?? ''));
      vars.set(String(v.name), r instanceof Error ? null : r);
    }
    for (const c of list(pspec.matchConditions)) {
      const r = evaluate(String(c.expression ?? ''));
      if (r instanceof Error) return errored(c.expression, r);
      if (r !== true) return [];
    }
    const out: Decision[] = [];
    for (const v of list(pspec.validations)) {
      const expression = String(v.expression ?? '');
      const r = evaluate(expression);
      if (r instanceof Error) {
        out.push(...errored(expression, r));
        continue;
      }
      if (r === true) continue;
      let message =
        typeof v.message === 'string' && v.message.trim()
          ? v.message.trim()
          : `failed expression: ${expression}`;
      if (typeof v.messageExpression === 'string') {
        const m = evaluate(v.messageExpression);
        if (typeof m === 'string' && m.trim()) message = m.trim();
      }
      out.push({ message, reason: typeof v.reason === 'string' ? v.reason : 'Invalid' });
    }
    return out;
  }

  /**
   * The parameter objects the binding's paramRef names (collectParams): one by `name`, or every
   * one its `selector` matches, in `namespace` (the request's for namespaced params when unset);
   * none found answers per `parameterNotFoundAction`. [null] when the policy takes no params.
   */
  private params(pspec: Json, bspec: Json, req: AdmissionRequest): (KubeObject | null)[] | Error {
    const kind = rec(pspec.paramKind);
    const ref = rec(bspec.paramRef);
    if (!pspec.paramKind || !bspec.paramRef) return [null];
    const [group, version] = String(kind.apiVersion ?? '').includes('/')
      ? String(kind.apiVersion).split('/')
      : ['', String(kind.apiVersion ?? '')];
    const rt = this.api.registry.byKind(group ?? '', version ?? '', String(kind.kind ?? ''));
    if (!rt)
      return new Error(
        `failed to configure binding: failed to find resource referenced by paramKind: '${kind.apiVersion}, Kind=${kind.kind}'`,
      );
    const ns = rt.namespaced ? String(ref.namespace || req.namespace) : '';
    let found: KubeObject[] = [];
    if (typeof ref.name === 'string' && ref.name) {
      const one = this.api.tryGet(rt, ns, ref.name);
      if (one) found = [one];
    } else if (ref.selector) {
      const selector = labelSelectorString(ref.selector as LabelSelectorObject);
      found = this.api
        .list(rt, rt.namespaced ? ns : undefined, { labelSelector: selector })
        .records.map((r) => this.api.decode(rt, r));
    }
    if (found.length) return found;
    if ((ref.parameterNotFoundAction ?? 'Deny') === 'Allow') return [];
    return new Error(
      'failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction',
    );
  }
}
