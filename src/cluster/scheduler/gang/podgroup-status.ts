/**
 * scheduler-plugins' podgroup controller for `scheduling.x-k8s.io/v1alpha1` PodGroups, run in
 * the embedded cluster's data plane under `--gang-scheduling` (upstream runs it in its own
 * controller manager beside the scheduler). Semantics of pkg/controllers/podgroup_controller.go
 * of kubernetes-sigs/scheduler-plugins: a new group is Pending; Scheduling once it has
 * `minMember` pods; Running once `minMember` run or succeeded; Failed when a member failed and
 * failed + running + succeeded reach `minMember`; Finished when `minMember` succeeded; back to
 * Pending when it has fewer pods than `minMember`. `running`, `succeeded` and `failed` count
 * the members by phase; `occupiedBy` names the owners of the first member.
 *
 * Differences (docs/embedded-cluster.md): members are the pods in the PodGroup's namespace
 * (upstream lists the label across namespaces), and `scheduleStartTime`, which upstream reads
 * but no longer writes, is set when the group first turns Scheduling.
 */
import {
  X_POD_GROUP_LABEL,
  type XPodGroup,
  type XPodGroupStatus,
} from '../../../apis/scheduling.x-k8s.io/v1alpha1.ts';
import type { Clock, TimerHandle } from '../../../lib/clock.ts';
import type { KubeObject } from '../../apiserver/types.ts';
import { type ClusterClient, GVR, type Gvr, isNotFound } from '../../client.ts';
import { type LogFn, Loop } from '../../workloads/loop.ts';

export const X_PODGROUPS: Gvr = { group: 'scheduling.x-k8s.io', version: 'v1alpha1', resource: 'podgroups' };

/** What the controller reads of a member. */
export interface MemberFacts {
  phase: string;
  /** `namespace/owner` of each owner reference. */
  owners: string[];
}

/** Upstream stops reconciling a group still unscheduled this long after its creation. */
const GIVE_UP_MS = 48 * 3600 * 1000;

/** Reconcile's status change, or undefined when the status stays as it is. */
export function nextXStatus(
  pg: XPodGroup,
  members: readonly MemberFacts[],
  now: Date,
): XPodGroupStatus | undefined {
  const cur = pg.status ?? {};
  const phase = cur.phase ?? '';
  if (phase === 'Finished' || phase === 'Failed') return undefined;
  const created = Date.parse(pg.metadata.creationTimestamp ?? '');
  const started = Date.parse(cur.scheduleStartTime ?? '');
  if ((phase === 'Scheduling' || phase === 'Pending') && !cur.running && started - created > GIVE_UP_MS) {
    return undefined;
  }
  const minMember = pg.spec?.minMember ?? 0;
  const next: XPodGroupStatus = { ...cur };
  if (phase === '') {
    next.phase = 'Pending';
  } else if (phase === 'Pending') {
    if (members.length >= minMember) {
      next.phase = 'Scheduling';
      next.scheduleStartTime ??= now.toISOString();
      const owners = [...(members[0]?.owners ?? [])].sort();
      if (owners.length > 0) next.occupiedBy = owners.join(',');
    }
  } else {
    let running = 0;
    let succeeded = 0;
    let failed = 0;
    for (const m of members) {
      if (m.phase === 'Running') running++;
      else if (m.phase === 'Succeeded') succeeded++;
      else if (m.phase === 'Failed') failed++;
    }
    next.running = running;
    next.succeeded = succeeded;
    next.failed = failed;
    if (members.length < minMember) next.phase = 'Pending';
    else {
      next.phase = succeeded + running >= minMember ? 'Running' : 'Scheduling';
      if (failed !== 0 && failed + running + succeeded >= minMember) next.phase = 'Failed';
      if (succeeded >= minMember) next.phase = 'Finished';
    }
  }
  const same = (Object.keys(next) as (keyof XPodGroupStatus)[]).every((k) => next[k] === cur[k]);
  return same ? undefined : next;
}

export interface XPodGroupController {
  stop(): Promise<void>;
}

/**
 * Starts the controller once the PodGroup API is served (the CRD may still be establishing):
 * watches the PodGroups and every pod, indexes members by their label, and writes each
 * group's status through the status subresource.
 */
export function startXPodGroupController(
  client: ClusterClient,
  opts: { clock: Clock; log?: LogFn },
): XPodGroupController {
  const log = opts.log ?? (() => {});
  /** `namespace/group` → member uid → facts. */
  const members = new Map<string, Map<string, MemberFacts>>();
  const groupOf = new Map<string, string>();
  const stops: (() => void)[] = [];
  let stopped = false;
  let retry: TimerHandle | undefined;
  const loop = new Loop({
    name: 'podgroup-x-k8s',
    clock: opts.clock,
    log,
    sync: async (key) => {
      const slash = key.indexOf('/');
      const ns = key.slice(0, slash);
      const name = key.slice(slash + 1);
      const pg = client.get<XPodGroup>(X_PODGROUPS, ns, name);
      if (!pg) return;
      const facts = [...(members.get(key)?.values() ?? [])];
      if (!nextXStatus(pg, facts, new Date(opts.clock.now()))) return;
      try {
        await client.mutate<XPodGroup>(
          X_PODGROUPS,
          ns,
          name,
          (cur) => {
            const status = nextXStatus(cur, facts, new Date(opts.clock.now()));
            if (status) cur.status = status;
          },
          'status',
        );
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
  });

  const onPod = (type: string, pod: KubeObject) => {
    const uid = pod.metadata.uid ?? '';
    const group = pod.metadata.labels?.[X_POD_GROUP_LABEL];
    const ns = pod.metadata.namespace ?? '';
    const key = type !== 'DELETED' && group ? `${ns}/${group}` : undefined;
    const before = groupOf.get(uid);
    if (before !== undefined && before !== key) {
      members.get(before)?.delete(uid);
      if (members.get(before)?.size === 0) members.delete(before);
      groupOf.delete(uid);
      loop.enqueue(before);
    }
    if (!key) return;
    let m = members.get(key);
    if (!m) {
      m = new Map();
      members.set(key, m);
    }
    m.set(uid, {
      phase: (pod.status as { phase?: string } | undefined)?.phase ?? 'Pending',
      owners: (pod.metadata.ownerReferences ?? []).map((r) => `${ns}/${r.name}`),
    });
    groupOf.set(uid, key);
    loop.enqueue(key);
  };

  const start = () => {
    retry = undefined;
    if (stopped) return;
    if (!client.served(X_PODGROUPS)) {
      retry = opts.clock.setTimer(start, 100);
      return;
    }
    stops.push(client.watch(GVR.pods, onPod, { shared: true }));
    stops.push(
      client.watch(
        X_PODGROUPS,
        (type, pg) => {
          if (type !== 'DELETED') loop.enqueue(`${pg.metadata.namespace}/${pg.metadata.name}`);
        },
        { shared: true },
      ),
    );
    loop.start();
  };
  start();

  return {
    async stop() {
      stopped = true;
      retry?.cancel();
      for (const s of stops) s();
      await loop.stop();
    },
  };
}
