/** Secrets: SetDefaults_Secret, stringData folding, ValidateSecret/ValidateSecretUpdate, printSecret. */

import { translateTimestampSince } from '../../../kube/duration.ts';
import { isObject } from '../../../lib/json.ts';
import type { FieldError, KubeObject, Strategy, TablePrinter } from '../types.ts';
import { AGE_COLUMN, column, NAME_COLUMN, recordOf, str } from './common.ts';
import { validateDataKeys, validateImmutableData } from './configmaps.ts';
import { dedupe, key, required } from './field-errors.ts';
import {
  nameIsDNSSubdomain,
  validateImmutable,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

/**
 * SetDefaults_Secret plus the v1→internal conversion: stringData is write-only, merged
 * into data (base64) and never stored.
 */
export function defaultSecret(obj: KubeObject): void {
  if (!obj.type) obj.type = 'Opaque';
  if (isObject(obj.stringData)) {
    const data = isObject(obj.data) ? obj.data : {};
    for (const [k, v] of Object.entries(obj.stringData))
      data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    obj.data = data;
  }
  delete obj.stringData;
}

const REQUIRED_KEYS: Record<string, string[]> = {
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
  'kubernetes.io/tls': ['tls.key', 'tls.crt'],
};

function validateSecret(obj: KubeObject): FieldError[] {
  const errs = [
    ...validateObjectMeta(obj.metadata, true, nameIsDNSSubdomain),
    ...validateDataKeys([['data', obj.data]], (_bag, v) =>
      typeof v === 'string' ? Math.floor((v.length * 3) / 4) : 0,
    ),
  ];
  const data = recordOf(obj.data);
  const type = str(obj.type);
  for (const k of REQUIRED_KEYS[type] ?? []) if (!(k in data)) errs.push(required(key('data', k)));
  if (type === 'kubernetes.io/basic-auth' && !('username' in data) && !('password' in data)) {
    errs.push(required(key('data', 'username')), required(key('data', 'password')));
  }
  if (
    type === 'kubernetes.io/service-account-token' &&
    !obj.metadata?.annotations?.['kubernetes.io/service-account.name']
  ) {
    errs.push(required(key('metadata.annotations', 'kubernetes.io/service-account.name')));
  }
  return errs;
}

export const secretTable: TablePrinter = {
  columns: [NAME_COLUMN, column('Type', 'string'), column('Data', 'string'), AGE_COLUMN],
  cells: (obj, now) => [
    obj.metadata?.name ?? '',
    str(obj.type),
    Object.keys(recordOf(obj.data)).length,
    translateTimestampSince(obj.metadata?.creationTimestamp, now),
  ],
};

export function secretStrategy(): Strategy {
  return {
    default: defaultSecret,
    validateCreate: (obj) => dedupe(validateSecret(obj)),
    validateUpdate: (obj, old) =>
      dedupe([
        ...validateObjectMetaUpdate(obj.metadata, old.metadata),
        ...validateSecret(obj),
        ...validateImmutable(str(obj.type), str(old.type), 'type'),
        ...validateImmutableData(obj, old, ['data']),
      ]),
    selectableFields: (obj) => ({ type: str(obj.type) }),
    table: secretTable,
  };
}
