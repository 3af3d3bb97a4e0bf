/**
 * Full mode's mutating admission webhook.
 *
 * Pods (CREATE): a pod that a valid PodSequence selects into group j gets
 * - for node-scoped sequences, tolerations for the taints of groups after j (so it can
 *   run on nodes where those later groups are still blocked), as the original project did;
 * - beyond it, the sequence's scheduling gate when the pod lacks it (groups after the first;
 *   every group of a node-scoped sequence), so pod templates need not carry the gate.
 * DaemonSets (CREATE, UPDATE): a template a node-scoped sequence selects gets the same
 * tolerations. The DaemonSet controller only creates a daemon pod on a node whose
 * NoSchedule taints the *template* tolerates, so tolerating at the pod level alone would
 * leave tainted nodes without the first group's pods.
 *
 * One webhook entry (one path, `/mutate-v1-pod`, the original project's) takes both kinds,
 * so the single caBundle patch of the install guide covers both. It never denies: with
 * failurePolicy Ignore a pod is never blocked by it.
 */

import { PODSEQUENCE, type PodSequence } from '../../apis/scheduling.example.com/v1alpha1.ts';
import {
  type AdmissionHandler,
  allowed,
  type Cache,
  type KubeObject,
  type Manager,
  objectKey,
  patched,
} from '../../runtime/index.ts';
import type { Pod, Toleration } from './objects.ts';
import { type PodSequenceOptions, resolveOptions } from './options.ts';
import { withTolerations } from './release.ts';
import { groupSelects, type ResolvedSpec, resolveSpec } from './spec.ts';
import { tolerationsFor } from './taints.ts';

export const WEBHOOK_PATH = '/mutate-v1-pod';
export const WEBHOOK_CONFIGURATION_NAME = 'podsequence-mutating-webhook';

interface Selected {
  seq: PodSequence;
  spec: ResolvedSpec;
  group: number;
}

function selecting(
  sequences: PodSequence[],
  namespace: string,
  name: string | undefined,
  labels: Record<string, string> | undefined,
  defaultGate: string,
): Selected[] {
  const out: Selected[] = [];
  for (const seq of sequences) {
    if (seq.metadata.deletionTimestamp) continue;
    const spec = resolveSpec(seq, defaultGate);
    if (spec.errors.length > 0 || spec.namespace !== namespace) continue;
    const hits = spec.groups.filter((g) => groupSelects(g, name, labels));
    // A pod in two groups is a conflict the controller reports; adding nothing is safest.
    if (hits.length === 1) out.push({ seq, spec, group: hits[0]!.index });
  }
  return out;
}

/** The pod as the webhook wants it (a copy), and what changed. Pure. */
export function mutatePod(
  pod: Pod,
  namespace: string,
  sequences: PodSequence[],
  defaultGate: string,
): { pod: Pod; changes: string[] } {
  const out = structuredClone(pod);
  out.spec ??= {};
  const changes: string[] = [];
  for (const { seq, spec, group } of selecting(
    sequences,
    namespace,
    pod.metadata.name,
    pod.metadata.labels,
    defaultGate,
  )) {
    const who = `PodSequence ${objectKey(seq)} group ${group + 1}`;
    const gates = out.spec.schedulingGates ?? [];
    // Node scope gates the first group too: its release patch then adds any toleration this
    // webhook could not (a pod admitted before the cache knew the sequence).
    if (
      (group > 0 || spec.scope === 'Node') &&
      !out.spec.nodeName &&
      !gates.some((g) => g.name === spec.gate)
    ) {
      out.spec.schedulingGates = [...gates, { name: spec.gate }];
      changes.push(`added scheduling gate ${spec.gate} (${who})`);
    }
    if (spec.scope === 'Node') {
      const next = withTolerations(
        out.spec.tolerations,
        tolerationsFor(seq.metadata.namespace ?? '', seq.metadata.name ?? '', group, spec.groups.length),
      );
      if (next) {
        out.spec.tolerations = next;
        changes.push(`added tolerations for the later groups' node taints (${who})`);
      }
    }
  }
  return { pod: out, changes };
}

interface DaemonSetLike extends KubeObject {
  spec?: {
    template?: { metadata?: { labels?: Record<string, string> }; spec?: { tolerations?: Toleration[] } };
  };
}

/** The DaemonSet with tolerations added to its template, and what changed. Pure. */
export function mutateDaemonSet(
  ds: DaemonSetLike,
  namespace: string,
  sequences: PodSequence[],
  defaultGate: string,
): { ds: DaemonSetLike; changes: string[] } {
  const out = structuredClone(ds);
  const template = out.spec?.template;
  const changes: string[] = [];
  if (!template) return { ds: out, changes };
  template.spec ??= {};
  for (const { seq, spec, group } of selecting(
    sequences,
    namespace,
    undefined,
    template.metadata?.labels,
    defaultGate,
  )) {
    if (spec.scope !== 'Node') continue;
    const next = withTolerations(
      template.spec.tolerations,
      tolerationsFor(seq.metadata.namespace ?? '', seq.metadata.name ?? '', group, spec.groups.length),
    );
    if (next) {
      template.spec.tolerations = next;
      changes.push(`added tolerations for PodSequence ${objectKey(seq)} group ${group + 1}`);
    }
  }
  return { ds: out, changes };
}

/**
 * The admission handler. Pods are many: their sequences come from `listSequences` (the
 * manager's cache). DaemonSets are few and often applied in the same file right after
 * their PodSequence, before a cache could have seen it: `listSequencesLive` (a read from
 * the API server) is used for them when given.
 */
export function podSequenceWebhookHandler(
  listSequences: () => Promise<PodSequence[]>,
  options: PodSequenceOptions = {},
  listSequencesLive?: () => Promise<PodSequence[]>,
): AdmissionHandler {
  const gate = resolveOptions(options).defaultGateName;
  return async (req, { log }) => {
    if (!req.object) return allowed();
    const namespace = req.namespace || req.object.metadata.namespace || 'default';
    if (req.kind?.kind === 'Pod' && req.operation === 'CREATE') {
      const pod = req.object as Pod;
      const { pod: next, changes } = mutatePod(pod, namespace, await listSequences(), gate);
      if (changes.length === 0) return allowed();
      log.debug({ pod: pod.metadata.name ?? pod.metadata.generateName, changes }, 'mutating pod');
      return patched(pod, next);
    }
    if (req.kind?.kind === 'DaemonSet' && (req.operation === 'CREATE' || req.operation === 'UPDATE')) {
      const ds = req.object as DaemonSetLike;
      const { ds: next, changes } = mutateDaemonSet(
        ds,
        namespace,
        await (listSequencesLive ?? listSequences)(),
        gate,
      );
      if (changes.length === 0) return allowed();
      log.debug({ daemonset: ds.metadata.name, changes }, 'mutating daemonset');
      return patched(ds, next);
    }
    return allowed();
  };
}

/** Registers the handler on the manager's webhook server (full mode), before `start()`. */
export function registerPodSequenceWebhooks(mgr: Manager, options: PodSequenceOptions = {}): void {
  if (!mgr.webhooks) throw new Error('the manager has no webhook server: start it with the webhook option');
  const cache: Cache = mgr.cache;
  mgr.webhooks.register(
    WEBHOOK_PATH,
    podSequenceWebhookHandler(() => cache.list<PodSequence>(PODSEQUENCE), options),
  );
}

export interface WebhookConfigurationOptions {
  /** Name of the configuration (default `podsequence-mutating-webhook`, the install guide's). */
  name?: string;
  /** Base URL of the webhook server (`https://127.0.0.1:9443`); or a service. */
  url?: string;
  service?: { namespace: string; name: string; port?: number };
  /** PEM of the CA that signed the serving certificate. */
  caBundle?: string;
  /** Namespaces whose pods are never mutated (the controller's own, at least). */
  excludeNamespaces?: string[];
}

/** The MutatingWebhookConfiguration that sends pods and DaemonSets to this webhook. */
export function podSequenceWebhookConfiguration(o: WebhookConfigurationOptions): KubeObject {
  const clientConfig: Record<string, unknown> = o.url
    ? { url: `${o.url.replace(/\/$/, '')}${WEBHOOK_PATH}` }
    : {
        service: {
          namespace: o.service?.namespace,
          name: o.service?.name,
          path: WEBHOOK_PATH,
          port: o.service?.port ?? 443,
        },
      };
  if (o.caBundle) clientConfig.caBundle = Buffer.from(o.caBundle).toString('base64');
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: o.name ?? WEBHOOK_CONFIGURATION_NAME },
    webhooks: [
      {
        name: 'mpod.podsequence.example.com',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Ignore',
        timeoutSeconds: 5,
        clientConfig,
        rules: [
          {
            operations: ['CREATE'],
            apiGroups: [''],
            apiVersions: ['v1'],
            resources: ['pods'],
            scope: 'Namespaced',
          },
          {
            operations: ['CREATE', 'UPDATE'],
            apiGroups: ['apps'],
            apiVersions: ['v1'],
            resources: ['daemonsets'],
            scope: 'Namespaced',
          },
        ],
        namespaceSelector: {
          matchExpressions: [
            {
              key: 'kubernetes.io/metadata.name',
              operator: 'NotIn',
              values: o.excludeNamespaces ?? ['pod-sequence-system'],
            },
          ],
        },
      },
    ],
  };
}
