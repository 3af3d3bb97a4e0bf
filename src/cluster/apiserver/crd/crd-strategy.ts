/**
 * Strategy of the CustomResourceDefinition kind itself (apiextensions' registry strategy):
 * v1 defaults, status owned by the server with status.storedVersions tracking every storage
 * version ever used, validation by validateCRD, and `kubectl get crd`'s NAME / CREATED AT table.
 */

import { clone } from '../../../lib/json.ts';
import type { KubeObject, Strategy } from '../types.ts';
import { applyCRDDefaults, storedVersionsAfterWrite, validateCRD } from './crd-validation.ts';
import type { CustomResourceDefinition } from './types.ts';

function asCRD(obj: KubeObject): CustomResourceDefinition {
  return obj as unknown as CustomResourceDefinition;
}

export const crdStrategy: Strategy = {
  tracksGeneration: true,
  default(obj) {
    applyCRDDefaults(asCRD(obj));
  },
  prepareForCreate(obj) {
    const crd = asCRD(obj);
    applyCRDDefaults(crd);
    crd.status = { storedVersions: storedVersionsAfterWrite(crd) };
    obj.metadata.generation = 1;
  },
  prepareForUpdate(obj, old, ctx) {
    const crd = asCRD(obj);
    const previous = asCRD(old);
    if (ctx.subresource === 'status') {
      const status = crd.status;
      for (const k of Object.keys(obj)) if (k !== 'metadata' && k !== 'status') delete obj[k];
      Object.assign(obj, clone({ ...old, metadata: obj.metadata, status }));
      return;
    }
    applyCRDDefaults(crd);
    crd.status = clone(previous.status ?? {});
    crd.status.storedVersions = storedVersionsAfterWrite(crd, previous);
  },
  validateCreate(obj) {
    return validateCRD(asCRD(obj));
  },
  validateUpdate(obj, old, ctx) {
    if (ctx.subresource === 'status') return [];
    return validateCRD(asCRD(obj), asCRD(old));
  },
  table: {
    columns: [
      { name: 'Name', type: 'string', format: 'name', description: 'Name of the CustomResourceDefinition.' },
      { name: 'Created At', type: 'date', description: 'When the CustomResourceDefinition was created.' },
    ],
    cells(obj) {
      return [obj.metadata.name ?? '', obj.metadata.creationTimestamp ?? null];
    },
  },
};
