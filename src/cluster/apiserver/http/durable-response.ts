/**
 * Holds a response's bytes until everything they could show is durable. A write is
 * acknowledged only once its commit is on disk, and a read or watch event never shows a client
 * a resourceVersion a crash could take back (and a restart hand out again): etcd, too, only
 * answers and emits events after its raft log is persisted.
 *
 * Whatever a write/end call sends was written to the store before the call, so waiting for the
 * commit pending at the time of the call suffices. Calls queued behind a commit keep their
 * order. Without a durable backend nothing is ever pending and the calls go straight through.
 */
import type { ServerResponse } from 'node:http';

export function holdUntilDurable(res: ServerResponse, pending: () => Promise<void> | undefined): void {
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  let tail: Promise<unknown> | undefined;
  let queued = 0;
  /** The commit to wait for, or undefined to send at once. */
  const mustWait = (): Promise<void> | undefined => {
    const commit = pending();
    return commit ?? (queued > 0 ? Promise.resolve() : undefined);
  };
  const later = (commit: Promise<void>, send: () => void) => {
    queued++;
    tail = Promise.all([tail, commit]).then(() => {
      queued--;
      if (!res.destroyed) send();
    });
  };
  res.write = ((...args: unknown[]) => {
    const commit = mustWait();
    if (!commit) return write(...args);
    later(commit, () => write(...args));
    return true;
  }) as typeof res.write;
  res.end = ((...args: unknown[]) => {
    const commit = mustWait();
    if (!commit) return end(...args);
    later(commit, () => end(...args));
    return res;
  }) as typeof res.end;
}
