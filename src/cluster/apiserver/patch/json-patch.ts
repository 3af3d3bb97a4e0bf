import jsonpatch from 'fast-json-patch';
import { clone, isObject, type JsonObject, jsonEqual } from '../../../lib/json.ts';
import { goJsonKind } from '../gofmt.ts';
import { badRequest, genericInvalid, PatchError } from './errors.ts';

const { applyOperation, JsonPatchError } = jsonpatch;

/** kube-apiserver's maxJSONPatchOperations. */
const MAX_OPERATIONS = 10000;

/**
 * Applies an RFC 6902 JSON patch the way kube-apiserver does (evanphx/json-patch): a body that
 * does not decode as a list of operations is a 400; any operation that cannot be applied,
 * including a failed `test`, is a 422 whose message is the generic sentence the real server
 * sends (the specific reason is kept in `detail`). The input document is never mutated.
 * `strictDecoding` is fieldValidation Warn or Strict (the server's default), under which the
 * body is first decoded into the handler's own operation struct, with that struct's wording.
 */
export function applyJsonPatch<T>(doc: T, body: unknown, strictDecoding = true): T {
  const ops = decodeOperations(body, strictDecoding);
  if (ops.length > MAX_OPERATIONS) {
    throw new PatchError(
      413,
      'RequestEntityTooLarge',
      `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_OPERATIONS}, got ${ops.length}`,
    );
  }
  let document: unknown = clone(doc);
  for (const op of ops) {
    // A null operation has no kind.
    if (op === null) throw genericInvalid('Unexpected kind: unknown');
    if (op.op === 'test') {
      runTest(document, op);
      continue;
    }
    if (op.op === 'move' && typeof op.from === 'string' && typeof op.path === 'string') {
      // evanphx removes `from` first, so a destination inside it no longer exists.
      if (op.path.startsWith(`${op.from}/`))
        throw genericInvalid(`move operation does not apply: doc is missing destination path: ${op.path}`);
    }
    try {
      document = applyOperation(document, op as never, true, true).newDocument;
    } catch (err) {
      // Whatever the library trips on is the client's patch not applying: 422, never a 500.
      throw genericInvalid(describe(op, err instanceof JsonPatchError ? err.name : String(err)));
    }
  }
  return document as T;
}

/** A JSON null decodes to an empty patch; a null item to an operation without kind. */
function decodeOperations(body: unknown, strict: boolean): (JsonObject | null)[] {
  if (body === null) return [];
  const prefix = strict ? 'error decoding patch: ' : '';
  const typeError = (v: unknown, type: string) =>
    badRequest(`${prefix}json: cannot unmarshal ${goJsonKind(v)} into Go ${type}`);
  if (!Array.isArray(body))
    throw typeError(body, `value of type ${strict ? '[]handlers.jsonPatchOp' : 'jsonpatch.Patch'}`);
  for (const op of body) {
    if (op === null) continue;
    if (!isObject(op))
      throw typeError(op, `value of type ${strict ? 'handlers.jsonPatchOp' : 'jsonpatch.Operation'}`);
    if (!strict) continue;
    for (const [field, v] of Object.entries(op)) {
      if (STRING_FIELDS.has(field) && v !== null && typeof v !== 'string')
        throw typeError(v, `struct field jsonPatchOp.${field} of type string`);
    }
  }
  return body as (JsonObject | null)[];
}

/** The string fields of the handler's jsonPatchOp (`value` takes any JSON). */
const STRING_FIELDS = new Set(['op', 'path', 'from']);

/**
 * evanphx's `test` treats a missing location as null, so `{"op":"test","value":null}` on an
 * absent path passes; fast-json-patch would fail it, hence this small hand-written check.
 */
function runTest(document: unknown, op: Record<string, unknown>): void {
  const path = typeof op.path === 'string' ? op.path : '';
  const found = resolvePointer(document, path);
  if (found === 'unresolvable') {
    throw genericInvalid(`test operation does not apply: is missing path: ${path}: missing value`);
  }
  const actual = found.value === undefined ? null : found.value;
  const expected = op.value === undefined ? null : op.value;
  if (!jsonEqual(actual, expected)) throw genericInvalid(`testing value ${path} failed: test failed`);
}

function resolvePointer(doc: unknown, pointer: string): { value: unknown } | 'unresolvable' {
  if (pointer === '') return { value: doc };
  if (!pointer.startsWith('/')) return 'unresolvable';
  const parts = pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let cur: unknown = doc;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const last = i === parts.length - 1;
    if (Array.isArray(cur)) {
      const idx = /^(0|[1-9][0-9]*)$/.test(part) ? Number(part) : -1;
      if (idx < 0 || idx >= cur.length) return last ? { value: undefined } : 'unresolvable';
      cur = cur[idx];
    } else if (isObject(cur)) {
      if (!Object.hasOwn(cur, part)) return last ? { value: undefined } : 'unresolvable';
      cur = cur[part];
    } else {
      return 'unresolvable';
    }
  }
  return { value: cur };
}

/** evanphx-style wording of an operation failure, for `detail`. */
function describe(op: Record<string, unknown>, code: string): string {
  // evanphx reads an `op` that is missing or not a string as kind "unknown".
  const kind = typeof op.op === 'string' ? op.op : 'unknown';
  const path = String(op.path);
  switch (code) {
    case 'OPERATION_OP_INVALID':
      return `Unexpected kind: ${kind}`;
    case 'OPERATION_PATH_INVALID':
    case 'OPERATION_PATH_UNRESOLVABLE':
    case 'OPERATION_PATH_CANNOT_ADD':
      return `${kind} operation does not apply: doc is missing path: "${path}": missing value`;
    case 'OPERATION_FROM_UNRESOLVABLE':
      return `${kind} operation does not apply: doc is missing from path: "${String(op.from)}": missing value`;
    case 'OPERATION_VALUE_REQUIRED':
      return `${kind} operation missing value`;
    default:
      return `${kind} operation failed at "${path}": ${code}`;
  }
}
