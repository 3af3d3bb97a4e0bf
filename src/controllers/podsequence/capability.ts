/** The podsequence capability (docs/architecture.md, "Adding a capability"). */

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
