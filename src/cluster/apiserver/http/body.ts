import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { ApiError, errors } from '../errors.ts';
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
export function decodeRequestBody(bytes: Buffer, contentType: string, customResource: boolean): unknown {
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
  return decodeBody(bytes.toString('utf8'), contentType);
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
