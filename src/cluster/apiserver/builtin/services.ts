/**
 * Services: SetDefaults_Service, the strategy (dropping what a type change makes moot),
 * ValidateService/Update and printService. Cluster IPs and node ports are the REST layer's:
 * service-allocator.ts.
 */

import { translateTimestampSince } from '../../../kube/duration.ts';
import { isObject } from '../../../lib/json.ts';
import type { FieldError, KubeObject, Strategy, TablePrinter } from '../types.ts';
import {
  AGE_COLUMN,
  arrayOf,
  column,
  ensureRecord,
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
} from './field-errors.ts';
import { formatLabels } from './selector.ts';
import {
  isDNS1123Label,
  isDNS1123Subdomain,
  isIPv6,
  isValidIP,
  isValidPortName,
  isValidPortNum,
  nameIsDNS1035Label,
  PROTOCOLS,
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
    if (!isObject(p)) continue;
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

/** Every type but ExternalName gets cluster IPs. */
export function needsClusterIP(spec: Json): boolean {
  return spec.type !== 'ExternalName';
}

/** Validation's isHeadlessService: clusterIPs is exactly ["None"] (defaulting fills it from clusterIP). */
export function isHeadless(spec: Json): boolean {
  const ips = arrayOf<unknown>(spec.clusterIPs);
  return ips.length === 1 && ips[0] === 'None';
}

export function needsNodePort(spec: Json): boolean {
  return spec.type === 'NodePort' || spec.type === 'LoadBalancer';
}

/** apiservice.NeedsHealthCheck: a load balancer that keeps traffic on the node it reached. */
export function needsHealthCheckNodePort(spec: Json): boolean {
  return spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';
}

export function sameList(a: unknown, b: unknown): boolean {
  const x = arrayOf<unknown>(a);
  const y = arrayOf<unknown>(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** The non-zero node ports of a spec's ports. */
export function nodePortsOf(spec: Json): number[] {
  return arrayOf(spec.ports)
    .map((p) => recordOf(p).nodePort)
    .filter((n): n is number => typeof n === 'number' && n !== 0);
}

/**
 * The strategy's dropTypeDependentFields: switching type wipes what only the old type needed
 * (its allocations are released by the REST layer) unless the client changed those values
 * itself, so `kubectl patch -p '{"spec":{"type":"ClusterIP"}}'` works on a NodePort Service.
 */
function dropTypeDependentFields(obj: KubeObject, old: KubeObject): void {
  const spec = ensureRecord(obj, 'spec');
  const oldSpec = recordOf(old.spec);
  if (needsClusterIP(oldSpec) && !needsClusterIP(spec)) {
    if (sameList(oldSpec.clusterIPs, spec.clusterIPs)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (sameList(oldSpec.ipFamilies, spec.ipFamilies)) delete spec.ipFamilies;
    if (oldSpec.ipFamilyPolicy === spec.ipFamilyPolicy) delete spec.ipFamilyPolicy;
  }
  const oldNodePorts = new Set(nodePortsOf(oldSpec));
  if (needsNodePort(oldSpec) && !needsNodePort(spec) && nodePortsOf(spec).every((n) => oldNodePorts.has(n))) {
    for (const p of arrayOf(spec.ports)) if (isObject(p)) delete p.nodePort;
  }
  if (
    needsHealthCheckNodePort(oldSpec) &&
    !needsHealthCheckNodePort(spec) &&
    spec.healthCheckNodePort === oldSpec.healthCheckNodePort
  ) {
    delete spec.healthCheckNodePort;
  }
  if (oldSpec.type === 'LoadBalancer' && spec.type !== 'LoadBalancer') {
    for (const f of ['allocateLoadBalancerNodePorts', 'loadBalancerClass']) {
      if (spec[f] != null && spec[f] === oldSpec[f]) delete spec[f];
    }
  }
  if (
    externallyAccessible(oldSpec) &&
    !externallyAccessible(spec) &&
    spec.externalTrafficPolicy === oldSpec.externalTrafficPolicy
  ) {
    delete spec.externalTrafficPolicy;
  }
  if (spec.type !== 'LoadBalancer') obj.status = { ...recordOf(obj.status), loadBalancer: {} };
}

const IP_FAMILIES = ['IPv4', 'IPv6'];
const IP_FAMILY_POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];

/**
 * ValidateServiceClusterIPsRelatedFields: clusterIP, clusterIPs, ipFamilies and
 * ipFamilyPolicy on their own. The REST layer runs it before allocating, too.
 */
export function validateClusterIPFields(spec: Json): FieldError[] {
  if (spec.type === 'ExternalName') return [];
  const errs: FieldError[] = [];
  const ips = arrayOf<unknown>(spec.clusterIPs);
  if (str(spec.clusterIP)) {
    if (ips.length === 0) errs.push(required('spec.clusterIPs'));
    else if (ips[0] !== spec.clusterIP)
      errs.push(invalid('spec.clusterIPs', ips, 'first value must match `clusterIP`'));
  } else if (ips.length > 0) {
    errs.push(invalid('spec.clusterIPs', ips, 'must be empty when `clusterIP` is not specified'));
  }
  const families = arrayOf<unknown>(spec.ipFamilies);
  const seen = new Set<unknown>();
  families.forEach((f, i) => {
    if (!IP_FAMILIES.includes(f as string))
      errs.push(notSupported(index('spec.ipFamilies', i), f, IP_FAMILIES));
    if (seen.has(f)) errs.push(duplicate(index('spec.ipFamilies', i), f));
    seen.add(f);
  });
  if (spec.ipFamilyPolicy != null && !IP_FAMILY_POLICIES.includes(spec.ipFamilyPolicy as string))
    errs.push(notSupported('spec.ipFamilyPolicy', spec.ipFamilyPolicy, IP_FAMILY_POLICIES));
  let badIPs = false;
  ips.forEach((ip, i) => {
    if (i === 0 && ip === 'None') {
      if (ips.length > 1) {
        badIPs = true;
        errs.push(invalid('spec.clusterIPs', ips, "'None' must be the first and only value"));
      }
      return;
    }
    if (!isValidIP(str(ip))) {
      badIPs = true;
      errs.push(
        invalid(
          index('spec.clusterIPs', i),
          ip,
          'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
        ),
      );
    }
  });
  if (ips.length > 2) errs.push(invalid('spec.clusterIPs', ips, 'may only hold up to 2 values'));
  if (badIPs) return errs;
  const v6 = ips.filter((ip) => isIPv6(str(ip))).length;
  if (ips.length > 1 && (v6 === 0 || v6 === ips.length))
    errs.push(invalid('spec.clusterIPs', ips, 'may specify no more than one IP for each IP family'));
  if (!isHeadless(spec)) {
    ips.slice(0, families.length).forEach((ip, i) => {
      const family = families[i];
      if (family === 'IPv4' && isIPv6(str(ip)))
        errs.push(
          invalid(
            index('spec.clusterIPs', i),
            ip,
            `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``,
          ),
        );
      if (family === 'IPv6' && !isIPv6(str(ip)))
        errs.push(
          invalid(
            index('spec.clusterIPs', i),
            ip,
            `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``,
          ),
        );
    });
  }
  return errs;
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
    if (arrayOf(spec.ipFamilies).length > 0)
      errs.push(forbidden('spec.ipFamilies', 'may not be set for ExternalName services'));
    if (spec.ipFamilyPolicy != null)
      errs.push(forbidden('spec.ipFamilyPolicy', 'may not be set for ExternalName services'));
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
  errs.push(...validateClusterIPFields(spec));
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
  // Switching to or from ExternalName gains or drops every address, as does headlessness.
  if (spec.type === 'ExternalName' || oldSpec.type === 'ExternalName') return errs;
  if (!(isHeadless(spec) && isHeadless(oldSpec))) errs.push(...clusterIPsUpdateErrors(spec, oldSpec));
  if (isHeadless(spec) === isHeadless(oldSpec) && !isHeadless(spec))
    errs.push(...ipFamiliesUpdateErrors(spec, oldSpec));
  return errs;
}

/** validateUpgradeDowngradeClusterIPs: a secondary IP may come or go, the primary stays. */
function clusterIPsUpdateErrors(spec: Json, oldSpec: Json): FieldError[] {
  const errs: FieldError[] = [];
  const ips = arrayOf<unknown>(spec.clusterIPs);
  const oldIPs = arrayOf<unknown>(oldSpec.clusterIPs);
  const shown = spec.clusterIPs ?? null;
  if (ips.length === oldIPs.length) {
    oldIPs.forEach((ip, i) => {
      if (ips[i] !== ip) errs.push(invalid(index('spec.clusterIPs', i), shown, 'may not change once set'));
    });
    return errs;
  }
  if (ips.length === 0) errs.push(invalid('spec.clusterIPs[0]', shown, 'primary clusterIP can not be unset'));
  else if (oldIPs.length > 0 && ips[0] !== oldIPs[0])
    errs.push(invalid('spec.clusterIPs[0]', shown, 'may not change once set'));
  if (ips.length === 1 && ips.length < oldIPs.length && spec.ipFamilyPolicy !== 'SingleStack') {
    errs.push(
      invalid(
        'spec.ipFamilyPolicy',
        spec.ipFamilyPolicy ?? null,
        "must be set to 'SingleStack' when releasing the secondary clusterIP",
      ),
    );
  }
  return errs;
}

/** validateUpgradeDowngradeIPFamilies: the primary family stays. */
function ipFamiliesUpdateErrors(spec: Json, oldSpec: Json): FieldError[] {
  const families = arrayOf<unknown>(spec.ipFamilies);
  const oldFamilies = arrayOf<unknown>(oldSpec.ipFamilies);
  const shown = spec.ipFamilies ?? null;
  if (families.length === oldFamilies.length) {
    return oldFamilies.some((f, i) => families[i] !== f)
      ? [invalid('spec.ipFamilies[0]', shown, 'may not change once set')]
      : [];
  }
  const errs: FieldError[] = [];
  if (families.length > 0 && oldFamilies.length > 0 && families[0] !== oldFamilies[0])
    errs.push(invalid('spec.ipFamilies[0]', spec.clusterIPs ?? null, 'may not change once set'));
  if (
    families.length === 1 &&
    families.length < oldFamilies.length &&
    spec.ipFamilyPolicy !== 'SingleStack'
  ) {
    errs.push(
      invalid(
        'spec.ipFamilyPolicy',
        spec.ipFamilyPolicy ?? null,
        "must be set to 'SingleStack' when releasing the secondary ipFamily",
      ),
    );
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
      if (ctx.subresource === '') dropTypeDependentFields(obj, old);
    },
    validateCreate: (obj) => dedupe(validateService(obj)),
    validateUpdate(obj, old, ctx) {
      if (ctx.subresource === 'status') return dedupe(validateObjectMetaUpdate(obj.metadata, old.metadata));
      return dedupe([...validateService(obj), ...validateServiceUpdate(obj, old)]);
    },
    table: serviceTable,
  };
}
