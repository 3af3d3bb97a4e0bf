/**
 * Turns a stream of "something changed" into snapshots for the page: rebuilds at most once
 * per interval (a burst of pod updates becomes one push), and tells subscribers only when
 * the snapshot differs from the last one sent.
 */

import type { Snapshot } from './view-model.ts';

export interface HubOptions {
  /** Shortest time between two rebuilds (ms). */
  minIntervalMs?: number;
}

export class SnapshotHub {
  private readonly build: () => Snapshot;
  private readonly minIntervalMs: number;
  private readonly subscribers = new Set<(json: string) => void>();
  private json: string | undefined;
  /** The last snapshot without its timestamp, to tell real changes apart. */
  private fingerprint: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastBuild = 0;
  private closed = false;

  constructor(build: () => Snapshot, opts: HubOptions = {}) {
    this.build = build;
    this.minIntervalMs = opts.minIntervalMs ?? 250;
  }

  /** The latest snapshot as JSON (built now if none was). */
  current(): string {
    if (this.json === undefined) this.rebuild();
    return this.json!;
  }

  invalidate(): void {
    if (this.closed || this.timer) return;
    if (this.subscribers.size === 0) {
      // Nobody is watching: build on the next request instead of on every change.
      this.json = undefined;
      return;
    }
    const wait = Math.max(0, this.lastBuild + this.minIntervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.rebuild();
    }, wait);
  }

  subscribe(fn: (json: string) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.subscribers.clear();
  }

  private rebuild(): void {
    this.lastBuild = Date.now();
    const snap = this.build();
    const fingerprint = JSON.stringify({ ...snap, generatedAt: '' });
    if (fingerprint === this.fingerprint && this.json !== undefined) return;
    this.fingerprint = fingerprint;
    this.json = JSON.stringify(snap);
    for (const fn of this.subscribers) fn(this.json);
  }
}
