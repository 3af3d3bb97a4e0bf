/**
 * One page of a list, read from a table as it is now or as it was at the first page's
 * resourceVersion (a continued list reads a consistent snapshot, as etcd serves later pages at
 * the first page's revision). A snapshot is the table now seen through the changes made since:
 * nothing is copied and nothing re-sorted, so a continued page costs what a first page costs
 * plus the writes since, however big the table.
 */
import type { StoredRecord } from './store.ts';

export interface TableView {
  /** The table's keys now, in order. */
  readonly keys: readonly string[];
  /** Keys the view holds that the table no longer does (deleted since), in order. */
  readonly gone: readonly string[];
  get(key: string): StoredRecord | undefined;
  /** How many of `keys` in [from, to) have no record in this view (created since). */
  hidden(from: string, to: string | undefined): number;
}

export function currentView(table: ReadonlyMap<string, StoredRecord>, keys: readonly string[]): TableView {
  return { keys, gone: [], get: (k) => table.get(k), hidden: () => 0 };
}

/**
 * The table as of an earlier resourceVersion: `changes` holds each key written since with its
 * record then (undefined: it did not exist then).
 */
export function viewAt(
  table: ReadonlyMap<string, StoredRecord>,
  keys: readonly string[],
  changes: ReadonlyMap<string, StoredRecord | undefined>,
): TableView {
  const gone: string[] = [];
  const created: string[] = [];
  for (const [k, then] of changes) {
    if (then && !table.has(k)) gone.push(k);
    else if (!then && table.has(k)) created.push(k);
  }
  gone.sort();
  return {
    keys,
    gone,
    get: (k) => (changes.has(k) ? changes.get(k) : table.get(k)),
    hidden: (from, to) => created.filter((k) => k >= from && (to === undefined || k < to)).length,
  };
}

export interface Page {
  records: StoredRecord[];
  /** Set when the limit cut the page short. */
  more: boolean;
  /** The records left after the page (when asked for and cut short). */
  remaining?: number;
}

/** Up to `limit` (0: all) matching records with keys in [from, to), in key order. */
export function readPage(
  view: TableView,
  from: string,
  to: string | undefined,
  matches: (r: StoredRecord) => boolean,
  limit: number,
  countRemaining: boolean,
): Page {
  const { keys, gone } = view;
  let i = lowerBound(keys, from);
  const iEnd = to === undefined ? keys.length : lowerBound(keys, to);
  let j = lowerBound(gone, from);
  const jEnd = to === undefined ? gone.length : lowerBound(gone, to);
  const records: StoredRecord[] = [];
  while (i < iEnd || j < jEnd) {
    const fromGone = i >= iEnd || (j < jEnd && gone[j]! < keys[i]!);
    const key = fromGone ? gone[j]! : keys[i]!;
    const rec = view.get(key);
    if (rec && matches(rec)) {
      if (limit && records.length === limit) {
        const remaining = countRemaining ? iEnd - i + (jEnd - j) - view.hidden(key, to) : undefined;
        return { records, more: true, remaining };
      }
      records.push(rec);
    }
    if (fromGone) j++;
    else i++;
  }
  return { records, more: false };
}

/** First index whose key is >= k. */
export function lowerBound(keys: readonly string[], k: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
