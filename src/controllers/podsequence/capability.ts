/** The podsequence capability (docs/architecture.md, "Adding a capability"). */

import { PODSEQUENCE, type PodSequence } from '../../apis/scheduling.example.com/v1alpha1.ts';
import {
  type CapabilityDeclaration,
  type CapabilityExplain,
  type CapabilityValues,
  EVENTS_RULE,
} from '../capability.ts';
import { PODSEQUENCE_CRD_FILE } from './crd.ts';
import { explainPod, explainSequence } from './explain.ts';
import {
  podSequenceControllers,
  podSequenceWebhookConfiguration,
  registerPodSequenceWebhooks,
} from './index.ts';
import type { Node, Pod } from './objects.ts';
import type { PodSequenceMode, PodSequenceOptions } from './options.ts';

const POD = { apiVersion: 'v1', kind: 'Pod' };
const NODE = { apiVersion: 'v1', kind: 'Node' };

/**
 * `troupe explain podseq/<name>`, and the opening of `troupe explain pod/<name>`: the pod's
 * gates and the sequences holding it. Both from the controller's own decision.
 */
const podSequenceExplain: CapabilityExplain = {
  kinds: [
    {
      kind: PODSEQUENCE,
      names: ['podsequence', 'podsequences', 'podseq', 'podseqs'],
      usage: 'podsequence (podseq)',
      explain: async (r, obj) => {
        const seq = obj as PodSequence;
        const podNamespace = seq.spec?.namespace || seq.metadata.namespace;
        const [pods, nodes, sequences] = await Promise.all([
          r.list<Pod>(POD, podNamespace),
          r.list<Node>(NODE),
          r.list<PodSequence>(PODSEQUENCE),
        ]);
        return explainSequence({ seq, pods: pods ?? [], nodes, sequences: sequences ?? [seq] });
      },
    },
  ],
  pod: {
    lead: true,
    lines: async (r, obj) => {
      const pod = obj as Pod;
      const [pods, nodes, sequences] = await Promise.all([
        r.list<Pod>(POD, pod.metadata.namespace),
        r.list<Node>(NODE),
        r.list<PodSequence>(PODSEQUENCE),
      ]);
      return [explainPod(pod, { sequences: sequences ?? [], pods: pods ?? [pod], nodes })];
    },
  },
};

/** `values.podsequenceMode`: `--podsequence-mode`. */
export function podSequenceCapability(values: CapabilityValues = {}): CapabilityDeclaration {
  const opts: PodSequenceOptions = values.podsequenceMode
    ? { mode: values.podsequenceMode as PodSequenceMode }
    : {};
  return {
    name: 'podsequence',
    summary: 'ordered startup of pod tiers through scheduling gates',
    flags: [
      {
        flag: '--podsequence-mode <mode>',
        description: 'PodSequence: lite (gates only) or full (per-node taints and a mutating webhook)',
        choices: ['lite', 'full'],
        default: 'lite',
      },
    ],
    explain: podSequenceExplain,
    controllers: podSequenceControllers(opts),
    crdFiles: [PODSEQUENCE_CRD_FILE],
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
