/**
 * Events, served as core/v1 `events` and events.k8s.io/v1 `events` over one storage in
 * kube-apiserver. Validation follows ValidateEventCreate/Update (legacy rules for core/v1,
 * strict ones for events.k8s.io/v1, with internal field names in messages, as upstream);
 * the two conversion functions let the storage keep one shape.
 */

import { translateTimestampSince } from '../../../kube/duration.ts';
import type { FieldError, KubeObject, Strategy, TablePrinter } from '../types.ts';
import { column, type Json, NAME_COLUMN, recordOf, str } from './common.ts';
import { dedupe, invalid, required } from './field-errors.ts';
import {
  isDNS1123Subdomain,
  isQualifiedName,
  nameIsDNSSubdomain,
  validateImmutable,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

const REPORTING_INSTANCE_LIMIT = 128;
const ACTION_LIMIT = 128;
const REASON_LIMIT = 128;
const NOTE_LIMIT = 1024;

/** core/v1 field ↔ events.k8s.io/v1 field. */
const RENAMES: [string, string][] = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['reportingComponent', 'reportingController'],
];
const SHARED = [
  'metadata',
  'eventTime',
  'series',
  'action',
  'reason',
  'related',
  'type',
  'reportingInstance',
];

/** A core/v1 Event rendered as events.k8s.io/v1. */
export function coreEventToEventsV1(obj: KubeObject): KubeObject {
  const out: KubeObject = { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: obj.metadata };
  for (const k of SHARED) if (obj[k] !== undefined && k !== 'metadata') out[k] = obj[k];
  for (const [core, ev] of RENAMES) if (obj[core] !== undefined) out[ev] = obj[core];
  return out;
}

/** An events.k8s.io/v1 Event rendered as core/v1. */
export function eventsV1ToCoreEvent(obj: KubeObject): KubeObject {
  const out: KubeObject = { apiVersion: 'v1', kind: 'Event', metadata: obj.metadata };
  for (const k of SHARED) if (obj[k] !== undefined && k !== 'metadata') out[k] = obj[k];
  for (const [core, ev] of RENAMES) if (obj[ev] !== undefined) out[core] = obj[ev];
  return out;
}

function zeroTime(v: unknown): boolean {
  return v == null || v === '' || v === '0001-01-01T00:00:00Z';
}

/** legacyValidateEvent, on the core/v1 shape; `reportingField` is the name the request's API version uses. */
function legacyValidateEvent(e: KubeObject, reportingField: string): FieldError[] {
  const errs: FieldError[] = [];
  const involved = recordOf(e.involvedObject);
  const ns = e.metadata?.namespace ?? '';
  const involvedNs = str(involved.namespace);
  if (zeroTime(e.eventTime)) {
    if (!involvedNs) {
      if (ns !== '' && ns !== 'default')
        errs.push(invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
    } else if (ns !== involvedNs) {
      errs.push(invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
    }
  } else {
    if (!involvedNs && ns !== 'default' && ns !== 'kube-system') {
      errs.push(invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
    }
    const controller = str(e.reportingComponent);
    if (!controller) errs.push(required(reportingField));
    for (const m of isQualifiedName(controller)) errs.push(invalid(reportingField, controller, m));
    const instance = str(e.reportingInstance);
    if (!instance) errs.push(required('reportingInstance'));
    if (instance.length > REPORTING_INSTANCE_LIMIT) {
      errs.push(invalid('reportingInstance', '', `can have at most ${REPORTING_INSTANCE_LIMIT} characters`));
    }
    const action = str(e.action);
    if (!action) errs.push(required('action'));
    if (action.length > ACTION_LIMIT)
      errs.push(invalid('action', '', `can have at most ${ACTION_LIMIT} characters`));
    const reason = str(e.reason);
    if (!reason) errs.push(required('reason'));
    if (reason.length > REASON_LIMIT)
      errs.push(invalid('reason', '', `can have at most ${REASON_LIMIT} characters`));
    if (str(e.message).length > NOTE_LIMIT)
      errs.push(invalid('message', '', `can have at most ${NOTE_LIMIT} characters`));
  }
  for (const m of isDNS1123Subdomain(ns)) errs.push(invalid('namespace', ns, m));
  return errs;
}

function validateSeries(e: KubeObject): FieldError[] {
  const series = e.series;
  if (series == null) return [];
  const s = recordOf(series);
  const errs: FieldError[] = [];
  if (typeof s.count !== 'number' || s.count < 2)
    errs.push(invalid('series.count', '', 'should be at least 2'));
  if (zeroTime(s.lastObservedTime)) errs.push(required('series.lastObservedTime'));
  return errs;
}

/** Strict rules of events.k8s.io/v1 writes (on the core shape). */
function strictValidateEvent(e: KubeObject): FieldError[] {
  const errs = [...validateObjectMeta(e.metadata, true, nameIsDNSSubdomain), ...validateSeries(e)];
  if (zeroTime(e.eventTime)) errs.push(required('eventTime'));
  if (e.type !== 'Normal' && e.type !== 'Warning')
    errs.push(invalid('type', '', `has invalid value: ${str(e.type)}`));
  if (!zeroTime(e.firstTimestamp)) errs.push(invalid('firstTimestamp', '', 'needs to be unset'));
  if (!zeroTime(e.lastTimestamp)) errs.push(invalid('lastTimestamp', '', 'needs to be unset'));
  if (typeof e.count === 'number' && e.count !== 0) errs.push(invalid('count', '', 'needs to be unset'));
  const source = recordOf(e.source);
  if (str(source.component) || str(source.host)) errs.push(invalid('source', '', 'needs to be unset'));
  return errs;
}

function strictValidateEventUpdate(e: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateObjectMetaUpdate(e.metadata, old.metadata);
  if (JSON.stringify(e.series ?? null) !== JSON.stringify(old.series ?? null))
    errs.push(...validateSeries(e));
  for (const f of [
    'involvedObject',
    'reason',
    'message',
    'source',
    'firstTimestamp',
    'lastTimestamp',
    'count',
    'reportingComponent',
    'reportingInstance',
    'action',
    'type',
    'eventTime',
    'related',
  ]) {
    errs.push(...validateImmutable(e[f], old[f], f));
  }
  return errs;
}

/** events' field selectors (event.ToSelectableFields), on the core shape. */
export function eventSelectableFields(e: KubeObject): Record<string, string> {
  const involved = recordOf(e.involvedObject);
  return {
    'involvedObject.kind': str(involved.kind),
    'involvedObject.namespace': str(involved.namespace),
    'involvedObject.name': str(involved.name),
    'involvedObject.uid': str(involved.uid),
    'involvedObject.apiVersion': str(involved.apiVersion),
    'involvedObject.resourceVersion': str(involved.resourceVersion),
    'involvedObject.fieldPath': str(involved.fieldPath),
    reason: str(e.reason),
    reportingComponent: str(e.reportingComponent),
    source: str(recordOf(e.source).component) || str(e.reportingComponent),
    type: str(e.type),
  };
}

function formatSource(e: KubeObject): string {
  const source = recordOf(e.source);
  const component = str(source.component) || str(e.reportingComponent);
  const instance = str(source.host) || str(e.reportingInstance);
  return instance ? `${component}, ${instance}` : component;
}

function eventCells(e: KubeObject, now: Date): unknown[] {
  let first = translateTimestampSince(str(e.firstTimestamp) || undefined, now);
  if (zeroTime(e.firstTimestamp)) first = translateTimestampSince(str(e.eventTime) || undefined, now);
  let last = zeroTime(e.lastTimestamp) ? first : translateTimestampSince(str(e.lastTimestamp), now);
  let count = typeof e.count === 'number' ? e.count : 0;
  const series: Json | undefined = e.series == null ? undefined : recordOf(e.series);
  if (series) {
    last = translateTimestampSince(str(series.lastObservedTime) || undefined, now);
    count = typeof series.count === 'number' ? series.count : 0;
  } else if (count === 0) {
    count = 1;
  }
  const involved = recordOf(e.involvedObject);
  const kind = str(involved.kind).toLowerCase();
  const target = str(involved.name) ? `${kind}/${str(involved.name)}` : kind;
  return [
    last,
    str(e.type),
    str(e.reason),
    target,
    str(involved.fieldPath),
    formatSource(e),
    str(e.message).trim(),
    first,
    count,
    e.metadata?.name ?? '',
  ];
}

const EVENT_COLUMNS = [
  column('Last Seen', 'string'),
  column('Type', 'string'),
  column('Reason', 'string'),
  column('Object', 'string'),
  column('Subobject', 'string', { priority: 1 }),
  column('Source', 'string', { priority: 1 }),
  column('Message', 'string'),
  column('First Seen', 'string', { priority: 1 }),
  column('Count', 'string', { priority: 1 }),
  { ...NAME_COLUMN, priority: 1 },
];

/** The same printer serves both API versions (it runs on the internal type upstream). */
export const eventTable: TablePrinter = { columns: EVENT_COLUMNS, cells: eventCells };

export const eventsV1Table: TablePrinter = {
  columns: EVENT_COLUMNS,
  cells: (obj, now) => eventCells(eventsV1ToCoreEvent(obj), now),
};

export function coreEventStrategy(): Strategy {
  return {
    validateCreate: (obj) => dedupe(legacyValidateEvent(obj, 'reportingComponent')),
    validateUpdate: (obj) => dedupe(legacyValidateEvent(obj, 'reportingComponent')),
    selectableFields: eventSelectableFields,
    table: eventTable,
  };
}

export function eventsV1Strategy(): Strategy {
  return {
    validateCreate(obj) {
      const e = eventsV1ToCoreEvent(obj);
      return dedupe([...legacyValidateEvent(e, 'reportingController'), ...strictValidateEvent(e)]);
    },
    validateUpdate(obj, old) {
      const e = eventsV1ToCoreEvent(obj);
      return dedupe([
        ...legacyValidateEvent(e, 'reportingController'),
        ...strictValidateEventUpdate(e, eventsV1ToCoreEvent(old)),
      ]);
    },
    selectableFields(obj) {
      const core = eventSelectableFields(eventsV1ToCoreEvent(obj));
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(core)) {
        if (k.startsWith('involvedObject.')) out[`regarding.${k.slice('involvedObject.'.length)}`] = v;
        else if (k === 'reportingComponent') out.reportingController = v;
        else if (k === 'source') out.deprecatedSource = v;
        else out[k] = v;
      }
      return out;
    },
    table: eventsV1Table,
  };
}
