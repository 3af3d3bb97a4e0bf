/**
 * The controller under test for bench/podsequence.ts, in its own process (forked with an
 * IPC channel) so that it shares an event loop with neither the API server nor the driver
 * that plays the kubelet.
 *
 *   podsequence-controller.ts <kubeconfig>
 *
 * Installs the PodSequence CRD, starts a runtime Manager (cluster-wide, as `troupe run`
 * does) with `podSequenceControllers()` in lite mode with default options, and says
 * `ready`. On `{ type: 'idle' }` it answers `idle` once its work queue is empty with
 * nothing in flight. On `{ type: 'report' }` it answers with its own count of the requests it sent
 * (by method and code) and of reconciles, which the driver uses to check the API server's
 * figures. The driver ends it by closing the IPC channel.
 */
import { ensurePodSequenceCrd, podSequenceControllers } from '../src/controllers/podsequence/index.ts';
import { loadKubeConfig, Manager, silentLogger } from '../src/runtime/index.ts';

export interface ControllerReport {
  type: 'report';
  /** `METHOD code` → requests this process sent, from its rest_client_requests_total. */
  requests: Record<string, number>;
  /** result → reconciles, from controller_runtime_reconcile_total. */
  reconciles: Record<string, number>;
  /** Seconds of CPU this process used so far. */
  cpuSeconds: number;
}

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
}

const [kubeconfig] = process.argv.slice(2);
if (!kubeconfig) throw new Error('usage: podsequence-controller.ts <kubeconfig>');
const { kubeConfig } = loadKubeConfig({ kubeconfig });
const mgr = new Manager({ kubeConfig, healthProbeAddress: false, logger: silentLogger() });
await ensurePodSequenceCrd(mgr.client);
for (const c of podSequenceControllers()) mgr.add(c);
await mgr.start();
await mgr.cache.waitForSync();

async function values(name: string): Promise<MetricValue[]> {
  const m = mgr.metrics.registry.getSingleMetric(name);
  if (!m) return [];
  return (await m.get()).values as MetricValue[];
}

/** Resolves when the controller's queue has been empty, with nothing in flight, for a few checks in a row. */
async function idle(): Promise<void> {
  const queue = mgr.getController('podsequence')?.workQueue;
  let quiet = 0;
  while (quiet < 3) {
    await new Promise((r) => setTimeout(r, 10));
    const busy = !queue || queue.len() > 0 || queue.inFlight() > 0 || queue.delayedLen() > 0;
    quiet = busy ? 0 : quiet + 1;
  }
}

process.on('message', (msg: { type?: string }) => {
  if (msg.type === 'idle') {
    void idle().then(() => process.send!({ type: 'idle' }));
    return;
  }
  if (msg.type !== 'report') return;
  void (async () => {
    const requests: Record<string, number> = {};
    for (const v of await values('rest_client_requests_total')) {
      const key = `${v.labels.method} ${v.labels.code}`;
      requests[key] = (requests[key] ?? 0) + v.value;
    }
    const reconciles: Record<string, number> = {};
    for (const v of await values('controller_runtime_reconcile_total')) {
      reconciles[String(v.labels.result)] = (reconciles[String(v.labels.result)] ?? 0) + v.value;
    }
    const cpu = process.cpuUsage();
    const report: ControllerReport = {
      type: 'report',
      requests,
      reconciles,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
    };
    process.send!(report);
  })();
});
process.send!({ type: 'ready' });
await new Promise<void>((resolve) => process.once('disconnect', resolve));
await mgr.stop();
process.exit(0);
