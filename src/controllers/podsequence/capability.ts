/** The podsequence capability (docs/architecture.md, "Adding a capability"). */

import { PODSEQUENCE, type PodSequence } from '../../apis/scheduling.example.com/v1alpha1.ts';
import { type Capability, EVENTS_RULE } from '../capability.ts';
import { PODSEQUENCE_CRD_FILE, podSequenceCrd } from './crd.ts';
import {
  podSequenceControllers,
  podSequenceWebhookConfiguration,
  registerPodSequenceWebhooks,
} from './index.ts';
import type { PodSequenceOptions } from './options.ts';

export function podSequenceCapability(opts: PodSequenceOptions = {}): Capability {
  return {
    name: 'podsequence',
    summary: 'ordered startup of pod tiers through scheduling gates',
    controllers: podSequenceControllers(opts),
    crdFiles: [PODSEQUENCE_CRD_FILE],
    crds: [podSequenceCrd],
    // Lite mode's rights; full mode adds config/overlays/full/podsequence_full_role.yaml.
    status: [
      {
        key: 'sequences',
        title: 'Sequences',
        kind: PODSEQUENCE,
        row: (obj) => {
          const q = obj as PodSequence;
          const st = q.status ?? {};
          const total = st.totalGroups ?? q.spec?.podGroups?.length ?? 0;
          const index = st.currentIndex ?? 0;
          return {
            phase: st.phase ?? 'Pending',
            // The current tier: its name, or its 1-based position.
            tier:
              st.phase === 'Completed'
                ? '-'
                : (st.currentGroupName ?? q.spec?.podGroups?.[index]?.name ?? `${index + 1}`),
            progress: st.progress ?? `${Math.min(index + 1, total)}/${total}`,
            // Ready pods (cluster scope) or done nodes (node scope) of the current tier.
            ready: st.currentGroupReady ?? `${st.readyPodsInCurrentGroup ?? 0}`,
          };
        },
        columns: [
          { header: 'PHASE', cell: (r) => String(r.phase), phase: true },
          { header: 'TIER', cell: (r) => String(r.tier) },
          { header: 'PROGRESS', cell: (r) => String(r.progress) },
          { header: 'READY', cell: (r) => String(r.ready || '-') },
        ],
      },
    ],
    rbac: {
      file: 'config/rbac/role.yaml',
      rules: [
        EVENTS_RULE,
        // patch: the finalizer a sequence may carry from full mode is removed on deletion.
        {
          apiGroups: ['scheduling.example.com'],
          resources: ['podsequences'],
          verbs: ['get', 'list', 'watch', 'patch'],
        },
        { apiGroups: ['scheduling.example.com'], resources: ['podsequences/status'], verbs: ['patch'] },
        // Every pod is read; a released pod is patched to remove its gate.
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'patch'] },
      ],
    },
    // Full mode's webhook injects the tolerations of per-node tier taints.
    ...(opts.mode === 'full'
      ? {
          webhooks: {
            register: (m) => registerPodSequenceWebhooks(m, opts),
            configurations: (url, caBundle) => [
              podSequenceWebhookConfiguration({ name: 'troupe-podsequence-webhook', url, caBundle }),
            ],
          },
        }
      : {}),
  };
}
