/** Nodes: pkg/registry/core/node/strategy.go, ValidateNode/ValidateNodeUpdate, printNode. */

import { translateTimestampSince } from '../../../kube/duration.ts';
import { tryParseQuantity } from '../../../kube/quantity.ts';
import { isObject } from '../../../lib/json.ts';
import type { FieldError, KubeObject, Strategy, TablePrinter } from '../types.ts';
import {
  AGE_COLUMN,
  arrayOf,
  column,
  type Json,
  NAME_COLUMN,
  recordOf,
  splitStatusUpdate,
  str,
} from './common.ts';
import { child, dedupe, duplicate, forbidden, index, invalid, key } from './field-errors.ts';
import { canonicalizeResourceMap, validateTaintEffect } from './podspec.ts';
import {
  isValidIP,
  isValidLabelValue,
  nameIsDNSSubdomain,
  validateLabelName,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

function isCIDR(v: string): boolean {
  const [ip, bits, ...rest] = v.split('/');
  if (rest.length > 0 || ip === undefined || bits === undefined || !/^\d+$/.test(bits)) return false;
  const max = ip.includes(':') ? 128 : 32;
  return isValidIP(ip) && Number(bits) <= max;
}

export function defaultNode(obj: KubeObject): void {
  const spec = recordOf(obj.spec);
  // podCIDR mirrors podCIDRs[0] (v1 conversion keeps them in sync).
  const cidrs = arrayOf<string>(spec.podCIDRs);
  if (cidrs.length === 0 && str(spec.podCIDR)) spec.podCIDRs = [spec.podCIDR];
  else if (cidrs.length > 0) spec.podCIDR = cidrs[0];
  obj.spec = spec;
  const status = recordOf(obj.status);
  canonicalizeResourceMap(status.capacity);
  canonicalizeResourceMap(status.allocatable);
  // SetDefaults_NodeStatus: allocatable defaults to capacity.
  if (isObject(status.capacity) && status.allocatable == null) status.allocatable = { ...status.capacity };
}

function validateTaints(taints: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  arrayOf(taints).forEach((t, i) => {
    const p = index(path, i);
    errs.push(...validateLabelName(str(t.key), child(p, 'key')));
    if (t.value != null)
      for (const m of isValidLabelValue(str(t.value))) errs.push(invalid(child(p, 'value'), t.value, m));
    errs.push(...validateTaintEffect(t.effect, false, child(p, 'effect')));
    const id = `${str(t.key)}\u0000${str(t.effect)}`;
    if (seen.has(id)) errs.push(duplicate(p, t));
    seen.add(id);
  });
  return errs;
}

function validateResourceMap(m: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [name, v] of Object.entries(recordOf(m))) {
    const q = tryParseQuantity(v);
    if (!q)
      errs.push(
        invalid(
          key(path, name),
          v,
          "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
      );
    else if (q.nanos < 0n) errs.push(invalid(key(path, name), v, 'must be greater than or equal to 0'));
  }
  return errs;
}

export function validateNode(obj: KubeObject): FieldError[] {
  const spec = recordOf(obj.spec);
  const status = recordOf(obj.status);
  const errs = validateObjectMeta(obj.metadata, false, nameIsDNSSubdomain);
  errs.push(...validateTaints(spec.taints, 'spec.taints'));
  arrayOf<string>(spec.podCIDRs).forEach((c, i) => {
    if (!isCIDR(String(c)))
      errs.push(
        invalid(
          index('spec.podCIDRs', i),
          c,
          'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
        ),
      );
  });
  errs.push(...validateResourceMap(status.capacity, 'status.capacity'));
  errs.push(...validateResourceMap(status.allocatable, 'status.allocatable'));
  return errs;
}

export function validateNodeUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateObjectMetaUpdate(obj.metadata, old.metadata);
  const spec = recordOf(obj.spec);
  const oldSpec = recordOf(old.spec);
  const oldCIDRs = arrayOf<string>(oldSpec.podCIDRs);
  const newCIDRs = arrayOf<string>(spec.podCIDRs);
  if (
    oldCIDRs.length > 0 &&
    (oldCIDRs.length !== newCIDRs.length || oldCIDRs.some((c, i) => c !== newCIDRs[i]))
  ) {
    errs.push(forbidden('spec.podCIDRs', 'node updates may not change podCIDR except from "" to valid'));
  }
  if (str(oldSpec.providerID) && oldSpec.providerID !== spec.providerID) {
    errs.push(forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  }
  return errs;
}

function nodeRoles(labels: Record<string, string> | undefined): string[] {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const role = k.slice('node-role.kubernetes.io/'.length);
      if (role) roles.add(role);
    } else if (k === 'kubernetes.io/role' && v) {
      roles.add(v);
    }
  }
  return [...roles].sort();
}

/** The STATUS column of `kubectl get nodes`: Ready / NotReady / Unknown, then SchedulingDisabled. */
export function nodeStatusString(obj: KubeObject): string {
  const ready = arrayOf(recordOf(obj.status).conditions).find((c) => c.type === 'Ready');
  const parts = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (recordOf(obj.spec).unschedulable === true) parts.push('SchedulingDisabled');
  return parts.join(',');
}

function address(obj: KubeObject, type: string): string {
  return str(arrayOf(recordOf(obj.status).addresses).find((a) => a.type === type)?.address) || '<none>';
}

export const nodeTable: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', { description: 'The status of the node' }),
    column('Roles', 'string', { description: 'The roles of the node' }),
    AGE_COLUMN,
    column('Version', 'string', { description: 'Kubelet Version reported by the node.' }),
    column('Internal-IP', 'string', { priority: 1 }),
    column('External-IP', 'string', { priority: 1 }),
    column('OS-Image', 'string', { priority: 1 }),
    column('Kernel-Version', 'string', { priority: 1 }),
    column('Container-Runtime', 'string', { priority: 1 }),
  ],
  cells(obj, now) {
    const info: Json = recordOf(recordOf(obj.status).nodeInfo);
    const roles = nodeRoles(obj.metadata?.labels).join(',');
    return [
      obj.metadata?.name ?? '',
      nodeStatusString(obj),
      roles || '<none>',
      translateTimestampSince(obj.metadata?.creationTimestamp, now),
      str(info.kubeletVersion),
      address(obj, 'InternalIP'),
      address(obj, 'ExternalIP'),
      str(info.osImage) || '<unknown>',
      str(info.kernelVersion) || '<unknown>',
      str(info.containerRuntimeVersion) || '<unknown>',
    ];
  },
};

export function nodeStrategy(): Strategy {
  return {
    default: defaultNode,
    // Nodes are the one kind whose status may be written on create: a no-op here tells
    // the server not to drop it.
    prepareForCreate() {},
    prepareForUpdate(obj, old, ctx) {
      splitStatusUpdate(obj, old, ctx, 'none');
    },
    validateCreate: (obj) => dedupe(validateNode(obj)),
    validateUpdate(obj, old, ctx) {
      if (ctx.subresource === 'status') return dedupe(validateNodeUpdate(obj, old));
      return dedupe([...validateNode(obj), ...validateNodeUpdate(obj, old)]);
    },
    selectableFields: (obj) => ({ 'spec.unschedulable': String(recordOf(obj.spec).unschedulable === true) }),
    table: nodeTable,
  };
}
