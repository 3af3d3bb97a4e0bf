/**
 * PodSpec defaulting (core/v1 SetDefaults_PodSpec/Container/Pod) and validation
 * (ValidatePodSpec and friends), shared by Pods and every pod template.
 *
 * Why one file: defaulting and validation of one type (PodSpec), in upstream's order; its
 * rules refer to one another.
 */

import {
  canonicalizeQuantity,
  compareQuantities,
  formatQuantity,
  type Quantity,
  tryParseQuantity,
} from '../../../kube/quantity.ts';
import { isObject } from '../../../lib/json.ts';
import type { FieldError } from '../types.ts';
import { arrayOf, ensureRecord, type Json, recordOf, str } from './common.ts';
import {
  child,
  duplicate,
  forbidden,
  index,
  invalid,
  key,
  notFound,
  notSupported,
  required,
} from './field-errors.ts';
import { validatePodAffinityTerms } from './pod-affinity.ts';
import { validateNodeSelector } from './selector.ts';
import {
  IS_NEGATIVE,
  inclusiveRangeError,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidIP,
  isValidLabelValue,
  isValidPortName,
  isValidPortNum,
  PROTOCOLS,
  validateAnnotations,
  validateLabelName,
  validateLabels,
} from './validation.ts';

const MAX_INT32 = 2147483647;

// ---------------------------------------------------------------- defaulting

/** imagePullPolicy default: Always for `:latest` or no tag (and no digest), else IfNotPresent. */
export function defaultImagePullPolicy(image: string): 'Always' | 'IfNotPresent' {
  const withoutDigest = image.split('@');
  if (withoutDigest.length > 1) {
    // A digest pins the image; an explicit tag next to it still counts.
    const lastSlash = withoutDigest[0]!.lastIndexOf('/');
    const tag = withoutDigest[0]!.slice(lastSlash + 1).split(':')[1];
    return tag === 'latest' ? 'Always' : 'IfNotPresent';
  }
  const lastSlash = image.lastIndexOf('/');
  const tagPart = image.slice(lastSlash + 1);
  const colon = tagPart.indexOf(':');
  const tag = colon >= 0 ? tagPart.slice(colon + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/** Stored quantities are canonical (`1000m` reads back as `1`); unparsable values stay for validation to report. */
export function canonicalizeResourceMap(m: unknown): void {
  if (!isObject(m)) return;
  for (const [k, v] of Object.entries(m)) {
    if (typeof v !== 'string' && typeof v !== 'number') continue;
    const known = CANONICAL.get(v);
    if (known !== undefined) {
      m[k] = known;
      continue;
    }
    try {
      const canonical = canonicalizeQuantity(v);
      if (CANONICAL.size >= 10_000) CANONICAL.clear();
      CANONICAL.set(v, canonical);
      m[k] = canonical;
    } catch {
      // left as-is: validation reports it
    }
  }
}

/** Canonical forms already worked out: pods repeat the same few requests and limits. */
const CANONICAL = new Map<string | number, string>();

/** SetDefaults_HTTPGetAction. */
function defaultHttpGet(h: unknown): void {
  if (!isObject(h)) return;
  h.path ||= '/';
  h.scheme ||= 'HTTP';
}

/** SetDefaults_Probe (zero counts as unset: the Go fields are plain int32). */
function defaultProbe(p: unknown): void {
  if (!isObject(p)) return;
  p.timeoutSeconds ||= 1;
  p.periodSeconds ||= 10;
  p.successThreshold ||= 1;
  p.failureThreshold ||= 3;
  defaultHttpGet(p.httpGet);
  if (isObject(p.grpc)) p.grpc.service ??= '';
}

function defaultContainer(c: Json): void {
  if (!c.imagePullPolicy && typeof c.image === 'string') c.imagePullPolicy = defaultImagePullPolicy(c.image);
  c.terminationMessagePath ||= '/dev/termination-log';
  c.terminationMessagePolicy ||= 'File';
  const resources = ensureRecord(c, 'resources');
  canonicalizeResourceMap(resources.limits);
  canonicalizeResourceMap(resources.requests);
  for (const p of arrayOf(c.ports)) if (isObject(p)) p.protocol ||= 'TCP';
  for (const e of arrayOf(c.env)) {
    const fieldRef = recordOf(recordOf(e.valueFrom).fieldRef);
    if (isObject(recordOf(e.valueFrom).fieldRef)) fieldRef.apiVersion ||= 'v1';
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
  for (const h of [recordOf(c.lifecycle).postStart, recordOf(c.lifecycle).preStop]) {
    if (isObject(h)) defaultHttpGet(h.httpGet);
  }
}

/** SetDefaults_Volume, SetDefaults_*VolumeSource and what they hold. */
function defaultVolume(v: Json): void {
  // A volume naming no source is an emptyDir (ptr.AllPtrFieldsNil of its VolumeSource).
  if (!VOLUME_SOURCES.some((s) => v[s] != null)) v.emptyDir = {};
  const mode = 0o644;
  if (isObject(v.secret)) v.secret.defaultMode ??= mode;
  if (isObject(v.configMap)) v.configMap.defaultMode ??= mode;
  if (isObject(v.downwardAPI)) v.downwardAPI.defaultMode ??= mode;
  if (isObject(v.projected)) v.projected.defaultMode ??= mode;
  if (isObject(v.hostPath)) v.hostPath.type ??= '';
  if (isObject(v.projected)) {
    for (const source of arrayOf(v.projected.sources)) {
      // SetDefaults_ServiceAccountTokenProjection: an hour.
      if (isObject(source.serviceAccountToken)) source.serviceAccountToken.expirationSeconds ??= 3600;
    }
  }
  if (isObject(v.emptyDir) && v.emptyDir.sizeLimit != null) {
    const holder: Json = { sizeLimit: v.emptyDir.sizeLimit };
    canonicalizeResourceMap(holder);
    v.emptyDir.sizeLimit = holder.sizeLimit;
  }
}

/**
 * SetDefaults_PodSpec and its containers. `isPod` adds what only Pods get (SetDefaults_Pod):
 * requests defaulted from limits, enableServiceLinks, hostNetwork ports.
 */
export function defaultPodSpec(spec: Json, isPod: boolean): void {
  spec.dnsPolicy ||= 'ClusterFirst';
  spec.restartPolicy ||= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  if (!isObject(spec.securityContext)) spec.securityContext = {};
  spec.schedulerName ||= 'default-scheduler';
  // The deprecated alias mirrors serviceAccountName in both directions (v1 conversion).
  if (!spec.serviceAccountName && typeof spec.serviceAccount === 'string' && spec.serviceAccount) {
    spec.serviceAccountName = spec.serviceAccount;
  }
  if (spec.serviceAccountName) spec.serviceAccount = spec.serviceAccountName;
  const hostNetwork = spec.hostNetwork === true;
  for (const list of [spec.containers, spec.initContainers, spec.ephemeralContainers]) {
    for (const c of arrayOf(list)) {
      if (!isObject(c)) continue;
      defaultContainer(c);
      if (hostNetwork && isPod) {
        for (const p of arrayOf(c.ports)) if (isObject(p) && !p.hostPort) p.hostPort = p.containerPort;
      }
    }
  }
  for (const v of arrayOf(spec.volumes)) if (isObject(v)) defaultVolume(v);
  canonicalizeResourceMap(spec.overhead);
  if (isObject(spec.resources)) {
    canonicalizeResourceMap(spec.resources.limits);
    canonicalizeResourceMap(spec.resources.requests);
  }
  if (isPod) {
    for (const list of [spec.containers, spec.initContainers]) {
      for (const c of arrayOf(list)) {
        const res = recordOf(c.resources);
        if (!isObject(res.limits)) continue;
        const requests = ensureRecord(res, 'requests');
        for (const [name, q] of Object.entries(res.limits)) if (!(name in requests)) requests[name] = q;
      }
    }
    spec.enableServiceLinks ??= true;
  }
}

// ---------------------------------------------------------------- validation

const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
];

function validateVolumes(volumes: unknown, path: string): { errs: FieldError[]; names: Set<string> } {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  arrayOf(volumes).forEach((v, i) => {
    const p = index(path, i);
    const name = str(v.name);
    if (!name) errs.push(required(child(p, 'name')));
    else {
      for (const m of isDNS1123Label(name)) errs.push(invalid(child(p, 'name'), name, m));
      if (names.has(name)) errs.push(duplicate(child(p, 'name'), name));
      names.add(name);
    }
    const sources = VOLUME_SOURCES.filter((s) => v[s] != null);
    if (sources.length === 0) errs.push(required(p, 'must specify a volume type'));
    else if (sources.length > 1)
      errs.push(forbidden(child(p, sources[1]!), 'may not specify more than 1 volume type'));
  });
  return { errs, names };
}

function validateContainerPorts(ports: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  arrayOf(ports).forEach((port, i) => {
    const p = index(path, i);
    const name = str(port.name);
    if (name) {
      for (const m of isValidPortName(name)) errs.push(invalid(child(p, 'name'), name, m));
      if (names.has(name)) errs.push(duplicate(child(p, 'name'), name));
      names.add(name);
    }
    if (port.containerPort === undefined || port.containerPort === 0) {
      errs.push(required(child(p, 'containerPort')));
    } else {
      for (const m of isValidPortNum(port.containerPort))
        errs.push(invalid(child(p, 'containerPort'), port.containerPort, m));
    }
    if (port.hostPort !== undefined && port.hostPort !== 0) {
      for (const m of isValidPortNum(port.hostPort))
        errs.push(invalid(child(p, 'hostPort'), port.hostPort, m));
    }
    if (!port.protocol) errs.push(required(child(p, 'protocol')));
    else if (!PROTOCOLS.includes(str(port.protocol)))
      errs.push(notSupported(child(p, 'protocol'), port.protocol, PROTOCOLS));
  });
  return errs;
}

const ENV_NAME_RE = /^[ -<>-~]+$/;

function validateEnv(env: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  arrayOf(env).forEach((e, i) => {
    const p = index(path, i);
    const name = str(e.name);
    if (!name) errs.push(required(child(p, 'name')));
    else if (!ENV_NAME_RE.test(name)) {
      errs.push(
        invalid(
          child(p, 'name'),
          name,
          "a valid environment variable name must consist only of printable ASCII characters other than '='",
        ),
      );
    }
    const from = recordOf(e.valueFrom);
    if (e.valueFrom != null) {
      const sources = [
        'fieldRef',
        'resourceFieldRef',
        'configMapKeyRef',
        'secretKeyRef',
        'fileKeyRef',
      ].filter((s) => from[s] != null);
      if (sources.length === 0) {
        errs.push(
          invalid(
            child(p, 'valueFrom'),
            '',
            'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
          ),
        );
      } else if (sources.length > 1) {
        errs.push(invalid(child(p, 'valueFrom'), '', 'may not have more than one field specified at a time'));
      }
      if (str(e.value) !== '')
        errs.push(invalid(child(p, 'valueFrom'), '', 'may not be specified when `value` is not empty'));
    }
  });
  return errs;
}

function validateVolumeMounts(mounts: unknown, volumeNames: Set<string>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const paths = new Set<string>();
  arrayOf(mounts).forEach((m, i) => {
    const p = index(path, i);
    const name = str(m.name);
    if (!name) errs.push(required(child(p, 'name')));
    else if (!volumeNames.has(name)) errs.push(notFound(child(p, 'name'), name));
    const mountPath = str(m.mountPath);
    if (!mountPath) errs.push(required(child(p, 'mountPath')));
    else if (paths.has(mountPath)) errs.push(invalid(child(p, 'mountPath'), mountPath, 'must be unique'));
    paths.add(mountPath);
  });
  return errs;
}

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);

function isHugePages(name: string): boolean {
  return name.startsWith('hugepages-');
}

function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

function isOvercommitAllowed(name: string): boolean {
  return isNativeResource(name) && !isHugePages(name);
}

function validateContainerResourceName(name: string, path: string): FieldError[] {
  const errs = isQualifiedName(name).map((m) => invalid(path, name, m));
  if (!name.includes('/')) {
    if (!STANDARD_CONTAINER_RESOURCES.has(name) && !isHugePages(name)) {
      errs.push(invalid(path, name, 'must be a standard resource for containers'));
    }
  } else if (!isNativeResource(name)) {
    if (name.startsWith('requests.') || isQualifiedName(`requests.${name}`).length > 0) {
      errs.push(invalid(path, name, "doesn't follow extended resource name standard"));
    }
  }
  return errs;
}

interface ParsedQuantity {
  q?: Quantity;
  errs: FieldError[];
}

function parseQuantityField(name: string, raw: unknown, path: string): ParsedQuantity {
  const q = tryParseQuantity(raw);
  if (!q) {
    return {
      errs: [
        invalid(
          path,
          raw,
          "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
      ],
    };
  }
  const errs: FieldError[] = [];
  if (q.nanos < 0n) errs.push(invalid(path, formatQuantity(q), IS_NEGATIVE));
  // Extended resources are counted, not measured.
  if (!isNativeResource(name) && q.nanos % 1_000_000_000n !== 0n)
    errs.push(invalid(path, formatQuantity(q), 'must be an integer'));
  return { q, errs };
}

/** validateResourceRequirements for containers (and pod-level resources). */
export function validateResourceRequirements(resources: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const r = recordOf(resources);
  const limPath = child(path, 'limits');
  const reqPath = child(path, 'requests');
  const limits: Record<string, Quantity> = {};
  for (const [name, raw] of Object.entries(recordOf(r.limits))) {
    const p = key(limPath, name);
    errs.push(...validateContainerResourceName(name, p));
    const parsed = parseQuantityField(name, raw, p);
    errs.push(...parsed.errs);
    if (parsed.q) limits[name] = parsed.q;
  }
  for (const [name, raw] of Object.entries(recordOf(r.requests))) {
    const p = key(reqPath, name);
    errs.push(...validateContainerResourceName(name, p));
    const parsed = parseQuantityField(name, raw, p);
    errs.push(...parsed.errs);
    if (!parsed.q) continue;
    const limit = limits[name];
    if (limit) {
      const cmp = compareQuantities(parsed.q, limit);
      if (cmp !== 0 && !isOvercommitAllowed(name)) {
        errs.push(
          invalid(
            reqPath,
            formatQuantity(parsed.q),
            `must be equal to ${name} limit of ${formatQuantity(limit)}`,
          ),
        );
      } else if (cmp > 0) {
        errs.push(
          invalid(
            reqPath,
            formatQuantity(parsed.q),
            `must be less than or equal to ${name} limit of ${formatQuantity(limit)}`,
          ),
        );
      }
    } else if (!isOvercommitAllowed(name)) {
      errs.push(required(limPath, 'Limit must be set for non overcommitable resources'));
    }
  }
  return errs;
}

const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'];

function validateProbe(
  probe: unknown,
  path: string,
  kind: 'liveness' | 'readiness' | 'startup',
): FieldError[] {
  if (!isObject(probe)) return [];
  const errs: FieldError[] = [];
  const handlers = PROBE_HANDLERS.filter((h) => probe[h] != null);
  if (handlers.length === 0) errs.push(required(path, 'must specify a handler type'));
  for (const h of handlers.slice(1))
    errs.push(forbidden(child(path, h), 'may not specify more than 1 handler type'));
  for (const f of [
    'initialDelaySeconds',
    'timeoutSeconds',
    'periodSeconds',
    'successThreshold',
    'failureThreshold',
  ]) {
    if (typeof probe[f] === 'number' && (probe[f] as number) < 0)
      errs.push(invalid(child(path, f), probe[f], IS_NEGATIVE));
  }
  if (kind !== 'readiness' && typeof probe.successThreshold === 'number' && probe.successThreshold !== 1) {
    errs.push(invalid(child(path, 'successThreshold'), probe.successThreshold, 'must be 1'));
  }
  const port = recordOf(probe.httpGet).port ?? recordOf(probe.tcpSocket).port;
  if (typeof port === 'number') {
    const hp = child(path, probe.httpGet != null ? 'httpGet' : 'tcpSocket');
    for (const m of isValidPortNum(port)) errs.push(invalid(child(hp, 'port'), port, m));
  }
  return errs;
}

function validateLifecycle(lifecycle: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const l = recordOf(lifecycle);
  for (const hook of ['postStart', 'preStop']) {
    const h = l[hook];
    if (!isObject(h)) continue;
    const handlers = [...PROBE_HANDLERS, 'sleep'].filter((k) => h[k] != null && k !== 'grpc');
    if (handlers.length === 0) errs.push(required(child(path, hook), 'must specify a handler type'));
    for (const x of handlers.slice(1))
      errs.push(forbidden(child(child(path, hook), x), 'may not specify more than 1 handler type'));
  }
  return errs;
}

function validateContainerCommon(c: Json, volumeNames: Set<string>, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(c.name);
  if (!name) errs.push(required(child(p, 'name')));
  else for (const m of isDNS1123Label(name)) errs.push(invalid(child(p, 'name'), name, m));
  if (!str(c.image)) errs.push(required(child(p, 'image')));
  const tmp = c.terminationMessagePolicy;
  if (!tmp) errs.push(required(child(p, 'terminationMessagePolicy')));
  else if (tmp !== 'File' && tmp !== 'FallbackToLogsOnError') {
    errs.push(notSupported(child(p, 'terminationMessagePolicy'), tmp, ['File', 'FallbackToLogsOnError']));
  }
  errs.push(...validateContainerPorts(c.ports, child(p, 'ports')));
  errs.push(...validateEnv(c.env, child(p, 'env')));
  errs.push(...validateVolumeMounts(c.volumeMounts, volumeNames, child(p, 'volumeMounts')));
  const pull = c.imagePullPolicy;
  if (!pull) errs.push(required(child(p, 'imagePullPolicy')));
  else if (!PULL_POLICIES.includes(str(pull)))
    errs.push(notSupported(child(p, 'imagePullPolicy'), pull, PULL_POLICIES));
  errs.push(...validateResourceRequirements(c.resources, child(p, 'resources')));
  return errs;
}

function validateContainers(containers: unknown, volumeNames: Set<string>, path: string): FieldError[] {
  const list = arrayOf(containers);
  if (list.length === 0) return [required(path)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  list.forEach((c, i) => {
    const p = index(path, i);
    if (!isObject(c)) {
      errs.push(invalid(p, c, 'must be an object'));
      return;
    }
    errs.push(...validateContainerCommon(c, volumeNames, p));
    const name = str(c.name);
    if (names.has(name)) errs.push(duplicate(child(p, 'name'), name));
    else names.add(name);
    errs.push(...validateLifecycle(c.lifecycle, child(p, 'lifecycle')));
    errs.push(...validateProbe(c.livenessProbe, child(p, 'livenessProbe'), 'liveness'));
    errs.push(...validateProbe(c.readinessProbe, child(p, 'readinessProbe'), 'readiness'));
    errs.push(...validateProbe(c.startupProbe, child(p, 'startupProbe'), 'startup'));
    if (c.restartPolicy != null)
      errs.push(forbidden(child(p, 'restartPolicy'), 'may not be set for non-init containers'));
  });
  return errs;
}

function validateInitContainers(
  inits: unknown,
  regular: unknown,
  volumeNames: Set<string>,
  path: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set(arrayOf(regular).map((c) => str(c.name)));
  arrayOf(inits).forEach((c, i) => {
    const p = index(path, i);
    errs.push(...validateContainerCommon(c, volumeNames, p));
    let restartAlways = false;
    if (c.restartPolicy != null) {
      if (c.restartPolicy !== 'Always')
        errs.push(notSupported(child(p, 'restartPolicy'), c.restartPolicy, ['Always']));
      restartAlways = c.restartPolicy === 'Always';
    }
    const name = str(c.name);
    if (names.has(name)) errs.push(duplicate(child(p, 'name'), name));
    else if (name) names.add(name);
    if (restartAlways) {
      errs.push(...validateLifecycle(c.lifecycle, child(p, 'lifecycle')));
      errs.push(...validateProbe(c.livenessProbe, child(p, 'livenessProbe'), 'liveness'));
      errs.push(...validateProbe(c.readinessProbe, child(p, 'readinessProbe'), 'readiness'));
      errs.push(...validateProbe(c.startupProbe, child(p, 'startupProbe'), 'startup'));
    } else {
      for (const f of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) {
        if (c[f] != null)
          errs.push(
            forbidden(child(p, f), 'may not be set for init containers without restartPolicy=Always'),
          );
      }
    }
  });
  return errs;
}

/**
 * The fields an ephemeral container may not set: everything but upstream's
 * `allowedEphemeralContainerFields` (resources count as unset when empty, as Go's zero value).
 */
const EPHEMERAL_FORBIDDEN = [
  'ports',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'lifecycle',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
];
const EPHEMERAL_MESSAGE = 'cannot be set for an Ephemeral Container';

function isZero(v: unknown): boolean {
  if (v == null) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObject(v)) return Object.values(v).every(isZero);
  return false;
}

/** validateEphemeralContainers of pkg/apis/core/validation/validation.go. */
function validateEphemeralContainers(spec: Json, volumeNames: Set<string>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const others = new Set(
    [...arrayOf(spec.containers), ...arrayOf(spec.initContainers)].map((c) => str(c.name)),
  );
  const all = new Set(others);
  arrayOf(spec.ephemeralContainers).forEach((c, i) => {
    const p = index(path, i);
    errs.push(...validateContainerCommon(c, volumeNames, p));
    const name = str(c.name);
    if (all.has(name)) errs.push(duplicate(child(p, 'name'), name));
    else all.add(name);
    const target = str(c.targetContainerName);
    if (target && !others.has(target)) errs.push(notFound(child(p, 'targetContainerName'), target));
    for (const f of EPHEMERAL_FORBIDDEN) {
      if (!isZero(c[f])) errs.push(forbidden(child(p, f), EPHEMERAL_MESSAGE));
    }
    arrayOf(c.volumeMounts).forEach((m, j) => {
      for (const f of ['subPath', 'subPathExpr']) {
        if (str(m[f])) errs.push(forbidden(child(index(child(p, 'volumeMounts'), j), f), EPHEMERAL_MESSAGE));
      }
    });
  });
  return errs;
}

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

export function validateTaintEffect(effect: unknown, allowEmpty: boolean, path: string): FieldError[] {
  if (!allowEmpty && !effect) return [required(path)];
  if (!effect) return [];
  return TAINT_EFFECTS.includes(str(effect)) ? [] : [notSupported(path, effect, TAINT_EFFECTS)];
}

/** ValidateTolerations. */
export function validateTolerations(tolerations: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  arrayOf(tolerations).forEach((t, i) => {
    const p = index(path, i);
    const k = str(t.key);
    if (k) errs.push(...validateLabelName(k, child(p, 'key')));
    if (!k && t.operator !== 'Exists') {
      errs.push(
        invalid(
          child(p, 'operator'),
          t.operator ?? '',
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (t.tolerationSeconds != null && t.effect !== 'NoExecute') {
      errs.push(
        invalid(
          child(p, 'effect'),
          t.effect ?? '',
          "effect must be 'NoExecute' when `tolerationSeconds` is set",
        ),
      );
    }
    switch (t.operator ?? '') {
      case 'Equal':
      case '':
        for (const m of isValidLabelValue(str(t.value))) errs.push(invalid(child(p, 'operator'), t.value, m));
        break;
      case 'Exists':
        if (str(t.value))
          errs.push(
            invalid(child(p, 'operator'), t.value, "value must be empty when `operator` is 'Exists'"),
          );
        break;
      default:
        errs.push(notSupported(child(p, 'operator'), t.operator, ['Equal', 'Exists']));
    }
    if (t.effect) errs.push(...validateTaintEffect(t.effect, true, child(p, 'effect')));
  });
  return errs;
}

function validateSchedulingGates(gates: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  arrayOf(gates).forEach((g, i) => {
    const name = str(g.name);
    for (const m of isQualifiedName(name)) errs.push(invalid(index(path, i), name, m));
    if (seen.has(name)) errs.push(duplicate(index(path, i), name));
    seen.add(name);
  });
  return errs;
}

function validateAffinity(affinity: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const a = recordOf(affinity);
  const na = recordOf(a.nodeAffinity);
  if (na.requiredDuringSchedulingIgnoredDuringExecution != null) {
    errs.push(
      ...validateNodeSelector(
        na.requiredDuringSchedulingIgnoredDuringExecution,
        child(child(path, 'nodeAffinity'), 'requiredDuringSchedulingIgnoredDuringExecution'),
      ),
    );
  }
  arrayOf(na.preferredDuringSchedulingIgnoredDuringExecution).forEach((t, i) => {
    const p = index(child(child(path, 'nodeAffinity'), 'preferredDuringSchedulingIgnoredDuringExecution'), i);
    if (typeof t.weight !== 'number' || t.weight <= 0 || t.weight > 100) {
      errs.push(invalid(child(p, 'weight'), t.weight ?? 0, 'must be in the range 1-100'));
    }
  });
  errs.push(...validatePodAffinityTerms(a, path));
  return errs;
}

export interface PodSpecValidationOptions {
  /** The spec belongs to a Pod rather than a template (Pod-only rules apply). */
  isPod: boolean;
}

/** ValidatePodSpec (plus the pod-only container checks when opts.isPod). */
export function validatePodSpec(spec: Json, path: string, opts: PodSpecValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  if (spec.terminationGracePeriodSeconds == null)
    errs.push(required(child(path, 'terminationGracePeriodSeconds')));
  const { errs: volErrs, names: volumeNames } = validateVolumes(spec.volumes, child(path, 'volumes'));
  errs.push(...volErrs);
  errs.push(...validateContainers(spec.containers, volumeNames, child(path, 'containers')));
  errs.push(
    ...validateInitContainers(
      spec.initContainers,
      spec.containers,
      volumeNames,
      child(path, 'initContainers'),
    ),
  );
  errs.push(...validateEphemeralContainers(spec, volumeNames, child(path, 'ephemeralContainers')));

  const restart = spec.restartPolicy;
  if (!restart) errs.push(required(child(path, 'restartPolicy')));
  else if (!RESTART_POLICIES.includes(str(restart)))
    errs.push(notSupported(child(path, 'restartPolicy'), restart, RESTART_POLICIES));
  const dns = spec.dnsPolicy;
  if (!dns) errs.push(required(child(path, 'dnsPolicy')));
  else if (!DNS_POLICIES.includes(str(dns)))
    errs.push(notSupported(child(path, 'dnsPolicy'), dns, DNS_POLICIES));
  else if (dns === 'None' && spec.dnsConfig == null) {
    errs.push(required(child(path, 'dnsConfig'), 'must provide `dnsConfig` when `dnsPolicy` is None'));
  }

  errs.push(...validateLabels(spec.nodeSelector, child(path, 'nodeSelector')));
  errs.push(...validateAffinity(spec.affinity, child(path, 'affinity')));
  arrayOf(spec.readinessGates).forEach((g, i) => {
    for (const m of isQualifiedName(str(g.conditionType))) {
      errs.push(
        invalid(child(index(child(path, 'readinessGates'), i), 'conditionType'), g.conditionType ?? '', m),
      );
    }
  });
  errs.push(...validateSchedulingGates(spec.schedulingGates, child(path, 'schedulingGates')));
  arrayOf(spec.imagePullSecrets).forEach((s, i) => {
    if (Object.keys(s).some((k) => k !== 'name'))
      errs.push(invalid(index(child(path, 'imagePullSecrets'), i), s, 'only name may be set'));
  });

  const sa = str(spec.serviceAccountName);
  if (sa)
    for (const m of isDNS1123Subdomain(sa)) errs.push(invalid(child(path, 'serviceAccountName'), sa, m));
  const nodeName = str(spec.nodeName);
  if (nodeName)
    for (const m of isDNS1123Subdomain(nodeName)) errs.push(invalid(child(path, 'nodeName'), nodeName, m));
  if (spec.activeDeadlineSeconds != null) {
    const v = spec.activeDeadlineSeconds;
    if (typeof v !== 'number' || v < 1 || v > MAX_INT32) {
      errs.push(invalid(child(path, 'activeDeadlineSeconds'), v, inclusiveRangeError(1, MAX_INT32)));
    }
  }
  for (const f of ['hostname', 'subdomain']) {
    const v = str(spec[f]);
    if (v) for (const m of isDNS1123Label(v)) errs.push(invalid(child(path, f), v, m));
  }
  errs.push(...validateTolerations(spec.tolerations, child(path, 'tolerations')));
  arrayOf(spec.hostAliases).forEach((h, i) => {
    const p = index(child(path, 'hostAliases'), i);
    if (!isValidIP(str(h.ip)))
      errs.push(
        invalid(child(p, 'ip'), h.ip ?? '', 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'),
      );
  });
  const pc = str(spec.priorityClassName);
  if (pc) for (const m of isDNS1123Subdomain(pc)) errs.push(invalid(child(path, 'priorityClassName'), pc, m));
  if (
    spec.preemptionPolicy != null &&
    spec.preemptionPolicy !== 'PreemptLowerPriority' &&
    spec.preemptionPolicy !== 'Never'
  ) {
    errs.push(
      notSupported(child(path, 'preemptionPolicy'), spec.preemptionPolicy, ['PreemptLowerPriority', 'Never']),
    );
  }
  if (spec.overhead != null)
    errs.push(
      ...validateResourceRequirements({ requests: spec.overhead }, child(path, 'overhead')).map(
        fixOverheadPath,
      ),
    );
  if (spec.resources != null)
    errs.push(...validateResourceRequirements(spec.resources, child(path, 'resources')));

  if (opts.isPod) {
    for (const list of ['containers', 'initContainers']) {
      arrayOf(spec[list]).forEach((c, i) => {
        const image = str(c.image);
        if (image.trim() !== image) {
          errs.push(
            invalid(
              child(index(child(path, list), i), 'image'),
              image,
              'must not have leading or trailing whitespace',
            ),
          );
        }
      });
    }
  }
  return errs;
}

function fixOverheadPath(e: FieldError): FieldError {
  return { ...e, field: e.field.replace('.overhead.requests', '.overhead') };
}

/** ValidatePodTemplateSpec: template labels/annotations (paths `…template.labels`) and the spec. */
export function validatePodTemplateSpec(template: unknown, path: string): FieldError[] {
  if (!isObject(template)) return [required(path)];
  const errs: FieldError[] = [];
  const meta = recordOf(template.metadata);
  errs.push(...validateLabels(meta.labels, child(path, 'labels')));
  errs.push(...validateAnnotations(meta.annotations, child(path, 'annotations')));
  errs.push(...validatePodSpec(recordOf(template.spec), child(path, 'spec'), { isPod: false }));
  if (arrayOf(recordOf(template.spec).ephemeralContainers).length > 0) {
    errs.push(
      forbidden(
        child(child(path, 'spec'), 'ephemeralContainers'),
        'ephemeral containers not allowed in pod template',
      ),
    );
  }
  return errs;
}

/** Defaults a pod template in place (SetDefaults_PodSpec on template.spec). */
export function defaultPodTemplate(template: unknown): void {
  if (!isObject(template)) return;
  defaultPodSpec(ensureRecord(template, 'spec'), false);
}
