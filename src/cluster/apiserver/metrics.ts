import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** apiserver_request_total and apiserver_request_duration_seconds, as kube-apiserver names them. */
export class ApiMetrics {
  readonly registry = new Registry();
  private readonly total: Counter<string>;
  private readonly duration: Histogram<string>;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.total = new Counter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, group, version, resource, subresource and HTTP response code.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'code'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency distribution in seconds for each verb, group, version, resource and subresource.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60],
      registers: [this.registry],
    });
  }

  observe(l: Record<string, string>, seconds: number): void {
    this.total.inc(l);
    if (l.verb !== 'WATCH') {
      const { code: _c, ...rest } = l;
      this.duration.observe(rest, seconds);
    }
  }
}
