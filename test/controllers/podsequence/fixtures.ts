/** Builders for PodSequence unit tests: sequences, pods in every state, nodes. */

import type { CoreInput } from '../../../src/controllers/podsequence/core.ts';
import { resolveOptions } from '../../../src/controllers/podsequence/options.ts';
import {
  DEFAULT_GATE,
  type Node,
  type PodGroup,
  type Pod,
  type PodSequence,
  type PodSequenceSpec,
  RELEASED_BY_ANNOTATION,
} from '../../../src/controllers/podsequence/types.ts';

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
  const p: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: o.namespace ?? NS,
      uid: `uid-${name}`,
      resourceVersion: String(++rv),
      labels: o.labels,
      annotations: o.releasedBy ? { [RELEASED_BY_ANNOTATION]: o.releasedBy } : undefined,
    },
    spec: {
      schedulingGates: (o.gates ?? (gated ? [DEFAULT_GATE] : [])).map((g) => ({ name: g })),
    },
    status: { phase: 'Pending' },
  };
  if (o.terminating) p.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  if (o.pinned) {
    p.spec!.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: [o.pinned] }] },
          ],
        },
      },
    };
  }
  if (o.affinityTerms) {
    p.spec!.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: o.affinityTerms as never },
      },
    };
  }
  const scheduled = state === 'scheduled' || state === 'ready' || state === 'succeeded' || state === 'failed';
  if (scheduled) p.spec!.nodeName = o.node ?? o.pinned ?? 'node-a';
  if (state === 'ready') {
    p.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
  } else if (state === 'scheduled') {
    p.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] };
  } else if (state === 'succeeded') {
    p.status = { phase: 'Succeeded' };
  } else if (state === 'failed') {
    p.status = { phase: 'Failed' };
  } else if (gated) {
    p.status = {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
    };
  }
  return p;
}

export function node(name: string, taints: { key: string; effect: string }[] = []): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    spec: { taints },
  };
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
