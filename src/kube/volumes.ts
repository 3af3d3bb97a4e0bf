/**
 * Which PersistentVolume a claim may bind: pure semantics shared by the PV binder
 * (src/cluster/workloads/volumes.ts) and the scheduler's VolumeBinding plugin.
 */

import { recordOf as rec, stringOf as str } from '../lib/json.ts';
import { selectorFromObject } from './labels.ts';
import type { KubeObject } from './object.ts';
import { compareQuantities, tryParseQuantity } from './quantity.ts';

type Json = Record<string, unknown>;
const specOf = (o: KubeObject) => rec(o.spec);

/** GetPersistentVolumeClaimClass: the beta annotation wins over spec.storageClassName. */
export function claimClass(pvc: KubeObject): string {
  return (
    pvc.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? str(specOf(pvc).storageClassName)
  );
}

function volumeClass(pv: KubeObject): string {
  return (
    pv.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? str(specOf(pv).storageClassName)
  );
}

/**
 * findBestMatchForClaim (pkg/controller/volume/persistentvolume/index.go): a volume already
 * claimed for this claim, else the smallest Available one of the class with enough capacity,
 * the access modes, the volume mode and the claim's selector, that `fits` (a node) if given.
 * The scheduler's VolumeBinding Filter asks the same question per node.
 */
export function bestVolumeForClaim(
  volumes: Iterable<KubeObject>,
  claim: KubeObject,
  className: string,
  fits?: (pv: KubeObject) => boolean,
): KubeObject | undefined {
  const spec = specOf(claim);
  const want = tryParseQuantity(rec(rec(spec.resources).requests).storage);
  const modes = (spec.accessModes as string[] | undefined) ?? [];
  const mode = str(spec.volumeMode) || 'Filesystem';
  let selector: ReturnType<typeof selectorFromObject> | undefined;
  try {
    selector = spec.selector ? selectorFromObject(spec.selector as never) : undefined;
  } catch {
    return undefined;
  }
  let best: KubeObject | undefined;
  for (const pv of volumes) {
    const ps = specOf(pv);
    const ref = rec(ps.claimRef);
    if (ps.claimRef) {
      if (claimRefNames(pv, claim) && (!ref.uid || ref.uid === claim.metadata.uid))
        return !fits || fits(pv) ? pv : undefined;
      continue;
    }
    if (pv.metadata.deletionTimestamp || rec(pv.status).phase === 'Released') continue;
    if (volumeClass(pv) !== className) continue;
    if ((str(ps.volumeMode) || 'Filesystem') !== mode) continue;
    const have = (ps.accessModes as string[] | undefined) ?? [];
    if (!modes.every((m) => have.includes(m))) continue;
    const cap = tryParseQuantity(rec(ps.capacity).storage);
    if (want && (!cap || compareQuantities(cap, want) < 0)) continue;
    if (selector && !selector.matches(pv.metadata.labels ?? {})) continue;
    if (fits && !fits(pv)) continue;
    const bestCap = best ? tryParseQuantity(rec(specOf(best).capacity).storage) : undefined;
    if (!best || (cap && bestCap && compareQuantities(cap, bestCap) < 0)) best = pv;
  }
  return best;
}

/** Whether the volume's claimRef names the claim. */
export function claimRefNames(pv: KubeObject, claim: KubeObject): boolean {
  const ref = rec(specOf(pv).claimRef);
  return ref.namespace === claim.metadata.namespace && ref.name === claim.metadata.name;
}

/**
 * The claims a pod's volumes name: `persistentVolumeClaim.claimName`, and for a generic
 * ephemeral volume `<pod>-<volume>` (VolumeClaimName in k8s.io/component-helpers/storage/ephemeral).
 */
export function podVolumeClaims(pod: KubeObject): { name: string; ephemeral: boolean; volume: string }[] {
  const out: { name: string; ephemeral: boolean; volume: string }[] = [];
  for (const v of (specOf(pod).volumes as Json[] | undefined) ?? []) {
    const claimName = rec(v.persistentVolumeClaim).claimName;
    if (typeof claimName === 'string') out.push({ name: claimName, ephemeral: false, volume: str(v.name) });
    else if (v.ephemeral !== undefined && v.ephemeral !== null)
      out.push({ name: `${pod.metadata.name}-${str(v.name)}`, ephemeral: true, volume: str(v.name) });
  }
  return out;
}

/** VolumeIsForPod: an ephemeral volume's claim must be controlled by the pod (the message, if not). */
export function ephemeralClaimNotForPod(pod: KubeObject, pvc: KubeObject): string | undefined {
  const owner = pvc.metadata.ownerReferences?.find((r) => r.controller === true);
  if (owner && owner.uid === pod.metadata.uid) return undefined;
  return `PVC ${pvc.metadata.namespace}/${pvc.metadata.name} was not created for pod ${pod.metadata.namespace}/${pod.metadata.name} (pod is not owner)`;
}
