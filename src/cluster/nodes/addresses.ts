/**
 * InternalIP addresses for simulated nodes: each node keeps the address it was first given
 * from its pool's IPv4 range; addresses of removed nodes are reused. Hand-written: a few
 * lines of integer arithmetic, where an IP library would add a dependency for nothing.
 */

export interface Cidr {
  base: number;
  size: number;
}

export function parseCIDR(cidr: string): Cidr | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr);
  if (!m) return undefined;
  const octets = [m[1], m[2], m[3], m[4]].map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  const bits = Number(m[5]);
  if (bits > 30) return undefined;
  const size = 2 ** (32 - bits);
  const ip = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
  return { base: Math.floor(ip / size) * size, size };
}

export function formatIPv4(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

class Range {
  private readonly cidr: Cidr;
  private next = 1;
  private readonly free: number[] = [];
  readonly byName = new Map<string, number>();

  constructor(cidr: Cidr) {
    this.cidr = cidr;
  }

  take(name: string): string {
    let off = this.byName.get(name);
    if (off === undefined) {
      off = this.free.pop();
      if (off === undefined) {
        // The network and broadcast addresses are never handed out.
        if (this.next >= this.cidr.size - 1)
          throw new Error(
            `no addresses left in ${formatIPv4(this.cidr.base)}/${32 - Math.log2(this.cidr.size)}`,
          );
        off = this.next++;
      }
      this.byName.set(name, off);
    }
    return formatIPv4(this.cidr.base + off);
  }

  release(name: string): boolean {
    const off = this.byName.get(name);
    if (off === undefined) return false;
    this.byName.delete(name);
    this.free.push(off);
    return true;
  }
}

export class AddressBook {
  private readonly ranges = new Map<string, Range>();

  /** The node's address in `cidr` (allocated on first use). */
  address(cidr: string, nodeName: string): string {
    let r = this.ranges.get(cidr);
    if (!r) {
      const parsed = parseCIDR(cidr);
      if (!parsed) throw new Error(`invalid node address range ${cidr}`);
      r = new Range(parsed);
      this.ranges.set(cidr, r);
    }
    return r.take(nodeName);
  }

  release(nodeName: string): void {
    for (const r of this.ranges.values()) if (r.release(nodeName)) return;
  }
}
