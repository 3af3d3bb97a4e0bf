import { EventEmitter } from 'node:events';
import { compareStrings } from '../../lib/compare.ts';
import { groupVersion, type ResourceType } from './types.ts';

/** Storage is shared by all versions of a resource; this is its key (`apps/deployments`). */
export function storageKey(rt: Pick<ResourceType, 'group' | 'resource' | 'sharedStorage'>): string {
  const s = rt.sharedStorage ?? rt;
  return `${s.group}/${s.resource}`;
}

/**
 * The set of served resources. Built-ins are registered at start; CRDs add and remove
 * theirs at run time, and discovery listens to 'changed' to invalidate its documents.
 */
export class ResourceRegistry extends EventEmitter {
  private readonly byGvr = new Map<string, ResourceType>();
  /** Insertion-ordered group names, mirroring kube-apiserver's discovery order (core first). */
  private readonly groupOrder: string[] = [];

  add(rt: ResourceType): void {
    this.byGvr.set(`${rt.group}/${rt.version}/${rt.resource}`, rt);
    if (!this.groupOrder.includes(rt.group)) this.groupOrder.push(rt.group);
    this.emit('changed');
  }

  remove(group: string, resource: string): void {
    for (const [k, rt] of this.byGvr) {
      if (rt.group === group && rt.resource === resource) this.byGvr.delete(k);
    }
    if (![...this.byGvr.values()].some((rt) => rt.group === group)) {
      this.groupOrder.splice(this.groupOrder.indexOf(group), 1);
    }
    this.emit('changed');
  }

  get(group: string, version: string, resource: string): ResourceType | undefined {
    return this.byGvr.get(`${group}/${version}/${resource}`);
  }

  /** Finds a resource by kind in a group/version (used for ownerReferences and webhooks). */
  byKind(group: string, version: string, kind: string): ResourceType | undefined {
    for (const rt of this.byGvr.values()) {
      if (rt.group === group && rt.version === version && rt.kind === kind) return rt;
    }
    return undefined;
  }

  all(): ResourceType[] {
    return [...this.byGvr.values()];
  }

  groups(): string[] {
    return [...this.groupOrder];
  }

  /** Versions served for a group, preferred (storage/newest) first. */
  versions(group: string): string[] {
    const vs = new Set<string>();
    for (const rt of this.byGvr.values()) if (rt.group === group) vs.add(rt.version);
    return [...vs].sort(compareKubeVersions);
  }

  inGroupVersion(group: string, version: string): ResourceType[] {
    return [...this.byGvr.values()].filter((rt) => rt.group === group && rt.version === version);
  }

  hasGroupVersion(gv: string): boolean {
    for (const rt of this.byGvr.values()) if (groupVersion(rt) === gv) return true;
    return false;
  }
}

/**
 * Orders versions like Kubernetes' version priority: GA > beta > alpha, higher numbers
 * first, non-Kubernetes-style versions last alphabetically.
 */
export function compareKubeVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (pa && pb) {
    if (pa.stage !== pb.stage) return pb.stage - pa.stage;
    if (pa.major !== pb.major) return pb.major - pa.major;
    return pb.minor - pa.minor;
  }
  if (pa) return -1;
  if (pb) return 1;
  return compareStrings(a, b);
}

function parseVersion(v: string): { major: number; stage: number; minor: number } | undefined {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return undefined;
  const stage = m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2;
  return { major: Number(m[1]), stage, minor: m[3] ? Number(m[3]) : 0 };
}

/**
 * Whether a group is one of Kubernetes' own (typed in kube-apiserver) rather than a
 * custom resource group: the core group, unqualified groups (apps, batch) and *.k8s.io.
 */
export function isBuiltinGroup(group: string): boolean {
  return !group.includes('.') || group.endsWith('.k8s.io');
}
