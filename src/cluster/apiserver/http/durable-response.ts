/**
 * Holds a response's bytes until what they show is durable. A write is acknowledged only once
 * its commit is on disk, and a read or watch event never shows a client a resourceVersion a
 * crash could take back (and a restart hand out again): etcd, too, applies an entry (makes it
 * visible to reads and watches) only once it is committed, which for its own member means saved
 * to its WAL (server/etcdserver/raft.go, raftNode.start: `storage.Save` of the Ready's entries).
 *
 * What a response shows is the resourceVersion its handler names with {@link shows}: the
 * object's for a read or a write, the list's, each watch event's. A response that names none
 * (an error, discovery) may show anything up to the store's latest write and waits for it.
 * Whatever a write/end call sends was written to the store before the call, so waiting for the
 * commit holding that resourceVersion suffices; a response showing only what is on disk
 * already goes out at once. Calls queued behind a commit keep their order.
 */
import type { ServerResponse } from 'node:http';

const SHOWN = Symbol('shownResourceVersion');

type Tagged = ServerResponse & { [SHOWN]?: number };

/** Names the resourceVersion what is written next on `res` shows (0: no stored state). */
export function shows(res: ServerResponse, rv: number): void {
  (res as Tagged)[SHOWN] = rv;
}

export interface Durability {
  /** The latest write's resourceVersion. */
  readonly currentRv: number;
  /** Settles once every write up to `rv` is durable; undefined when it is already. */
  durableAt(rv: number): Promise<void> | undefined;
}

export function holdUntilDurable(res: ServerResponse, store: Durability): void {
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  let tail: Promise<unknown> | undefined;
  let queued = 0;
  /** The commit to wait for, or undefined to send at once. */
  const mustWait = (): Promise<void> | undefined => {
    const rv = (res as Tagged)[SHOWN] ?? store.currentRv;
    const commit = rv > 0 ? store.durableAt(rv) : undefined;
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
