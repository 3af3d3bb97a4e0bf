/**
 * pods/binding: the scheduler's write, applied to the stored pod as kube-apiserver's
 * BindingREST does (the rules live in the pod strategy's pure `bindPod`).
 */
import type { Api, WriteOptions } from './api.ts';
import { bindPod as assignPod, validateBinding } from './builtin/pods.ts';
import { errors } from './errors.ts';
import type { KubeObject, ResourceType } from './types.ts';

export async function bindPod(api: Api, ns: string, binding: KubeObject, opts: WriteOptions): Promise<void> {
  const pods = api.registry.get('', 'v1', 'pods')!;
  const name = binding.metadata?.name ?? '';
  const errs = validateBinding(binding as never);
  if (errs.length) throw errors.invalid('Binding', '', name, errs);
  await api.updateWith(
    pods,
    ns,
    name,
    { ...opts, subresource: 'binding' },
    (pod) => {
      const r = assignPod(pod, binding as never, new Date(api.clock.now()));
      if (r.code === 409) throw errors.conflict({ group: '', resource: 'pods/binding' }, name, r.error!);
      if (r.code) throw errors.internal(r.error!);
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
