/** Endpoints: port defaults, light validation and the ENDPOINTS cell (formatEndpoints). */

import { translateTimestampSince } from '../../../kube/duration.ts';
import { isObject } from '../../../lib/json.ts';
import type { FieldError, KubeObject, Strategy, TablePrinter } from '../types.ts';
import { AGE_COLUMN, arrayOf, column, NAME_COLUMN, str } from './common.ts';
import { child, dedupe, index, invalid, notSupported, required } from './field-errors.ts';
import {
  isDNS1123Label,
  isValidIP,
  isValidPortNum,
  nameIsDNSSubdomain,
  PROTOCOLS,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

function defaultEndpoints(obj: KubeObject): void {
  for (const subset of arrayOf(obj.subsets)) {
    for (const p of arrayOf(subset.ports)) if (isObject(p)) p.protocol ||= 'TCP';
  }
}

function validateEndpoints(obj: KubeObject): FieldError[] {
  const errs = validateObjectMeta(obj.metadata, true, nameIsDNSSubdomain);
  arrayOf(obj.subsets).forEach((subset, i) => {
    const sp = index('subsets', i);
    for (const list of ['addresses', 'notReadyAddresses']) {
      arrayOf(subset[list]).forEach((a, j) => {
        const ip = str(a.ip);
        if (!isValidIP(ip)) {
          errs.push(
            invalid(
              child(index(child(sp, list), j), 'ip'),
              ip,
              'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
            ),
          );
        }
      });
    }
    arrayOf(subset.ports).forEach((p, j) => {
      const pp = index(child(sp, 'ports'), j);
      const name = str(p.name);
      if (name) for (const m of isDNS1123Label(name)) errs.push(invalid(child(pp, 'name'), name, m));
      for (const m of isValidPortNum(p.port)) errs.push(invalid(child(pp, 'port'), p.port ?? 0, m));
      if (!p.protocol) errs.push(required(child(pp, 'protocol')));
      else if (!PROTOCOLS.includes(str(p.protocol)))
        errs.push(notSupported(child(pp, 'protocol'), p.protocol, PROTOCOLS));
    });
  });
  return errs;
}

/** formatEndpoints: up to three `ip:port` entries, then ` + N more...`. */
export function formatEndpoints(obj: KubeObject): string {
  const subsets = arrayOf(obj.subsets);
  if (subsets.length === 0) return '<none>';
  const list: string[] = [];
  const max = 3;
  let count = 0;
  let more = false;
  const add = (s: string) => {
    if (list.length === max) more = true;
    if (!more) list.push(s);
    count++;
  };
  for (const ss of subsets) {
    const ports = arrayOf(ss.ports);
    const addresses = arrayOf(ss.addresses);
    if (ports.length === 0) {
      for (const a of addresses) add(str(a.ip));
    } else {
      for (const p of ports) {
        for (const a of addresses) {
          const ip = str(a.ip);
          add(ip.includes(':') ? `[${ip}]:${p.port}` : `${ip}:${p.port}`);
        }
      }
    }
  }
  const ret = list.join(',');
  return more ? `${ret} + ${count - max} more...` : ret;
}

export const endpointsTable: TablePrinter = {
  columns: [NAME_COLUMN, column('Endpoints', 'string'), AGE_COLUMN],
  cells: (obj, now) => [
    obj.metadata?.name ?? '',
    formatEndpoints(obj),
    translateTimestampSince(obj.metadata?.creationTimestamp, now),
  ],
};

export function endpointsStrategy(): Strategy {
  return {
    default: defaultEndpoints,
    validateCreate: (obj) => dedupe(validateEndpoints(obj)),
    validateUpdate: (obj, old) =>
      dedupe([...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateEndpoints(obj)]),
    table: endpointsTable,
  };
}
