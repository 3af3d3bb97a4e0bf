/** Builders for PodSequence unit tests: sequences, pods in every state, nodes. */

import {
  DEFAULT_GATE,
  type PodGroup,
  type PodSequence,
  type PodSequenceSpec,
  RELEASED_BY_ANNOTATION,
} from '../../../src/apis/scheduling.example.com/v1alpha1.ts';
import type { CoreInput } from '../../../src/controllers/podsequence/core.ts';
import type { Node, Pod } from '../../../src/controllers/podsequence/objects.ts';
import { resolveOptions } from '../../../src/controllers/podsequence/options.ts';
import { node as buildNode, pod as buildPod } from '../../support/objects.ts';

export const NS = 'default';

export function sequence(
  spec: Partial<PodSequenceSpec> & { podGroups: PodGroup[] },
  name = 'seq',
  generation = 1,
): PodSequence {
  return {
    apiVersion: 'scheduling.example.com/v1alpha1',
    kind: 'PodSequence',
    metadata: { name, namespace: NS, generation, uid: `uid-${name}` },
    spec,
  };
}

export function groups(...names: string[][]): PodGroup[] {
  return names.map((pods, i) => ({ name: `G${i + 1}`, pods }));
}

export interface PodOpts {
  labels?: Record<string, string>;
  gates?: string[];
  /** gated (default), released (no gate), scheduled, ready, succeeded, failed */
  state?: 'gated' | 'released' | 'scheduled' | 'ready' | 'succeeded' | 'failed';
  node?: string;
  /** DaemonSet-style pin (required affinity on metadata.name). */
  pinned?: string;
  releasedBy?: string;
  terminating?: boolean;
  namespace?: string;
  affinityTerms?: unknown[];
}

let rv = 100;

export function pod(name: string, o: PodOpts = {}): Pod {
  const state = o.state ?? 'gated';
  const gated = state === 'gated';
  const scheduled = state === 'scheduled' || state === 'ready' || state === 'succeeded' || state === 'failed';
  const status =
    state === 'ready'
      ? { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }
      : state === 'scheduled'
        ? { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] }
        : state === 'succeeded'
          ? { phase: 'Succeeded' }
          : state === 'failed'
            ? { phase: 'Failed' }
            : gated
              ? {
                  phase: 'Pending',
                  conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
                }
              : { phase: 'Pending' };
  return buildPod<Pod>(name, {
    namespace: o.namespace ?? NS,
    uid: `uid-${name}`,
    resourceVersion: String(++rv),
    ...(o.labels ? { labels: o.labels } : {}),
    ...(o.releasedBy ? { annotations: { [RELEASED_BY_ANNOTATION]: o.releasedBy } } : {}),
    ...(o.terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    gates: o.gates ?? (gated ? [DEFAULT_GATE] : []),
    ...(o.pinned ? { pinnedTo: o.pinned } : {}),
    ...(o.affinityTerms
      ? {
          spec: {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: o.affinityTerms },
              },
            },
          },
        }
      : {}),
    ...(scheduled ? { node: o.node ?? o.pinned ?? 'node-a' } : {}),
    status,
  });
}

export function node(name: string, taints: { key: string; effect: string }[] = []): Node {
  return buildNode<Node>(name, { labels: { 'kubernetes.io/hostname': name }, taints });
}

export function input(seq: PodSequence, pods: Pod[], extra: Partial<CoreInput> = {}): CoreInput {
  return {
    seq,
    pods,
    now: new Date('2026-06-01T12:00:00Z'),
    options: resolveOptions(extra.options ?? {}),
    ...extra,
  };
}

export function names(releases: { name: string }[]): string[] {
  return releases.map((r) => r.name).sort();
}
