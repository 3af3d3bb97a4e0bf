/**
 * InternalIP addresses for simulated nodes: each node keeps the address it was first given
 * from its pool's IPv4 range; addresses of removed nodes are reused.
 */

import { intToIpv4, parseIPv4CIDR } from '../../kube/ipv4.ts';

export interface Cidr {
  base: number;
  size: number;
}

/** A node address range: an IPv4 CIDR with room for nodes (at most /30). */
export function parseCIDR(cidr: string): Cidr | undefined {
  const block = parseIPv4CIDR(cidr);
  if (!block || block.prefix > 30) return undefined;
  return { base: block.network, size: block.size };
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
            `no addresses left in ${intToIpv4(this.cidr.base)}/${32 - Math.log2(this.cidr.size)}`,
          );
        off = this.next++;
      }
      this.byName.set(name, off);
    }
    return intToIpv4(this.cidr.base + off);
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
