/**
 * IPv4 addresses as integers, and CIDR blocks: what the embedded cluster's address pools
 * (node addresses, pod IPs, Service cluster IPs) compute with. Hand-written: a few lines of
 * integer arithmetic, where an IP library would add a dependency for nothing.
 */

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** A dotted-quad address as an integer, or undefined when it is not one. */
export function ipv4ToInt(ip: string): number | undefined {
  const m = IPV4.exec(ip);
  if (!m) return undefined;
  const octets = m.slice(1).map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  return octets.reduce((a, o) => a * 256 + o, 0);
}

export function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

export interface Ipv4Block {
  /** The block's first address (the address given, its host bits cleared). */
  network: number;
  prefix: number;
  /** Addresses in the block. */
  size: number;
}

/** `a.b.c.d/n`, or undefined when it is not an IPv4 CIDR. */
export function parseIPv4CIDR(text: string): Ipv4Block | undefined {
  const [ip = '', bits = '', ...rest] = text.split('/');
  const addr = ipv4ToInt(ip);
  if (addr === undefined || rest.length > 0 || !/^\d{1,2}$/.test(bits)) return undefined;
  const prefix = Number(bits);
  if (prefix > 32) return undefined;
  const size = 2 ** (32 - prefix);
  return { network: addr - (addr % size), prefix, size };
}
