import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { ApiError, errors } from '../errors.ts';
import { goJsonKind } from '../gofmt.ts';
import { goJsonSyntaxError } from '../gojson.ts';
import { decodeKubernetesProtobuf, isKubernetesProtobuf, ProtobufDecodeError } from '../protobuf/index.ts';

/** kube-apiserver's default limit for request bodies (3 MiB). */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<string> {
  return (await readBodyBytes(req, limit)).toString('utf8');
}

export async function readBodyBytes(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    req.resume();
    throw errors.tooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw errors.tooLarge(limit);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Decodes a request body by content type: JSON, YAML, or Kubernetes protobuf (which
 * kubectl's typed clients send for `kubectl create <kind>`, `auth can-i`, drain's
 * DeleteOptions). Protobuf only exists for built-in kinds; custom resources get 415.
 */
export function decodeRequestBody(
  bytes: Buffer,
  contentType: string,
  customResource: boolean,
  kind?: string,
): unknown {
  if (isKubernetesProtobuf(contentType)) {
    if (customResource) throw errors.unsupportedMediaType(contentType);
    try {
      return decodeKubernetesProtobuf(bytes);
    } catch (err) {
      if (err instanceof ProtobufDecodeError) {
        throw err.status === 415
          ? errors.unsupportedMediaType(`${contentType}: ${err.message}`)
          : errors.badRequest(err.message);
      }
      throw err;
    }
  }
  if (!/json|yaml/.test(contentType)) throw errors.unsupportedMediaType(contentType);
  const text = bytes.toString('utf8');
  if (kind === undefined || customResource || contentType.includes('yaml') || text.trim() === '')
    return decodeBody(text, contentType);
  // A built-in kind's JSON body goes through the codec, whose first step reads apiVersion and
  // kind (SimpleMetaFactory.Interpret): a body that is not a JSON object fails there.
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw unrecognized(kind, `json parse error: ${goJsonSyntaxError(text) ?? 'invalid JSON'}`, bytes);
  }
  if (value !== null && (typeof value !== 'object' || Array.isArray(value))) {
    throw unrecognized(
      kind,
      `json parse error: json: cannot unmarshal ${goJsonKind(value)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
      bytes,
    );
  }
  checkNestingDepth(value, text.length);
  return value;
}

/**
 * `transformDecodeError` in `handlers/rest.go` for a body whose kind could not be read: the
 * endpoint's kind, the codec's error, and `summarizeData` of the body (its first 30 bytes,
 * as text when it starts with `{`, else in hex).
 */
function unrecognized(kind: string, why: string, bytes: Buffer): ApiError {
  const head = bytes.subarray(0, 30);
  const more = bytes.length > 30 ? ' ...' : '';
  const summary =
    bytes.length === 0
      ? '<empty>'
      : bytes[0] === 0x7b
        ? `${head.toString('utf8')}${more}`
        : `${head.toString('hex')}${more}`;
  return errors.badRequest(
    `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; ${why} (${summary})`,
  );
}

/** Decodes a JSON body, or YAML when the content type says so (kubectl sends YAML for apply). */
export function decodeBody(text: string, contentType: string): unknown {
  if (text.trim() === '') throw errors.badRequest('the body of the request was empty');
  const yaml = contentType.includes('yaml');
  let value: unknown;
  try {
    value = yaml ? parseYaml(text, { maxAliasCount: 100 }) : JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new ApiError(400, 'BadRequest', `error decoding ${yaml ? 'YAML' : 'JSON'}: ${why}`);
  }
  checkNestingDepth(value, text.length);
  return value;
}

/** Go's encoding/json (and sigs.k8s.io/json, which kube-apiserver decodes with) nests at most this deep. */
export const MAX_NESTING_DEPTH = 10_000;

/**
 * Refuses values nested deeper than Go's decoder accepts, as a 400 with its scanner's wording,
 * so no recursive walk further on (defaulting, validation, pruning) can overflow the stack.
 * A value that deep needs two bytes per level, so smaller bodies are not walked at all.
 */
export function checkNestingDepth(value: unknown, textLength: number): void {
  if (textLength <= 2 * MAX_NESTING_DEPTH) return;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > MAX_NESTING_DEPTH) {
      const c = Array.isArray(v) ? '[' : '{';
      throw errors.badRequest(`json: invalid character '${c}' exceeded max nesting depth`);
    }
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
}
