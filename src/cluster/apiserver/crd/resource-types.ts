/** The resources a CRD serves, one ResourceType per served version. */

import type { ResourceType } from '../types.ts';
import { type CustomResourceStrategy, customResourceStrategy } from './custom-resource-strategy.ts';
import type { CustomResourceDefinition } from './types.ts';

/** Verbs of a custom resource, in the order kube-apiserver's discovery lists them. */
export const CUSTOM_RESOURCE_VERBS = [
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'create',
  'update',
  'watch',
];

export interface CustomResourceType extends ResourceType {
  strategy: CustomResourceStrategy;
}

/**
 * One ResourceType per served version of `crd`. Names come from spec.names with v1 defaults
 * (singular = lower-cased kind, listKind = kind + "List").
 */
export function resourceTypesFromCRD(crd: CustomResourceDefinition): CustomResourceType[] {
  const spec = crd.spec ?? {};
  const names = spec.names ?? {};
  const kind = names.kind ?? '';
  const out: CustomResourceType[] = [];
  for (const v of spec.versions ?? []) {
    if (!v.served || !v.name) continue;
    const subresources: string[] = [];
    if (v.subresources?.status !== undefined) subresources.push('status');
    const scale = v.subresources?.scale;
    if (scale) subresources.push('scale');
    const rt: CustomResourceType = {
      group: spec.group ?? '',
      version: v.name,
      resource: names.plural ?? '',
      singular: names.singular || kind.toLowerCase(),
      kind,
      listKind: names.listKind || `${kind}List`,
      namespaced: spec.scope !== 'Cluster',
      shortNames: [...(names.shortNames ?? [])],
      categories: [...(names.categories ?? [])],
      verbs: [...CUSTOM_RESOURCE_VERBS],
      subresources,
      strategy: customResourceStrategy(crd, v),
      storage: v.storage === true,
    };
    if (scale) {
      rt.scale = {
        specReplicasPath: scale.specReplicasPath ?? '',
        statusReplicasPath: scale.statusReplicasPath ?? '',
      };
      if (scale.labelSelectorPath) rt.scale.labelSelectorPath = scale.labelSelectorPath;
    }
    out.push(rt);
  }
  return out;
}
