/**
 * CustomResourceDefinition lifecycle (apiextensions-apiserver's controllers): serving a
 * CRD's resources as soon as it is stored, reporting NamesAccepted/Established, and on
 * deletion removing every custom object before the CRD itself goes.
 */
import { holdClock } from '../../../lib/clock.ts';
import type { Api } from '../api.ts';
import {
  type CustomResourceDefinition,
  resourceTypesFromCRD,
  storedVersionsAfterWrite,
} from '../crd/index.ts';
import { ApiError } from '../errors.ts';
import { nowRfc3339 } from '../meta.ts';
import { storageKey } from '../registry.ts';
import type { KubeObject, ResourceType } from '../types.ts';

export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';
const SYSTEM_USER = 'system:apiextensions-controller';

interface CrdSpec {
  group: string;
  names: {
    plural: string;
    singular?: string;
    kind: string;
    listKind?: string;
    shortNames?: string[];
    categories?: string[];
  };
}

export class CrdLifecycle {
  private readonly api: Api;
  /** storage key -> names served, to unregister on deletion or rename. */
  private readonly served = new Map<string, { group: string; resource: string }>();
  private readonly retry = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(api: Api) {
    this.api = api;
  }

  onWrite(rt: ResourceType, type: string, crd: KubeObject): void {
    if (rt.group !== 'apiextensions.k8s.io' || rt.resource !== 'customresourcedefinitions') return;
    const name = crd.metadata.name!;
    if (type === 'DELETED') {
      this.unserve(name);
      return;
    }
    this.serve(crd);
    // Work due now holds a virtual clock until done: a CRD is Established at once.
    if (type === 'ADDED') this.soon(() => this.accept(name));
    if (crd.metadata.deletionTimestamp) this.soon(() => this.cleanup(name));
  }

  private soon(work: () => Promise<void>): void {
    const release = holdClock(this.api.clock, 'apiserver CRD lifecycle');
    setImmediate(() => void work().finally(release));
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private serve(crd: KubeObject): void {
    const spec = crd.spec as CrdSpec;
    const prev = this.served.get(crd.metadata.name!);
    if (prev) this.api.registry.remove(prev.group, prev.resource);
    for (const t of resourceTypesFromCRD(crd)) this.api.registry.add(t);
    this.served.set(crd.metadata.name!, { group: spec.group, resource: spec.names.plural });
  }

  private unserve(name: string): void {
    const prev = this.served.get(name);
    if (!prev) return;
    this.api.registry.remove(prev.group, prev.resource);
    this.api.store.dropTable(storageKey(prev));
    this.served.delete(name);
  }

  private crdType(): ResourceType {
    return this.api.registry.get('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
  }

  /** Adds the cleanup finalizer and reports the names accepted and the CRD established. */
  private async accept(name: string): Promise<void> {
    const rt = this.crdType();
    try {
      await this.api.updateWith(
        rt,
        '',
        name,
        { user: SYSTEM_USER },
        (cur) => {
          const f = cur.metadata.finalizers ?? [];
          if (!f.includes(CLEANUP_FINALIZER) && !cur.metadata.deletionTimestamp)
            cur.metadata.finalizers = [...f, CLEANUP_FINALIZER];
          return cur;
        },
        false,
      );
      await this.api.updateWith(
        rt,
        '',
        name,
        { user: SYSTEM_USER, subresource: 'status' },
        (cur) => {
          const spec = cur.spec as CrdSpec;
          const now = nowRfc3339(new Date(this.api.clock.now()));
          cur.status = {
            conditions: [
              {
                type: 'NamesAccepted',
                status: 'True',
                lastTransitionTime: now,
                reason: 'NoConflicts',
                message: 'no conflicts found',
              },
              {
                type: 'Established',
                status: 'True',
                lastTransitionTime: now,
                reason: 'InitialNamesAccepted',
                message: 'the initial names have been accepted',
              },
            ],
            acceptedNames: {
              plural: spec.names.plural,
              singular: spec.names.singular ?? spec.names.kind.toLowerCase(),
              kind: spec.names.kind,
              listKind: spec.names.listKind ?? `${spec.names.kind}List`,
              ...(spec.names.shortNames ? { shortNames: spec.names.shortNames } : {}),
              ...(spec.names.categories ? { categories: spec.names.categories } : {}),
            },
            // Every version ever used for storage stays listed until a migration removes it.
            storedVersions: storedVersionsAfterWrite(
              cur as unknown as CustomResourceDefinition,
              cur as unknown as CustomResourceDefinition,
            ),
          };
          return cur;
        },
        false,
      );
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }

  /** Deletes every custom object; once none is left, releases the CRD's finalizer. */
  private async cleanup(name: string): Promise<void> {
    const crd = this.api.tryGet(this.crdType(), '', name);
    if (!crd?.metadata.deletionTimestamp) return;
    const spec = crd.spec as CrdSpec;
    const versions = this.api.registry.versions(spec.group);
    const rt = versions.map((v) => this.api.registry.get(spec.group, v, spec.names.plural)).find(Boolean);
    let left = 0;
    if (rt) {
      for (const rec of this.api.list(rt, undefined).records) {
        left++;
        try {
          await this.api.delete(rt, rec.namespace, rec.name, { user: SYSTEM_USER });
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 404)) throw err;
        }
      }
      left = this.api.list(rt, undefined).records.length;
    }
    if (left > 0) {
      this.retry.add(name);
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        const names = [...this.retry];
        this.retry.clear();
        for (const n of names) void this.cleanup(n);
      }, 200);
      return;
    }
    await this.api.updateWith(
      this.crdType(),
      '',
      name,
      { user: SYSTEM_USER },
      (cur) => {
        cur.metadata.finalizers = (cur.metadata.finalizers ?? []).filter((f) => f !== CLEANUP_FINALIZER);
        return cur;
      },
      false,
    );
  }
}
