/**
 * Conversion of decoded JSON into CEL values typed by the structural schema, as Kubernetes'
 * UnstructuredToVal does: integers become CEL ints (bigint), date-time/date strings become
 * timestamps, duration strings durations, byte strings bytes; objects with properties expose
 * only their declared (escaped) properties; a resource root also exposes apiVersion, kind,
 * metadata.name and metadata.generateName.
 */

import { create } from '@bufbuild/protobuf';
import { DurationSchema, TimestampSchema } from '@bufbuild/protobuf/wkt';
import { isObject } from '../../../../lib/json.ts';
import { parseDateTime, parseDuration } from '../formats.ts';
import { additionalProps, isEmbedded, isIntOrString, itemsSchema } from '../schema-util.ts';
import type { JSONSchemaProps } from '../types.ts';
import { escapeProperty } from './escape.ts';

function untyped(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(untyped);
  if (isObject(v)) return new Map(Object.entries(v).map(([k, x]) => [k, untyped(x)]));
  return v;
}

function toTimestamp(ms: number, nanos: number) {
  const seconds = Math.floor(ms / 1000);
  return create(TimestampSchema, { seconds: BigInt(seconds), nanos });
}

function toDuration(ms: number) {
  const totalNanos = BigInt(Math.round(ms * 1e6));
  const seconds = totalNanos / 1_000_000_000n;
  return create(DurationSchema, { seconds, nanos: Number(totalNanos - seconds * 1_000_000_000n) });
}

function scalar(v: unknown, s: JSONSchemaProps): unknown {
  if (typeof v === 'number') {
    if (s.type === 'number') return v;
    return Number.isInteger(v) ? BigInt(v) : v;
  }
  if (typeof v === 'string' && s.type === 'string') {
    switch (s.format) {
      case 'date':
      case 'date-time':
      case 'datetime': {
        const t = parseDateTime(v);
        // Malformed values fail OpenAPI validation first, which keeps rules from running.
        return t ? toTimestamp(t.ms, t.nanos) : v;
      }
      case 'duration': {
        const d = parseDuration(v);
        return d === undefined ? v : toDuration(d);
      }
      case 'byte':
        return new Uint8Array(Buffer.from(v, 'base64'));
      default:
        return v;
    }
  }
  return v;
}

/** Converts `v` for use as `self`/`oldSelf` of a rule declared on schema `s`. */
export function toCel(v: unknown, s: JSONSchemaProps | undefined, resourceRoot = false): unknown {
  if (v === null || v === undefined) return null;
  if (!s || isIntOrString(s)) return untyped(v);
  if (Array.isArray(v)) {
    const items = itemsSchema(s);
    return v.map((x) => toCel(x, items, isEmbedded(items)));
  }
  if (isObject(v)) {
    const out = new Map<string, unknown>();
    const props = s.properties;
    const ap = additionalProps(s)?.schema;
    if (props) {
      for (const [k, ps] of Object.entries(props)) {
        const name = escapeProperty(k);
        if (name !== undefined && k in v) out.set(name, toCel(v[k], ps, isEmbedded(ps)));
      }
    } else if (ap) {
      for (const [k, x] of Object.entries(v)) out.set(k, toCel(x, ap, isEmbedded(ap)));
    } else {
      return untyped(v);
    }
    if (resourceRoot || isEmbedded(s)) {
      for (const k of ['apiVersion', 'kind'] as const) if (typeof v[k] === 'string') out.set(k, v[k]);
      if (isObject(v.metadata)) {
        const meta = new Map<string, unknown>();
        for (const k of ['name', 'generateName'] as const) {
          if (typeof v.metadata[k] === 'string') meta.set(k, v.metadata[k]);
        }
        out.set('metadata', meta);
      }
    }
    return out;
  }
  return scalar(v, s);
}
