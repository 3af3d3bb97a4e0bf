/**
 * `kubectl get` columns of the catalog kinds, as kube-apiserver's table convertor prints
 * them (pkg/printers/internalversion/printers.go: the column definitions in AddHandlers and
 * the print<Kind> functions; APIService from kube-aggregator's apiservice printer).
 *
 * Why one file: one short, independent column table per kind, in the order of upstream's
 * printers.go (one file there too).
 */
import { translateTimestampSince } from '../../../kube/duration.ts';
import { isObject } from '../../../lib/json.ts';
import type { KubeObject, TableColumn, TablePrinter } from '../types.ts';
import {
  AGE_COLUMN,
  arrayOf,
  column,
  containerCells,
  type Json,
  NAME_COLUMN,
  num,
  recordOf,
  str,
  TEMPLATE_WIDE_COLUMNS,
} from './common.ts';
import { formatLabelSelector, formatLabels } from './selector.ts';

type Cells = (obj: KubeObject, now: Date) => unknown[];

/** NAME, the kind's cells, then AGE where upstream puts it last (most kinds). */
function printer(columns: TableColumn[], cells: Cells): TablePrinter {
  return { columns, cells };
}

const name = (o: KubeObject) => o.metadata?.name ?? '';
const age = (o: KubeObject, now: Date) => translateTimestampSince(o.metadata?.creationTimestamp, now);
const spec = (o: KubeObject) => recordOf(o.spec);
const status = (o: KubeObject) => recordOf(o.status);
const orNone = (s: string) => (s === '' ? '<none>' : s);
const orUnset = (s: string) => (s === '' ? '<unset>' : s);
/** printBoolPtr: "True"/"False", `<unset>` for nil. */
const boolPtr = (v: unknown) => (typeof v === 'boolean' ? (v ? 'True' : 'False') : '<unset>');
/** Go's %v of an int-or-string value. */
const intOrString = (v: unknown) => (v === undefined || v === null ? '' : String(v));

export const componentStatusTable = printer(
  [NAME_COLUMN, column('Status'), column('Message'), column('Error')],
  (o) => {
    let st = 'Unknown';
    let message = '';
    let error = '';
    for (const c of arrayOf((o as Json).conditions)) {
      if (c.type === 'Healthy') {
        st = c.status === 'True' ? 'Healthy' : 'Unhealthy';
        message = str(c.message);
        error = str(c.error);
        break;
      }
    }
    return [name(o), st, message, error];
  },
);

/** The short access mode names of GetAccessModesAsString, in its fixed order. */
export function accessModesString(modes: unknown): string {
  const list = arrayOf<string>(modes);
  const out: string[] = [];
  const short: Array<[string, string]> = [
    ['ReadWriteOnce', 'RWO'],
    ['ReadOnlyMany', 'ROX'],
    ['ReadWriteMany', 'RWX'],
    ['ReadWriteOncePod', 'RWOP'],
  ];
  for (const [long, s] of short) if (list.includes(long)) out.push(s);
  return out.join(',');
}

export const persistentVolumeClaimTable = printer(
  [
    NAME_COLUMN,
    column('Status'),
    column('Volume'),
    column('Capacity'),
    column('Access Modes'),
    column('StorageClass'),
    column('VolumeAttributesClass'),
    AGE_COLUMN,
    column('VolumeMode', 'string', { priority: 1 }),
  ],
  (o, now) => {
    const s = spec(o);
    const st = status(o);
    const phase = o.metadata?.deletionTimestamp ? 'Terminating' : str(st.phase);
    let capacity = '';
    let modes = '';
    if (s.volumeName) {
      modes = accessModesString(st.accessModes);
      capacity = str(recordOf(st.capacity).storage);
    }
    return [
      name(o),
      phase,
      str(s.volumeName),
      capacity,
      modes,
      storageClassOf(o),
      orUnset(str(s.volumeAttributesClassName)),
      age(o, now),
      str(s.volumeMode) || '<unset>',
    ];
  },
);

/** The class a PV or PVC names: spec.storageClassName, else the beta annotation. */
export function storageClassOf(o: KubeObject): string {
  const ann = o.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'];
  if (ann !== undefined) return ann;
  return str(spec(o).storageClassName);
}

export const persistentVolumeTable = printer(
  [
    NAME_COLUMN,
    column('Capacity'),
    column('Access Modes'),
    column('Reclaim Policy'),
    column('Status'),
    column('Claim'),
    column('StorageClass'),
    column('VolumeAttributesClass'),
    column('Reason'),
    AGE_COLUMN,
    column('VolumeMode', 'string', { priority: 1 }),
  ],
  (o, now) => {
    const s = spec(o);
    const st = status(o);
    const ref = recordOf(s.claimRef);
    const claim = s.claimRef ? `${str(ref.namespace)}/${str(ref.name)}` : '';
    const phase = o.metadata?.deletionTimestamp ? 'Terminating' : str(st.phase);
    return [
      name(o),
      str(recordOf(s.capacity).storage),
      accessModesString(s.accessModes),
      str(s.persistentVolumeReclaimPolicy),
      phase,
      claim,
      storageClassOf(o),
      orUnset(str(s.volumeAttributesClassName)),
      str(st.reason),
      age(o, now),
      str(s.volumeMode) || '<unset>',
    ];
  },
);

export const podTemplateTable = printer(
  [NAME_COLUMN, column('Containers'), column('Images'), column('Pod Labels')],
  (o) => {
    const template = recordOf((o as Json).template);
    const [names, images] = containerCells(recordOf(template.spec).containers);
    return [
      name(o),
      names,
      images,
      formatLabels(recordOf(template.metadata).labels as Record<string, string>),
    ];
  },
);

export const replicationControllerTable = printer(
  [
    NAME_COLUMN,
    column('Desired', 'integer'),
    column('Current', 'integer'),
    column('Ready', 'integer'),
    AGE_COLUMN,
    ...TEMPLATE_WIDE_COLUMNS,
  ],
  (o, now) => {
    const s = spec(o);
    const st = status(o);
    const [names, images] = containerCells(recordOf(recordOf(s.template).spec).containers);
    return [
      name(o),
      num(s.replicas, 1),
      num(st.replicas),
      num(st.readyReplicas),
      age(o, now),
      names,
      images,
      formatLabels(s.selector as Record<string, string>),
    ];
  },
);

/** printResourceQuota: `name: used/hard` per resource, sorted, limits.* in their own column. */
export const resourceQuotaTable = printer(
  [NAME_COLUMN, AGE_COLUMN, column('Request'), column('Limit')],
  (o, now) => {
    const hard = recordOf(status(o).hard);
    const used = recordOf(status(o).used);
    const request: string[] = [];
    const limit: string[] = [];
    for (const r of Object.keys(hard).sort()) {
      const text = `${r}: ${str(used[r]) || '0'}/${str(hard[r])}`;
      if (r.split('.')[0] === 'limits' && r.includes('.')) limit.push(text);
      else request.push(text);
    }
    return [name(o), age(o, now), request.join(', '), limit.join(', ')];
  },
);

export const validatingAdmissionPolicyTable = printer(
  [NAME_COLUMN, column('Validations', 'integer'), column('ParamKind'), AGE_COLUMN],
  (o, now) => {
    const s = spec(o);
    const pk = recordOf(s.paramKind);
    const paramKind = s.paramKind ? `${str(pk.apiVersion)}/${str(pk.kind)}` : '<unset>';
    return [name(o), arrayOf(s.validations).length, paramKind, age(o, now)];
  },
);

export const validatingAdmissionPolicyBindingTable = printer(
  [NAME_COLUMN, column('PolicyName'), column('ParamRef'), AGE_COLUMN],
  (o, now) => {
    const s = spec(o);
    let paramRef = '<unset>';
    if (isObject(s.paramRef)) {
      const pr = s.paramRef;
      if (pr.namespace) paramRef = `${str(pr.namespace)}/${str(pr.name) || '*'}`;
      else paramRef = `*/${str(pr.name) || '*'}`;
      if (pr.selector) paramRef = `${paramRef} [${formatLabelSelector(pr.selector)}]`;
    }
    return [name(o), str(s.policyName), paramRef, age(o, now)];
  },
);

/** kube-aggregator's printer: SERVICE is `Local` without a service, AVAILABLE from the condition. */
export const apiServiceTable = printer(
  [NAME_COLUMN, column('Service'), column('Available'), AGE_COLUMN],
  (o, now) => {
    const svc = recordOf(spec(o).service);
    const service = spec(o).service ? `${str(svc.namespace)}/${str(svc.name)}` : 'Local';
    let available = 'Unknown';
    for (const c of arrayOf(status(o).conditions)) {
      if (c.type !== 'Available') continue;
      available = c.status === 'True' ? 'True' : `${str(c.status)} (${str(c.reason)})`;
    }
    return [name(o), service, available, age(o, now)];
  },
);

/** printControllerRevision: the controller as `kind.group/name`. */
export const controllerRevisionTable = printer(
  [NAME_COLUMN, column('Controller'), column('Revision'), AGE_COLUMN],
  (o, now) => {
    const ref = (o.metadata?.ownerReferences ?? []).find((r) => r.controller);
    let controller = '<none>';
    if (ref) {
      const group = ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0] : '';
      controller = `${ref.kind.toLowerCase()}${group ? `.${group}` : ''}/${ref.name}`;
    }
    return [name(o), controller, num((o as Json).revision), age(o, now)];
  },
);

/** printHorizontalPodAutoscaler with formatHPAMetrics' `<unknown>/target` cells for Resource metrics. */
export const horizontalPodAutoscalerTable = printer(
  [
    NAME_COLUMN,
    column('Reference'),
    column('Targets'),
    column('MinPods'),
    column('MaxPods'),
    column('Replicas'),
    AGE_COLUMN,
  ],
  (o, now) => {
    const s = spec(o);
    const ref = recordOf(s.scaleTargetRef);
    return [
      name(o),
      `${str(ref.kind)}/${str(ref.name)}`,
      hpaTargets(arrayOf(s.metrics), arrayOf(status(o).currentMetrics)),
      s.minReplicas === undefined ? '<unset>' : String(s.minReplicas),
      String(num(s.maxReplicas)),
      String(num(status(o).currentReplicas)),
      age(o, now),
    ];
  },
);

function hpaTargets(specs: Json[], current: Json[]): string {
  if (specs.length === 0) return '<none>';
  const list: string[] = [];
  for (const [i, m] of specs.entries()) {
    const cur = current[i];
    switch (m.type) {
      case 'Resource':
      case 'ContainerResource': {
        const src = recordOf(m.type === 'Resource' ? m.resource : m.containerResource);
        const target = recordOf(src.target);
        const curSrc = recordOf(
          cur?.type === m.type ? (m.type === 'Resource' ? cur.resource : cur.containerResource) : {},
        );
        const curVal = recordOf(curSrc.current);
        const prefix = `${str(src.name)}: `;
        if (target.averageUtilization !== undefined) {
          const c = curVal.averageUtilization === undefined ? '<unknown>' : `${curVal.averageUtilization}%`;
          list.push(`${prefix}${c}/${target.averageUtilization}%`);
        } else {
          const c = curVal.averageValue === undefined ? '<unknown>' : str(curVal.averageValue);
          list.push(`${prefix}${c}/${str(target.averageValue)}`);
        }
        break;
      }
      default: {
        const src = recordOf(m[lowerFirst(str(m.type))]);
        const target = recordOf(src.target);
        const value = target.value ?? target.averageValue ?? target.averageUtilization;
        list.push(`<unknown>/${intOrString(value)}`);
      }
    }
  }
  const shown = list.slice(0, 2).join(', ');
  return list.length > 2 ? `${shown} + ${list.length - 2} more...` : shown;
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

export const cronJobTable = printer(
  [
    NAME_COLUMN,
    column('Schedule'),
    column('Timezone'),
    column('Suspend', 'boolean'),
    column('Active', 'integer'),
    column('Last Schedule'),
    AGE_COLUMN,
    ...TEMPLATE_WIDE_COLUMNS,
  ],
  (o, now) => {
    const s = spec(o);
    const st = status(o);
    const jobSpec = recordOf(recordOf(s.jobTemplate).spec);
    const [names, images] = containerCells(recordOf(recordOf(jobSpec.template).spec).containers);
    const last = st.lastScheduleTime ? translateTimestampSince(str(st.lastScheduleTime), now) : '<none>';
    return [
      name(o),
      str(s.schedule),
      orNone(str(s.timeZone)),
      boolPtr(s.suspend),
      arrayOf(st.active).length,
      last,
      age(o, now),
      names,
      images,
      formatLabelSelector(jobSpec.selector),
    ];
  },
);

/** printCertificateSigningRequest: the condition list as `Approved,Issued` (`Pending` when none). */
export const certificateSigningRequestTable = printer(
  [
    NAME_COLUMN,
    AGE_COLUMN,
    column('SignerName'),
    column('Requestor'),
    column('RequestedDuration'),
    column('Condition'),
  ],
  (o, now) => {
    const s = spec(o);
    const conds = arrayOf(status(o).conditions);
    let approved = false;
    let denied = false;
    let failed = false;
    for (const c of conds) {
      if (c.type === 'Approved') approved = true;
      if (c.type === 'Denied') denied = true;
      if (c.type === 'Failed') failed = true;
    }
    const parts: string[] = [];
    if (denied) parts.push('Denied');
    else if (approved) parts.push('Approved');
    else parts.push('Pending');
    if (failed) parts.push('Failed');
    if (status(o).certificate) parts.push('Issued');
    const duration = typeof s.expirationSeconds === 'number' ? formatSeconds(s.expirationSeconds) : '<none>';
    return [name(o), age(o, now), str(s.signerName), str(s.username), duration, parts.join(',')];
  },
);

function formatSeconds(seconds: number): string {
  return translateTimestampSince(new Date(0).toISOString(), new Date(seconds * 1000));
}

/** printEndpointSlice: ports and endpoints, three shown then `+ N more...`. */
export const endpointSliceTable = printer(
  [NAME_COLUMN, column('AddressType'), column('Ports'), column('Endpoints'), AGE_COLUMN],
  (o, now) => {
    const j = o as Json;
    const ports = arrayOf(j.ports).map((p) =>
      p.port !== undefined && p.port !== null ? String(p.port) : p.name ? str(p.name) : '*',
    );
    const addresses = arrayOf(j.endpoints).flatMap((e) => arrayOf<string>(e.addresses));
    return [name(o), str(j.addressType), moreOf(ports, '<unset>'), moreOf(addresses, '<unset>'), age(o, now)];
  },
);

function moreOf(list: string[], empty: string): string {
  if (list.length === 0) return empty;
  const shown = list.slice(0, 3).join(',');
  return list.length > 3 ? `${shown} + ${list.length - 3} more...` : shown;
}

export const flowSchemaTable = printer(
  [
    NAME_COLUMN,
    column('PriorityLevel'),
    column('MatchingPrecedence'),
    column('DistinguisherMethod'),
    AGE_COLUMN,
    column('MissingPL'),
  ],
  (o, now) => {
    const s = spec(o);
    const method = recordOf(s.distinguisherMethod);
    let missing = '?';
    for (const c of arrayOf(status(o).conditions)) {
      if (c.type === 'Dangling') missing = str(c.status);
    }
    return [
      name(o),
      str(recordOf(s.priorityLevelConfiguration).name),
      String(num(s.matchingPrecedence)),
      s.distinguisherMethod ? str(method.type) : '<none>',
      age(o, now),
      missing,
    ];
  },
);

export const priorityLevelConfigurationTable = printer(
  [
    NAME_COLUMN,
    column('Type'),
    column('NominalConcurrencyShares'),
    column('Queues'),
    column('HandSize'),
    column('QueueLengthLimit'),
    AGE_COLUMN,
  ],
  (o, now) => {
    const s = spec(o);
    const limited = recordOf(s.limited);
    const queuing = recordOf(recordOf(limited.limitResponse).queuing);
    const isLimited = s.limited !== undefined;
    const hasQueues = recordOf(limited.limitResponse).queuing !== undefined;
    return [
      name(o),
      str(s.type),
      isLimited ? String(num(limited.nominalConcurrencyShares)) : '<none>',
      hasQueues ? String(num(queuing.queues)) : '<none>',
      hasQueues ? String(num(queuing.handSize)) : '<none>',
      hasQueues ? String(num(queuing.queueLengthLimit)) : '<none>',
      age(o, now),
    ];
  },
);

export const ingressClassTable = printer(
  [NAME_COLUMN, column('Controller'), column('Parameters'), AGE_COLUMN],
  (o, now) => {
    const s = spec(o);
    let params = '<none>';
    if (isObject(s.parameters)) {
      const p = s.parameters;
      const kind = p.apiGroup ? `${str(p.kind)}.${str(p.apiGroup)}` : str(p.kind);
      params = `${kind}/${str(p.name)}`;
    }
    return [name(o), str(s.controller), params, age(o, now)];
  },
);

export const ingressTable = printer(
  [NAME_COLUMN, column('Class'), column('Hosts'), column('Address'), column('Ports'), AGE_COLUMN],
  (o, now) => {
    const s = spec(o);
    const cls =
      str(s.ingressClassName) || o.metadata?.annotations?.['kubernetes.io/ingress.class'] || '<none>';
    const hosts = arrayOf(s.rules)
      .map((r) => str(r.host))
      .filter((h) => h !== '');
    const hostCell = hosts.length === 0 ? '*' : moreOf(hosts, '*');
    const lb = arrayOf(recordOf(status(o).loadBalancer).ingress).map((i) => str(i.ip) || str(i.hostname));
    const address = lb.join(',');
    const ports = arrayOf(s.tls).length > 0 ? '80, 443' : '80';
    return [name(o), cls, hostCell, address, ports, age(o, now)];
  },
);

export const networkPolicyTable = printer([NAME_COLUMN, column('Pod-Selector'), AGE_COLUMN], (o, now) => [
  name(o),
  formatLabelSelector(spec(o).podSelector),
  age(o, now),
]);

export const runtimeClassTable = printer([NAME_COLUMN, column('Handler'), AGE_COLUMN], (o, now) => [
  name(o),
  str((o as Json).handler),
  age(o, now),
]);

export const podDisruptionBudgetTable = printer(
  [
    NAME_COLUMN,
    column('Min Available'),
    column('Max Unavailable'),
    column('Allowed Disruptions', 'integer'),
    AGE_COLUMN,
  ],
  (o, now) => {
    const s = spec(o);
    return [
      name(o),
      s.minAvailable === undefined ? 'N/A' : intOrString(s.minAvailable),
      s.maxUnavailable === undefined ? 'N/A' : intOrString(s.maxUnavailable),
      num(status(o).disruptionsAllowed),
      age(o, now),
    ];
  },
);

export const priorityClassTable = printer(
  [
    NAME_COLUMN,
    column('Value', 'integer'),
    column('Global-Default', 'boolean'),
    AGE_COLUMN,
    column('PreemptionPolicy'),
  ],
  (o, now) => {
    const j = o as Json;
    return [
      name(o),
      num(j.value),
      j.globalDefault === true,
      age(o, now),
      str(j.preemptionPolicy) || '<unset>',
    ];
  },
);

export const csiDriverTable = printer(
  [
    NAME_COLUMN,
    column('AttachRequired', 'boolean'),
    column('PodInfoOnMount', 'boolean'),
    column('StorageCapacity', 'boolean'),
    column('TokenRequests'),
    column('RequiresRepublish', 'boolean'),
    column('Modes'),
    AGE_COLUMN,
  ],
  (o, now) => {
    const s = spec(o);
    const tokens = arrayOf(s.tokenRequests).map((t) => str(t.audience));
    const modes = arrayOf<string>(s.volumeLifecycleModes);
    return [
      name(o),
      s.attachRequired === true,
      s.podInfoOnMount === true,
      s.storageCapacity === true,
      tokens.length ? tokens.join(',') : '<unset>',
      s.requiresRepublish === true,
      modes.length ? modes.join(',') : '<none>',
      age(o, now),
    ];
  },
);

export const csiNodeTable = printer([NAME_COLUMN, column('Drivers', 'integer'), AGE_COLUMN], (o, now) => [
  name(o),
  arrayOf(spec(o).drivers).length,
  age(o, now),
]);

export const csiStorageCapacityTable = printer(
  [NAME_COLUMN, column('StorageClassName'), column('Capacity')],
  (o) => {
    const j = o as Json;
    return [name(o), str(j.storageClassName), j.capacity === undefined ? '<unset>' : str(j.capacity)];
  },
);

export const IS_DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';

/** printStorageClass: `(default)` after the name of the default class. */
export const storageClassTable = printer(
  [
    NAME_COLUMN,
    column('Provisioner'),
    column('ReclaimPolicy'),
    column('VolumeBindingMode'),
    column('AllowVolumeExpansion'),
    AGE_COLUMN,
  ],
  (o, now) => {
    const j = o as Json;
    const isDefault = o.metadata?.annotations?.[IS_DEFAULT_CLASS_ANNOTATION] === 'true';
    return [
      isDefault ? `${name(o)} (default)` : name(o),
      str(j.provisioner),
      str(j.reclaimPolicy) || 'Delete',
      str(j.volumeBindingMode) || 'Immediate',
      j.allowVolumeExpansion === true ? 'true' : 'false',
      age(o, now),
    ];
  },
);

export const volumeAttachmentTable = printer(
  [NAME_COLUMN, column('Attacher'), column('PV'), column('Node'), column('Attached', 'boolean'), AGE_COLUMN],
  (o, now) => {
    const s = spec(o);
    return [
      name(o),
      str(s.attacher),
      str(recordOf(s.source).persistentVolumeName),
      str(s.nodeName),
      status(o).attached === true,
      age(o, now),
    ];
  },
);
