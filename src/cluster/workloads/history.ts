/**
 * ControllerRevisions of DaemonSets and StatefulSets (pkg/controller/history and the two
 * controllers' constructHistory/truncateHistory): one revision per pod template the set has
 * had, named `<set>-<hash>`, holding the template as the strategic-merge patch
 * `{spec: {template: {…, $patch: replace}}}`, numbered in the order the templates were
 * current (a template coming back, as after `kubectl rollout undo`, takes the next number),
 * with the set's annotations (so `kubernetes.io/change-cause` shows in
 * `kubectl rollout history`); old ones beyond `revisionHistoryLimit` (10) are deleted.
 */
import type { LabelSelectorObject } from '../../kube/labels.ts';
import { ApiError } from '../apiserver/errors.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, GVR, isNotFound } from '../client.ts';
import { BY_CONTROLLER_UID, type Informer } from './informer.ts';
import { newControllerRef } from './pods.ts';

export const REVISION_HASH_LABEL = 'controller-revision-hash';

interface Revision extends KubeObject {
  revision?: number;
  data?: unknown;
}

/** The patch a revision stores for a template (getPatch). */
export function revisionData(template: unknown): unknown {
  return { spec: { template: { ...((template as object) ?? {}), $patch: 'replace' } } };
}

/**
 * Makes sure the set's current template (revision `name`) has the newest revision number, then
 * deletes the oldest revisions beyond the limit, keeping `name` and those in `keep` (in use).
 */
export async function syncHistory(
  client: ClusterClient,
  revisions: Informer,
  set: KubeObject & {
    spec?: { selector?: LabelSelectorObject; template?: unknown; revisionHistoryLimit?: number };
  },
  name: string,
  hash: string,
  keep: ReadonlySet<string>,
): Promise<void> {
  const owned = (revisions.byIndex(BY_CONTROLLER_UID, set.metadata.uid!) as Revision[]).filter(
    (r) => !r.metadata.deletionTimestamp,
  );
  const max = owned.reduce((m, r) => Math.max(m, r.revision ?? 0), 0);
  const existing = owned.find((r) => r.metadata.name === name);
  const ns = set.metadata.namespace ?? '';
  if (existing) {
    if ((existing.revision ?? 0) < max) {
      await client.mutate(GVR.controllerrevisions, ns, name, (cur) => {
        (cur as Revision).revision = max + 1;
      });
    }
  } else {
    const rev: Revision = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name,
        namespace: ns,
        labels: { ...(set.spec?.selector?.matchLabels ?? {}), [REVISION_HASH_LABEL]: hash },
        ...(set.metadata.annotations ? { annotations: { ...set.metadata.annotations } } : {}),
        ownerReferences: [newControllerRef(set)],
      },
      data: revisionData(set.spec?.template),
      revision: max + 1,
    };
    try {
      await client.create(GVR.controllerrevisions, rev);
    } catch (err) {
      // Written by an earlier sync the cache has not seen yet.
      if (!(err instanceof ApiError && err.code === 409)) throw err;
    }
  }
  const limit = typeof set.spec?.revisionHistoryLimit === 'number' ? set.spec.revisionHistoryLimit : 10;
  const old = owned
    .filter((r) => r.metadata.name !== name && !keep.has(r.metadata.name!))
    .sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
  for (const r of old.slice(0, Math.max(0, old.length - limit))) {
    try {
      await client.delete(GVR.controllerrevisions, ns, r.metadata.name!);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
