/** Status writes of the workload controllers, through the status subresource. */

import { objectKey } from '../../kube/keys.ts';
import { jsonEqual } from '../../lib/json.ts';
import type { KubeObject } from '../apiserver/types.ts';
import type { ClusterClient, Gvr } from '../client.ts';

/**
 * Replaces the status of `obj`. A same-named object with another uid is left alone: the
 * status was computed for the one that is gone.
 */
export function writeStatus<T extends KubeObject>(
  client: ClusterClient,
  gvr: Gvr,
  obj: T,
  status: unknown,
): Promise<T> {
  return client.mutate<T>(
    gvr,
    obj.metadata.namespace ?? '',
    obj.metadata.name!,
    (cur) => {
      if (cur.metadata.uid !== obj.metadata.uid)
        throw new Error(`${obj.kind} ${objectKey(obj)} was replaced`);
      (cur as KubeObject).status = status;
    },
    'status',
  );
}

/** writeStatus unless `status` is what `obj` already reports (the usual sync ends with no change). */
export async function writeStatusIfChanged(
  client: ClusterClient,
  gvr: Gvr,
  obj: KubeObject,
  status: unknown,
): Promise<void> {
  if (!jsonEqual(status, obj.status ?? {})) await writeStatus(client, gvr, obj, status);
}
