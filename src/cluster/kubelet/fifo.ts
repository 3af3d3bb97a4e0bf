/**
 * A FIFO with O(1) push and shift at any length. Array.prototype.shift copies the array in
 * the worst case, and the kubelet's run queue holds 100,000 entries in a burst.
 */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(v: T): void {
    this.items.push(v);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const v = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return v;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}
