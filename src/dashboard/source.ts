/**
 * Keeps the dashboard's inputs current from the manager's shared Cache: one informer per
 * kind shown (shared with the controllers that watch the same kind), and per custom kind
 * an informer on its CRD alone (field selector on the name), so a kind appears when its
 * CRD is installed and disappears when it is removed.
 *
 * An informer is only created for a kind the manager may list and watch (asked with a
 * SelfSubjectAccessReview): an informer that can never sync would hold the manager's
 * /readyz down, and a kind the dashboard cannot read is better hidden than broken.
 */

import { backoffDelay } from '../lib/backoff.ts';
import {
  type Cache,
  type HandlerRegistration,
  type Informer,
  type KubeObject,
  type Logger,
  type RestClient,
  type RestMapper,
  sleep,
} from '../runtime/index.ts';
import { ALL_KINDS, CRD_KIND, POD_SEQUENCE, SEQUENCE_EVENT, type WatchedKind } from './kinds.ts';
import { kindId, type Observed } from './snapshot.ts';
import type { KindStatus } from './view-model.ts';

export interface SourceOptions {
  cache: Cache;
  rest: RestClient;
  mapper: RestMapper;
  log: Logger;
  /** Called (synchronously, often) whenever something shown may have changed. */
  onChange(): void;
  /** Kinds of the capabilities' tables, watched besides ALL_KINDS. */
  extraKinds?: readonly WatchedKind[];
}

interface Crd extends KubeObject {
  spec?: { versions?: { name: string; served?: boolean }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

interface Tracked {
  kind: WatchedKind;
  status: KindStatus['status'];
  informer?: Informer;
  handler?: HandlerRegistration;
  /** Bumped on every (de)activation, so a slow activation that was overtaken gives up. */
  generation: number;
}

export class DashboardSource {
  private readonly opts: SourceOptions;
  private readonly tracked = new Map<string, Tracked>();
  private readonly crdHandlers: HandlerRegistration[] = [];
  private stopped = false;
  private readonly kinds: readonly WatchedKind[];

  constructor(opts: SourceOptions) {
    this.opts = opts;
    const extra = (opts.extraKinds ?? []).filter((k) => !ALL_KINDS.some((a) => kindId(a) === kindId(k)));
    this.kinds = [...ALL_KINDS, ...extra];
    for (const kind of this.kinds) {
      if (this.tracked.has(kindId(kind))) continue;
      this.tracked.set(kindId(kind), {
        kind,
        status: kind.crd ? 'not-installed' : 'starting',
        generation: 0,
      });
    }
  }

  get namespace(): string | undefined {
    return this.opts.cache.namespace;
  }

  async start(): Promise<void> {
    const builtins = this.kinds.filter((k) => !k.crd && k !== SEQUENCE_EVENT);
    await Promise.all(builtins.map((k) => this.activate(k)));
    const custom = this.kinds.filter((k) => k.crd);
    if (
      await this.permitted({
        group: 'apiextensions.k8s.io',
        resource: 'customresourcedefinitions',
        namespaced: false,
      })
    ) {
      for (const kind of custom) await this.followCrd(kind);
    } else {
      // Without access to CRDs, discovery tells once what is installed.
      this.opts.log.info(
        'dashboard: cannot watch CustomResourceDefinitions; custom kinds are found once, at start',
      );
      await Promise.all(
        custom.map(async (kind) => {
          const served = await this.opts.mapper.resourceFor(kind).then(
            () => true,
            () => false,
          );
          if (served) await this.activate(kind);
        }),
      );
    }
  }

  stop(): void {
    this.stopped = true;
    for (const h of this.crdHandlers) h.remove();
    for (const t of this.tracked.values()) t.handler?.remove();
  }

  /** Kinds and the cached objects of those shown; cheap (objects are not copied). */
  observed(): Observed {
    const objects = new Map<string, readonly KubeObject[]>();
    const kinds: KindStatus[] = [];
    for (const t of this.tracked.values()) {
      if (t.kind === SEQUENCE_EVENT) continue;
      kinds.push({ kind: t.kind.kind, apiVersion: t.kind.apiVersion, status: t.status });
    }
    for (const [id, t] of this.tracked) {
      if (t.status === 'shown' && t.informer) objects.set(id, t.informer.list());
    }
    const out: Observed = { kinds, objects };
    if (this.namespace) out.namespace = this.namespace;
    return out;
  }

  private async followCrd(kind: WatchedKind): Promise<void> {
    const informer = await this.opts.cache.informerFor<Crd>(CRD_KIND, {
      fieldSelector: `metadata.name=${kind.crd}`,
    });
    const version = kind.apiVersion.split('/')[1];
    const ready = (crd: Crd) =>
      crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true &&
      crd.spec?.versions?.some((v) => v.name === version && v.served !== false) === true;
    const sync = (crd: Crd | undefined) => {
      const t = this.tracked.get(kindId(kind))!;
      const want = crd !== undefined && ready(crd);
      if (want && t.status === 'not-installed') {
        void this.activate(kind);
        if (kind === POD_SEQUENCE) void this.activate(SEQUENCE_EVENT);
      } else if (!want && t.status !== 'not-installed') {
        this.deactivate(kind);
        if (kind === POD_SEQUENCE) this.deactivate(SEQUENCE_EVENT);
      }
    };
    this.crdHandlers.push(
      informer.addHandler({
        add: (crd) => sync(crd),
        update: (_old, crd) => sync(crd),
        delete: () => sync(undefined),
      }),
    );
  }

  private deactivate(kind: WatchedKind): void {
    const t = this.tracked.get(kindId(kind))!;
    t.generation++;
    t.handler?.remove();
    t.handler = undefined;
    t.informer = undefined;
    t.status = 'not-installed';
    this.opts.onChange();
  }

  private async activate(kind: WatchedKind): Promise<void> {
    const t = this.tracked.get(kindId(kind))!;
    const generation = ++t.generation;
    t.status = 'starting';
    this.opts.onChange();
    const current = () => !this.stopped && t.generation === generation;
    if (kind.crd) {
      // Discovery can trail the CRD's Established condition by a moment.
      for (let attempt = 0; ; attempt++) {
        try {
          await this.opts.mapper.resourceFor(kind);
          break;
        } catch (err) {
          if (!current()) return;
          if (attempt >= 20) {
            this.opts.log.warn({ err, kind: kind.kind }, 'dashboard: kind is not served');
            t.status = 'not-installed';
            this.opts.onChange();
            return;
          }
          await sleep(backoffDelay(attempt, 100, 2_000));
        }
      }
    }
    if (!(await this.permitted(kind))) {
      if (!current()) return;
      this.opts.log.info({ kind: kind.kind }, 'dashboard: not allowed to list and watch; hidden');
      t.status = 'forbidden';
      this.opts.onChange();
      return;
    }
    if (!current()) return;
    const informer = await this.opts.cache.informerFor(
      kind,
      kind.fieldSelector ? { fieldSelector: kind.fieldSelector } : {},
    );
    if (!current()) return;
    t.informer = informer;
    const changed = () => this.opts.onChange();
    t.handler = informer.addHandler({ add: changed, update: changed, delete: changed });
    const synced = await informer.waitForSync();
    if (!current() || !synced) return;
    t.status = 'shown';
    this.opts.onChange();
  }

  /** Whether the manager may list and watch the resource (everywhere, or in its namespace). */
  private async permitted(kind: Pick<WatchedKind, 'group' | 'resource' | 'namespaced'>): Promise<boolean> {
    const ask = async (verb: string) => {
      const review = await this.opts.rest.request<{ status?: { allowed?: boolean } }>({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: {
            resourceAttributes: {
              verb,
              group: kind.group,
              resource: kind.resource,
              ...(kind.namespaced && this.namespace ? { namespace: this.namespace } : {}),
            },
          },
        },
      });
      return review.status?.allowed === true;
    };
    try {
      const [list, watch] = await Promise.all([ask('list'), ask('watch')]);
      return list && watch;
    } catch (err) {
      // A server without the review API: try, and let the informer's errors speak.
      this.opts.log.debug({ err }, 'dashboard: SelfSubjectAccessReview failed; assuming access');
      return true;
    }
  }
}
