/**
 * The embedded cluster's kube-controller-manager: the built-in workload controllers (Job,
 * TTL-after-finished, ReplicaSet, Deployment, StatefulSet, DaemonSet) and the garbage
 * collector, all talking to the API server through one in-process `ClusterClient`, each as
 * its own service account (as kube-controller-manager does with
 * --use-service-account-credentials) and recording core/v1 Events under its own component.
 */

import { type Clock, realClock } from '../../lib/clock.ts';
import type { ClusterClient } from '../client.ts';
import type { ControllerContext, RunningController } from './context.ts';
import { CronJobController } from './cronjob.ts';
import { DaemonSetController } from './daemonset.ts';
import { DeploymentController } from './deployment.ts';
import { DisruptionController } from './disruption.ts';
import { EndpointsController } from './endpoints.ts';
import { EndpointSliceController } from './endpointslice.ts';
import { EphemeralVolumeController } from './ephemeral-volumes.ts';
import { EventRecorder } from './events.ts';
import { GarbageCollector } from './gc.ts';
import { InformerFactory } from './informer.ts';
import { JobController } from './job.ts';
import type { LogFn } from './loop.ts';
import { REPLICATION_CONTROLLER, ReplicaSetController } from './replicaset.ts';
import { StatefulSetController } from './statefulset.ts';
import { TtlAfterFinishedController } from './ttl.ts';
import { VolumeController } from './volumes.ts';

export type WorkloadControllerName =
  | 'job'
  | 'ttl-after-finished'
  | 'replicaset'
  | 'replicationcontroller'
  | 'deployment'
  | 'statefulset'
  | 'daemonset'
  | 'disruption'
  | 'cronjob'
  | 'persistentvolume-binder'
  | 'endpointslice'
  | 'endpoint'
  | 'ephemeral-volume'
  | 'garbagecollector';

export const ALL_WORKLOAD_CONTROLLERS: readonly WorkloadControllerName[] = [
  'job',
  'ttl-after-finished',
  'replicaset',
  'replicationcontroller',
  'deployment',
  'statefulset',
  'daemonset',
  'disruption',
  'cronjob',
  'persistentvolume-binder',
  'endpointslice',
  'endpoint',
  'ephemeral-volume',
  'garbagecollector',
];

export interface WorkloadControllersOptions {
  /** Which controllers to run (default: all). */
  controllers?: readonly WorkloadControllerName[];
  /** Keys each controller syncs concurrently (default 4). */
  workers?: number;
  /** Delay batching the syncs that pod events trigger (default 50 ms). */
  batchMs?: number;
  /** Job pod-failure backoff: base * 2^(failures-1) up to max (default 10 s and 6 min, as upstream). */
  jobBackoff?: { baseMs?: number; maxMs?: number };
  log?: LogFn;
  /** Default the real clock. */
  clock?: Clock;
  /** Simulated seconds per real second for schedules (CronJobs), as `--time-scale`. */
  timeScale?: number;
}

export interface WorkloadControllers {
  stop(): Promise<void>;
}

/** Service account and Event source component of each controller, as on a real cluster. */
const IDENTITY: Record<WorkloadControllerName, { sa: string; component: string }> = {
  job: { sa: 'job-controller', component: 'job-controller' },
  'ttl-after-finished': { sa: 'ttl-after-finished-controller', component: 'ttl-after-finished-controller' },
  replicaset: { sa: 'replicaset-controller', component: 'replicaset-controller' },
  replicationcontroller: { sa: 'replication-controller', component: 'replication-controller' },
  deployment: { sa: 'deployment-controller', component: 'deployment-controller' },
  statefulset: { sa: 'statefulset-controller', component: 'statefulset-controller' },
  daemonset: { sa: 'daemon-set-controller', component: 'daemonset-controller' },
  disruption: { sa: 'disruption-controller', component: 'controllermanager' },
  cronjob: { sa: 'cronjob-controller', component: 'cronjob-controller' },
  'persistentvolume-binder': { sa: 'persistent-volume-binder', component: 'persistentvolume-controller' },
  endpointslice: { sa: 'endpointslice-controller', component: 'endpoint-slice-controller' },
  endpoint: { sa: 'endpoint-controller', component: 'endpoint-controller' },
  'ephemeral-volume': { sa: 'ephemeral-volume-controller', component: 'ephemeral_volume' },
  garbagecollector: { sa: 'generic-garbage-collector', component: 'garbage-collector-controller' },
};

export function startWorkloadControllers(
  client: ClusterClient,
  opts: WorkloadControllersOptions = {},
): WorkloadControllers {
  const log: LogFn = opts.log ?? (() => {});
  const clock = opts.clock ?? realClock;
  const enabled = new Set(opts.controllers ?? ALL_WORKLOAD_CONTROLLERS);
  const informers = new InformerFactory(client, log);
  const workers = opts.workers ?? 4;
  const recorders: EventRecorder[] = [];
  const running: RunningController[] = [];
  const ctxFor = (name: WorkloadControllerName): ControllerContext => {
    const id = IDENTITY[name];
    const c = client.as(`system:serviceaccount:kube-system:${id.sa}`);
    const recorder = new EventRecorder(c, id.component, log, clock);
    recorders.push(recorder);
    return { client: c, informers, recorder, log, workers, batchMs: opts.batchMs ?? 50, clock };
  };
  if (enabled.has('job')) {
    running.push(
      new JobController(ctxFor('job'), {
        backoffBaseMs: opts.jobBackoff?.baseMs,
        backoffMaxMs: opts.jobBackoff?.maxMs,
      }),
    );
  }
  if (enabled.has('ttl-after-finished'))
    running.push(new TtlAfterFinishedController(ctxFor('ttl-after-finished')));
  if (enabled.has('replicaset')) running.push(new ReplicaSetController(ctxFor('replicaset')));
  if (enabled.has('replicationcontroller'))
    running.push(new ReplicaSetController(ctxFor('replicationcontroller'), REPLICATION_CONTROLLER));
  if (enabled.has('deployment')) running.push(new DeploymentController(ctxFor('deployment')));
  if (enabled.has('statefulset')) running.push(new StatefulSetController(ctxFor('statefulset')));
  if (enabled.has('daemonset')) running.push(new DaemonSetController(ctxFor('daemonset')));
  if (enabled.has('disruption')) running.push(new DisruptionController(ctxFor('disruption')));
  if (enabled.has('endpointslice')) running.push(new EndpointSliceController(ctxFor('endpointslice')));
  if (enabled.has('endpoint')) running.push(new EndpointsController(ctxFor('endpoint')));
  if (enabled.has('ephemeral-volume'))
    running.push(new EphemeralVolumeController(ctxFor('ephemeral-volume')));
  if (enabled.has('persistentvolume-binder'))
    running.push(new VolumeController(ctxFor('persistentvolume-binder')));
  if (enabled.has('cronjob'))
    running.push(new CronJobController(ctxFor('cronjob'), { timeScale: opts.timeScale }));
  if (enabled.has('garbagecollector')) {
    // Created last so it shares the informers the controllers asked for instead of opening its own.
    const gcClient = client.as(`system:serviceaccount:kube-system:${IDENTITY.garbagecollector.sa}`);
    running.push(new GarbageCollector(gcClient, informers, { workers, log, clock }));
  }
  // Handlers are all subscribed: start the watches (each first replays existing objects), then the workers.
  informers.startAll();
  for (const r of running) r.start();
  let stopped: Promise<void> | undefined;
  return {
    stop: () => {
      stopped ??= (async () => {
        await Promise.all(running.map((r) => r.stop()));
        informers.stopAll();
        await Promise.all(recorders.map((r) => r.stop()));
      })();
      return stopped;
    },
  };
}

export type { LogFn } from './loop.ts';
