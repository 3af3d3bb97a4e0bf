/**
 * CertificateSigningRequests: the strategies of pkg/registry/certificates/certificates/strategy.go
 * and the update rules of pkg/apis/certificates/validation/validation.go. The main endpoint
 * changes metadata only; `/status` changes the status but keeps the Approved and Denied
 * conditions as they were (a signer's certificate and `Failed`); `/approval` changes the conditions only (`kubectl
 * certificate approve|deny`). Approved, Denied and Failed conditions cannot be removed, only
 * `/approval` adds or changes Approved and Denied, the two exclude each other, and a condition's
 * missing timestamps are filled in as `populateConditionTimestamps` does. On create the
 * requester's name and groups are written into the spec and the status is cleared.
 *
 * Not checked: the PEM request's signature and the issued certificate's content (Go's x509
 * parsing); the signer name only for its `domain/path` shape.
 */
import { rfc3339 } from '../../../kube/conditions.ts';
import { clone, semanticEqual } from '../../../lib/json.ts';
import type { FieldError, KubeObject, RequestContext, Strategy } from '../types.ts';
import { arrayOf, type Json, recordOf, str } from './common.ts';
import { duplicate, forbidden, index, invalid, notSupported, required } from './field-errors.ts';

const TRUE_ONLY = new Set(['Approved', 'Denied', 'Failed']);
const ALL_STATUSES = ['False', 'True', 'Unknown'];
const VALID_USAGES = [
  'any',
  'cert sign',
  'client auth',
  'code signing',
  'content commitment',
  'crl sign',
  'data encipherment',
  'decipher only',
  'digital signature',
  'email protection',
  'encipher only',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'key agreement',
  'key encipherment',
  'microsoft sgc',
  'netscape sgc',
  'ocsp signing',
  's/mime',
  'server auth',
  'signing',
  'timestamping',
];
const LEGACY_SIGNER = 'kubernetes.io/legacy-unknown';

type Condition = Json;

function conditions(obj: KubeObject): Condition[] {
  return arrayOf(recordOf(obj.status).conditions);
}

function ofType(obj: KubeObject, type: string): Condition[] {
  return conditions(obj).filter((c) => c.type === type);
}

/** validateConditions: status values, Approved xor Denied, one condition per type. */
function validateConditions(obj: KubeObject, old?: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const oldTypes = old ? conditions(old).map((c) => str(c.type)) : [];
  const allowBoth = oldTypes.includes('Approved') && oldTypes.includes('Denied');
  const allowDuplicates = new Set(oldTypes).size !== oldTypes.length;
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditions(obj).forEach((c, i) => {
    const p = index('status.conditions', i);
    const type = str(c.type);
    if (!type && !oldTypes.includes('')) errs.push(required(`${p}.type`));
    const allowed = TRUE_ONLY.has(type) ? ['True'] : ALL_STATUSES;
    if (!str(c.status)) errs.push(required(`${p}.status`));
    else if (!allowed.includes(str(c.status))) errs.push(notSupported(`${p}.status`, c.status, allowed));
    if (!allowBoth && (type === 'Approved' || type === 'Denied')) {
      if (type === 'Approved') approved = true;
      else denied = true;
      if (approved && denied)
        errs.push(invalid(`${p}.type`, type, 'Approved and Denied conditions are mutually exclusive'));
    }
    if (!allowDuplicates && seen.has(type)) errs.push(duplicate(`${p}.type`, type));
    seen.add(type);
  });
  return errs;
}

/** The spec rules of validateCertificateSigningRequest (the request's PEM shape only). */
function validateSpec(obj: KubeObject, old?: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = recordOf(obj.spec);
  const request = str(spec.request);
  const pem = request ? Buffer.from(request, 'base64').toString('latin1') : '';
  if (!/-----BEGIN CERTIFICATE REQUEST-----/.test(pem))
    errs.push(invalid('spec.request', spec.request ?? '', 'PEM block type must be CERTIFICATE REQUEST'));
  const usages = arrayOf<string>(spec.usages);
  const oldUsages = old ? arrayOf<string>(recordOf(old.spec).usages) : [];
  if (usages.length === 0) errs.push(required('spec.usages'));
  const seen = new Set<string>();
  usages.forEach((u, i) => {
    if (!VALID_USAGES.includes(u) && !oldUsages.some((o) => !VALID_USAGES.includes(o)))
      errs.push(notSupported(index('spec.usages', i), u, VALID_USAGES));
    if (seen.has(u) && new Set(oldUsages).size === oldUsages.length)
      errs.push(duplicate(index('spec.usages', i), u));
    seen.add(u);
  });
  const signer = str(spec.signerName);
  if (signer === LEGACY_SIGNER && str(recordOf(old?.spec).signerName) !== LEGACY_SIGNER) {
    errs.push(
      invalid('spec.signerName', signer, 'the legacy signerName is not allowed via this API version'),
    );
  } else if (!signer) {
    errs.push(required('spec.signerName'));
  } else if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[^/]+$/i.test(signer)) {
    errs.push(
      invalid(
        'spec.signerName',
        signer,
        "must be a fully qualified domain and path of the form 'example.com/signer-name'",
      ),
    );
  }
  const exp = spec.expirationSeconds;
  if (typeof exp === 'number' && exp < 600)
    errs.push(
      invalid('spec.expirationSeconds', exp, 'may not specify a duration less than 600 seconds (10 minutes)'),
    );
  return errs;
}

/** validateCertificateSigningRequestUpdate with the subresource's options. */
function validateUpdate(obj: KubeObject, old: KubeObject, ctx: RequestContext): FieldError[] {
  const errs = [...validateSpec(obj, old), ...validateConditions(obj, old)];
  for (const t of ['Approved', 'Denied', 'Failed']) {
    if (ofType(obj, t).length < ofType(old, t).length)
      errs.push(forbidden('status.conditions', `updates may not remove a condition of type "${t}"`));
  }
  if (ctx.subresource !== 'approval') {
    for (const t of ['Approved', 'Denied']) {
      const before = ofType(old, t);
      const after = ofType(obj, t);
      if (after.length > before.length)
        errs.push(forbidden('status.conditions', `updates may not add a condition of type "${t}"`));
      else if (after.length === before.length && !semanticEqual(before, after))
        errs.push(forbidden('status.conditions', `updates may not modify a condition of type "${t}"`));
    }
  }
  const cert = recordOf(obj.status).certificate;
  const oldCert = recordOf(old.status).certificate;
  if ((cert ?? '') !== (oldCert ?? '')) {
    if (ctx.subresource !== 'status')
      errs.push(forbidden('status.certificate', 'updates may not set certificate content'));
    else if (oldCert)
      errs.push(forbidden('status.certificate', 'updates may not modify existing certificate content'));
  }
  return errs;
}

/** populateConditionTimestamps: now, or the old transition time when the status is unchanged. */
function populateConditionTimestamps(obj: KubeObject, old: KubeObject, now: string): void {
  for (const c of conditions(obj)) {
    if (!c.lastUpdateTime) c.lastUpdateTime = now;
    if (!c.lastTransitionTime) {
      const prior = conditions(old).find((o) => o.type === c.type && o.status === c.status);
      c.lastTransitionTime = prior?.lastTransitionTime ?? now;
    }
  }
}

export function csrStrategy(clock: () => Date = () => new Date()): Strategy {
  return {
    prepareForCreate(obj, ctx) {
      const spec = recordOf(obj.spec);
      delete spec.username;
      delete spec.uid;
      delete spec.groups;
      spec.username = ctx.user;
      if (ctx.groups?.length) spec.groups = [...ctx.groups];
      obj.spec = spec;
      obj.status = {};
    },
    prepareForUpdate(obj, old, ctx) {
      // The generic status split has run: the main endpoint kept the old status.
      obj.spec = clone(old.spec);
      if (ctx.subresource === 'status') {
        // preserveConditionInstances: Approved and Denied stay as they were; the rest (a
        // signer's Failed) may change.
        const status = recordOf(obj.status);
        const approval = (c: Condition) => c.type === 'Approved' || c.type === 'Denied';
        const next = [
          ...conditions(obj).filter((c) => !approval(c)),
          ...clone(conditions(old).filter(approval)),
        ];
        if (next.length || status.conditions !== undefined) status.conditions = next;
        obj.status = status;
      } else if (ctx.subresource === 'approval') {
        const status = clone(recordOf(old.status));
        const asked = recordOf(obj.status).conditions;
        if (asked === undefined) delete status.conditions;
        else status.conditions = asked;
        obj.status = status;
      }
      populateConditionTimestamps(obj, old, rfc3339(clock()));
    },
    validateCreate: (obj) => [...validateSpec(obj), ...validateConditions(obj)],
    validateUpdate,
  };
}
