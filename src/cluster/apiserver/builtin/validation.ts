/**
 * apimachinery's string validators (util/validation) and ObjectMeta validation, with their
 * messages verbatim: clients and tests match on these texts.
 */

import { semanticEqual } from '../../../lib/json.ts';
import type { FieldError, ObjectMeta } from '../types.ts';
import { child, forbidden, invalid, required, tooLong } from './field-errors.ts';

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const CONFIG_MAP_KEY_FMT = '[-._a-zA-Z0-9]+';

const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1035_LABEL_RE = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const QUALIFIED_NAME_RE = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const CONFIG_MAP_KEY_RE = new RegExp(`^${CONFIG_MAP_KEY_FMT}$`);

export const FIELD_IMMUTABLE = 'field is immutable';
export const IS_NEGATIVE = 'must be greater than or equal to 0';

/** validation.RegexError: the `(e.g. 'a',  or 'b', regex used for validation is '...')` tail, double spaces included. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((e, i) => {
    if (i > 0) out += ' or ';
    out += `'${e}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

export function maxLenError(n: number): string {
  return `must be no more than ${n} characters`;
}

export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

export const DNS1123_LABEL_ERROR = regexError(
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
  DNS1123_LABEL_FMT,
  'my-name',
  '123-abc',
);

export const DNS1123_SUBDOMAIN_ERROR = regexError(
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  DNS1123_SUBDOMAIN_FMT,
  'example.com',
);

export const DNS1035_LABEL_ERROR = regexError(
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
  DNS1035_LABEL_FMT,
  'my-name',
  'abc-123',
);

const QUALIFIED_NAME_ERROR = regexError(
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  QUALIFIED_NAME_FMT,
  'MyName',
  'my.name',
  '123-abc',
);

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!DNS1123_LABEL_RE.test(value)) {
    // A valid subdomain that is not a valid label can only be failing on its dots.
    errs.push(DNS1123_SUBDOMAIN_RE.test(value) ? 'must not contain dots' : DNS1123_LABEL_ERROR);
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) errs.push(DNS1123_SUBDOMAIN_ERROR);
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!DNS1035_LABEL_RE.test(value)) errs.push(DNS1035_LABEL_ERROR);
  return errs;
}

/**
 * Strings already found valid, by check: every pod repeats the same label keys, toleration keys
 * and label values, so each is checked once (bounded: cleared when full).
 */
const VALID_QUALIFIED_NAMES = new Set<string>();
const VALID_LABEL_VALUES = new Set<string>();

function rememberValid(set: Set<string>, value: string, errs: string[]): string[] {
  if (errs.length === 0) {
    if (set.size >= 10_000) set.clear();
    set.add(value);
  }
  return errs;
}

/** validation.IsQualifiedName: label keys, annotation keys, finalizers, condition types. */
export function isQualifiedName(value: string): string[] {
  if (VALID_QUALIFIED_NAMES.has(value)) return [];
  return rememberValid(VALID_QUALIFIED_NAMES, value, qualifiedNameErrors(value));
}

function qualifiedNameErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [
      `a qualified name ${QUALIFIED_NAME_ERROR} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLength(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!QUALIFIED_NAME_RE.test(name)) errs.push(`name part ${QUALIFIED_NAME_ERROR}`);
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  if (VALID_LABEL_VALUES.has(value)) return [];
  return rememberValid(VALID_LABEL_VALUES, value, labelValueErrors(value));
}

function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE_RE.test(value)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!CONFIG_MAP_KEY_RE.test(value)) {
    errs.push(
      regexError(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        CONFIG_MAP_KEY_FMT,
        'key.name',
        'KEY_NAME',
        'key-name',
      ),
    );
  }
  if (value === '.') errs.push(`must not be '.'`);
  else if (value === '..') errs.push(`must not be '..'`);
  else if (value.startsWith('..')) errs.push(`must not start with '..'`);
  return errs;
}

/** path.IsValidPathSegmentName: RBAC object names. */
export function isValidPathSegmentName(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  const errs: string[] = [];
  if (name.includes('/')) errs.push(`may not contain '/'`);
  if (name.includes('%')) errs.push(`may not contain '%'`);
  return errs;
}

export function isValidPortNum(port: unknown): string[] {
  if (typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65535) return [];
  return [inclusiveRangeError(1, 65535)];
}

/** supportedPortProtocols: what a container, service or endpoint port may name. */
export const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

const PORT_NAME_RE = /^[-a-z0-9]+$/;

/** validation.IsValidPortName (IANA_SVC_NAME): container port names and named target ports. */
export function isValidPortName(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 15) errs.push('must be no more than 15 characters');
  if (!PORT_NAME_RE.test(name))
    errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.startsWith('-') || name.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

const IPV4_RE = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export function isIPv4(value: string): boolean {
  return IPV4_RE.test(value);
}

/** Loose IPv6 check: hex groups with at most one `::`; enough to reject garbage. */
export function isIPv6(value: string): boolean {
  if (!/^[0-9a-fA-F:.]+$/.test(value) || !value.includes(':')) return false;
  const doubles = value.split('::').length - 1;
  if (doubles > 1) return false;
  const groups = value.split(':').filter((g) => g !== '');
  return (
    groups.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g) || isIPv4(g)) && (doubles === 1 || groups.length === 8)
  );
}

export function isValidIP(value: string): boolean {
  return isIPv4(value) || isIPv6(value);
}

/** A name validator: (name, isPrefix) → messages, like apimachinery's ValidateNameFunc. */
export type NameValidator = (name: string, prefix: boolean) => string[];

/** generateName prefixes may end in '-', which is masked before validating. */
/** As apimachinery's maskTrailingDash, which also drops the character before the dash. */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

export const nameIsDNSSubdomain: NameValidator = (name, prefix) =>
  isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);
export const nameIsDNSLabel: NameValidator = (name, prefix) =>
  isDNS1123Label(prefix ? maskTrailingDash(name) : name);
export const nameIsDNS1035Label: NameValidator = (name, prefix) =>
  isDNS1035Label(prefix ? maskTrailingDash(name) : name);
export const nameIsPathSegment: NameValidator = (name, prefix) =>
  prefix
    ? isValidPathSegmentName(name).filter((m) => m !== `may not be '.'` && m !== `may not be '..'`)
    : isValidPathSegmentName(name);

export function validateLabels(labels: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (labels == null) return errs;
  if (typeof labels !== 'object') return [invalid(path, labels, 'must be a map of strings')];
  for (const [k, v] of Object.entries(labels as Record<string, unknown>)) {
    for (const m of isQualifiedName(k)) errs.push(invalid(path, k, m));
    if (typeof v !== 'string') {
      errs.push(invalid(path, v, 'must be a string'));
      continue;
    }
    for (const m of isValidLabelValue(v)) errs.push(invalid(path, v, m));
  }
  return errs;
}

export function validateLabelName(name: string, path: string): FieldError[] {
  return isQualifiedName(name).map((m) => invalid(path, name, m));
}

export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

export function validateAnnotations(annotations: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (annotations == null || typeof annotations !== 'object') return errs;
  let size = 0;
  for (const [k, v] of Object.entries(annotations as Record<string, unknown>)) {
    // Annotation keys are qualified names compared case-insensitively.
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(invalid(path, k, m));
    size += byteLength(k) + byteLength(typeof v === 'string' ? v : String(v));
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

export function validateNonnegative(value: unknown, path: string): FieldError[] {
  return typeof value === 'number' && value < 0 ? [invalid(path, value, IS_NEGATIVE)] : [];
}

export function validateImmutable(newValue: unknown, oldValue: unknown, path: string): FieldError[] {
  return semanticEqual(newValue, oldValue) ? [] : [invalid(path, newValue ?? null, FIELD_IMMUTABLE)];
}

function validateOwnerReferences(refs: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!Array.isArray(refs)) return errs;
  const controllers: string[] = [];
  for (const ref of refs as Record<string, unknown>[]) {
    if (!ref?.apiVersion)
      errs.push(invalid(child(path, 'apiVersion'), ref?.apiVersion ?? '', 'version must not be empty'));
    if (!ref?.kind) errs.push(invalid(child(path, 'kind'), ref?.kind ?? '', 'kind must not be empty'));
    if (!ref?.name) errs.push(invalid(child(path, 'name'), ref?.name ?? '', 'name must not be empty'));
    if (!ref?.uid) errs.push(invalid(child(path, 'uid'), ref?.uid ?? '', 'uid must not be empty'));
    if (ref?.controller === true) controllers.push(`${ref.kind}/${ref.name}`);
  }
  if (controllers.length > 1) {
    errs.push(
      invalid(
        path,
        refs,
        `Only one reference can have Controller set to true. Found "true" in references for ${controllers.join(' and ')}`,
      ),
    );
  }
  return errs;
}

function validateFinalizers(finalizers: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!Array.isArray(finalizers)) return errs;
  for (const f of finalizers) {
    if (typeof f !== 'string') {
      errs.push(invalid(path, f, 'must be a string'));
      continue;
    }
    for (const m of isQualifiedName(f)) errs.push(invalid(path, f, m));
  }
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errs.push(invalid(path, finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return errs;
}

/** ValidateObjectMeta: names, namespace presence, labels, annotations, owners, finalizers. */
export function validateObjectMeta(
  meta: ObjectMeta | undefined,
  namespaced: boolean,
  nameFn: NameValidator,
  path = 'metadata',
): FieldError[] {
  const errs: FieldError[] = [];
  const m = meta ?? {};
  if (m.generateName) {
    for (const msg of nameFn(m.generateName, true))
      errs.push(invalid(child(path, 'generateName'), m.generateName, msg));
  }
  if (!m.name) {
    errs.push(required(child(path, 'name'), 'name or generateName is required'));
  } else {
    for (const msg of nameFn(m.name, false)) errs.push(invalid(child(path, 'name'), m.name, msg));
  }
  if (namespaced) {
    if (!m.namespace) errs.push(required(child(path, 'namespace')));
    else
      for (const msg of isDNS1123Label(m.namespace))
        errs.push(invalid(child(path, 'namespace'), m.namespace, msg));
  } else if (m.namespace) {
    errs.push(forbidden(child(path, 'namespace'), 'not allowed on this type'));
  }
  errs.push(...validateNonnegative(m.generation, child(path, 'generation')));
  errs.push(...validateLabels(m.labels, child(path, 'labels')));
  errs.push(...validateAnnotations(m.annotations, child(path, 'annotations')));
  errs.push(...validateOwnerReferences(m.ownerReferences, child(path, 'ownerReferences')));
  errs.push(...validateFinalizers(m.finalizers, child(path, 'finalizers')));
  return errs;
}

/**
 * ValidateObjectMetaUpdate, minus what the storage layer owns (resourceVersion, timestamps,
 * and the no-new-finalizers-while-deleting rule, which api.ts checks for every kind).
 */
export function validateObjectMetaUpdate(
  meta: ObjectMeta | undefined,
  old: ObjectMeta | undefined,
  path = 'metadata',
): FieldError[] {
  const errs: FieldError[] = [];
  const m = meta ?? {};
  const o = old ?? {};
  if ((m.generation ?? 0) < (o.generation ?? 0)) {
    errs.push(invalid(child(path, 'generation'), m.generation ?? 0, 'must not be decremented'));
  }
  errs.push(...validateImmutable(m.name ?? '', o.name ?? '', child(path, 'name')));
  errs.push(...validateImmutable(m.namespace ?? '', o.namespace ?? '', child(path, 'namespace')));
  if (m.uid && o.uid) errs.push(...validateImmutable(m.uid, o.uid, child(path, 'uid')));
  errs.push(...validateLabels(m.labels, child(path, 'labels')));
  errs.push(...validateAnnotations(m.annotations, child(path, 'annotations')));
  errs.push(...validateOwnerReferences(m.ownerReferences, child(path, 'ownerReferences')));
  return errs;
}
