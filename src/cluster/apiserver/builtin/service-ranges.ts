/**
 * The ranges Services draw from, the service CIDR and the node-port range, handed out as
 * kube-apiserver's bitmap allocators do: any requested value in range, and dynamic values at
 * random from above a small static band first (KEP-3070), so that addresses people pick by
 * hand (10.96.0.10 for DNS, say) rarely collide with allocated ones.
 */

import { intToIpv4, parseIPv4CIDR } from '../../../kube/ipv4.ts';
import { random } from '../../../lib/random.ts';

export type AllocationFailure = 'taken' | 'out-of-range';

export class IntRange {
  private readonly first: number;
  private readonly count: number;
  private readonly staticBand: number;
  private readonly used = new Set<number>();

  /** `count` values from `first`; dynamic values avoid the lowest `staticBand` while they can. */
  constructor(first: number, count: number, staticBand: number) {
    this.first = first;
    this.count = count;
    this.staticBand = staticBand;
  }

  contains(v: number): boolean {
    return Number.isInteger(v) && v >= this.first && v < this.first + this.count;
  }

  allocate(v: number): AllocationFailure | undefined {
    if (!this.contains(v)) return 'out-of-range';
    if (this.used.has(v)) return 'taken';
    this.used.add(v);
    return undefined;
  }

  /** A free value, or undefined when the range is full. */
  next(): number | undefined {
    if (this.used.size >= this.count) return undefined;
    return this.scan(this.staticBand, this.count) ?? this.scan(0, this.staticBand);
  }

  has(v: number): boolean {
    return this.used.has(v);
  }

  release(v: number): void {
    this.used.delete(v);
  }

  private scan(lo: number, hi: number): number | undefined {
    const n = hi - lo;
    const start = Math.floor(random() * n);
    for (let i = 0; i < n; i++) {
      const v = this.first + lo + ((start + i) % n);
      if (!this.used.has(v)) {
        this.used.add(v);
        return v;
      }
    }
    return undefined;
  }
}

/** The static band: min(max(lower, size/step), upper), none for ranges of `lower` or less. */
function staticBand(size: number, lower: number, upper: number, step: number): number {
  if (size <= lower) return 0;
  return Math.min(Math.max(Math.floor(size / step), lower), upper);
}

export interface ServiceCIDR {
  /** The CIDR as messages print it, e.g. `10.96.0.0/12`. */
  cidr: string;
  /** Its network address, what a dry run shows for an address it was to pick. */
  network: number;
  /** Every address but the network and broadcast addresses. */
  range: IntRange;
  /** The first of them, which kube-apiserver gives the `kubernetes` Service. */
  firstIP: string;
}

/** An IPv4 --service-cluster-ip-range; throws on anything a kube-apiserver would refuse. */
export function parseServiceCIDR(text: string): ServiceCIDR {
  const block = parseIPv4CIDR(text);
  if (!block) throw new Error(`invalid service cluster IP range ${JSON.stringify(text)}: not an IPv4 CIDR`);
  const { network, prefix, size } = block;
  // kube-apiserver keeps one bit per address and refuses ranges past 2^20 of them.
  if (prefix < 12) {
    throw new Error(
      `invalid service cluster IP range ${JSON.stringify(text)}: too large; for 32-bit addresses, the mask must be >= 12`,
    );
  }
  if (prefix > 30) {
    throw new Error(`invalid service cluster IP range ${JSON.stringify(text)}: no usable addresses`);
  }
  const first = network + 1;
  return {
    cidr: `${intToIpv4(network)}/${prefix}`,
    network,
    range: new IntRange(first, size - 2, staticBand(size, 16, 256, 16)),
    firstIP: intToIpv4(first),
  };
}

export interface NodePortRange {
  /** The range as messages print it, e.g. `30000-32767`. */
  text: string;
  range: IntRange;
}

/** A --service-node-port-range such as `30000-32767`. */
export function parseNodePortRange(text: string): NodePortRange {
  const m = /^(\d{1,5})-(\d{1,5})$/.exec(text);
  const lo = Number(m?.[1]);
  const hi = Number(m?.[2]);
  if (!m || lo < 1 || hi > 65535 || lo > hi) {
    throw new Error(
      `invalid service node port range ${JSON.stringify(text)}: want <first>-<last> within 1-65535`,
    );
  }
  const size = hi - lo + 1;
  return { text: `${lo}-${hi}`, range: new IntRange(lo, size, staticBand(size, 16, 128, 32)) };
}
