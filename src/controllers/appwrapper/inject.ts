/**
 * Renders a component into the object the controller creates: the template in the
 * AppWrapper's namespace, labelled with the AppWrapper, each pod template given Kueue's
 * PodSetInfo (annotations, labels, nodeSelector with conflict checks; tolerations and
 * scheduling gates appended) and the configured scheduler, controlled by the AppWrapper.
 */

import { setControllerReference } from '../../runtime/index.ts';
import type { KubeObject } from '../../runtime/index.ts';
import {
  type AppWrapper,
  AW_LABEL,
  type AppWrapperComponentStatus,
  type AppWrapperPodSetInfo,
} from '../../apis/workload.codeflare.dev/v1beta2.ts';
import { isObject } from '../../lib/json.ts';
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
  opts: { schedulerName?: string } = {},
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
  }

  const out = obj as unknown as KubeObject;
  try {
    setControllerReference(aw, out);
  } catch (err) {
    throw new RenderError((err as Error).message);
  }
  return out;
}
