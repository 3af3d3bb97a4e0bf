/**
 * The VolumeBinding plugin's checks, pure: kube-scheduler's
 * pkg/scheduler/framework/plugins/volumebinding/volume_binding.go (PreFilter, Filter) and
 * binder.go (GetPodVolumeClaims, FindPodVolumes, checkBoundClaims, findMatchingVolumes,
 * checkVolumeProvisions). Claims, volumes and classes come in through a lookup; a verdict
 * goes out. Storage capacity tracking (CSIStorageCapacity) is not simulated.
 */

import type { NodeSelectorTerm } from '../../kube/builtin.ts';
import {
  bestVolumeForClaim,
  claimClass,
  ephemeralClaimNotForPod,
  podVolumeClaims,
} from '../../kube/volumes.ts';
import { recordOf as rec } from '../../lib/json.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { compileTerm, type FilterStatus } from './core/index.ts';

export const VOLUME_BINDING = 'VolumeBinding';
export const SELECTED_NODE = 'volume.kubernetes.io/selected-node';
export const ERR_REASON_NODE_CONFLICT = 'node(s) had volume node affinity conflict';
export const ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind";
export const ERR_UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';
/** The in-tree "provisioner" of local volumes: such a class never provisions. */
const NO_PROVISIONER = 'kubernetes.io/no-provisioner';

export interface VolumeLookup {
  claim(namespace: string, name: string): KubeObject | undefined;
  volume(name: string): KubeObject | undefined;
  storageClass(name: string): KubeObject | undefined;
  volumes(): Iterable<KubeObject>;
}

/** PreFilter's cycle state: the pod's claims, sorted as GetPodVolumeClaims sorts them. */
export interface PodVolumeClaims {
  bound: KubeObject[];
  delayBinding: KubeObject[];
}

export type VolumePreFilter =
  | { kind: 'skip' }
  | { kind: 'reject'; message: string }
  | { kind: 'ok'; claims: PodVolumeClaims };

type Json = Record<string, unknown>;

/**
 * The claims a pod mounts: `persistentVolumeClaim` volumes, and generic ephemeral volumes'
 * `<pod>-<volume>` claims (which the ephemeral volume controller creates).
 */
export function podClaimNames(pod: KubeObject): string[] {
  return podVolumeClaims(pod).map((c) => c.name);
}

/** podHasPVCs, then GetPodVolumeClaims: the rejections PreFilter returns, or the claims to check. */
export function volumePreFilter(pod: KubeObject, lookup: VolumeLookup): VolumePreFilter {
  const wanted = podVolumeClaims(pod);
  if (wanted.length === 0) return { kind: 'skip' };
  const ns = pod.metadata.namespace ?? '';
  const claims: KubeObject[] = [];
  for (const { name, ephemeral } of wanted) {
    const pvc = lookup.claim(ns, name);
    if (!pvc) return { kind: 'reject', message: `persistentvolumeclaim "${name}" not found` };
    const notOurs = ephemeral ? ephemeralClaimNotForPod(pod, pvc) : undefined;
    if (notOurs) return { kind: 'reject', message: notOurs };
    if (rec(pvc.status).phase === 'Lost')
      return {
        kind: 'reject',
        message: `persistentvolumeclaim "${name}" bound to non-existent persistentvolume "${String(rec(pvc.spec).volumeName ?? '')}"`,
      };
    if (pvc.metadata.deletionTimestamp)
      return { kind: 'reject', message: `persistentvolumeclaim "${name}" is being deleted` };
    claims.push(pvc);
  }
  const out: PodVolumeClaims = { bound: [], delayBinding: [] };
  let immediateUnbound = false;
  for (const pvc of claims) {
    if (rec(pvc.spec).volumeName) out.bound.push(pvc);
    else if (isDelayBinding(pvc, lookup)) out.delayBinding.push(pvc);
    else immediateUnbound = true;
  }
  if (immediateUnbound) return { kind: 'reject', message: ERR_UNBOUND_IMMEDIATE };
  return { kind: 'ok', claims: out };
}

/** IsDelayBindingMode: only a class that exists and says WaitForFirstConsumer delays binding. */
function isDelayBinding(pvc: KubeObject, lookup: VolumeLookup): boolean {
  const name = claimClass(pvc);
  if (!name) return false;
  return rec(lookup.storageClass(name)).volumeBindingMode === 'WaitForFirstConsumer';
}

export interface NodeView {
  name: string;
  labels: Record<string, string>;
}

/**
 * What Reserve assumes for the chosen node: volumes matched to WaitForFirstConsumer claims
 * (static bindings) and the claims left to provision there (their selected-node to write).
 */
export interface PodVolumes {
  staticBindings: { claim: KubeObject; volume: KubeObject }[];
  claimsToSelectNode: KubeObject[];
}

/**
 * FindPodVolumes for one node: bound claims' volumes must admit the node; each unbound
 * WaitForFirstConsumer claim needs an available volume that admits it, or a class that can
 * provision there (a provisioner, and the node inside allowedTopologies). A claim already
 * given a node (selected-node) fits only that node.
 */
export function volumeFilter(
  claims: PodVolumeClaims,
  node: NodeView,
  lookup: VolumeLookup,
): { status: FilterStatus } | { volumes: PodVolumes } {
  let boundOk = true;
  let unboundOk = true;
  for (const pvc of claims.bound) {
    const pv = lookup.volume(String(rec(pvc.spec).volumeName));
    if (pv && !volumeAdmitsNode(pv, node)) boundOk = false;
  }
  const claimsToSelectNode: KubeObject[] = [];
  const staticBindings: PodVolumes['staticBindings'] = [];
  const taken = new Set<string>();
  for (const pvc of claims.delayBinding) {
    const selected = pvc.metadata.annotations?.[SELECTED_NODE];
    if (selected !== undefined && selected !== node.name) {
      unboundOk = false;
      continue;
    }
    const className = claimClass(pvc);
    // One volume per claim: a volume matched to an earlier claim of the pod is not offered again.
    const volume =
      selected === undefined
        ? bestVolumeForClaim(
            lookup.volumes(),
            pvc,
            className,
            (pv) => !taken.has(pv.metadata.name ?? '') && volumeAdmitsNode(pv, node),
          )
        : undefined;
    if (volume) {
      taken.add(volume.metadata.name ?? '');
      staticBindings.push({ claim: pvc, volume });
      continue;
    }
    claimsToSelectNode.push(pvc);
    const cls = rec(lookup.storageClass(className));
    if (
      !cls.provisioner ||
      cls.provisioner === NO_PROVISIONER ||
      !topologyAdmits(cls.allowedTopologies, node)
    )
      unboundOk = false;
  }
  const reasons: string[] = [];
  if (!boundOk) reasons.push(ERR_REASON_NODE_CONFLICT);
  if (!unboundOk) reasons.push(ERR_REASON_BIND_CONFLICT);
  if (reasons.length > 0)
    return { status: { code: 'UnschedulableAndUnresolvable', plugin: VOLUME_BINDING, reasons } };
  return { volumes: { staticBindings, claimsToSelectNode } };
}

/** CheckNodeAffinity: a volume without required node affinity fits every node. */
export function volumeAdmitsNode(pv: KubeObject, node: NodeView): boolean {
  const required = rec(rec(rec(pv.spec).nodeAffinity).required);
  if (!rec(pv.spec).nodeAffinity || !('nodeSelectorTerms' in required)) return true;
  const terms = (required.nodeSelectorTerms as NodeSelectorTerm[] | null) ?? [];
  return terms.some((t) => compileTerm(t)(node.labels, node.name));
}

/** MatchTopologySelectorTerms: no terms admit every node; else one term's keys all match. */
export function topologyAdmits(allowed: unknown, node: NodeView): boolean {
  const terms = (allowed as Json[] | null | undefined) ?? [];
  if (terms.length === 0) return true;
  return terms.some((t) =>
    ((t.matchLabelExpressions as Json[] | undefined) ?? []).every((e) => {
      const v = node.labels[String(e.key)];
      return v !== undefined && ((e.values as string[] | undefined) ?? []).includes(v);
    }),
  );
}
