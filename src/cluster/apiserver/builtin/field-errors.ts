/**
 * Field errors of built-in kinds. kube-apiserver's bad values there are typed Go values, which
 * ErrorBody prints with %#v (`v1.LabelSelector{...}`); this server holds only their JSON, so a
 * value that is not a scalar prints as that JSON, and nil as `null`. The empty path is the root
 * path, printed as nothing.
 */

import { fieldErrors } from '../field-errors.ts';

export { child, dedupe, formatFieldError, index, key } from '../field-errors.ts';

/** A bad value as printed after `Invalid value: `: strings quoted, simple scalars bare, the rest as JSON. */
export function renderValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value);
}

export const { required, forbidden, invalid, notSupported, duplicate, notFound, tooLong } = fieldErrors({
  printValue: renderValue,
  emptyPath: '',
});
