/**
 * `troupe simulate --record`: watches the pods and nodes of any cluster the kubeconfig
 * reaches (the watch starts with every existing object as ADDED, as kube-apiserver sends it
 * for a watch without a resourceVersion) and hands them to a TraceRecorder until the
 * duration passes or the signal aborts. A watch the server ends is opened again.
 */

import { type KubeConfig, Watch } from '@kubernetes/client-node';
import { TraceRecorder } from './trace.ts';

export interface RecordOptions {
  namespace?: string;
  /** Stops recording when aborted (Ctrl+C, or the duration). */
  signal: AbortSignal;
  /** Called once both watches deliver events. */
  onWatching?: () => void;
}

export async function recordCluster(kc: KubeConfig, opts: RecordOptions): Promise<TraceRecorder> {
  const rec = new TraceRecorder(Date.now());
  const watch = new Watch(kc);
  const podsPath = opts.namespace
    ? `/api/v1/namespaces/${encodeURIComponent(opts.namespace)}/pods`
    : '/api/v1/pods';
  const aborts: AbortController[] = [];
  let failure: Error | undefined;
  let started = 0;
  const open = async (path: string, handler: (type: string, obj: never) => void): Promise<void> => {
    if (opts.signal.aborted) return;
    const ctl = await watch.watch(
      path,
      {},
      (type, obj) => handler(type, obj as never),
      (err: unknown) => {
        if (opts.signal.aborted) return;
        if (err && !(err instanceof Error && err.name === 'AbortError')) {
          failure = err instanceof Error ? err : new Error(String(err));
          stop.abort();
          return;
        }
        // The server closed the watch (its timeout): list and watch again.
        open(path, handler).catch((e: unknown) => {
          failure = e instanceof Error ? e : new Error(String(e));
          stop.abort();
        });
      },
    );
    aborts.push(ctl);
  };
  const stop = new AbortController();
  opts.signal.addEventListener('abort', () => stop.abort(), { once: true });
  try {
    await open('/api/v1/nodes', (type, n) => rec.node(type, n));
    started++;
    await open(podsPath, (type, p) => {
      if (
        opts.namespace ||
        (p as { metadata?: { namespace?: string } }).metadata?.namespace !== 'kube-system'
      )
        rec.pod(type, p, Date.now());
    });
    started++;
  } catch (err) {
    for (const a of aborts) a.abort();
    const server = kc.getCurrentCluster()?.server ?? 'the cluster';
    throw new Error(`cannot watch ${server}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (started === 2) opts.onWatching?.();
  if (!stop.signal.aborted)
    await new Promise((r) => stop.signal.addEventListener('abort', r, { once: true }));
  for (const a of aborts) a.abort();
  if (failure) {
    const server = kc.getCurrentCluster()?.server ?? 'the cluster';
    throw new Error(
      `watching ${server} failed: ${failure.message} (check the kubeconfig's server, and that the cluster runs)`,
    );
  }
  return rec;
}
