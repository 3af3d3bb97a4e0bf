/**
 * The node-local filters' verdicts on each node, per pod shape (see ClusterState.shapeId), by
 * the node's index in ClusterState.nodes; a verdict holds until its node changes.
 *
 * Per shape, because gangs of a few shapes take turns: remembering only the last shape tried
 * on a node filtered every node again at each turn. Flat arrays rather than fields of each
 * NodeInfo, because a cycle reads every node's verdict, and a few KiB of typed array stay in
 * the CPU cache where 500 scattered objects did not.
 */

import type { FilterStatus } from './filters.ts';

/** One shape's verdicts: the one at `i` holds while `stamp[i]` is the node's stamp. */
export interface ShapeVerdicts {
  readonly stamp: Float64Array;
  /** undefined: the node passes. */
  readonly status: (FilterStatus | undefined)[];
}

/** Shapes remembered at once; past that the oldest is dropped. */
const MAX_SHAPES = 64;

export class NodeVerdicts {
  /** Per node index, a number no other state of any node ever had (never -1). */
  stamp = new Float64Array(0);
  private next = 0;
  private readonly shapes = new Map<number, ShapeVerdicts>();

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
    if (i >= 0 && i < this.stamp.length) this.stamp[i] = this.next++;
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
      v = { stamp: new Float64Array(this.stamp.length).fill(-1), status: [] };
      this.shapes.set(shape, v);
    }
    return v;
  }
}
