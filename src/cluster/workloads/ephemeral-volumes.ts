/**
 * The generic ephemeral volume controller (pkg/controller/volume/ephemeral/controller.go): a
 * pod's `volumes[].ephemeral.volumeClaimTemplate` becomes the claim `<pod>-<volume>`, with the
 * template's labels, annotations and spec, controlled by the pod (so the garbage collector
 * removes it with the pod). A claim of that name the pod does not control is an error
 * (`FailedBinding` Event: `PVC ns/x was not created for pod ns/p (pod is not owner)`); pods
 * being deleted are left alone. The PV binder and the scheduler then treat the claim as any.
 */

import { objectKey } from '../../kube/keys.ts';
import { ephemeralClaimNotForPod, podVolumeClaims } from '../../kube/volumes.ts';
import { recordOf as rec } from '../../lib/json.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { GVR } from '../client.ts';
import { type ControllerContext, LoopController } from './context.ts';
import type { Informer } from './informer.ts';
import { newControllerRef } from './pods.ts';
import { errMessage } from './util.ts';

const PODS = GVR.pods;
const PVCS = GVR.persistentvolumeclaims;

type Json = Record<string, unknown>;

export class EphemeralVolumeController extends LoopController {
  private readonly pods: Informer;
  private readonly claims: Informer;

  constructor(ctx: ControllerContext) {
    super(ctx, 'ephemeral-volume');
    this.pods = ctx.informers.for(PODS);
    this.claims = ctx.informers.for(PVCS);
    this.unsubscribeOnStop(
      this.pods.subscribe((t, o) => {
        if (t !== 'DELETED' && podVolumeClaims(o).some((c) => c.ephemeral)) this.loop.enqueue(objectKey(o));
      }),
    );
    // A claim deleted under a running pod is made again, as upstream's claim handler requeues.
    this.unsubscribeOnStop(
      this.claims.subscribe((t, o) => {
        if (t !== 'DELETED') return;
        const owner = o.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'Pod');
        if (owner) this.loop.enqueue(`${o.metadata.namespace}/${owner.name}`);
      }),
    );
  }

  protected async sync(key: string): Promise<void> {
    const pod = this.pods.get(key);
    if (!pod || pod.metadata.deletionTimestamp) return;
    const ns = pod.metadata.namespace ?? '';
    const volumes = (rec(pod.spec).volumes as Json[] | undefined) ?? [];
    for (const claim of podVolumeClaims(pod).filter((c) => c.ephemeral)) {
      const template = rec(rec(volumes.find((v) => v.name === claim.volume)?.ephemeral).volumeClaimTemplate);
      try {
        const existing = this.claims.get(`${ns}/${claim.name}`);
        if (existing) {
          const notOurs = ephemeralClaimNotForPod(pod, existing);
          if (notOurs) throw new Error(notOurs);
          continue;
        }
        const meta = rec(template.metadata);
        try {
          await this.ctx.client.create(PVCS, {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            metadata: {
              name: claim.name,
              namespace: ns,
              ownerReferences: [newControllerRef(pod)],
              ...(meta.annotations ? { annotations: meta.annotations as Record<string, string> } : {}),
              ...(meta.labels ? { labels: meta.labels as Record<string, string> } : {}),
            },
            spec: template.spec,
          } as KubeObject);
        } catch (err) {
          throw new Error(`create PVC ${claim.name}: ${errMessage(err)}`);
        }
      } catch (err) {
        this.ctx.recorder.event(
          pod,
          'Warning',
          'FailedBinding',
          `ephemeral volume ${claim.volume}: ${errMessage(err)}`,
        );
        throw err;
      }
    }
  }
}
