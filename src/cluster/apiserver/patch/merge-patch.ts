import { clone, isObject } from '../../../lib/json.ts';
import { goV } from '../gofmt.ts';
import { badRequest, PatchError } from './errors.ts';

/**
 * RFC 7396 JSON merge patch. Objects merge recursively, `null` deletes, anything else
 * (arrays included) replaces. kube-apiserver answers 400 `Invalid JSON Patch` for a null or
 * scalar patch and 422 when the result would not be an object (an array patch).
 * The inputs are never mutated.
 */
export function applyMergePatch<T>(doc: T, patch: unknown): T {
  if (patch === null || (typeof patch !== 'object' && !Array.isArray(patch))) {
    throw badRequest('Invalid JSON Patch');
  }
  if (Array.isArray(patch)) {
    throw new PatchError(422, 'Invalid', `Patch is invalid: patch: Invalid value: "${goV(patch)}"`, {
      causes: [
        {
          reason: 'FieldValueInvalid',
          field: 'patch',
          message: 'json: cannot unmarshal array into Go value of type map[string]interface {}',
        },
      ],
    });
  }
  // The result is built on a private copy so callers may mutate it freely.
  return mergeInto(clone(doc), patch) as T;
}

function mergeInto(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isObject(target) ? target : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergeInto(out[key], value);
  }
  return out;
}
