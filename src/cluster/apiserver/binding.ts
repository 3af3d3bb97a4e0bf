/**
 * pods/binding: the scheduler's write. Sets spec.nodeName exactly once and marks the pod
 * scheduled; refuses pods that are gated, being deleted, or already bound.
 */
import type { Api, WriteOptions } from './api.ts';
import { errors } from './errors.ts';
import { nowRfc3339 } from './meta.ts';
import type { ResourceType } from './types.ts';

export async function bindPod(api: Api, ns: string, name: string, node: string, opts: WriteOptions): Promise<void> {
  const pods = api.registry.get('', 'v1', 'pods')!;
  if (!node) {
    throw errors.invalid('Binding', '', name, [{ reason: 'FieldValueRequired', field: 'target.name', message: 'Required value' }]);
  }
  await api.updateWith(
    pods,
    ns,
    name,
    { ...opts, subresource: 'binding' },
    (pod) => {
      const spec = (pod.spec ?? {}) as { nodeName?: string; schedulingGates?: unknown[] };
      if (pod.metadata.deletionTimestamp) {
        throw errors.conflict({ group: '', resource: 'pods' }, name, 'pod is being deleted, cannot be assigned to a host');
      }
      if (spec.nodeName) {
        throw errors.conflict({ group: '', resource: 'pods/binding' }, name, `pod ${name} is already assigned to node "${spec.nodeName}"`);
      }
      if (spec.schedulingGates?.length) {
        throw errors.conflict({ group: '', resource: 'pods/binding' }, name, `pod ${name} has non-empty .spec.schedulingGates`);
      }
      spec.nodeName = node;
      pod.spec = spec;
      const st = (pod.status ?? {}) as { conditions?: Record<string, unknown>[] };
      const conds = (st.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
      conds.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: nowRfc3339() });
      st.conditions = conds;
      pod.status = st;
      return pod;
    },
    false,
  );
}

/** The core `bindings` resource (POST /api/v1/namespaces/<ns>/bindings), the older form of pods/binding. */
export const bindingsResourceType: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'bindings',
  singular: 'binding',
  kind: 'Binding',
  listKind: 'BindingList',
  namespaced: true,
  shortNames: [],
  categories: [],
  verbs: ['create'],
  subresources: [],
  strategy: {},
};
