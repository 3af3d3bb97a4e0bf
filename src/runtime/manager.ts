/**
 * The manager composes the runtime: one REST client and shared cache, the controllers,
 * leader election, the probe/metrics server and the webhook server.
 *
 * Lifecycle:
 * - `start()` serves probes and webhooks, starts every informer the controllers need
 *   (on every replica, so a standby's cache is warm), then either campaigns for the
 *   Lease or, without leader election, starts the controllers once caches are synced.
 * - Only the leader runs controllers, and their client is fenced by the elector: a
 *   write after leadership is lost throws instead of reaching the API server. When
 *   leadership is lost the controllers are stopped at once and the manager campaigns
 *   again; a new term starts from the cache, so no work depends on memory.
 * - `stop()` shuts down gracefully within `gracefulShutdownMs` (30 s): controllers drain
 *   in-flight reconciles, the Lease is released, events are flushed, servers close.
 */

import type { IncomingMessage } from 'node:http';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { type Clock, realClock } from '../lib/clock.ts';
import { Cache } from './cache.ts';
import { generateServingCert } from './certs.ts';
import { Client } from './client.ts';
import { type ControllerDefinition, ControllerRunner } from './controller.ts';
import { cacheView } from './custom-metrics.ts';
import { EventRecorder } from './events.ts';
import { type Check, HealthServer } from './health.ts';
import { defaultIdentity, LeaderElector } from './leader.ts';
import { type Logger, silentLogger } from './log.ts';
import { RuntimeMetrics } from './metrics.ts';
import { type Denial, MetricsAuth } from './metrics-auth.ts';
import { RestMapper } from './resources.ts';
import { RestClient, type RestClientOptions } from './rest.ts';
import { WebhookServer, type WebhookServerOptions } from './webhook.ts';

export interface LeaderElectionConfig {
  /** Lease name (default `troupe-controller-manager`). */
  name?: string;
  /** Lease namespace (default: the manager's namespace, else `default`). */
  namespace?: string;
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  releaseOnCancel?: boolean;
}

export interface ManagerOptions {
  kubeConfig: KubeConfig;
  /** Watch and reconcile only this namespace (cluster-scoped kinds are unaffected). */
  namespace?: string;
  /** Names of the controllers to run; undefined, empty or `*` runs all. */
  controllers?: string[];
  /** Lease-based leader election; off by default (as in controller-runtime). */
  leaderElection?: false | LeaderElectionConfig;
  /** Bind address of /healthz, /readyz (and /metrics unless metricsAddress differs); false disables. */
  healthProbeAddress?: string | false;
  /** Bind address of /metrics when it should be a separate server. */
  metricsAddress?: string | false;
  /**
   * Serve /metrics over HTTPS (a generated certificate) on its own server, for callers whose
   * token a TokenReview authenticates and a SubjectAccessReview allows (`get` on `/metrics`):
   * kubebuilder's `--metrics-secure`. Off by default in the library; `troupe run` turns it on.
   */
  metricsSecure?: boolean;
  /** Start an HTTPS admission webhook server. */
  webhook?: false | WebhookServerOptions;
  logger?: Logger;
  /** Bound of `stop()` (ms), default 30 s. */
  gracefulShutdownMs?: number;
  /** Informer resync period (ms); off by default. */
  resyncMs?: number;
  rest?: Omit<RestClientOptions, 'metrics'>;
  /** Include process metrics in /metrics (default true). */
  processMetrics?: boolean;
  /**
   * The time controllers decide by (ReconcileContext.clock, requeues, Event series, Lease
   * times); default the real clock. Network timeouts and the shutdown bound stay real.
   */
  clock?: Clock;
  /** Called when this manager becomes the leader (before its controllers start). */
  onStartedLeading?(): void;
  /** Called the moment leadership is lost (controllers are being stopped). */
  onStoppedLeading?(): void;
  /** Called after a lost term has ended (the manager then campaigns again). */
  onLeadershipLost?(): void;
}

const ALL = '*';

export class Manager {
  readonly log: Logger;
  readonly metrics: RuntimeMetrics;
  readonly rest: RestClient;
  readonly mapper: RestMapper;
  /** Unfenced client: for setup work outside reconciles. */
  readonly client: Client;
  /** The client controllers get: fenced by leader election when enabled. */
  readonly controllerClient: Client;
  readonly cache: Cache;
  readonly webhooks: WebhookServer | undefined;
  readonly elector: LeaderElector | undefined;
  readonly identity: string;
  /** The time controllers decide by (ManagerOptions.clock). */
  readonly clock: Clock;
  private readonly opts: ManagerOptions;
  private readonly runners = new Map<string, ControllerRunner>();
  private readonly recorders = new Map<string, EventRecorder>();
  private readonly servers: HealthServer[] = [];
  private health: HealthServer | undefined;
  private readonly extraHealthz: [string, Check][] = [];
  private readonly extraReadyz: [string, Check][] = [];
  private started = false;
  private cacheStarted = false;
  private stopping: Promise<void> | undefined;
  private controllersRunning = false;
  private controllersStarting: Promise<void> | undefined;
  private campaign: Promise<void> | undefined;
  private doneResolve!: () => void;
  /** Resolves when the manager has stopped. */
  readonly done: Promise<void>;

  constructor(opts: ManagerOptions) {
    this.opts = opts;
    this.clock = opts.clock ?? realClock;
    this.log = opts.logger ?? silentLogger();
    this.done = new Promise((r) => {
      this.doneResolve = r;
    });
    this.metrics = new RuntimeMetrics({ processMetrics: opts.processMetrics });
    const server = opts.kubeConfig.getCurrentCluster()?.server ?? '';
    this.rest = new RestClient(opts.kubeConfig, {
      ...opts.rest,
      metrics: this.metrics.restHooks(safeHost(server)),
      clock: this.clock,
    });
    this.mapper = new RestMapper(this.rest);
    this.client = new Client(this.rest, this.mapper);
    this.cache = new Cache(this.rest, this.mapper, {
      namespace: opts.namespace,
      resyncMs: opts.resyncMs,
      clock: this.clock,
      logger: this.log,
      metrics: this.metrics.informerHooks(),
    });
    const le = opts.leaderElection;
    this.identity = (le ? le.identity : undefined) || defaultIdentity();
    if (le) {
      this.elector = new LeaderElector(this.client, {
        name: le.name ?? 'troupe-controller-manager',
        namespace: le.namespace ?? opts.namespace ?? 'default',
        identity: this.identity,
        leaseDurationMs: le.leaseDurationMs,
        renewDeadlineMs: le.renewDeadlineMs,
        retryPeriodMs: le.retryPeriodMs,
        releaseOnCancel: le.releaseOnCancel,
        logger: this.log,
        clock: this.clock,
        onStartedLeading: () => {
          opts.onStartedLeading?.();
          this.controllersStarting = this.startControllers();
        },
        onStoppedLeading: () => {
          void this.stopControllers(0);
          opts.onStoppedLeading?.();
        },
        onNewLeader: (id) => {
          if (id !== this.identity) this.log.info({ leader: id }, 'observed a new leader');
        },
        onStatus: (leading) => this.metrics.setLeader(le.name ?? 'troupe-controller-manager', leading),
      });
      const elector = this.elector;
      this.controllerClient = this.client.withFence(() => elector.assertLeader());
    } else {
      this.controllerClient = this.client;
    }
    if (opts.webhook) {
      this.webhooks = new WebhookServer({ ...opts.webhook, logger: this.log, metrics: this.metrics });
    }
  }

  /** Registers a controller. Controllers outside the `controllers` subset are ignored. */
  add(def: ControllerDefinition): void {
    if (this.started) throw new Error('controllers must be added before start()');
    if (this.runners.has(def.name)) throw new Error(`a controller named ${def.name} is already registered`);
    if (!this.enabled(def.name)) {
      this.log.info({ controller: def.name }, 'controller disabled by --controllers');
      return;
    }
    // First: a hook that throws leaves the manager as it was.
    const custom = def.metrics?.({ registry: this.metrics.registry, cache: cacheView(this.cache) });
    for (const ix of def.indexes ?? []) this.cache.addIndex(ix.kind, ix.name, ix.fn);
    for (const t of def.transforms ?? []) this.cache.setTransform(t.kind, t.fn);
    const recorder = new EventRecorder(this.controllerClient, {
      reportingController: `troupe/${def.name}`,
      reportingInstance: this.identity,
      logger: this.log,
      clock: this.clock,
      onRecorded: (type, outcome) => this.metrics.eventsRecorded.inc({ type, outcome }),
    });
    this.recorders.set(def.name, recorder);
    this.runners.set(
      def.name,
      new ControllerRunner(def, {
        cache: this.cache,
        client: this.controllerClient,
        recorder,
        logger: this.log,
        metrics: this.metrics,
        custom,
        clock: this.clock,
      }),
    );
  }

  /** Names of the registered (enabled) controllers. */
  get controllerNames(): string[] {
    return [...this.runners.keys()];
  }

  getController(name: string): ControllerRunner | undefined {
    return this.runners.get(name);
  }

  recorderFor(name: string): EventRecorder | undefined {
    return this.recorders.get(name);
  }

  addHealthzCheck(name: string, check: Check): void {
    this.extraHealthz.push([name, check]);
    this.health?.addHealthzCheck(name, check);
  }

  addReadyzCheck(name: string, check: Check): void {
    this.extraReadyz.push([name, check]);
    this.health?.addReadyzCheck(name, check);
  }

  /** The probe server (after start), for its bound port. */
  get healthServer(): HealthServer | undefined {
    return this.health;
  }

  /** The separate metrics server, if one was configured. */
  get metricsServer(): HealthServer | undefined {
    return this.servers.find((s) => s !== this.health);
  }

  /** True while this manager's controllers run (always the leader when election is on). */
  get running(): boolean {
    return this.controllersRunning;
  }

  get isLeader(): boolean {
    return this.elector ? this.elector.isLeader : this.controllersRunning;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('manager already started');
    this.started = true;
    const unknown = (this.opts.controllers ?? []).filter((n) => n !== ALL && !this.runners.has(n));
    if (unknown.length) {
      this.log.warn({ unknown }, 'unknown controller names in --controllers');
    }
    await this.startServers();
    // Create every informer first so one cache start lists them all in parallel.
    for (const runner of this.runners.values()) {
      for (const src of runner.sources()) {
        await this.cache.informerFor(src.kind, {
          labelSelector: src.labelSelector,
          fieldSelector: src.fieldSelector,
        });
      }
    }
    this.cache.start();
    this.cacheStarted = true;
    if (this.elector) {
      this.campaign = this.campaignLoop();
    } else {
      this.controllersStarting = this.startControllers();
    }
    this.log.info(
      {
        controllers: this.controllerNames,
        namespace: this.opts.namespace ?? '(all)',
        identity: this.identity,
      },
      'manager started',
    );
  }

  /** Graceful shutdown, bounded by gracefulShutdownMs. Safe to call more than once. */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    // Real time on purpose: the bound protects the process, whatever clock controllers use.
    const deadline = realClock.monotonic() + (this.opts.gracefulShutdownMs ?? 30_000);
    const remaining = () => Math.max(0, deadline - realClock.monotonic());
    this.log.info('shutting down');
    await this.controllersStarting?.catch(() => {});
    await this.stopControllers(remaining());
    // Releases the Lease only after our controllers stopped acting.
    await this.elector?.stop();
    await this.campaign;
    await withTimeout(Promise.all([...this.recorders.values()].map((r) => r.stop())), remaining());
    await this.webhooks?.stop();
    await this.cache.stop();
    await Promise.all(this.servers.map((s) => s.stop()));
    await this.rest.close(Math.min(5_000, remaining()));
    this.metrics.release();
    this.log.info('stopped');
    this.doneResolve();
  }

  private enabled(name: string): boolean {
    const list = this.opts.controllers;
    return !list || list.length === 0 || list.includes(ALL) || list.includes(name);
  }

  private async startServers(): Promise<void> {
    const probeAddr = this.opts.healthProbeAddress ?? ':8081';
    const metricsAddr = this.opts.metricsAddress;
    const secure = this.opts.metricsSecure === true;
    if (probeAddr !== false) {
      const shareMetrics = !secure && (metricsAddr === undefined || metricsAddr === probeAddr);
      this.health = new HealthServer({
        address: probeAddr,
        registry: shareMetrics ? this.metrics.registry : undefined,
        logger: this.log,
      });
      this.health.addReadyzCheck('informers', () => {
        // Before cache.start() no informer exists yet, and "every informer synced" is vacuous.
        if (!this.cacheStarted || !this.cache.hasSynced) throw new Error('caches not synced');
      });
      if (this.webhooks) {
        const wh = this.webhooks;
        this.health.addReadyzCheck('webhook', () => {
          if (!wh.serving) throw new Error('webhook server not serving');
        });
      }
      for (const [n, c] of this.extraHealthz) this.health.addHealthzCheck(n, c);
      for (const [n, c] of this.extraReadyz) this.health.addReadyzCheck(n, c);
      await this.health.start();
      this.servers.push(this.health);
    }
    if (metricsAddr && (secure || metricsAddr !== probeAddr)) {
      let tls: { cert: string; key: string } | undefined;
      let guard: ((req: IncomingMessage, path: string) => Promise<Denial | undefined>) | undefined;
      if (secure) {
        const cert = await generateServingCert(['localhost', '127.0.0.1', hostname()]);
        tls = { cert: cert.cert, key: cert.key };
        const auth = new MetricsAuth(this.rest);
        guard = (req, path) => auth.check(req, path);
      }
      const m = new HealthServer({
        address: metricsAddr,
        registry: this.metrics.registry,
        probes: false,
        logger: this.log,
        tls,
        guard,
      });
      await m.start();
      this.servers.push(m);
    }
    await this.webhooks?.start();
  }

  private async campaignLoop(): Promise<void> {
    const elector = this.elector!;
    while (!this.stopping) {
      await elector.run();
      if (this.stopping) break;
      this.opts.onLeadershipLost?.();
    }
  }

  private async startControllers(): Promise<void> {
    const abort = new AbortController();
    const stopWatch = setInterval(() => {
      if (this.stopping || (this.elector && !this.elector.isLeader)) abort.abort();
    }, 100);
    stopWatch.unref();
    try {
      const synced = await this.cache.waitForSync(abort.signal);
      if (!synced || abort.signal.aborted) return;
      for (const runner of this.runners.values()) {
        if (abort.signal.aborted) break;
        await runner.start();
      }
      if (abort.signal.aborted || this.stopping || (this.elector && !this.elector.isLeader)) {
        // Leadership or the process ended while starting: undo at once.
        await Promise.all([...this.runners.values()].map((r) => r.abortNow()));
        return;
      }
      this.controllersRunning = true;
    } finally {
      clearInterval(stopWatch);
    }
  }

  private async stopControllers(timeoutMs: number): Promise<void> {
    this.controllersRunning = false;
    await this.controllersStarting?.catch(() => {});
    await Promise.all(
      [...this.runners.values()].map((r) => (timeoutMs === 0 ? r.abortNow() : r.stop(timeoutMs))),
    );
  }
}

function safeHost(server: string): string {
  try {
    return new URL(server).host;
  } catch {
    return '';
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
    timer.unref();
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Stops the manager on SIGINT/SIGTERM (graceful, within its shutdown bound) and exits;
 * a second signal exits at once. Returns a function that removes the handlers.
 */
export function stopOnSignals(manager: Manager, opts: { exit?: boolean } = {}): () => void {
  let received = 0;
  const handler = (signal: NodeJS.Signals) => {
    received++;
    if (received > 1) process.exit(1);
    manager.log.info({ signal }, 'signal received, shutting down');
    void manager.stop().then(() => {
      if (opts.exit ?? true) process.exit(0);
    });
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
