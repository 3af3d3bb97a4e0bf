/**
 * Renders a component into the object the controller creates: the template in the
 * AppWrapper's namespace, labelled with the AppWrapper, each pod template given Kueue's
 * PodSetInfo (annotations, labels, nodeSelector with conflict checks; tolerations and
 * scheduling gates appended) and the configured scheduler, controlled by the AppWrapper.
 */

import {
  type AppWrapper,
  type AppWrapperComponentStatus,
  type AppWrapperPodSetInfo,
  AW_LABEL,
} from '../../apis/workload.codeflare.dev/v1beta2.ts';
import { parseQuantityMilli } from '../../kube/quantity.ts';
import { isObject } from '../../lib/json.ts';
import type { KubeObject } from '../../runtime/index.ts';
import { setControllerReference } from '../../runtime/index.ts';
import type { AutopilotOptions } from './config.ts';
import { type Json, objectAtPath } from './paths.ts';

/** A component that cannot be rendered: upstream treats every such error as fatal. */
export class RenderError extends Error {}

function stringMap(v: unknown): Record<string, string> {
  if (!isObject(v)) return {};
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) out[k] = typeof x === 'string' ? x : String(x);
  return out;
}

/** Kueue's utilmaps.HaveConflict. */
function conflict(a: Record<string, string>, b: Record<string, string> | undefined): string | undefined {
  for (const [k, v] of Object.entries(b ?? {})) {
    if (k in a && a[k] !== v) return `conflict for key=${k}, value1=${a[k]}, value2=${v}`;
  }
  return undefined;
}

/** Kueue's MergeKeepFirst: `a`'s values win. */
function mergeKeepFirst(
  a: Record<string, string>,
  b: Record<string, string> | undefined,
): Record<string, string> {
  return { ...(b ?? {}), ...a };
}

function badUpdate(what: string, detail: string): RenderError {
  return new RenderError(`invalid admission check PodSetUpdate: conflict for ${what}: ${detail}`);
}

/** The object to create for component `index`. Throws RenderError for what can never be created. */
export function renderComponent(
  aw: AppWrapper,
  index: number,
  componentStatus: AppWrapperComponentStatus[],
  opts: { schedulerName?: string; autopilot?: AutopilotOptions } = {},
): KubeObject {
  const component = aw.spec.components[index];
  if (!component || !isObject(component.template))
    throw new RenderError(`component ${index} has no template`);
  const obj = structuredClone(component.template) as Json;
  if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string' || !obj.apiVersion || !obj.kind) {
    throw new RenderError(`component ${index}: template has no apiVersion or kind`);
  }
  if (obj.metadata !== undefined && !isObject(obj.metadata)) {
    throw new RenderError(`component ${index}: template metadata is not an object`);
  }
  const meta = (obj.metadata ?? {}) as Json;
  obj.metadata = meta;
  const ns = aw.metadata.namespace ?? '';
  if (!meta.namespace) meta.namespace = ns;
  else if (meta.namespace !== ns) {
    throw new RenderError(
      `component namespace "${String(meta.namespace)}" is different from appwrapper namespace "${ns}"`,
    );
  }
  const awLabels = { [AW_LABEL]: aw.metadata.name ?? '' };
  meta.labels = mergeKeepFirst(stringMap(meta.labels), awLabels);

  const podSets = componentStatus[index]?.podSets ?? [];
  for (let i = 0; i < podSets.length; i++) {
    const info: AppWrapperPodSetInfo = component.podSetInfos?.[i] ?? {};
    let target: Json;
    try {
      target = objectAtPath(obj, podSets[i]!.path);
    } catch (err) {
      throw new RenderError((err as Error).message);
    }
    if (!isObject(target.metadata)) target.metadata = {};
    const md = target.metadata as Json;
    if (!isObject(target.spec))
      throw new RenderError(`content at ${podSets[i]!.path} does not contain a spec`);
    const spec = target.spec as Json;

    if (info.annotations && Object.keys(info.annotations).length > 0) {
      const existing = stringMap(md.annotations);
      const c = conflict(existing, info.annotations);
      if (c) throw badUpdate('annotations', c);
      md.annotations = mergeKeepFirst(existing, info.annotations);
    }

    const merged = mergeKeepFirst(info.labels ?? {}, awLabels);
    const existingLabels = stringMap(md.labels);
    const lc = conflict(existingLabels, merged);
    if (lc) throw badUpdate('labels', lc);
    md.labels = mergeKeepFirst(existingLabels, merged);

    if (info.nodeSelector && Object.keys(info.nodeSelector).length > 0) {
      const existing = stringMap(spec.nodeSelector);
      const c = conflict(existing, info.nodeSelector);
      if (c) throw badUpdate('nodeSelector', c);
      spec.nodeSelector = mergeKeepFirst(existing, info.nodeSelector);
    }

    if (info.tolerations && info.tolerations.length > 0) {
      const existing = Array.isArray(spec.tolerations) ? spec.tolerations : [];
      spec.tolerations = [...existing, ...info.tolerations];
    }

    if (info.schedulingGates && info.schedulingGates.length > 0) {
      const gates = Array.isArray(spec.schedulingGates) ? [...spec.schedulingGates] : [];
      for (const g of info.schedulingGates) {
        if (!gates.some((x) => isObject(x) && x.name === g.name)) gates.push({ name: g.name });
      }
      spec.schedulingGates = gates;
    }

    if (opts.schedulerName && !spec.schedulerName) spec.schedulerName = opts.schedulerName;
    if (opts.autopilot?.injectAntiAffinities) {
      try {
        injectAutopilotAffinities(spec, opts.autopilot);
      } catch (err) {
        throw new RenderError(`failed to inject Autopilot affinities: ${(err as Error).message}`);
      }
    }
  }

  const out = obj as unknown as KubeObject;
  try {
    setControllerReference(aw, out);
  } catch (err) {
    throw new RenderError((err as Error).message);
  }
  return out;
}

/** hasResourceRequest: a container or init container asks for a non-zero amount of `resource`. */
export function requestsResource(spec: Json, resource: string): boolean {
  for (const key of ['containers', 'initContainers']) {
    const list = spec[key];
    if (!Array.isArray(list)) continue;
    for (const c of list) {
      const res = isObject(c) && isObject(c.resources) ? (c.resources as Json) : undefined;
      for (const which of ['limits', 'requests']) {
        const q = res && isObject(res[which]) ? (res[which] as Json)[resource] : undefined;
        if (q === undefined || q === null) continue;
        try {
          if (parseQuantityMilli(q as string | number) !== 0n) return true;
        } catch {
          // A malformed quantity asks for nothing (upstream ignores it too).
        }
      }
    }
  }
  return false;
}

/**
 * Upstream's Autopilot injection (resource_management.go createComponent): for every resource
 * the pod spec requests, node anti-affinity for the labels that mark it unhealthy — required
 * (NotIn, added to every existing term) for NoSchedule/NoExecute, preferred with
 * preferNoScheduleWeight for PreferNoSchedule.
 */
export function injectAutopilotAffinities(spec: Json, autopilot: AutopilotOptions): void {
  const required = new Map<string, string[]>();
  const preferred = new Map<string, string[]>();
  for (const [resource, taints] of Object.entries(autopilot.resourceTaints)) {
    if (!requestsResource(spec, resource)) continue;
    for (const t of taints) {
      const into = t.effect === 'PreferNoSchedule' ? preferred : required;
      into.set(t.key, [...(into.get(t.key) ?? []), t.value]);
    }
  }
  const exprs = (m: Map<string, string[]>) =>
    [...m].map(([key, values]) => ({ key, operator: 'NotIn', values }));
  const nodeAffinity = (): Json => {
    if (spec.affinity === undefined || spec.affinity === null) spec.affinity = {};
    if (!isObject(spec.affinity)) throw new Error('spec.affinity is not a map');
    const a = spec.affinity as Json;
    if (a.nodeAffinity === undefined || a.nodeAffinity === null) a.nodeAffinity = {};
    if (!isObject(a.nodeAffinity)) throw new Error('spec.affinity.nodeAffinity is not a map');
    return a.nodeAffinity as Json;
  };
  if (required.size > 0) {
    const na = nodeAffinity();
    const path = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution';
    if (na.requiredDuringSchedulingIgnoredDuringExecution == null)
      na.requiredDuringSchedulingIgnoredDuringExecution = {};
    const sel = na.requiredDuringSchedulingIgnoredDuringExecution;
    if (!isObject(sel)) throw new Error(`${path} is not a map`);
    const ns = sel as Json;
    if (ns.nodeSelectorTerms == null) ns.nodeSelectorTerms = [{}];
    if (!Array.isArray(ns.nodeSelectorTerms)) throw new Error(`${path}.nodeSelectorTerms is not an array`);
    ns.nodeSelectorTerms.forEach((term, i) => {
      if (!isObject(term)) throw new Error(`${path}.nodeSelectorTerms[${i}] is not a map`);
      const t = term as Json;
      const existing = t.matchExpressions == null ? [] : t.matchExpressions;
      if (!Array.isArray(existing))
        throw new Error(`${path}.nodeSelectorTerms[${i}].matchExpressions is not an array`);
      t.matchExpressions = [...existing, ...exprs(required)];
    });
  }
  if (preferred.size > 0) {
    const na = nodeAffinity();
    const terms = na.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    if (!Array.isArray(terms))
      throw new Error(
        'spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution is not an array',
      );
    na.preferredDuringSchedulingIgnoredDuringExecution = [
      ...terms,
      { weight: autopilot.preferNoScheduleWeight, preference: { matchExpressions: exprs(preferred) } },
    ];
  }
}
