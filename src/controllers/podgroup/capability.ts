/** The podgroup capability (docs/architecture.md, "Adding a capability"). */

import { type Capability, EVENTS_RULE } from '../capability.ts';
import { PODGROUP_CRD_FILE, podGroupCrdManifests } from './crd.ts';
import { podGroupControllers } from './index.ts';

export function podGroupCapability(): Capability {
  return {
    name: 'podgroup',
    summary: 'gang readiness labels and PodGroup lifecycle status',
    controllers: podGroupControllers(),
    crdFiles: [PODGROUP_CRD_FILE],
    crds: podGroupCrdManifests(),
    rbac: {
      file: 'config/rbac/role.yaml',
      rules: [
        EVENTS_RULE,
        // PodGroups are created for gangs formed by the label alone (read from the informer
        // only, so no get); their status is patched.
        {
          apiGroups: ['scheduling.incubator.k8s.io'],
          resources: ['podgroups'],
          verbs: ['list', 'watch', 'create'],
        },
        { apiGroups: ['scheduling.incubator.k8s.io'], resources: ['podgroups/status'], verbs: ['patch'] },
        // Every pod is read; the ready label is patched; deadlockPolicy Restart deletes members.
        { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch', 'patch', 'delete'] },
      ],
    },
  };
}
