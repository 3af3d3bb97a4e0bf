/** Upstream's view of a running AppWrapper's health: its pods by phase, its components deployed or failed. */

import type {
  AppWrapper,
  AppWrapperComponentStatus,
  PodObject,
} from '../../apis/workload.codeflare.dev/v1beta2.ts';
import { getControllerOf, type KubeObject } from '../../runtime/index.ts';
import type { AutopilotOptions, Effective } from './config.ts';
import { requestsResource } from './inject.ts';
import type { Json } from './paths.ts';

export interface PodSummary {
  expected: number;
  pending: number;
  running: number;
  succeeded: number;
  failed: number;
  terminalFailure: boolean;
}

/** Upstream's getPodStatus: counts by phase and the exit-code rules on failed pods. */
export function summarizePods(pods: PodObject[], expected: number, eff: Effective): PodSummary {
  const s: PodSummary = { expected, pending: 0, running: 0, succeeded: 0, failed: 0, terminalFailure: false };
  for (const pod of pods) {
    switch (pod.status?.phase) {
      case 'Pending':
        s.pending++;
        break;
      case 'Running':
        if (!pod.metadata.deletionTimestamp) s.running++;
        break;
      case 'Succeeded':
        s.succeeded++;
        break;
      case 'Failed': {
        s.failed++;
        const codes = (pod.status?.containerStatuses ?? [])
          .map((c) => c.state?.terminated?.exitCode)
          .filter((c): c is number => typeof c === 'number' && c !== 0);
        if (eff.terminalExitCodes.length > 0 && codes.some((c) => eff.terminalExitCodes.includes(c))) {
          s.terminalFailure = true;
        }
        if (eff.retryableExitCodes.length > 0 && codes.some((c) => !eff.retryableExitCodes.includes(c))) {
          s.terminalFailure = true;
        }
        break;
      }
    }
  }
  return s;
}

function conditionTrue(obj: KubeObject, type: string): boolean {
  const conds = (obj.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions;
  return Array.isArray(conds) && conds.some((c) => c.type === type && c.status === 'True');
}

/** A component object the AppWrapper controls (a namesake owned by someone else does not count). */
export function ours(aw: AppWrapper, obj: KubeObject | undefined): obj is KubeObject {
  if (!obj) return false;
  const ref = getControllerOf(obj);
  return (
    ref !== undefined &&
    ref.kind === 'AppWrapper' &&
    ref.name === aw.metadata.name &&
    (!aw.metadata.uid || ref.uid === aw.metadata.uid)
  );
}

/** Upstream's getComponentStatus: deployed components and those their controller failed. */
export function summarizeComponents(
  aw: AppWrapper,
  componentStatus: AppWrapperComponentStatus[],
  components: (KubeObject | undefined)[],
): { expected: number; deployed: number; failed: number } {
  const out = { expected: componentStatus.length, deployed: 0, failed: 0 };
  componentStatus.forEach((cs, i) => {
    const obj = components[i];
    if (!ours(aw, obj) || obj.metadata.deletionTimestamp) return;
    out.deployed++;
    const key = `${cs.apiVersion}:${cs.kind}`;
    // Only these kinds have a failed state that does not heal itself (RayCluster's does).
    if ((key === 'batch/v1:Job' || key === 'kubeflow.org/v1:PyTorchJob') && conditionTrue(obj, 'Failed'))
      out.failed++;
  });
  return out;
}

/**
 * The nodes where running pods use a resource Autopilot marked NoExecute (upstream's
 * getPodStatus noExecuteNodes): a running, not deleting pod on such a node whose containers
 * request or limit that resource.
 */
export function podsOnNoExecuteNodes(
  pods: PodObject[],
  noExecute: ReadonlyMap<string, ReadonlySet<string>>,
): string[] {
  const nodes = new Set<string>();
  if (noExecute.size === 0) return [];
  for (const pod of pods) {
    if (pod.status?.phase !== 'Running' || pod.metadata.deletionTimestamp) continue;
    const node = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    const bad = node ? noExecute.get(node) : undefined;
    if (!bad || !node) continue;
    for (const resource of bad) {
      if (requestsResource((pod.spec ?? {}) as Json, resource)) nodes.add(node);
    }
  }
  return [...nodes].sort();
}

/**
 * The resources each node's labels mark NoExecute (NodeHealthMonitor.updateNoExecuteNodes):
 * a label whose key and value are one of a resource's NoExecute taints.
 */
export function noExecuteNodesOf(
  nodes: readonly { metadata: { name?: string; labels?: Record<string, string> } }[],
  autopilot: AutopilotOptions,
): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const n of nodes) {
    const labels = n.metadata.labels ?? {};
    for (const [resource, taints] of Object.entries(autopilot.resourceTaints)) {
      for (const t of taints) {
        if (t.effect !== 'NoExecute' || labels[t.key] !== t.value) continue;
        const set = out.get(n.metadata.name ?? '') ?? new Set<string>();
        set.add(resource);
        out.set(n.metadata.name ?? '', set);
      }
    }
  }
  return out;
}
