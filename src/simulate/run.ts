/**
 * Runs one policy of a scenario against a cluster the caller started (the CLI composes the
 * embedded cluster and troupe's controllers; this file knows neither): creates the setup
 * objects, injects each gang's objects through the API at its arrival time, feeds the watch
 * streams to a Collector, and stops at the scenario's end, or earlier once every gang is done
 * and nothing can change any more. Every wait is on the cluster's Clock, so the same code
 * runs on wall-clock time, a scaled clock or a virtual one.
 */

import type { Clock } from '../lib/clock.ts';
import { Collector, type JobLike, type NodeLike, type PodLike } from './collector.ts';
import { gangObjects, SIM_NAMESPACE, SIM_RESOURCES, type SimObject, setupObjects } from './objects.ts';
import { type PolicyResult, policyResult } from './report.ts';
import type { Policy, Scenario } from './scenario.ts';

export interface SimCluster {
  clock: Clock;
  create(o: SimObject): Promise<void>;
  delete(gvr: SimObject['gvr'], namespace: string, name: string): Promise<void>;
  /** Watches pods, nodes or Jobs (every namespace), with the current objects first as ADDED. */
  watch(resource: 'pods' | 'nodes' | 'jobs', handler: (type: string, obj: unknown) => void): () => void;
  /** Total allocatable per resource over the cluster's nodes (cpu in cores, memory in bytes). */
  capacity(): Record<string, number>;
  /**
   * Lets time pass until clock time `at`, or until `done` aborts: a sleep on a wall clock, a
   * drive of a virtual clock (which moves only when told).
   */
  runUntil(at: number, done: AbortSignal): Promise<void>;
}

export class SimulationError extends Error {}

export async function runPolicy(
  scenario: Scenario,
  policy: Policy,
  cluster: SimCluster,
): Promise<PolicyResult> {
  const { clock } = cluster;
  const start = clock.now();
  const t = () => clock.now() - start;
  const c = new Collector(scenario.gangs);
  const done = new AbortController();
  const failures: Error[] = [];
  const timers: { cancel(): void }[] = [];
  let arrived = 0;
  let stopped = scenario.endMs;
  // A gang once done stays done (its finish, or for one without an end its all-running, is
  // recorded once): a cursor over the gangs makes checking after every event cheap.
  const records = [...c.gangs.values()];
  let open = 0;
  const checkDone = () => {
    if (arrived < scenario.gangs.length) return;
    for (; open < records.length; open++) {
      const r = records[open]!;
      const endless = r.gang.durationMs === undefined && !r.gang.fail;
      if (endless ? r.allRunningMs === undefined : r.finishedMs === undefined) return;
    }
    done.abort();
  };
  const stops = [
    cluster.watch('nodes', (type, obj) => c.node(type, obj as NodeLike, t())),
    cluster.watch('pods', (type, obj) => {
      c.pod(type, obj as PodLike, t());
      checkDone();
    }),
    cluster.watch('jobs', (type, obj) => {
      c.job(type, obj as JobLike, t());
      checkDone();
    }),
  ];
  const fail = (err: unknown) => {
    failures.push(err instanceof Error ? err : new Error(String(err)));
    done.abort();
  };
  try {
    for (const o of setupObjects(scenario, cluster.capacity())) await cluster.create(o);
    c.onAllRunning = (name) => {
      const g = c.gangs.get(name)?.gang;
      // A StatefulSet's members run until deleted: the harness ends the gang after its duration.
      if (g?.kind === 'StatefulSet' && g.durationMs !== undefined && !g.fail) {
        timers.push(
          clock.setTimer(() => {
            cluster
              .delete(SIM_RESOURCES.statefulsets, SIM_NAMESPACE, g.name)
              .then(() => {
                c.ended(g.name, t());
                checkDone();
              })
              .catch((err: unknown) => fail(err));
          }, g.durationMs),
        );
      }
      checkDone();
    };
    for (const g of scenario.gangs) {
      timers.push(
        clock.setTimer(
          () => {
            c.arrived(g.name, t());
            void (async () => {
              for (const o of gangObjects(g, policy)) await cluster.create(o);
            })()
              .then(() => {
                arrived++;
                checkDone();
              })
              .catch((err: unknown) =>
                fail(
                  new SimulationError(
                    `policy ${policy.name}: creating gang ${g.name}: ${err instanceof Error ? err.message : String(err)}`,
                  ),
                ),
              );
          },
          Math.max(0, g.atMs - t()),
        ),
      );
    }
    await cluster.runUntil(start + scenario.endMs, done.signal);
    if (failures.length > 0) throw failures[0];
    stopped = Math.min(t(), scenario.endMs);
    c.finish(stopped);
  } finally {
    for (const s of stops) s();
    for (const h of timers) h.cancel();
  }
  return policyResult(scenario, policy, c, stopped);
}
