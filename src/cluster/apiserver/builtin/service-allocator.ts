/**
 * What kube-apiserver's Service REST layer does around storage (registry/core/service/storage):
 * cluster IPs from the service CIDR and node ports from their range, taken before the strategy
 * and validation run, given back if the write is not stored, kept while the Service exists and
 * released once it is gone. A dry run reserves nothing, so it cannot hold a value another write
 * asks for while its admission runs. The cluster is single-stack IPv4, and the ranges start
 * empty with the server's fresh store.
 */
import { intToIpv4, ipv4ToInt } from '../../../kube/ipv4.ts';
import { isObject } from '../../../lib/json.ts';
import { errors } from '../errors.ts';
import type { FieldError, FinishWrite, KubeObject, StoreHooks } from '../types.ts';
import { arrayOf, ensureRecord, type Json, recordOf, str } from './common.ts';
import { child, index, invalid } from './field-errors.ts';
import {
  type AllocationFailure,
  type NodePortRange,
  parseNodePortRange,
  parseServiceCIDR,
  type ServiceCIDR,
} from './service-ranges.ts';
import {
  isHeadless,
  needsClusterIP,
  needsHealthCheckNodePort,
  needsNodePort,
  nodePortsOf,
  sameList,
  validateClusterIPFields,
} from './services.ts';
import { isIPv6 } from './validation.ts';

export interface ServiceRangeOptions {
  /** --service-cluster-ip-range; default 10.96.0.0/12. */
  clusterIPRange?: string;
  /** --service-node-port-range; default 30000-32767. */
  nodePortRange?: string;
}

/** What one write took, and what it gives back once stored. */
interface Transaction {
  /** Takes nothing: `ports` lists what it would have taken, for its own duplicates. */
  dryRun: boolean;
  ips: number[];
  ports: number[];
  releaseIPs: number[];
  releasePorts: number[];
}

export class ServiceAllocator implements StoreHooks {
  private readonly cidr: ServiceCIDR;
  private readonly nodePorts: NodePortRange;

  constructor(opts: ServiceRangeOptions = {}) {
    this.cidr = parseServiceCIDR(opts.clusterIPRange ?? '10.96.0.0/12');
    this.nodePorts = parseNodePortRange(opts.nodePortRange ?? '30000-32767');
  }

  /** The address kube-apiserver gives the `kubernetes` Service. */
  get firstIP(): string {
    return this.cidr.firstIP;
  }

  beginCreate(svc: KubeObject, dryRun = false): FinishWrite {
    const spec = ensureRecord(svc, 'spec');
    return this.transact(dryRun, (txn) => {
      this.initIPFamilyFields(svc, undefined);
      this.allocClusterIPs(svc, txn);
      if (needsNodePort(spec)) this.initNodePorts(svc, txn);
      if (needsHealthCheckNodePort(spec)) this.allocHealthCheckNodePort(spec, txn);
    });
  }

  beginUpdate(svc: KubeObject, old: KubeObject, dryRun = false): FinishWrite {
    const spec = ensureRecord(svc, 'spec');
    const oldSpec = recordOf(old.spec);
    patchAllocatedValues(spec, oldSpec);
    normalizeClusterIPs(spec, oldSpec);
    return this.transact(dryRun, (txn) => {
      this.initIPFamilyFields(svc, oldSpec);
      if (!needsClusterIP(oldSpec) && needsClusterIP(spec)) this.allocClusterIPs(svc, txn);
      else if (!needsClusterIP(spec)) txn.releaseIPs.push(...heldIPs(oldSpec));
      if (needsNodePort(oldSpec) && !needsNodePort(spec)) txn.releasePorts.push(...nodePortsOf(oldSpec));
      if (needsNodePort(spec)) this.updateNodePorts(svc, oldSpec, txn);
      const hadCheck = needsHealthCheckNodePort(oldSpec);
      const needsCheck = needsHealthCheckNodePort(spec);
      if (!hadCheck && needsCheck) this.allocHealthCheckNodePort(spec, txn);
      if (hadCheck && !needsCheck && typeof oldSpec.healthCheckNodePort === 'number')
        txn.releasePorts.push(oldSpec.healthCheckNodePort);
    });
  }

  /**
   * Marks a stored Service's addresses and ports as taken, as kube-apiserver's repair loops
   * rebuild their bitmaps from the Services in etcd (pkg/registry/core/service/ipallocator/
   * controller/repair.go, portallocator/controller/repair.go) after a restart.
   */
  restore(svc: KubeObject): void {
    const spec = recordOf(svc.spec);
    for (const ip of heldIPs(spec)) this.cidr.range.allocate(ip);
    for (const port of heldPorts(spec)) this.nodePorts.range.allocate(port);
  }

  afterDelete(svc: KubeObject): void {
    const spec = recordOf(svc.spec);
    for (const ip of heldIPs(spec)) this.cidr.range.release(ip);
    for (const port of heldPorts(spec)) this.nodePorts.range.release(port);
  }

  private transact(dryRun: boolean, allocate: (txn: Transaction) => void): FinishWrite {
    const txn: Transaction = { dryRun, ips: [], ports: [], releaseIPs: [], releasePorts: [] };
    const finish = (stored: boolean) => {
      if (dryRun) return;
      const [ips, ports] = stored ? [txn.releaseIPs, txn.releasePorts] : [txn.ips, txn.ports];
      for (const ip of ips) this.cidr.range.release(ip);
      for (const port of ports) this.nodePorts.range.release(port);
    };
    try {
      allocate(txn);
    } catch (err) {
      finish(false);
      throw err;
    }
    return finish;
  }

  /**
   * initIPFamilyFields: ipFamilyPolicy and ipFamilies from what was asked (and, on update,
   * what was there), refusing what a single-stack IPv4 cluster cannot give.
   */
  private initIPFamilyFields(svc: KubeObject, oldSpec: Json | undefined): void {
    const spec = ensureRecord(svc, 'spec');
    if (!needsClusterIP(spec)) return;
    const headlessWithoutSelector =
      spec.clusterIP === 'None' && Object.keys(recordOf(spec.selector)).length === 0;
    if (spec.ipFamilyPolicy == null) {
      // A headless Service without selector gets its addresses from whoever writes its endpoints.
      spec.ipFamilyPolicy =
        oldSpec?.ipFamilyPolicy ?? (headlessWithoutSelector ? 'RequireDualStack' : 'SingleStack');
    }
    const loose = validateClusterIPFields(spec);
    if (loose.length > 0) throw invalidService(svc, loose);
    const policy = spec.ipFamilyPolicy;
    const errs: FieldError[] = [];
    if (oldSpec && policy === 'SingleStack') {
      // Same lists with policy SingleStack: the client means to drop the secondary.
      if (sameList(oldSpec.clusterIPs, spec.clusterIPs))
        spec.clusterIPs = arrayOf(spec.clusterIPs).slice(0, 1);
      if (sameList(oldSpec.ipFamilies, spec.ipFamilies))
        spec.ipFamilies = arrayOf(spec.ipFamilies).slice(0, 1);
    } else if (oldSpec) {
      const fewer = (f: string) =>
        arrayOf(spec[f]).length > 0 && arrayOf(spec[f]).length < arrayOf(oldSpec[f]).length;
      if (fewer('clusterIPs'))
        errs.push(
          invalid('spec.ipFamilyPolicy', policy, "must be 'SingleStack' to release the secondary cluster IP"),
        );
      if (fewer('ipFamilies'))
        errs.push(
          invalid('spec.ipFamilyPolicy', policy, "must be 'SingleStack' to release the secondary IP family"),
        );
    }
    const ips = arrayOf<string>(spec.clusterIPs);
    const families = [...arrayOf<string>(spec.ipFamilies)];
    if (policy === 'SingleStack') {
      if (ips.length === 2)
        errs.push(
          invalid(
            'spec.ipFamilyPolicy',
            policy,
            "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
          ),
        );
      if (families.length === 2)
        errs.push(
          invalid(
            'spec.ipFamilyPolicy',
            policy,
            "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
          ),
        );
    }
    for (const [i, ip] of ips.entries()) {
      if (ip === 'None') break;
      if (i < families.length) continue;
      const family = isIPv6(ip) ? 'IPv6' : 'IPv4';
      if (family === 'IPv4') families.push(family);
      else
        errs.push(invalid(index('spec.clusterIPs', i), ips, `${family} is not configured on this cluster`));
    }
    if (errs.length > 0) throw invalidService(svc, errs);
    if (headlessWithoutSelector) {
      if (families.length === 0) families.push('IPv4');
      if (families.length < 2 && policy !== 'SingleStack')
        families.push(families[0] === 'IPv4' ? 'IPv6' : 'IPv4');
      spec.ipFamilies = families;
      return;
    }
    if (policy === 'RequireDualStack')
      errs.push(
        invalid('spec.ipFamilyPolicy', policy, 'this cluster is not configured for dual-stack services'),
      );
    families.forEach((f, i) => {
      if (f !== 'IPv4') errs.push(invalid(index('spec.ipFamilies', i), f, 'not configured on this cluster'));
    });
    if (errs.length > 0) throw invalidService(svc, errs);
    spec.ipFamilies = families.length > 0 ? families : ['IPv4'];
  }

  private allocClusterIPs(svc: KubeObject, txn: Transaction): void {
    const spec = ensureRecord(svc, 'spec');
    const ips = arrayOf<string>(spec.clusterIPs);
    if (!needsClusterIP(spec) || isHeadless(spec)) return;
    const requested = ips[0] ?? '';
    let ip: number;
    if (requested === '') {
      const next = this.nextIP(txn);
      if (next === undefined) throw errors.internal('failed to allocate a serviceIP: range is full');
      ip = next;
    } else {
      ip = ipv4ToInt(requested) ?? Number.NaN;
      const failure = this.takeIP(ip, txn);
      if (failure) {
        const why =
          failure === 'taken'
            ? 'provided IP is already allocated'
            : `the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${this.cidr.cidr}`;
        throw invalidService(svc, [
          invalid('spec.clusterIPs', ips, `failed to allocate IP ${requested}: ${why}`),
        ]);
      }
    }
    spec.clusterIP = intToIpv4(ip);
    spec.clusterIPs = [spec.clusterIP, ...ips.slice(1)];
  }

  /** initNodePorts: ports sharing a port number (TCP and UDP, say) share their node port. */
  private initNodePorts(svc: KubeObject, txn: Transaction): void {
    const spec = ensureRecord(svc, 'spec');
    const allocate = shouldAllocateNodePorts(spec);
    const ports = arrayOf<unknown>(spec.ports).filter(isObject);
    const byPort = new Map<unknown, unknown>();
    ports.forEach((p, i) => {
      const asked = requestedNodePort(p);
      if (asked === 0 && !allocate) return;
      const shared = byPort.get(p.port);
      if (shared === undefined) {
        const requested = requestedNodePort(
          ports.find((o) => o.port === p.port && requestedNodePort(o) !== 0),
        );
        p.nodePort = requested === 0 ? this.nextNodePort(txn) : this.takeNodePort(svc, i, requested, txn);
        byPort.set(p.port, p.nodePort);
      } else if (asked === 0) {
        p.nodePort = shared;
      } else if (asked !== shared) {
        this.takeNodePort(svc, i, asked, txn);
      }
    });
  }

  /** updateNodePorts: new and changed node ports are taken, dropped ones given back. */
  private updateNodePorts(svc: KubeObject, oldSpec: Json, txn: Transaction): void {
    const spec = ensureRecord(svc, 'spec');
    const allocate = shouldAllocateNodePorts(spec);
    const held = new Set<unknown>(nodePortsOf(oldSpec));
    const seen = new Set<string>();
    arrayOf<unknown>(spec.ports)
      .filter(isObject)
      .forEach((p, i) => {
        const asked = requestedNodePort(p);
        if (asked === 0 && !allocate) return;
        if (asked === 0) p.nodePort = this.nextNodePort(txn);
        else if (!held.has(asked)) {
          this.takeNodePort(svc, i, asked, txn);
          held.add(asked);
        }
        const key = `{${str(p.protocol)} ${String(p.nodePort)}}`;
        if (seen.has(key)) throw errors.internal(`duplicate nodePort: ${key}`);
        seen.add(key);
      });
    const kept = new Set(nodePortsOf(spec));
    txn.releasePorts.push(...nodePortsOf(oldSpec).filter((n) => !kept.has(n)));
  }

  private allocHealthCheckNodePort(spec: Json, txn: Transaction): void {
    const asked = spec.healthCheckNodePort;
    if (asked == null || asked === 0) {
      const next = this.nextPort(txn);
      if (next === undefined)
        throw errors.internal('failed to allocate a HealthCheck NodePort 0: range is full');
      spec.healthCheckNodePort = next;
      return;
    }
    const failure = this.takePort(asked, txn);
    if (failure) {
      throw errors.internal(
        `failed to allocate requested HealthCheck NodePort ${String(asked)}: ${this.portFailure(failure)}`,
      );
    }
  }

  private nextNodePort(txn: Transaction): number {
    const next = this.nextPort(txn);
    if (next === undefined) throw errors.internal('failed to allocate a nodePort: range is full');
    return next;
  }

  private takeNodePort(svc: KubeObject, i: number, port: unknown, txn: Transaction): unknown {
    const failure = this.takePort(port, txn);
    if (failure) {
      const field = child(index('spec.ports', i), 'nodePort');
      throw invalidService(svc, [invalid(field, port, this.portFailure(failure))]);
    }
    return port;
  }

  /** A dry run checks only that the address is in range, as upstream's dry-run allocator does. */
  private takeIP(ip: number, txn: Transaction): AllocationFailure | undefined {
    if (txn.dryRun) return this.cidr.range.contains(ip) ? undefined : 'out-of-range';
    const failure = this.cidr.range.allocate(ip);
    if (!failure) txn.ips.push(ip);
    return failure;
  }

  /** A dry run looks for no free address (upstream shows the network address). */
  private nextIP(txn: Transaction): number | undefined {
    if (txn.dryRun) return this.cidr.network;
    const next = this.cidr.range.next();
    if (next !== undefined) txn.ips.push(next);
    return next;
  }

  /**
   * A dry run checks only that no one holds the port, itself included, and not the range: what
   * portallocator's dry-run operation checks.
   */
  private takePort(port: unknown, txn: Transaction): AllocationFailure | undefined {
    if (typeof port !== 'number') return 'out-of-range';
    let failure: AllocationFailure | undefined;
    if (!txn.dryRun) failure = this.nodePorts.range.allocate(port);
    else if (this.nodePorts.range.has(port) || txn.ports.includes(port)) failure = 'taken';
    if (!failure) txn.ports.push(port);
    return failure;
  }

  /** A dry run looks for no free port: upstream's counts on from the highest it took, or 32768. */
  private nextPort(txn: Transaction): number | undefined {
    let next: number | undefined;
    if (txn.dryRun) next = (txn.ports.length > 0 ? Math.max(...txn.ports) : 32768) + 1;
    else next = this.nodePorts.range.next();
    if (next !== undefined) txn.ports.push(next);
    return next;
  }

  private portFailure(failure: AllocationFailure): string {
    return failure === 'taken'
      ? 'provided port is already allocated'
      : `provided port is not in the valid range. The range of valid ports is ${this.nodePorts.text}`;
  }
}

function invalidService(svc: KubeObject, causes: FieldError[]) {
  return errors.invalid('Service', '', svc.metadata?.name ?? '', causes);
}

function heldIPs(spec: Json): number[] {
  if (!needsClusterIP(spec) || isHeadless(spec)) return [];
  return arrayOf<unknown>(spec.clusterIPs)
    .map((ip) => ipv4ToInt(str(ip)))
    .filter((n): n is number => n !== undefined);
}

function heldPorts(spec: Json): number[] {
  const check = spec.healthCheckNodePort;
  const hasCheck = needsHealthCheckNodePort(spec) && typeof check === 'number' && check > 0;
  return hasCheck ? [...nodePortsOf(spec), check] : nodePortsOf(spec);
}

/** A port's nodePort as asked for; 0 when absent. */
function requestedNodePort(p: Json | undefined): unknown {
  const n = p?.nodePort;
  return n == null ? 0 : n;
}

function shouldAllocateNodePorts(spec: Json): boolean {
  return (
    spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false)
  );
}

/**
 * patchAllocatedValues: an update that leaves out what the server allocated keeps it, so a
 * client may resubmit the manifest it created the Service from.
 */
function patchAllocatedValues(spec: Json, oldSpec: Json): void {
  if (needsClusterIP(oldSpec) && needsClusterIP(spec)) {
    if (!str(spec.clusterIP) && str(oldSpec.clusterIP)) spec.clusterIP = oldSpec.clusterIP;
    if (arrayOf(spec.clusterIPs).length === 0 && arrayOf(oldSpec.clusterIPs).length > 0)
      spec.clusterIPs = [...arrayOf(oldSpec.clusterIPs)];
  }
  if (needsNodePort(oldSpec) && needsNodePort(spec)) {
    const inBoth = new Set(nodePortsOf(spec).filter((n) => nodePortsOf(oldSpec).includes(n)));
    const byName = new Map(arrayOf(oldSpec.ports).map((p) => [str(recordOf(p).name), recordOf(p).nodePort]));
    for (const p of arrayOf<unknown>(spec.ports).filter(isObject)) {
      const old = byName.get(str(p.name));
      if (!p.nodePort && typeof old === 'number' && old !== 0 && !inBoth.has(old)) p.nodePort = old;
    }
  }
  if (needsHealthCheckNodePort(oldSpec) && needsHealthCheckNodePort(spec) && !spec.healthCheckNodePort) {
    if (oldSpec.healthCheckNodePort != null) spec.healthCheckNodePort = oldSpec.healthCheckNodePort;
  }
}

/** normalizeClusterIPs: clients that only know clusterIP keep clusterIPs in step with it. */
function normalizeClusterIPs(spec: Json, oldSpec: Json): void {
  const ip = str(spec.clusterIP);
  const oldIP = str(oldSpec.clusterIP);
  if (arrayOf(oldSpec.clusterIPs).length > 0 && arrayOf(spec.clusterIPs).length === 0 && ip === oldIP)
    spec.clusterIPs = [...arrayOf(oldSpec.clusterIPs)];
  if (ip === oldIP || !sameList(spec.clusterIPs, oldSpec.clusterIPs)) return;
  if (ip === '') delete spec.clusterIPs;
  else spec.clusterIPs = [ip];
}
