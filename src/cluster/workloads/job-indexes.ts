/**
 * Completion index sets of Indexed Jobs, rendered as Kubernetes renders
 * `status.completedIndexes`: sorted, consecutive indexes collapsed into `first-last`
 * ("0-1,3-5,7").
 */

export class IndexSet {
  private readonly set: Set<number>;

  constructor(values: Iterable<number> = []) {
    this.set = new Set(values);
  }

  /** Parses `status.completedIndexes`, dropping anything out of [0, completions). */
  static parse(s: string | undefined, completions: number): IndexSet {
    const out = new IndexSet();
    if (!s) return out;
    for (const part of s.split(',')) {
      const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
      if (!m) continue;
      const first = Number(m[1]);
      const last = m[2] === undefined ? first : Number(m[2]);
      for (let i = first; i <= last && i < completions; i++) out.set.add(i);
    }
    return out;
  }

  has(i: number): boolean {
    return this.set.has(i);
  }

  get total(): number {
    return this.set.size;
  }

  with(values: Iterable<number>): IndexSet {
    return new IndexSet([...this.set, ...values]);
  }

  toString(): string {
    const sorted = [...this.set].sort((a, b) => a - b);
    const parts: string[] = [];
    for (let i = 0; i < sorted.length; ) {
      let j = i;
      while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
      parts.push(j === i ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
      i = j + 1;
    }
    return parts.join(',');
  }
}
