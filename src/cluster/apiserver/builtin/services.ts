/**
 * Services: SetDefaults_Service, the address fields the REST layer fills (clusterIP
 * allocation is offered as a pure helper), ValidateService/Update and printService.
 */

import { translateTimestampSince } from '../../../kube/duration.ts';
import type { FieldError, KubeObject, Strategy, TablePrinter } from '../types.ts';
import {
  AGE_COLUMN,
  arrayOf,
  clone,
  column,
  ensureRecord,
  isRecord,
  type Json,
  NAME_COLUMN,
  recordOf,
  splitStatusUpdate,
  str,
} from './common.ts';
import {
  child,
  dedupe,
  duplicate,
  forbidden,
  index,
  invalid,
  notSupported,
  required,
} from './fielderrors.ts';
import { formatLabels } from './selector.ts';
import {
  isDNS1123Label,
  isDNS1123Subdomain,
  isIPv4,
  isValidIP,
  isValidPortName,
  isValidPortNum,
  PROTOCOLS,
  nameIsDNS1035Label,
  validateLabels,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

function externallyAccessible(spec: Json): boolean {
  return (
    spec.type === 'LoadBalancer' ||
    spec.type === 'NodePort' ||
    (spec.type === 'ClusterIP' && arrayOf(spec.externalIPs).length > 0)
  );
}

export function defaultService(obj: KubeObject): void {
  const spec = ensureRecord(obj, 'spec');
  spec.sessionAffinity ||= 'None';
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP') {
    const timeout = recordOf(recordOf(spec.sessionAffinityConfig).clientIP).timeoutSeconds;
    if (timeout == null) spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
  }
  spec.type ||= 'ClusterIP';
  for (const p of arrayOf(spec.ports)) {
    if (!isRecord(p)) continue;
    p.protocol ||= 'TCP';
    if (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port;
  }
  if (externallyAccessible(spec) && !spec.externalTrafficPolicy) spec.externalTrafficPolicy = 'Cluster';
  if (spec.internalTrafficPolicy == null && spec.type !== 'ExternalName')
    spec.internalTrafficPolicy = 'Cluster';
  if (spec.type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
  // clusterIP mirrors clusterIPs[0] (v1 conversion keeps them in sync).
  const ips = arrayOf<string>(spec.clusterIPs);
  if (ips.length === 0 && str(spec.clusterIP)) spec.clusterIPs = [spec.clusterIP];
  else if (ips.length > 0 && !spec.clusterIP) spec.clusterIP = ips[0];
}

export interface ServiceAddressPool {
  /** Cluster IPs already handed out. */
  usedIPs: ReadonlySet<string>;
  /** Node ports already handed out. */
  usedNodePorts: ReadonlySet<number>;
  /** First and last host of the service range; defaults to kube's 10.96.0.0/12. */
  ipRange?: [string, string];
  nodePortRange?: [number, number];
}

function ipToInt(ip: string): number {
  return ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);
}

function intToIp(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

/**
 * What the Service REST layer allocates on create: a cluster IP (unless headless or
 * ExternalName), ipFamilies/ipFamilyPolicy, and node ports for NodePort/LoadBalancer.
 * Returns an error message when a requested address is taken or the pool is exhausted.
 */
export function allocateServiceAddresses(svc: KubeObject, pool: ServiceAddressPool): string | undefined {
  const spec = ensureRecord(svc, 'spec');
  if (spec.type === 'ExternalName') return undefined;
  const requested = str(spec.clusterIP);
  if (requested && requested !== 'None') {
    if (!isIPv4(requested))
      return `spec.clusterIPs: Invalid value: ["${requested}"]: must be a valid IP address`;
    if (pool.usedIPs.has(requested)) {
      return `spec.clusterIPs: Invalid value: ["${requested}"]: failed to allocate IP ${requested}: provided IP is already allocated`;
    }
  }
  if (!requested) {
    const [first, last] = pool.ipRange ?? ['10.96.0.1', '10.111.255.254'];
    let ip: string | undefined;
    for (let n = ipToInt(first); n <= ipToInt(last); n++) {
      const candidate = intToIp(n);
      if (!pool.usedIPs.has(candidate)) {
        ip = candidate;
        break;
      }
    }
    if (!ip) return 'failed to allocate a serviceIP: range is full';
    spec.clusterIP = ip;
  }
  spec.clusterIPs = [spec.clusterIP];
  spec.ipFamilies ??= ['IPv4'];
  spec.ipFamilyPolicy ??= 'SingleStack';
  if (
    spec.type === 'NodePort' ||
    (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false)
  ) {
    const [lo, hi] = pool.nodePortRange ?? [30000, 32767];
    const taken = new Set(pool.usedNodePorts);
    for (const p of arrayOf(spec.ports)) {
      if (typeof p.nodePort === 'number' && p.nodePort !== 0) {
        if (taken.has(p.nodePort))
          return `spec.ports[0].nodePort: Invalid value: ${p.nodePort}: provided port is already allocated`;
        taken.add(p.nodePort);
      }
    }
    for (const p of arrayOf(spec.ports)) {
      if (typeof p.nodePort === 'number' && p.nodePort !== 0) continue;
      let port = lo;
      while (port <= hi && taken.has(port)) port++;
      if (port > hi) return 'failed to allocate a nodePort: range is full';
      p.nodePort = port;
      taken.add(port);
    }
  }
  return undefined;
}

/** The REST layer's patchAllocatedValues: an update that omits allocated addresses keeps them. */
function keepAllocatedValues(obj: KubeObject, old: KubeObject): void {
  const spec = ensureRecord(obj, 'spec');
  const oldSpec = recordOf(old.spec);
  if (spec.type === 'ExternalName' || oldSpec.type === 'ExternalName') return;
  if (!str(spec.clusterIP) && arrayOf(spec.clusterIPs).length === 0 && str(oldSpec.clusterIP)) {
    spec.clusterIP = oldSpec.clusterIP;
    spec.clusterIPs = clone(oldSpec.clusterIPs);
  }
  if (spec.ipFamilies == null && oldSpec.ipFamilies != null) spec.ipFamilies = clone(oldSpec.ipFamilies);
  if (spec.ipFamilyPolicy == null && oldSpec.ipFamilyPolicy != null)
    spec.ipFamilyPolicy = oldSpec.ipFamilyPolicy;
  if (spec.type === oldSpec.type && (spec.type === 'NodePort' || spec.type === 'LoadBalancer')) {
    const oldPorts = arrayOf(oldSpec.ports);
    for (const p of arrayOf(spec.ports)) {
      if (p.nodePort) continue;
      const match =
        oldPorts.find((o) => o.port === p.port && (o.protocol ?? 'TCP') === (p.protocol ?? 'TCP')) ??
        (oldPorts.length === 1 ? oldPorts[0] : undefined);
      if (match?.nodePort) p.nodePort = match.nodePort;
    }
  }
}

function isHeadless(spec: Json): boolean {
  const ips = arrayOf<string>(spec.clusterIPs);
  return (ips.length === 1 && ips[0] === 'None') || spec.clusterIP === 'None';
}

export function validateService(obj: KubeObject): FieldError[] {
  const errs = validateObjectMeta(obj.metadata, true, nameIsDNS1035Label);
  const spec = recordOf(obj.spec);
  const ports = arrayOf(spec.ports);
  const headless = isHeadless(spec);
  if (ports.length === 0 && !headless && spec.type !== 'ExternalName') errs.push(required('spec.ports'));
  if (spec.type === 'LoadBalancer' && headless)
    errs.push(invalid('spec.clusterIPs[0]', 'None', "may not be set to 'None' for LoadBalancer services"));
  if (spec.type === 'NodePort' && headless)
    errs.push(invalid('spec.clusterIPs[0]', 'None', "may not be set to 'None' for NodePort services"));
  if (spec.type === 'ExternalName') {
    if (arrayOf(spec.clusterIPs).length > 0 || str(spec.clusterIP))
      errs.push(forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
    const cname = str(spec.externalName).replace(/\.$/, '');
    if (cname) for (const m of isDNS1123Subdomain(cname)) errs.push(invalid('spec.externalName', cname, m));
    else errs.push(required('spec.externalName'));
  }
  const names = new Set<string>();
  const seenPorts = new Set<string>();
  const seenNodePorts = new Set<string>();
  ports.forEach((p, i) => {
    const pp = index('spec.ports', i);
    const name = str(p.name);
    if (ports.length > 1 && !name) errs.push(required(child(pp, 'name')));
    else if (name) {
      for (const m of isDNS1123Label(name)) errs.push(invalid(child(pp, 'name'), name, m));
      if (names.has(name)) errs.push(duplicate(child(pp, 'name'), name));
      names.add(name);
    }
    for (const m of isValidPortNum(p.port)) errs.push(invalid(child(pp, 'port'), p.port ?? 0, m));
    if (!p.protocol) errs.push(required(child(pp, 'protocol')));
    else if (!PROTOCOLS.includes(str(p.protocol)))
      errs.push(notSupported(child(pp, 'protocol'), p.protocol, PROTOCOLS));
    if (typeof p.targetPort === 'number') {
      for (const m of isValidPortNum(p.targetPort))
        errs.push(invalid(child(pp, 'targetPort'), p.targetPort, m));
    } else if (typeof p.targetPort === 'string') {
      for (const m of isValidPortName(p.targetPort))
        errs.push(invalid(child(pp, 'targetPort'), p.targetPort, m));
    }
    if (p.nodePort != null && p.nodePort !== 0) {
      for (const m of isValidPortNum(p.nodePort)) errs.push(invalid(child(pp, 'nodePort'), p.nodePort, m));
      if (spec.type === 'ClusterIP')
        errs.push(forbidden(child(pp, 'nodePort'), "may not be used when `type` is 'ClusterIP'"));
      const nk = `${p.protocol}/${p.nodePort}`;
      if (seenNodePorts.has(nk)) errs.push(duplicate(child(pp, 'nodePort'), p.nodePort));
      seenNodePorts.add(nk);
    }
    const pk = `${p.protocol}/${p.port}`;
    if (seenPorts.has(pk)) errs.push(duplicate(pp, { port: p.port, protocol: p.protocol }));
    seenPorts.add(pk);
  });
  if (spec.selector != null) errs.push(...validateLabels(spec.selector, 'spec.selector'));
  const affinity = spec.sessionAffinity;
  if (!affinity) errs.push(required('spec.sessionAffinity'));
  else if (affinity !== 'ClientIP' && affinity !== 'None')
    errs.push(notSupported('spec.sessionAffinity', affinity, ['ClientIP', 'None']));
  arrayOf<string>(spec.externalIPs).forEach((ip, i) => {
    if (!isValidIP(String(ip)))
      errs.push(
        invalid(
          index('spec.externalIPs', i),
          ip,
          'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
        ),
      );
  });
  arrayOf<string>(spec.clusterIPs).forEach((ip, i) => {
    if (ip !== 'None' && !isValidIP(String(ip))) {
      errs.push(invalid(index('spec.clusterIPs', i), ip, "must be empty, 'None', or a valid IP address"));
    }
  });
  if (!spec.type) errs.push(required('spec.type'));
  else if (!SERVICE_TYPES.includes(str(spec.type)))
    errs.push(notSupported('spec.type', spec.type, SERVICE_TYPES));
  if (spec.allocateLoadBalancerNodePorts != null && spec.type !== 'LoadBalancer') {
    errs.push(
      forbidden('spec.allocateLoadBalancerNodePorts', "may only be used when `type` is 'LoadBalancer'"),
    );
  }
  return errs;
}

function validateServiceUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateObjectMetaUpdate(obj.metadata, old.metadata);
  const spec = recordOf(obj.spec);
  const oldSpec = recordOf(old.spec);
  if (spec.type !== 'ExternalName' && oldSpec.type !== 'ExternalName') {
    const oldIPs = arrayOf<string>(oldSpec.clusterIPs);
    const newIPs = arrayOf<string>(spec.clusterIPs);
    oldIPs.forEach((ip, i) => {
      if (i < newIPs.length && newIPs[i] !== ip)
        errs.push(invalid(index('spec.clusterIPs', i), newIPs, 'may not change once set'));
    });
    if (oldIPs.length > 0 && newIPs.length === 0)
      errs.push(invalid('spec.clusterIPs[0]', newIPs, 'primary clusterIP can not be unset'));
  }
  return errs;
}

function portsString(spec: Json): string {
  const pieces = arrayOf(spec.ports).map((p) =>
    p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol}` : `${p.port}/${p.protocol}`,
  );
  return pieces.join(',') || '<none>';
}

function externalIP(obj: KubeObject): string {
  const spec = recordOf(obj.spec);
  const external = arrayOf<string>(spec.externalIPs);
  switch (spec.type) {
    case 'ClusterIP':
    case 'NodePort':
      return external.length > 0 ? external.join(',') : '<none>';
    case 'LoadBalancer': {
      const ingress = arrayOf(recordOf(recordOf(obj.status).loadBalancer).ingress);
      const lb = [...new Set(ingress.map((i) => str(i.ip) || str(i.hostname)).filter(Boolean))]
        .sort()
        .join(',');
      if (external.length > 0) return [...(lb ? lb.split(',') : []), ...external].join(',');
      return lb || '<pending>';
    }
    case 'ExternalName':
      return str(spec.externalName);
  }
  return '<unknown>';
}

export const serviceTable: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Type', 'string'),
    column('Cluster-IP', 'string'),
    column('External-IP', 'string'),
    column('Port(s)', 'string'),
    AGE_COLUMN,
    column('Selector', 'string', { priority: 1 }),
  ],
  cells(obj, now) {
    const spec = recordOf(obj.spec);
    return [
      obj.metadata?.name ?? '',
      str(spec.type),
      str(arrayOf<string>(spec.clusterIPs)[0]) || '<none>',
      externalIP(obj),
      portsString(spec),
      translateTimestampSince(obj.metadata?.creationTimestamp, now),
      formatLabels(spec.selector as Record<string, string> | undefined),
    ];
  },
};

export function serviceStrategy(): Strategy {
  return {
    default: defaultService,
    prepareForCreate(obj) {
      obj.status = { loadBalancer: {} };
    },
    prepareForUpdate(obj, old, ctx) {
      splitStatusUpdate(obj, old, ctx, 'none');
      if (ctx.subresource === '') keepAllocatedValues(obj, old);
    },
    validateCreate: (obj) => dedupe(validateService(obj)),
    validateUpdate(obj, old, ctx) {
      if (ctx.subresource === 'status') return dedupe(validateObjectMetaUpdate(obj.metadata, old.metadata));
      return dedupe([...validateService(obj), ...validateServiceUpdate(obj, old)]);
    },
    table: serviceTable,
  };
}
