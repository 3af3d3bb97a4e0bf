/**
 * The node-local filters' verdicts on each node, per pod shape (see ClusterState.shapeId), by
 * the node's index in ClusterState.nodes; a verdict holds until its node changes.
 *
 * Per shape, because gangs of a few shapes take turns: remembering only the last shape tried
 * on a node filtered every node again at each turn. Flat arrays rather than fields of each
 * NodeInfo, because a cycle reads every node's verdict, and a few KiB of typed array stay in
 * the CPU cache where 500 scattered objects did not. Each shape also keeps which nodes pass,
 * brought up to date from a log of the nodes changed since: a cycle then reads one byte per
 * node, and filters only the nodes that changed.
 */

import type { FilterStatus } from './filters.ts';

/** One shape's verdicts: the one at `i` holds while `stamp[i]` is the node's stamp. */
export interface ShapeVerdicts {
  readonly stamp: Float64Array;
  /** undefined: the node passes. */
  readonly status: (FilterStatus | undefined)[];
  /** 1 where the held verdict is a pass. */
  readonly pass: Uint8Array;
  /** How many nodes pass. */
  passing: number;
  /** The change log's position this shape has caught up to (-1: never). */
  seen: number;
}

/** Shapes remembered at once; past that the oldest is dropped. */
const MAX_SHAPES = 64;
/** Changes logged before the log starts over (a shape further behind filters every node anew). */
const LOG_SIZE = 4096;

export class NodeVerdicts {
  /** Per node index, a number no other state of any node ever had (never -1). */
  stamp = new Float64Array(0);
  private next = 0;
  private readonly shapes = new Map<number, ShapeVerdicts>();
  /** Indexes of the nodes changed, in order; `logStart` is the position of the first. */
  private readonly log = new Int32Array(LOG_SIZE);
  private logged = 0;
  private logStart = 0;

  /** Makes room for `n` nodes; new indexes start in a state of their own. */
  ensure(n: number): void {
    if (n <= this.stamp.length) return;
    const grown = new Float64Array(Math.max(n, this.stamp.length * 2, 64));
    grown.set(this.stamp);
    for (let i = this.stamp.length; i < grown.length; i++) grown[i] = this.next++;
    this.stamp = grown;
    // Sized for the old capacity: start over (nodes are added rarely).
    this.shapes.clear();
  }

  /** The node at `i` changed: no verdict on its old state holds. */
  forget(i: number): void {
    if (i < 0 || i >= this.stamp.length) return;
    this.stamp[i] = this.next++;
    if (this.logged === LOG_SIZE) {
      this.logStart += this.logged;
      this.logged = 0;
    }
    this.log[this.logged++] = i;
  }

  /** The node at `i` of `count` left the list: the nodes after it move down one. */
  removeAt(i: number, count: number): void {
    this.stamp.copyWithin(i, i + 1, count);
    this.stamp[count - 1] = this.next++;
    this.shapes.clear();
  }

  /** The verdicts remembered for `shape`, empty at first. */
  of(shape: number): ShapeVerdicts {
    let v = this.shapes.get(shape);
    if (!v) {
      if (this.shapes.size >= MAX_SHAPES) this.shapes.delete(this.shapes.keys().next().value!);
      const size = this.stamp.length;
      v = {
        stamp: new Float64Array(size).fill(-1),
        status: [],
        pass: new Uint8Array(size),
        passing: 0,
        seen: -1,
      };
      this.shapes.set(shape, v);
    }
    return v;
  }

  /** Holds `st` as the verdict of the shape `v` on the node at `i`, in its current state. */
  hold(v: ShapeVerdicts, i: number, st: FilterStatus | undefined): void {
    v.stamp[i] = this.stamp[i]!;
    v.status[i] = st;
    const pass = st === undefined ? 1 : 0;
    if (v.pass[i] !== pass) {
      v.pass[i] = pass;
      v.passing += pass ? 1 : -1;
    }
  }

  /**
   * Brings the shape's verdicts on the first `n` nodes up to date, judging (`judge`) the nodes
   * changed since it last caught up, or every node without a verdict the first time and when
   * the log has moved on past it.
   */
  catchUp(v: ShapeVerdicts, n: number, judge: (i: number) => FilterStatus | undefined): void {
    const stamp = this.stamp;
    if (v.seen < this.logStart) {
      for (let i = 0; i < n; i++) if (v.stamp[i] !== stamp[i]) this.hold(v, i, judge(i));
    } else {
      for (let k = v.seen - this.logStart; k < this.logged; k++) {
        const i = this.log[k]!;
        if (i < n && v.stamp[i] !== stamp[i]) this.hold(v, i, judge(i));
      }
    }
    v.seen = this.logStart + this.logged;
  }
}
