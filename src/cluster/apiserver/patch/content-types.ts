import { PatchError } from './errors.ts';
import { type GroupVersionKind, supportsStrategicMerge } from './smp-table.ts';

export type PatchContentType =
  | 'application/json-patch+json'
  | 'application/merge-patch+json'
  | 'application/strategic-merge-patch+json'
  | 'application/apply-patch+yaml'
  | 'application/apply-patch+cbor';

/**
 * The patch types the server accepts for a kind, in kube-apiserver's order. CBOR apply
 * patches are never accepted: the real server only takes them behind the CBOR feature gate.
 */
export function acceptedPatchTypes(gvk: GroupVersionKind | string): PatchContentType[] {
  return supportsStrategicMerge(gvk)
    ? [
        'application/json-patch+json',
        'application/merge-patch+json',
        'application/strategic-merge-patch+json',
        'application/apply-patch+yaml',
      ]
    : ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];
}

/** negotiation.NewUnsupportedMediaTypeError as a PatchError (415). */
export function unsupportedPatchType(gvk: GroupVersionKind | string): PatchError {
  return new PatchError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${acceptedPatchTypes(gvk).join(', ')}`,
  );
}

/**
 * Checks a PATCH request's Content-Type (parameters such as `; charset=utf-8` are ignored, as
 * by the real server) and returns it narrowed, or throws the 415 the real server sends.
 */
export function checkPatchContentType(contentType: string, gvk: GroupVersionKind | string): PatchContentType {
  const bare = contentType.split(';')[0]!.trim();
  const accepted: string[] = acceptedPatchTypes(gvk);
  if (!accepted.includes(bare)) throw unsupportedPatchType(gvk);
  return bare as PatchContentType;
}
