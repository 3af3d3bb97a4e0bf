/**
 * Address book for simulated nodes and pods: each node name and each pod uid keeps the IPv4
 * address it was first given, so re-rendering a template never moves a pod. Stateful by design;
 * the kubelet shell owns one and releases pod addresses when pods go away.
 */

import { intToIpv4, parseIPv4CIDR } from '../../../kube/ipv4.ts';

function parseCIDR(cidr: string): { base: number; size: number } {
  const block = parseIPv4CIDR(cidr);
  if (!block) throw new Error(`invalid CIDR ${cidr}`);
  return { base: block.network, size: block.size };
}

class Pool {
  private readonly base: number;
  private readonly size: number;
  private next = 1;
  private readonly free: number[] = [];
  private readonly byKey = new Map<string, number>();
  constructor(cidr: string) {
    ({ base: this.base, size: this.size } = parseCIDR(cidr));
  }
  get(key: string): string {
    let off = this.byKey.get(key);
    if (off === undefined) {
      off = this.free.pop() ?? this.next++;
      if (off >= this.size - 1) throw new Error('address pool exhausted');
      this.byKey.set(key, off);
    }
    return intToIpv4(this.base + off);
  }
  release(key: string): void {
    const off = this.byKey.get(key);
    if (off === undefined) return;
    this.byKey.delete(key);
    this.free.push(off);
  }
}

export interface IPAM {
  nodeIP(nodeName: string): string;
  /** A host-network pod shares its node's address. */
  podIP(nodeName: string, hostNetwork: boolean, uid: string): string;
  releasePod(uid: string): void;
  releaseNode(nodeName: string): void;
}

export function createIPAM(opts: { nodeCIDR?: string; podCIDR?: string } = {}): IPAM {
  const nodes = new Pool(opts.nodeCIDR ?? '10.240.0.0/16');
  const pods = new Pool(opts.podCIDR ?? '10.0.0.0/12');
  return {
    nodeIP: (n) => nodes.get(n),
    podIP: (n, hostNetwork, uid) => (hostNetwork ? nodes.get(n) : pods.get(uid)),
    releasePod: (uid) => pods.release(uid),
    releaseNode: (n) => nodes.release(n),
  };
}
