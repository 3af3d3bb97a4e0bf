/**
 * The bridge between the API's read-modify-write path and the patch engines in patch/:
 * decodes a PATCH body by content type and produces the desired object, and keeps
 * metadata.managedFields for server-side apply.
 */
import type { WriteOptions } from './api.ts';
import type { KubeObject, ResourceType } from './types.ts';

export interface PatchRequest {
  contentType: string;
  body: string;
  force?: boolean;
}

export interface Patcher {
  /** Produces the desired object from the current one. Throws ApiError on bad patches. */
  apply(rt: ResourceType, current: KubeObject, req: PatchRequest, opts: WriteOptions): KubeObject;
  /** Server-side apply of a missing object creates it: the applied config becomes the object. */
  applyToNew(
    rt: ResourceType,
    namespace: string,
    name: string,
    req: PatchRequest,
    opts: WriteOptions,
  ): KubeObject;
  /** Records field ownership of a non-apply create. */
  trackCreate(rt: ResourceType, obj: KubeObject, opts: WriteOptions): void;
  /** Records field ownership of a non-apply update (apply records its own in `apply`). */
  trackUpdate(rt: ResourceType, next: KubeObject, old: KubeObject, opts: WriteOptions): void;
}
