/**
 * The VolumeBinding plugin's shell in the embedded scheduler: informer caches of claims,
 * volumes and classes, the per-attempt PreFilter/Filter hook (checks in volume-binding.ts),
 * and PreBind — the chosen node written into each WaitForFirstConsumer claim's
 * `volume.kubernetes.io/selected-node` (AssumePodVolumes / BindPodVolumes in upstream's
 * binder.go), then a wait until the PV binder has bound them all (bindTimeoutSeconds, 600 s).
 */

import { type Clock, realClock } from '../../lib/clock.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, type Gvr, isNotFound } from '../client.ts';
import type { ExtraPlugins, NodeInfo } from './core/index.ts';
import {
  type PodVolumes,
  podClaimNames,
  SELECTED_NODE,
  VOLUME_BINDING,
  type VolumeLookup,
  volumeFilter,
  volumePreFilter,
} from './volume-binding.ts';

const PVCS: Gvr = { group: '', version: 'v1', resource: 'persistentvolumeclaims' };
const PVS: Gvr = { group: '', version: 'v1', resource: 'persistentvolumes' };
const CLASSES: Gvr = { group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses' };
const BIND_TIMEOUT_MS = 600_000;

/** One scheduling attempt's hook and what its Filter found per node (for PreBind). */
export interface VolumeAttempt {
  extra: ExtraPlugins;
  byNode: Map<string, PodVolumes>;
}

export class SchedulerVolumes implements VolumeLookup {
  private readonly claims = new Map<string, KubeObject>();
  private readonly pvs = new Map<string, KubeObject>();
  private readonly classes = new Map<string, KubeObject>();
  private readonly waiters = new Set<(stopping?: boolean) => void>();
  private readonly stops: (() => void)[] = [];
  private readonly client: ClusterClient;
  private readonly bindTimeoutMs: number;
  private readonly clock: Clock;

  /** `changed` runs on every claim, volume or class event: pods VolumeBinding rejected may fit. */
  constructor(client: ClusterClient, changed: () => void, timeScale = 1, clock: Clock = realClock) {
    this.client = client;
    this.clock = clock;
    this.bindTimeoutMs = BIND_TIMEOUT_MS / timeScale;
    const cache =
      (map: Map<string, KubeObject>, key: (o: KubeObject) => string) => (type: string, o: KubeObject) => {
        if (type === 'DELETED') map.delete(key(o));
        else map.set(key(o), o);
        for (const w of [...this.waiters]) w();
        changed();
      };
    const nsName = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
    const name = (o: KubeObject) => o.metadata.name ?? '';
    for (const [gvr, map, key] of [
      [PVCS, this.claims, nsName],
      [PVS, this.pvs, name],
      [CLASSES, this.classes, name],
    ] as const) {
      if (client.served(gvr)) this.stops.push(client.watch(gvr, cache(map, key), { shared: true }));
    }
  }

  claim(namespace: string, name: string): KubeObject | undefined {
    return this.claims.get(`${namespace}/${name}`);
  }
  volume(name: string): KubeObject | undefined {
    return this.pvs.get(name);
  }
  storageClass(name: string): KubeObject | undefined {
    return this.classes.get(name);
  }
  volumes(): Iterable<KubeObject> {
    return this.pvs.values();
  }

  /** PreFilter for one attempt; undefined for a pod without claims (the plugin skips it). */
  attempt(pod: KubeObject): VolumeAttempt | undefined {
    const pre = volumePreFilter(pod, this);
    if (pre.kind === 'skip') return undefined;
    const byNode = new Map<string, PodVolumes>();
    if (pre.kind === 'reject') {
      const st = {
        code: 'UnschedulableAndUnresolvable' as const,
        plugin: VOLUME_BINDING,
        reasons: [pre.message],
      };
      return { extra: { preFilterReject: st }, byNode };
    }
    const filter = (ni: NodeInfo) => {
      const r = volumeFilter(pre.claims, { name: ni.name, labels: ni.labels }, this);
      if ('status' in r) return r.status;
      byNode.set(ni.name, r.volumes);
      return undefined;
    };
    return { extra: { filter }, byNode };
  }

  /**
   * PreBind (BindPodVolumes): pre-binds the matched volumes, writes the node into the claims
   * to provision, then waits until every claim of the pod is bound. Rejects with upstream's
   * wording when a binding is undone or the wait times out.
   */
  async preBind(pod: KubeObject, nodeName: string, volumes: PodVolumes | undefined): Promise<void> {
    const ns = pod.metadata.namespace ?? '';
    // Static bindings: the volume's claimRef, which the PV binder then completes.
    for (const { claim, volume } of volumes?.staticBindings ?? []) {
      try {
        await this.client.mutate(PVS, '', volume.metadata.name ?? '', (cur) => {
          const ref = (cur.spec as { claimRef?: { uid?: string } } | undefined)?.claimRef;
          if (ref?.uid && ref.uid !== claim.metadata.uid)
            throw new Error(`persistentvolume "${volume.metadata.name}" was bound to another claim`);
          (cur.spec as Record<string, unknown>).claimRef = {
            kind: 'PersistentVolumeClaim',
            apiVersion: 'v1',
            namespace: claim.metadata.namespace,
            name: claim.metadata.name,
            uid: claim.metadata.uid,
          };
          cur.metadata.annotations = {
            ...(cur.metadata.annotations ?? {}),
            'pv.kubernetes.io/bound-by-controller': 'yes',
          };
        });
      } catch (err) {
        throw new Error(`running PreBind plugin "${VOLUME_BINDING}": binding volumes: ${errorText(err)}`);
      }
    }
    /** The claims this PreBind gave the node, as written (their resourceVersion). */
    const provisioning: KubeObject[] = [];
    for (const pvc of volumes?.claimsToSelectNode ?? []) {
      try {
        provisioning.push(
          await this.client.mutate(PVCS, ns, pvc.metadata.name ?? '', (cur) => {
            if (cur.metadata.uid !== pvc.metadata.uid)
              throw new Error(`persistentvolumeclaim "${pvc.metadata.name}" was recreated`);
            cur.metadata.annotations = { ...(cur.metadata.annotations ?? {}), [SELECTED_NODE]: nodeName };
          }),
        );
      } catch (err) {
        const why = isNotFound(err)
          ? `persistentvolumeclaim "${pvc.metadata.name}" not found`
          : errorText(err);
        throw new Error(`running PreBind plugin "${VOLUME_BINDING}": binding volumes: ${why}`);
      }
    }
    const names = podClaimNames(pod);
    /**
     * checkBindings: done when every claim is Bound; an error when a binding was undone — a
     * volume's claimRef reset, a claim gone or its selected-node removed (how a provisioner
     * says it failed) — so the pod is scheduled again.
     */
    const check = (): boolean | string => {
      for (const { volume } of volumes?.staticBindings ?? []) {
        const pv = this.volume(volume.metadata.name ?? '');
        const ref = (pv?.spec as { claimRef?: { uid?: string } } | undefined)?.claimRef;
        if (!pv) return `failed to check pv binding: persistentvolume "${volume.metadata.name}" not found`;
        if (!ref?.uid) return `ClaimRef got reset for pv "${volume.metadata.name}"`;
      }
      for (const written of provisioning) {
        const name = written.metadata.name ?? '';
        const cur = this.claim(ns, name);
        if (!cur) return `failed to check provisioning pvc: persistentvolumeclaim "${name}" not found`;
        // The cache has not seen this PreBind's own write yet.
        if (Number(cur.metadata.resourceVersion) < Number(written.metadata.resourceVersion)) return false;
        if (!cur.metadata.annotations) return `selectedNode annotation reset for PVC "${name}"`;
        if (cur.metadata.annotations[SELECTED_NODE] !== nodeName)
          return `provisioning failed for PVC "${name}"`;
      }
      return names.every((n) => {
        const c = this.claim(ns, n);
        return c !== undefined && (c.status as { phase?: string } | undefined)?.phase === 'Bound';
      });
    };
    const failed = (why: string) =>
      new Error(`running PreBind plugin "${VOLUME_BINDING}": binding volumes: ${why}`);
    const first = check();
    if (typeof first === 'string') throw failed(first);
    if (first) return;
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        timer.cancel();
        this.waiters.delete(waiter);
      };
      const waiter = (stopping?: boolean) => {
        if (stopping) {
          done();
          reject(new Error('scheduler stopped'));
          return;
        }
        const r = check();
        if (r === false) return;
        done();
        if (typeof r === 'string') reject(failed(r));
        else resolve();
      };
      const timer = this.clock.setTimer(() => {
        done();
        reject(failed('context deadline exceeded'));
      }, this.bindTimeoutMs);
      this.waiters.add(waiter);
    });
  }

  stop(): void {
    for (const s of this.stops) s();
    for (const w of [...this.waiters]) w(true);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
