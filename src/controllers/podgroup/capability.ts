/** The podgroup capability (docs/architecture.md, "Adding a capability"). */

import { PODGROUP_KIND, type PodGroup } from '../../apis/scheduling.incubator.k8s.io/v1alpha1.ts';
import { type CapabilityDeclaration, EVENTS_RULE } from '../capability.ts';
import { PODGROUP_CRD_FILE } from './crd.ts';
import { podGroupExplain } from './explain.ts';
import { podGroupControllers } from './index.ts';

export function podGroupCapability(): CapabilityDeclaration {
  return {
    name: 'podgroup',
    summary: 'gang readiness labels and PodGroup lifecycle status',
    explain: podGroupExplain,
    controllers: podGroupControllers(),
    crdFiles: [PODGROUP_CRD_FILE],
    status: [
      {
        key: 'podGroups',
        title: 'Pod groups',
        kind: PODGROUP_KIND,
        row: (obj) => {
          const g = obj as PodGroup;
          return {
            phase: g.status?.state?.phase ?? 'Pending',
            running: g.status?.running ?? 0,
            minMember: g.spec?.minMember ?? 1,
            reason: g.status?.state?.reason ?? '',
          };
        },
        columns: [
          { header: 'PHASE', cell: (r) => String(r.phase), phase: true },
          { header: 'RUNNING/MIN', cell: (r) => `${r.running}/${r.minMember}` },
          { header: 'REASON', cell: (r) => String(r.reason || '-') },
        ],
      },
    ],
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
