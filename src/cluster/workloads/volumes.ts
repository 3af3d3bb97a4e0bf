/**
 * PersistentVolume binding and a simulated dynamic provisioner: what kube-controller-manager's
 * persistentvolume-binder (pkg/controller/volume/persistentvolume/pv_controller.go) and an
 * external CSI provisioner do together, with no storage behind it.
 *
 * - A pending claim binds to the smallest Available volume that fits it (same class, enough
 *   capacity, the access modes and volume mode, the claim's selector), else its class's
 *   provisioner (any name: every provisioner is simulated) makes `pvc-<claim uid>`.
 * - `volumeBindingMode: WaitForFirstConsumer`: nothing happens until the scheduler's
 *   VolumeBinding writes `volume.kubernetes.io/selected-node` on the claim (or pre-binds a
 *   static volume); a volume provisioned then gets that node's affinity, and a static one must
 *   admit the node's labels (CheckNodeAffinity, the scheduler's).
 * - A deleted claim releases its volume; reclaimPolicy Delete deletes it, Retain keeps it
 *   Released.
 * Events and annotations are upstream's (`WaitForFirstConsumer`, `ProvisioningSucceeded`,
 * `pv.kubernetes.io/bind-completed`, `pv.kubernetes.io/provisioned-by` …).
 */

import { objectKey } from '../../kube/keys.ts';
import { bestVolumeForClaim, claimClass, claimRefNames } from '../../kube/volumes.ts';
import { recordOf as rec, stringOf as str } from '../../lib/json.ts';
import { ApiError } from '../apiserver/errors.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { GVR, isNotFound } from '../client.ts';
import { SELECTED_NODE, volumeAdmitsNode } from '../scheduler/volume-binding.ts';
import { type ControllerContext, LoopController } from './context.ts';
import type { Informer } from './informer.ts';
import { errMessage } from './util.ts';

const PVCS = GVR.persistentvolumeclaims;
const PVS = GVR.persistentvolumes;
const CLASSES = GVR.storageclasses;
const NODES = GVR.nodes;

const BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
const BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
const PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
const STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';

type Json = Record<string, unknown>;
const specOf = (o: KubeObject) => rec(o.spec);

export class VolumeController extends LoopController {
  private readonly claims: Informer;
  private readonly volumes: Informer;
  private readonly classes: Informer;
  private readonly nodes: Informer;

  constructor(ctx: ControllerContext) {
    super(ctx, 'persistentvolume-binder');
    this.claims = ctx.informers.for(PVCS);
    this.volumes = ctx.informers.for(PVS);
    this.classes = ctx.informers.for(CLASSES);
    this.nodes = ctx.informers.for(NODES);
    this.unsubscribeOnStop(
      this.claims.subscribe((t, o) => {
        this.loop.enqueue(`claim/${objectKey(o)}`);
        const volume = str(specOf(o).volumeName);
        if (t === 'DELETED' && volume) this.loop.enqueue(`volume/${volume}`);
      }),
    );
    this.unsubscribeOnStop(
      this.volumes.subscribe((t, o) => {
        this.loop.enqueue(`volume/${o.metadata.name}`);
        // A volume freed or added may fit a waiting claim.
        if (t !== 'DELETED')
          for (const c of this.claims.list())
            if (!specOf(c).volumeName) this.loop.enqueue(`claim/${objectKey(c)}`);
      }),
    );
    this.unsubscribeOnStop(
      this.classes.subscribe(() => {
        for (const c of this.claims.list())
          if (!specOf(c).volumeName) this.loop.enqueue(`claim/${objectKey(c)}`);
      }),
    );
  }

  protected async sync(key: string): Promise<void> {
    if (key.startsWith('volume/')) return this.syncVolume(key.slice('volume/'.length));
    const claim = this.claims.get(key.slice('claim/'.length));
    if (!claim || claim.metadata.deletionTimestamp) return;
    const spec = specOf(claim);
    if (spec.volumeName) return this.finishBinding(claim, str(spec.volumeName));
    const className = claimClass(claim);
    const cls = className ? this.classes.get(className) : undefined;
    const wffc = (cls as Json | undefined)?.volumeBindingMode === 'WaitForFirstConsumer';
    const node = claim.metadata.annotations?.[SELECTED_NODE];
    if (wffc && !node) {
      // A volume the scheduler pre-bound for the claim (its static binding) completes it.
      const prebound = this.volumes
        .list()
        .find((pv) => claimRefNames(pv, claim) && rec(specOf(pv).claimRef).uid === claim.metadata.uid);
      if (prebound) return this.bind(claim, prebound);
      this.ctx.recorder.event(
        claim,
        'Normal',
        'WaitForFirstConsumer',
        'waiting for first consumer to be created before binding',
      );
      return;
    }
    const pv = this.findVolume(claim, className, node);
    if (pv) return this.bind(claim, pv);
    if (!cls) {
      this.ctx.recorder.event(
        claim,
        'Normal',
        'FailedBinding',
        className
          ? `storageclass.storage.k8s.io "${className}" not found`
          : 'no persistent volumes available for this claim and no storage class is set',
      );
      return;
    }
    await this.provision(claim, cls, node);
  }

  /** findBestMatchForClaim; with a selected node, only volumes whose affinity admits it. */
  private findVolume(claim: KubeObject, className: string, node: string | undefined): KubeObject | undefined {
    const view = node ? { name: node, labels: this.nodes.get(node)?.metadata.labels ?? {} } : undefined;
    return bestVolumeForClaim(
      this.volumes.list(),
      claim,
      className,
      view ? (pv) => volumeAdmitsNode(pv, view) : undefined,
    );
  }

  private async provision(claim: KubeObject, cls: KubeObject, node: string | undefined): Promise<void> {
    const c = cls as Json;
    const provisioner = str(c.provisioner);
    const spec = specOf(claim);
    const name = `pvc-${claim.metadata.uid}`;
    if (
      claim.metadata.annotations?.[STORAGE_PROVISIONER] !== provisioner ||
      (node && !claim.metadata.annotations?.[SELECTED_NODE])
    ) {
      await this.annotateClaim(claim, {
        [STORAGE_PROVISIONER]: provisioner,
        'volume.beta.kubernetes.io/storage-provisioner': provisioner,
        ...(node ? { [SELECTED_NODE]: node } : {}),
      });
      this.ctx.recorder.event(
        claim,
        'Normal',
        'ExternalProvisioning',
        `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
      );
    }
    this.ctx.recorder.event(
      claim,
      'Normal',
      'Provisioning',
      `External provisioner is provisioning volume for claim "${claim.metadata.namespace}/${claim.metadata.name}"`,
    );
    const pv: KubeObject = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name, annotations: { [PROVISIONED_BY]: provisioner } },
      spec: {
        capacity: { storage: str(rec(rec(spec.resources).requests).storage) || '1Gi' },
        accessModes: (spec.accessModes as string[] | undefined) ?? ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: str(c.reclaimPolicy) || 'Delete',
        storageClassName: str(cls.metadata.name),
        volumeMode: str(spec.volumeMode) || 'Filesystem',
        csi: { driver: provisioner, volumeHandle: name, fsType: 'ext4' },
        claimRef: {
          kind: 'PersistentVolumeClaim',
          namespace: claim.metadata.namespace,
          name: claim.metadata.name,
          uid: claim.metadata.uid,
          apiVersion: 'v1',
        },
        ...(node
          ? {
              nodeAffinity: {
                required: {
                  nodeSelectorTerms: [
                    { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
                  ],
                },
              },
            }
          : {}),
      },
    };
    try {
      await this.ctx.client.create(PVS, pv);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) {
        this.ctx.recorder.event(
          claim,
          'Warning',
          'ProvisioningFailed',
          `failed to provision volume with StorageClass "${cls.metadata.name}": ${errMessage(err)}`,
        );
        throw err;
      }
    }
    this.ctx.recorder.event(
      claim,
      'Normal',
      'ProvisioningSucceeded',
      `Successfully provisioned volume ${name}`,
    );
    const created = this.ctx.client.get(PVS, '', name);
    if (created) await this.bind(claim, created);
  }

  private async annotateClaim(claim: KubeObject, annotations: Record<string, string>): Promise<void> {
    await this.ctx.client.mutate(PVCS, claim.metadata.namespace ?? '', claim.metadata.name!, (cur) => {
      cur.metadata.annotations = { ...(cur.metadata.annotations ?? {}), ...annotations };
    });
  }

  /** bind: the volume's claimRef and Bound phase, then the claim's volumeName and status. */
  private async bind(claim: KubeObject, pv: KubeObject): Promise<void> {
    const name = pv.metadata.name!;
    const ref = {
      kind: 'PersistentVolumeClaim',
      namespace: claim.metadata.namespace,
      name: claim.metadata.name,
      uid: claim.metadata.uid,
      apiVersion: 'v1',
      resourceVersion: claim.metadata.resourceVersion,
    };
    if (!rec(specOf(pv).claimRef).uid) {
      await this.ctx.client.mutate(PVS, '', name, (cur) => {
        (cur.spec as Json).claimRef = ref;
        cur.metadata.annotations = { ...(cur.metadata.annotations ?? {}), [BOUND_BY_CONTROLLER]: 'yes' };
      });
    }
    await this.ctx.client.mutate(
      PVS,
      '',
      name,
      (cur) => {
        cur.status = { ...rec(cur.status), phase: 'Bound' };
      },
      'status',
    );
    await this.ctx.client.mutate(PVCS, claim.metadata.namespace ?? '', claim.metadata.name!, (cur) => {
      (cur.spec as Json).volumeName = name;
      cur.metadata.annotations = {
        ...(cur.metadata.annotations ?? {}),
        [BIND_COMPLETED]: 'yes',
        [BOUND_BY_CONTROLLER]: 'yes',
      };
    });
    await this.finishBinding(claim, name);
  }

  /** The claim's status once its volume is its own. */
  private async finishBinding(claim: KubeObject, volumeName: string): Promise<void> {
    const pv = this.ctx.client.get(PVS, '', volumeName);
    if (!pv || rec(specOf(pv).claimRef).uid !== claim.metadata.uid) return;
    const ps = specOf(pv);
    const status = { phase: 'Bound', accessModes: ps.accessModes, capacity: ps.capacity };
    const cur = rec(claim.status);
    if (cur.phase === 'Bound' && JSON.stringify(cur.capacity) === JSON.stringify(ps.capacity)) return;
    await this.ctx.client.mutate(
      PVCS,
      claim.metadata.namespace ?? '',
      claim.metadata.name!,
      (c) => {
        c.status = { ...rec(c.status), ...status };
      },
      'status',
    );
  }

  /** A volume whose claim is gone is Released, then deleted or kept by its reclaim policy. */
  private async syncVolume(name: string): Promise<void> {
    const pv = this.volumes.get(name);
    if (!pv || pv.metadata.deletionTimestamp) return;
    const ref = rec(specOf(pv).claimRef);
    if (!ref.name) {
      if (!rec(pv.status).phase || rec(pv.status).phase === 'Pending') {
        await this.ctx.client.mutate(
          PVS,
          '',
          name,
          (cur) => {
            cur.status = { ...rec(cur.status), phase: 'Available' };
          },
          'status',
        );
      }
      return;
    }
    const claim = this.ctx.client.get(PVCS, str(ref.namespace), str(ref.name));
    if (claim && (!ref.uid || claim.metadata.uid === ref.uid)) return;
    if (!ref.uid) return;
    if (str(specOf(pv).persistentVolumeReclaimPolicy) === 'Delete') {
      try {
        await this.ctx.client.delete(PVS, '', name);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      return;
    }
    if (rec(pv.status).phase !== 'Released') {
      await this.ctx.client.mutate(
        PVS,
        '',
        name,
        (cur) => {
          cur.status = { ...rec(cur.status), phase: 'Released' };
        },
        'status',
      );
    }
  }
}
