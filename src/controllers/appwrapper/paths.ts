/**
 * Pod-set paths: `template` names a component's template itself, then `.field` and `[index]`
 * steps walk into it (`template.spec.replicatedJobs[0].template.spec.template`). Errors read
 * like upstream's so users see the same messages.
 */

import { isObject } from '../../lib/json.ts';

export type Json = Record<string, unknown>;

export class PathError extends Error {}

/** The value at `path` inside `template` (the component template the path's "template" names). */
export function valueAtPath(template: unknown, path: string): unknown {
  if (!path.startsWith('template')) throw new PathError("first element of the path must be 'template'");
  let processed = 'template';
  let remaining = path.slice('template'.length);
  let cursor: unknown = template;
  while (remaining !== '') {
    if (remaining.startsWith('[')) {
      const end = remaining.indexOf(']');
      if (end < 0) throw new PathError(`at path position '${processed}' invalid array index '${remaining}'`);
      const text = remaining.slice(1, end);
      if (!/^[+-]?\d+$/.test(text))
        throw new PathError(`at path position '${processed}' invalid index expression '${text}'`);
      const index = Number.parseInt(text, 10);
      if (!Array.isArray(cursor))
        throw new PathError(`at path position '${processed}' found non-array value`);
      if (index < 0 || index >= cursor.length) {
        throw new PathError(`at path position '${processed}' out of bounds index '${index}'`);
      }
      cursor = cursor[index];
      processed += remaining.slice(0, end);
      remaining = remaining.slice(end + 1);
    } else if (remaining.startsWith('.')) {
      remaining = remaining.slice(1);
      processed += '.';
      let end = remaining.length;
      const dot = remaining.indexOf('.');
      if (dot > 0) end = dot;
      const bracket = remaining.indexOf('[');
      if (bracket > 0 && bracket < end) end = bracket;
      const key = remaining.slice(0, end);
      if (!isObject(cursor)) throw new PathError(`at path position '${processed}' non-map value`);
      if (!(key in cursor)) throw new PathError(`at path position '${processed}' missing field '${key}'`);
      cursor = cursor[key];
      remaining = remaining.slice(key.length);
      processed += key;
    } else {
      throw new PathError(`at path position '${processed}' invalid path element '${remaining}'`);
    }
  }
  return cursor;
}

/** The object at `path` (a pod template or a Pod). */
export function objectAtPath(template: unknown, path: string): Json {
  const v = valueAtPath(template, path);
  if (!isObject(v)) throw new PathError(`at path position '${path}' non-map value`);
  return v;
}

/** An integer at `path` (replica counts), as Go's int32 conversion of a JSON number. */
export function intAtPath(template: unknown, path: string): number {
  const v = valueAtPath(template, path);
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  throw new PathError(`at path position '${path}' non-int value ${JSON.stringify(v)}`);
}
