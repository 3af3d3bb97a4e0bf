/**
 * The selectors of Services, ReplicaSets, StatefulSets and ReplicationControllers, from which
 * PodTopologySpread builds the selector of its system default constraints for a pod that
 * has none of its own (helper.DefaultSelector).
 */

import type { LabelSelector } from '../../../kube/builtin.ts';
import { Selector } from '../../../kube/labels.ts';
import type { OwnerReference } from '../../../kube/object.ts';
import { compileSelector, selectorFromMap } from './label-selectors.ts';

export type OwnerKind = 'ReplicaSet' | 'StatefulSet' | 'ReplicationController';

/** The owner kinds whose selector counts, by the apiVersion/kind a controller reference names. */
const OWNER_KINDS: Record<string, OwnerKind> = {
  'apps/v1/ReplicaSet': 'ReplicaSet',
  'apps/v1/StatefulSet': 'StatefulSet',
  'v1/ReplicationController': 'ReplicationController',
};

interface OwnerSelector {
  /** A ReplicationController's map, merged with the Services' labels. */
  labels?: Readonly<Record<string, string>>;
  /** A ReplicaSet's or StatefulSet's selector, whose requirements are added. */
  selector?: Selector;
}

export class WorkloadSelectors {
  /** namespace → Service name → spec.selector (Services without one select nothing). */
  private readonly services = new Map<string, Map<string, Readonly<Record<string, string>>>>();
  private readonly owners = new Map<string, OwnerSelector>();

  setService(
    namespace: string,
    name: string,
    selector: Readonly<Record<string, string>> | null | undefined,
  ): void {
    if (selector == null) {
      this.deleteService(namespace, name);
      return;
    }
    let ns = this.services.get(namespace);
    if (!ns) {
      ns = new Map();
      this.services.set(namespace, ns);
    }
    ns.set(name, selector);
  }

  deleteService(namespace: string, name: string): void {
    const ns = this.services.get(namespace);
    if (ns?.delete(name) && ns.size === 0) this.services.delete(namespace);
  }

  setOwner(kind: OwnerKind, namespace: string, name: string, selector: unknown): void {
    const entry: OwnerSelector =
      kind === 'ReplicationController'
        ? { labels: (selector ?? {}) as Record<string, string> }
        : { selector: compileSelector(selector as LabelSelector | null | undefined) };
    this.owners.set(`${kind}/${namespace}/${name}`, entry);
  }

  deleteOwner(kind: OwnerKind, namespace: string, name: string): void {
    this.owners.delete(`${kind}/${namespace}/${name}`);
  }

  /**
   * The labels of every Service selecting the pod, plus its controller's selector; empty
   * when nothing selects the pod (it then gets no default constraints).
   */
  defaultSelector(
    namespace: string,
    labels: Readonly<Record<string, string>>,
    controller: OwnerReference | undefined,
  ): Selector {
    let set: Record<string, string> = {};
    for (const sel of this.services.get(namespace)?.values() ?? []) {
      if (selectorFromMap(sel).matches(labels)) set = { ...set, ...sel };
    }
    let selector = selectorFromMap(set);
    const kind = controller && OWNER_KINDS[`${controller.apiVersion}/${controller.kind}`];
    const owner = kind && this.owners.get(`${kind}/${namespace}/${controller.name}`);
    if (owner?.labels) selector = selectorFromMap({ ...set, ...owner.labels });
    else if (owner?.selector)
      selector = new Selector([...selector.requirements, ...owner.selector.requirements]);
    return selector;
  }
}
