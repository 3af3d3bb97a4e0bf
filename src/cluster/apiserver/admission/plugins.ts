/**
 * The compiled-in admission plugins a default kube-apiserver 1.32 runs, in its order, around
 * the dynamic (webhook) admission: mutating LimitRanger, Priority, RuntimeClass and
 * DefaultStorageClass before the mutating webhooks; LimitRanger's checks and the PriorityClass
 * rules, ValidatingAdmissionPolicy (policies.ts), the webhooks' validation, then ResourceQuota
 * last. Each follows its upstream plugin:
 * plugin/pkg/admission/{limitranger,priority,runtimeclass,storage/storageclass/setdefault,
 * resourcequota} (quota evaluation: pkg/quota/v1/evaluator/core).
 */
import {
  addQuantities,
  compareQuantities,
  formatQuantity,
  parseQuantity,
  type Quantity,
  tryParseQuantity,
} from '../../../kube/quantity.ts';
import { clone, isObject, jsonEqual } from '../../../lib/json.ts';
import type { Admission, AdmissionRequest, Api } from '../api.ts';
import { arrayOf, type Json, recordOf, str } from '../builtin/common.ts';
import { IS_DEFAULT_CLASS_ANNOTATION } from '../builtin/printers.ts';
import { validateImmutable } from '../builtin/validation.ts';
import { errors } from '../errors.ts';
import { Lister } from '../listers.ts';
import type { KubeObject, ResourceType } from '../types.ts';
import { PolicyAdmission } from './policies.ts';
import { QuotaUsage, quotaUsageOf } from './quota-usage.ts';

/** HighestUserDefinablePriority (pkg/apis/scheduling/types.go). */
const HIGHEST_USER_PRIORITY = 1_000_000_000;

function forbidden(req: AdmissionRequest, message: string): never {
  const r = req.rt;
  throw errors.forbiddenRaw(
    `${r.resource}${r.group ? `.${r.group}` : ''} "${req.name}" is forbidden: ${message}`,
    {
      name: req.name,
      group: r.group,
      kind: r.resource,
    },
  );
}

function isPod(req: AdmissionRequest): boolean {
  return req.rt.group === '' && req.rt.resource === 'pods' && req.subresource === '';
}

export class BuiltinAdmission implements Admission {
  private readonly next: Admission;
  private readonly policies: PolicyAdmission;
  /** What the namespaces with a quota use; shared with the quota controller. */
  readonly quotaUsage: QuotaUsage;
  // The plugins' informers (see listers.ts): read per request, decoded once per change.
  private readonly priorityClasses: Lister;
  private readonly runtimeClasses: Lister;
  private readonly storageClasses: Lister;
  private readonly limitRanges: Lister;
  private readonly resourceQuotas: Lister;

  constructor(api: Api, next: Admission, quotaUsage = new QuotaUsage(api)) {
    this.next = next;
    this.policies = new PolicyAdmission(api);
    this.quotaUsage = quotaUsage;
    this.priorityClasses = new Lister(api, 'scheduling.k8s.io', 'v1', 'priorityclasses');
    this.runtimeClasses = new Lister(api, 'node.k8s.io', 'v1', 'runtimeclasses');
    this.storageClasses = new Lister(api, 'storage.k8s.io', 'v1', 'storageclasses');
    this.limitRanges = new Lister(api, '', 'v1', 'limitranges');
    this.resourceQuotas = new Lister(api, '', 'v1', 'resourcequotas');
  }

  async mutate(req: AdmissionRequest): Promise<KubeObject> {
    const obj = req.object;
    if (obj && req.operation === 'CREATE' && isPod(req)) {
      this.limitRanger(req, obj, true);
      this.priority(req, obj);
      this.runtimeClass(req, obj);
    }
    if (
      obj &&
      req.operation === 'CREATE' &&
      req.rt.group === '' &&
      req.rt.resource === 'persistentvolumeclaims'
    ) {
      this.defaultStorageClass(obj);
    }
    return this.next.mutate(req);
  }

  async validate(req: AdmissionRequest): Promise<void> {
    const obj = req.object;
    if (obj && isPod(req) && req.operation === 'CREATE') this.limitRanger(req, obj, false);
    if (obj && req.rt.group === 'scheduling.k8s.io' && req.rt.resource === 'priorityclasses') {
      this.priorityClass(req, obj);
    }
    // ValidatingAdmissionPolicy runs before the validating webhooks.
    if (req.subresource === '') this.policies.validate(req);
    await this.next.validate(req);
    if (obj && req.operation === 'CREATE' && req.subresource === '') this.resourceQuota(req, obj);
  }

  // ---- Priority (plugin/pkg/admission/priority/admission.go) ----

  private priority(req: AdmissionRequest, pod: KubeObject): void {
    const spec = recordOf(pod.spec);
    let priority = 0;
    let policy: string | undefined;
    const className = str(spec.priorityClassName);
    if (!className) {
      // The global default with the lowest value wins when several claim it (getDefaultPriority).
      const defaults = this.priorityClasses.list().filter((pc) => pc.globalDefault === true);
      defaults.sort((a, b) => Number(a.value) - Number(b.value));
      const d = defaults[0];
      if (d) {
        spec.priorityClassName = d.metadata.name;
        priority = Number(d.value);
        policy = str(d.preemptionPolicy) || undefined;
      }
    } else {
      const pc = this.priorityClasses.get(className);
      if (!pc) forbidden(req, `no PriorityClass with name ${className} was found`);
      priority = Number(pc.value);
      policy = str(pc.preemptionPolicy) || undefined;
    }
    if (typeof spec.priority === 'number' && spec.priority !== priority) {
      forbidden(
        req,
        `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
      );
    }
    spec.priority = priority;
    if (policy) {
      if (typeof spec.preemptionPolicy === 'string' && spec.preemptionPolicy !== policy) {
        forbidden(
          req,
          `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`,
        );
      }
      spec.preemptionPolicy = policy;
    }
    pod.spec = spec;
  }

  /** Only one PriorityClass may be the global default; value and preemptionPolicy never change. */
  private priorityClass(req: AdmissionRequest, pc: KubeObject): void {
    const name = pc.metadata.name ?? '';
    if (req.operation === 'CREATE' || req.operation === 'UPDATE') {
      const errs = [];
      const system = name.startsWith('system-');
      const value = Number(pc.value);
      if (system && !['system-node-critical', 'system-cluster-critical'].includes(name)) {
        errs.push({
          reason: 'FieldValueForbidden' as const,
          field: 'metadata.name',
          message: "Forbidden: priority class names with 'system-' prefix are reserved for system use only",
        });
      } else if (!system && value > HIGHEST_USER_PRIORITY) {
        errs.push({
          reason: 'FieldValueForbidden' as const,
          field: 'value',
          message: `Forbidden: maximum allowed value of a user defined priority is ${HIGHEST_USER_PRIORITY}`,
        });
      }
      if (req.operation === 'UPDATE' && req.oldObject) {
        const old = req.oldObject;
        errs.push(...validateImmutable(pc.value, old.value, 'value'));
        errs.push(...validateImmutable(pc.preemptionPolicy, old.preemptionPolicy, 'preemptionPolicy'));
      }
      if (errs.length) throw errors.invalid('PriorityClass', 'scheduling.k8s.io', name, errs);
    }
    if (pc.globalDefault !== true) return;
    for (const other of this.priorityClasses.list()) {
      if (other.metadata.name !== name && other.globalDefault === true) {
        forbidden(
          req,
          `PriorityClass ${other.metadata.name} is already marked as default. Only one default can exist`,
        );
      }
    }
  }

  // ---- RuntimeClass (plugin/pkg/admission/runtimeclass/admission.go) ----

  private runtimeClass(req: AdmissionRequest, pod: KubeObject): void {
    const spec = recordOf(pod.spec);
    const name = str(spec.runtimeClassName);
    if (!name) return;
    const rc = this.runtimeClasses.get(name);
    if (!rc) forbidden(req, `pod rejected: RuntimeClass "${name}" not found`);
    const fixed = recordOf(rc.overhead).podFixed;
    if (isObject(fixed)) {
      if (isObject(spec.overhead) && !sameResources(spec.overhead, fixed)) {
        forbidden(req, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
      }
      spec.overhead = clone(fixed);
    }
    const scheduling = recordOf(rc.scheduling);
    const selector = recordOf(scheduling.nodeSelector) as Record<string, string>;
    const podSelector = { ...(recordOf(spec.nodeSelector) as Record<string, string>) };
    for (const [k, v] of Object.entries(selector)) {
      if (k in podSelector && podSelector[k] !== v) {
        forbidden(req, 'pod rejected: conflict in RuntimeClass nodeSelector and pod nodeSelector');
      }
      podSelector[k] = v;
    }
    if (Object.keys(podSelector).length) spec.nodeSelector = podSelector;
    const tolerations = arrayOf(spec.tolerations);
    for (const t of arrayOf(scheduling.tolerations)) {
      if (!tolerations.some((x) => jsonEqual(x, t))) tolerations.push(clone(t));
    }
    if (tolerations.length) spec.tolerations = tolerations;
    pod.spec = spec;
  }

  // ---- DefaultStorageClass (plugin/pkg/admission/storage/storageclass/setdefault) ----

  private defaultStorageClass(pvc: KubeObject): void {
    const spec = recordOf(pvc.spec);
    if (spec.storageClassName !== undefined && spec.storageClassName !== null) return;
    if (pvc.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] !== undefined) return;
    const def = defaultStorageClass(this.storageClasses.list());
    if (!def) return;
    spec.storageClassName = def.metadata.name;
    pvc.spec = spec;
  }

  // ---- LimitRanger (plugin/pkg/admission/limitranger/admission.go) ----

  private limitRanger(req: AdmissionRequest, pod: KubeObject, mutate: boolean): void {
    const ranges = this.limitRanges.list(req.namespace);
    if (ranges.length === 0) return;
    const spec = recordOf(pod.spec);
    const containers = [...arrayOf(spec.initContainers), ...arrayOf(spec.containers)];
    const problems: string[] = [];
    const set: string[] = [];
    for (const lr of ranges) {
      for (const item of arrayOf(recordOf(lr.spec).limits)) {
        const type = str(item.type);
        const dflt = recordOf(item.default);
        const max = recordOf(item.max);
        // SetDefaults_LimitRangeItem: default falls back to max, defaultRequest to default.
        const limits = { ...max, ...dflt };
        const requests = { ...limits, ...recordOf(item.defaultRequest) };
        if (type === 'Container') {
          for (const c of containers) {
            const res = recordOf(c.resources);
            const cReq = { ...recordOf(res.requests) };
            const cLim = { ...recordOf(res.limits) };
            if (mutate) {
              for (const [k, v] of Object.entries(requests)) {
                // A limit the container sets is its request when it gives none.
                if (!(k in cReq) && !(k in cLim)) {
                  cReq[k] = v;
                  set.push(`${k} request for ${containerWord(c, spec)} ${str(c.name)}`);
                }
              }
              for (const [k, v] of Object.entries(limits)) {
                if (!(k in cLim)) {
                  cLim[k] = v;
                  set.push(`${k} limit for ${containerWord(c, spec)} ${str(c.name)}`);
                }
              }
              const next: Json = { ...res };
              if (Object.keys(cReq).length) next.requests = cReq;
              if (Object.keys(cLim).length) next.limits = cLim;
              c.resources = next;
            } else {
              problems.push(...checkRange('Container', item, cReq, cLim));
            }
          }
        } else if (type === 'Pod' && !mutate) {
          const podReq: Json = {};
          const podLim: Json = {};
          for (const c of arrayOf(spec.containers)) {
            sumInto(podReq, recordOf(recordOf(c.resources).requests));
            sumInto(podLim, recordOf(recordOf(c.resources).limits));
          }
          problems.push(...checkRange('Pod', item, podReq, podLim));
        }
      }
    }
    if (mutate && set.length) {
      pod.metadata.annotations = {
        ...(pod.metadata.annotations ?? {}),
        'kubernetes.io/limit-ranger': `LimitRanger plugin set: ${set.join('; ')}`,
      };
    }
    if (problems.length) forbidden(req, problems.length === 1 ? problems[0]! : `[${problems.join(', ')}]`);
  }

  // ---- ResourceQuota (plugin/pkg/admission/resourcequota, pkg/quota/v1/evaluator/core) ----

  private resourceQuota(req: AdmissionRequest, obj: KubeObject): void {
    if (!req.namespace) return;
    const quotas = this.resourceQuotas.list(req.namespace);
    if (quotas.length === 0) return;
    const requested = quotaUsageOf(req.rt, obj);
    if (Object.keys(requested).length === 0) return;
    for (const q of quotas) {
      const hard = recordOf(recordOf(q.spec).hard);
      const tracked = Object.keys(hard);
      const relevant = tracked.filter((k) => k in requested || requiresExplicit(k, req.rt));
      if (relevant.length === 0) continue;
      const missing = relevant.filter((k) => !(k in requested));
      if (missing.length) {
        forbidden(req, `failed quota: ${q.metadata.name}: must specify ${missing.sort().join(',')}`);
      }
      const used = this.quotaUsage.used(req.namespace, tracked);
      const over = relevant.filter((k) => {
        const total = addQuantities(used[k] ?? parseQuantity(0), requested[k]!);
        return compareQuantities(total, parseQuantity(String(hard[k]))) > 0;
      });
      if (over.length) {
        const fmt = (list: Record<string, Quantity | string>) =>
          over
            .sort()
            .map(
              (k) =>
                `${k}=${typeof list[k] === 'string' ? list[k] : formatQuantity(list[k] ?? parseQuantity(0))}`,
            )
            .join(',');
        forbidden(
          req,
          `exceeded quota: ${q.metadata.name}, requested: ${fmt(requested)}, used: ${fmt(used)}, limited: ${fmt(hard as Record<string, string>)}`,
        );
      }
    }
  }
}

/** Whether a pod must state this compute resource for the quota to admit it (requests.cpu …). */
function requiresExplicit(key: string, rt: ResourceType): boolean {
  if (rt.group !== '' || rt.resource !== 'pods') return false;
  return /^(requests\.|limits\.)?(cpu|memory)$/.test(key);
}

function sumInto(acc: Json, raw: Json): void {
  for (const [k, v] of Object.entries(raw)) {
    const q = tryParseQuantity(v);
    if (!q) continue;
    const cur = tryParseQuantity(acc[k]);
    acc[k] = formatQuantity(cur ? addQuantities(cur, q) : q);
  }
}

function containerWord(c: Json, spec: Json): string {
  return arrayOf(spec.initContainers).includes(c) ? 'init container' : 'container';
}

/** The min/max/ratio checks of one LimitRange item against requests and limits. */
function checkRange(type: string, item: Json, requests: Json, limits: Json): string[] {
  const out: string[] = [];
  const q = (v: unknown) => tryParseQuantity(v);
  for (const [k, v] of Object.entries(recordOf(item.min))) {
    const min = q(v);
    const r = q(requests[k]);
    const l = q(limits[k]);
    if (!min) continue;
    if (!r) out.push(`minimum ${k} usage per ${type} is ${formatQuantity(min)}.  No request is specified`);
    else if (compareQuantities(r, min) < 0)
      out.push(
        `minimum ${k} usage per ${type} is ${formatQuantity(min)}, but request is ${formatQuantity(r)}`,
      );
    if (l && compareQuantities(l, min) < 0)
      out.push(`minimum ${k} usage per ${type} is ${formatQuantity(min)}, but limit is ${formatQuantity(l)}`);
  }
  for (const [k, v] of Object.entries(recordOf(item.max))) {
    const max = q(v);
    const l = q(limits[k]);
    if (!max) continue;
    if (!l) out.push(`maximum ${k} usage per ${type} is ${formatQuantity(max)}.  No limit is specified`);
    else if (compareQuantities(l, max) > 0)
      out.push(`maximum ${k} usage per ${type} is ${formatQuantity(max)}, but limit is ${formatQuantity(l)}`);
  }
  for (const [k, v] of Object.entries(recordOf(item.maxLimitRequestRatio))) {
    const ratio = q(v);
    const r = q(requests[k]);
    const l = q(limits[k]);
    if (!ratio || !r || !l) continue;
    const actual = Number(l.nanos) / Number(r.nanos);
    const allowed = Number(ratio.nanos) / 1e9;
    if (actual > allowed) {
      out.push(
        `${k} max limit to request ratio per ${type} is ${formatQuantity(ratio)}, but provided ratio is ${actual.toFixed(6)}`,
      );
    }
  }
  return out;
}

function sameResources(a: Json, b: Json): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  if (ka.join() !== kb.join()) return false;
  return ka.every((k) => {
    const qa = tryParseQuantity(a[k]);
    const qb = tryParseQuantity(b[k]);
    return qa && qb && compareQuantities(qa, qb) === 0;
  });
}

/** The default StorageClass: annotated is-default-class, the newest when several are. */
export function defaultStorageClass(classes: readonly KubeObject[]): KubeObject | undefined {
  const defaults = classes.filter((c) => c.metadata.annotations?.[IS_DEFAULT_CLASS_ANNOTATION] === 'true');
  defaults.sort(
    (a, b) =>
      (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') ||
      (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
  return defaults[0];
}
