/**
 * Prometheus metrics with controller-runtime's names and labels, so dashboards and alerts
 * written for Go controllers work unchanged, plus troupe's own (informers, REST client,
 * webhooks, events). One registry per manager: two managers in one process (tests) do
 * not collide.
 */

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { WorkQueueMetrics } from '../lib/workqueue.ts';
import type { InformerMetrics } from './informer.ts';
import type { RestMetrics } from './rest.ts';

/** What the queue gauges read at scrape time. */
export interface QueueProbe {
  unfinishedWorkSeconds(): number;
  longestRunningProcessorSeconds(): number;
}

// controller-runtime's reconcile time buckets.
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
// client-go's workqueue buckets: 10ns × 10^i, i < 12.
const QUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => 1e-8 * 10 ** i);

export interface RuntimeMetricsOptions {
  registry?: Registry;
  /** Process metrics (RSS, CPU, event loop lag). Default true. */
  processMetrics?: boolean;
}

export class RuntimeMetrics {
  readonly registry: Registry;

  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly terminalReconcileErrors: Counter<'controller'>;
  readonly reconcilePanics: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly maxConcurrentReconciles: Gauge<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;

  readonly queueDepth: Gauge<'name' | 'controller' | 'priority'>;
  readonly queueAdds: Counter<'name' | 'controller'>;
  readonly queueLatency: Histogram<'name' | 'controller'>;
  readonly queueWorkDuration: Histogram<'name' | 'controller'>;
  readonly queueRetries: Counter<'name' | 'controller'>;
  readonly queueUnfinished: Gauge<'name' | 'controller'>;
  readonly queueLongest: Gauge<'name' | 'controller'>;

  readonly leaderStatus: Gauge<'name'>;

  readonly restRequests: Counter<'code' | 'method' | 'host'>;
  readonly restLatency: Histogram<'verb' | 'host'>;

  readonly informerRelists: Counter<'kind'>;
  readonly informerWatchRestarts: Counter<'kind' | 'reason'>;
  readonly informerObjects: Gauge<'kind'>;

  readonly webhookRequests: Counter<'webhook' | 'code'>;
  readonly webhookLatency: Histogram<'webhook'>;
  readonly webhookInFlight: Gauge<'webhook'>;

  readonly eventsRecorded: Counter<'type' | 'outcome'>;

  private readonly queues = new Map<string, QueueProbe>();
  private readonly ownsRegistry: boolean;

  constructor(opts: RuntimeMetricsOptions = {}) {
    this.registry = opts.registry ?? new Registry();
    this.ownsRegistry = opts.registry === undefined;
    const registers = [this.registry];
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    const queues = this.queues;

    this.reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.terminalReconcileErrors = new Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.reconcilePanics = new Counter({
      name: 'controller_runtime_reconcile_panics_total',
      help: 'Total number of reconciliation panics per controller',
      labelNames: ['controller'],
      registers,
    });
    this.reconcileTime = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.maxConcurrentReconciles = new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    });
    this.activeWorkers = new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    });

    this.queueDepth = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue by workqueue and priority',
      labelNames: ['name', 'controller', 'priority'],
      registers,
    });
    this.queueAdds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['name', 'controller'],
      registers,
    });
    this.queueLatency = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: ['name', 'controller'],
      buckets: QUEUE_BUCKETS,
      registers,
    });
    this.queueWorkDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames: ['name', 'controller'],
      buckets: QUEUE_BUCKETS,
      registers,
    });
    this.queueRetries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['name', 'controller'],
      registers,
    });
    this.queueUnfinished = new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help:
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
        'Large values indicate stuck threads.',
      labelNames: ['name', 'controller'],
      registers,
      collect() {
        for (const [name, q] of queues) this.set({ name, controller: name }, q.unfinishedWorkSeconds());
      },
    });
    this.queueLongest = new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: ['name', 'controller'],
      registers,
      collect() {
        for (const [name, q] of queues)
          this.set({ name, controller: name }, q.longestRunningProcessorSeconds());
      },
    });

    this.leaderStatus = new Gauge({
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
      labelNames: ['name'],
      registers,
    });

    this.restRequests = new Counter({
      name: 'rest_client_requests_total',
      help: 'Number of HTTP requests, partitioned by status code, method, and host.',
      labelNames: ['code', 'method', 'host'],
      registers,
    });
    this.restLatency = new Histogram({
      name: 'rest_client_request_duration_seconds',
      help: 'Request latency in seconds. Broken down by verb and host.',
      labelNames: ['verb', 'host'],
      buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
      registers,
    });

    this.informerRelists = new Counter({
      name: 'troupe_informer_lists_total',
      help: 'Full lists performed by informers (initial sync and relists after 410 Gone).',
      labelNames: ['kind'],
      registers,
    });
    this.informerWatchRestarts = new Counter({
      name: 'troupe_informer_watch_restarts_total',
      help: 'Watch connections re-established, by reason (closed, gone, error).',
      labelNames: ['kind', 'reason'],
      registers,
    });
    this.informerObjects = new Gauge({
      name: 'troupe_informer_objects',
      help: 'Objects held in an informer cache.',
      labelNames: ['kind'],
      registers,
    });

    this.webhookRequests = new Counter({
      name: 'controller_runtime_webhook_requests_total',
      help: 'Total number of admission requests by HTTP status code.',
      labelNames: ['webhook', 'code'],
      registers,
    });
    this.webhookLatency = new Histogram({
      name: 'controller_runtime_webhook_latency_seconds',
      help: 'Histogram of the latency of processing admission requests',
      labelNames: ['webhook'],
      registers,
    });
    this.webhookInFlight = new Gauge({
      name: 'controller_runtime_webhook_requests_in_flight',
      help: 'Current number of admission requests being served.',
      labelNames: ['webhook'],
      registers,
    });

    this.eventsRecorded = new Counter({
      name: 'troupe_events_total',
      help: 'Events emitted by recorders, by type and outcome (created, series, dropped).',
      labelNames: ['type', 'outcome'],
      registers,
    });
  }

  /** Zeroes a controller's series so they exist before the first reconcile, as controller-runtime does. */
  initController(controller: string, maxConcurrent: number): void {
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
      this.reconcileTotal.inc({ controller, result }, 0);
    }
    this.reconcileErrors.inc({ controller }, 0);
    this.terminalReconcileErrors.inc({ controller }, 0);
    this.reconcilePanics.inc({ controller }, 0);
    this.maxConcurrentReconciles.set({ controller }, maxConcurrent);
    this.activeWorkers.set({ controller }, 0);
  }

  /** Hooks for a work queue named after its controller. */
  queueHooks(name: string): WorkQueueMetrics {
    const labels = { name, controller: name };
    this.queueAdds.inc(labels, 0);
    this.queueRetries.inc(labels, 0);
    this.queueDepth.set({ ...labels, priority: '' }, 0);
    return {
      added: () => this.queueAdds.inc(labels),
      depth: (n) => this.queueDepth.set({ ...labels, priority: '' }, n),
      queueLatency: (s) => this.queueLatency.observe(labels, s),
      workDuration: (s) => this.queueWorkDuration.observe(labels, s),
      retried: () => this.queueRetries.inc(labels),
    };
  }

  /**
   * Lets go of what the metrics reach, once the manager stopped. prom-client's process
   * metrics watch garbage collection for the life of the process, and that observer holds
   * the registry: through the queue gauges it held every queue, its clock and all that
   * clock's timers reach (a whole simulated cluster per `troupe simulate` policy).
   */
  release(): void {
    this.queues.clear();
    if (this.ownsRegistry) this.registry.clear();
  }

  /** Makes the unfinished-work gauges read `queue` (replacing an earlier queue of that name). */
  trackQueue(name: string, queue: QueueProbe): void {
    this.queues.set(name, queue);
  }

  restHooks(host: string): RestMetrics {
    return {
      request: (method, code, seconds) => {
        this.restRequests.inc({ code: code === 0 ? '<error>' : String(code), method, host });
        this.restLatency.observe({ verb: method, host }, seconds);
      },
    };
  }

  informerHooks(): InformerMetrics {
    return {
      relisted: (kind) => this.informerRelists.inc({ kind }),
      watchRestarted: (kind, reason) => this.informerWatchRestarts.inc({ kind, reason }),
      objects: (kind, n) => this.informerObjects.set({ kind }, n),
    };
  }

  setLeader(name: string, leading: boolean): void {
    this.leaderStatus.set({ name }, leading ? 1 : 0);
  }
}
