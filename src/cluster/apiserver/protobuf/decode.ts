/**
 * Decoder for request bodies in the Kubernetes protobuf encoding
 * (`Content-Type: application/vnd.kubernetes.protobuf`): the 4-byte `k8s\0` prefix, a
 * runtime.Unknown envelope naming apiVersion/kind, and the object's message in `raw`. The
 * result has the shape Go's JSON encoder gives the same object, so the rest of the server
 * can treat it like a JSON body. Responses stay JSON: client-go asks for
 * `application/vnd.kubernetes.protobuf,application/json` and accepts either.
 *
 * Wire reading uses @bufbuild/protobuf's BinaryReader; the schema comes from the tables in
 * messages/, because no maintained package ships Kubernetes' .proto descriptors for JS.
 */
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import type { ObjectMeta } from '../types.ts';
import { messageForKind } from './registry.ts';
import type { FieldDesc, MessageDesc, ScalarType, SpecialType, ValueType } from './schema.ts';

export const KUBERNETES_PROTOBUF = 'application/vnd.kubernetes.protobuf';

const MAGIC = [0x6b, 0x38, 0x73, 0x00];

/** Why a body could not be decoded; `status` is the HTTP code the API server should answer with. */
export class ProtobufDecodeError extends Error {
  /** 415 when the body is well-formed but names something we cannot decode, 400 when it is malformed. */
  readonly status: 400 | 415;
  constructor(message: string, status: 400 | 415) {
    super(message);
    this.name = 'ProtobufDecodeError';
    this.status = status;
  }
}

/** A decoded body. Kinds with ObjectMeta always carry `metadata`; DeleteOptions has none. */
export interface DecodedObject {
  apiVersion: string;
  kind: string;
  metadata?: ObjectMeta;
  [key: string]: unknown;
}

export interface DecodeResult {
  object: DecodedObject;
  /** Fields the tables do not know (newer clients), as `Kind.path: field N`; they are dropped. */
  unknownFields: string[];
}

/** Whether a Content-Type header names the Kubernetes protobuf encoding. */
export function isKubernetesProtobuf(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() === KUBERNETES_PROTOBUF;
}

/** Decodes a protobuf request body into the JSON shape of the same object; throws ProtobufDecodeError. */
export function decodeKubernetesProtobuf(body: Uint8Array): DecodedObject {
  return decodeKubernetesProtobufDetailed(body).object;
}

/** Like decodeKubernetesProtobuf, also reporting the fields that were skipped as unknown. */
export function decodeKubernetesProtobufDetailed(body: Uint8Array): DecodeResult {
  if (body.length < MAGIC.length || MAGIC.some((b, i) => body[i] !== b)) {
    throw new ProtobufDecodeError('protobuf body does not start with the "k8s\\0" prefix', 400);
  }
  const envelope = guard(() => readUnknown(body.subarray(MAGIC.length)));
  const { apiVersion, kind } = envelope;
  if (kind === '' || apiVersion === '') {
    throw new ProtobufDecodeError('protobuf body does not name its apiVersion and kind', 400);
  }
  if (envelope.contentEncoding !== '') {
    throw new ProtobufDecodeError(`unsupported protobuf content encoding "${envelope.contentEncoding}"`, 415);
  }
  if (envelope.contentType !== '' && envelope.contentType !== KUBERNETES_PROTOBUF) {
    throw new ProtobufDecodeError(
      `unsupported content type "${envelope.contentType}" inside a protobuf body`,
      415,
    );
  }
  const message = messageForKind(apiVersion, kind);
  if (!message) {
    throw new ProtobufDecodeError(
      `no protobuf decoding for ${apiVersion}, Kind=${kind}; send it as JSON`,
      415,
    );
  }
  const ctx: Context = { unknown: [] };
  const fields = guard(() => decodeMessage(envelope.raw, message, kind, ctx));
  const object: DecodedObject = { apiVersion, kind, ...fields };
  // Go writes a non-pointer ObjectMeta even when it is empty.
  if (message.fields.get(1)?.name === 'metadata' && object.metadata === undefined) object.metadata = {};
  return { object, unknownFields: ctx.unknown };
}

interface Context {
  unknown: string[];
}

/** Turns the reader's own errors (premature EOF, illegal tag) into a 400. */
function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ProtobufDecodeError) throw err;
    const why = err instanceof Error ? err.message : String(err);
    throw new ProtobufDecodeError(`malformed protobuf body: ${why}`, 400);
  }
}

interface Envelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

/** runtime.Unknown: typeMeta=1 {apiVersion=1, kind=2}, raw=2, contentEncoding=3, contentType=4. */
function readUnknown(bytes: Uint8Array): Envelope {
  const out: Envelope = {
    apiVersion: '',
    kind: '',
    raw: new Uint8Array(),
    contentEncoding: '',
    contentType: '',
  };
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [no, wt] = reader.tag();
    if (no >= 1 && no <= 4)
      expectWire(wt, WireType.LengthDelimited, 'runtime.Unknown', 'length-delimited field');
    if (no === 1) {
      const meta = new BinaryReader(reader.bytes());
      while (meta.pos < meta.len) {
        const [mno, mwt] = meta.tag();
        if (mno === 1 || mno === 2) expectWire(mwt, WireType.LengthDelimited, 'runtime.TypeMeta', 'string');
        if (mno === 1) out.apiVersion = meta.string();
        else if (mno === 2) out.kind = meta.string();
        else meta.skip(mwt, mno);
      }
    } else if (no === 2) out.raw = reader.bytes();
    else if (no === 3) out.contentEncoding = reader.string();
    else if (no === 4) out.contentType = reader.string();
    else reader.skip(wt, no);
  }
  return out;
}

function expectWire(actual: WireType, expected: WireType, path: string, what: string): void {
  if (actual !== expected) {
    throw new ProtobufDecodeError(
      `malformed protobuf body: ${path}: wire type ${actual} cannot carry a ${what}`,
      400,
    );
  }
}

function decodeMessage(
  bytes: Uint8Array,
  message: MessageDesc,
  path: string,
  ctx: Context,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [no, wt] = reader.tag();
    const field = message.fields.get(no);
    if (!field) {
      reader.skip(wt, no);
      ctx.unknown.push(`${path}: field ${no}`);
      continue;
    }
    readField(reader, wt, field, out, path, ctx);
  }
  return out;
}

function readField(
  reader: BinaryReader,
  wt: WireType,
  field: FieldDesc,
  out: Record<string, unknown>,
  parent: string,
  ctx: Context,
): void {
  const path = field.inline ? parent : `${parent}.${field.name}`;
  if (field.map) {
    expectWire(wt, WireType.LengthDelimited, path, 'map entry');
    out[field.name] ??= {};
    const entries = out[field.name] as Record<string, unknown>;
    const [key, value] = readMapEntry(reader.bytes(), field.value, path, ctx);
    // defineProperty keeps a "__proto__" key an ordinary entry, as JSON.parse would.
    if (value !== undefined)
      Object.defineProperty(entries, key, { value, enumerable: true, writable: true, configurable: true });
    return;
  }
  if (field.repeated) {
    out[field.name] ??= [];
    const list = out[field.name] as unknown[];
    if (wt === WireType.LengthDelimited && field.value.kind === 'scalar' && isNumeric(field.value.type)) {
      // Packed encoding: one length-delimited run of numbers.
      const packed = new BinaryReader(reader.bytes());
      while (packed.pos < packed.len) list.push(readNumber(packed, field.value.type));
    } else {
      list.push(readValue(reader, wt, field.value, `${path}[${list.length}]`, ctx));
    }
    return;
  }
  const value = readValue(reader, wt, field.value, path, ctx);
  if (field.inline) {
    Object.assign(out, value);
  } else if (value === undefined || (!field.keep && isZero(field.value, value))) {
    // Go's encoder leaves these out: omitempty zero scalars, and zero Time values (null).
    delete out[field.name];
  } else {
    out[field.name] = value;
  }
}

function readValue(
  reader: BinaryReader,
  wt: WireType,
  value: ValueType,
  path: string,
  ctx: Context,
): unknown {
  switch (value.kind) {
    case 'scalar':
      return readScalar(reader, wt, value.type, path);
    case 'special':
      expectWire(wt, WireType.LengthDelimited, path, value.type);
      return decodeSpecial(reader.bytes(), value.type, path);
    case 'message':
      expectWire(wt, WireType.LengthDelimited, path, 'message');
      return decodeMessage(reader.bytes(), value.message!, path, ctx);
  }
}

function isNumeric(type: ScalarType): boolean {
  return type === 'b' || type === 'i32' || type === 'i64' || type === 'f64';
}

function readNumber(reader: BinaryReader, type: ScalarType): number | boolean {
  switch (type) {
    case 'b':
      return reader.bool();
    case 'i32':
      return reader.int32();
    case 'f64':
      return reader.double();
    default:
      // int64 values in Kubernetes objects (generations, seconds, ids) stay well inside 2^53.
      return Number(reader.int64());
  }
}

function readScalar(reader: BinaryReader, wt: WireType, type: ScalarType, path: string): unknown {
  if (type === 's' || type === 'bytes') {
    expectWire(wt, WireType.LengthDelimited, path, type === 's' ? 'string' : 'bytes');
    return type === 's' ? reader.string() : Buffer.from(reader.bytes()).toString('base64');
  }
  expectWire(wt, type === 'f64' ? WireType.Bit64 : WireType.Varint, path, type);
  return readNumber(reader, type);
}

function isZero(value: ValueType, decoded: unknown): boolean {
  return value.kind === 'scalar' && (decoded === '' || decoded === 0 || decoded === false);
}

/** A map entry message: key=1 (always a string in Kubernetes), value=2. */
function readMapEntry(bytes: Uint8Array, value: ValueType, path: string, ctx: Context): [string, unknown] {
  const reader = new BinaryReader(bytes);
  let key = '';
  let decoded: unknown;
  let seen = false;
  while (reader.pos < reader.len) {
    const [no, wt] = reader.tag();
    if (no === 1) {
      expectWire(wt, WireType.LengthDelimited, path, 'map key');
      key = reader.string();
    } else if (no === 2) {
      decoded = readValue(reader, wt, value, `${path}[${JSON.stringify(key)}]`, ctx);
      seen = true;
    } else reader.skip(wt, no);
  }
  if (!seen) decoded = zeroOf(value);
  return [key, decoded];
}

/** The JSON form of a value the wire left out (proto2 readers default it). */
function zeroOf(value: ValueType): unknown {
  if (value.kind === 'message') return {};
  if (value.kind === 'special')
    return value.type === 'Quantity' ? '0' : value.type === 'StringList' ? [] : undefined;
  return value.type === 's' || value.type === 'bytes' ? '' : value.type === 'b' ? false : 0;
}

/** apimachinery types whose protobuf message differs from their JSON form. */
function decodeSpecial(bytes: Uint8Array, type: SpecialType, path: string): unknown {
  const reader = new BinaryReader(bytes);
  const seen = new Map<number, unknown>();
  const list: string[] = [];
  while (reader.pos < reader.len) {
    const [no, wt] = reader.tag();
    const kind = SPECIAL_FIELDS[type][no];
    if (kind === undefined) {
      reader.skip(wt, no);
      continue;
    }
    const v = readScalar(reader, wt, kind, `${path}#${no}`);
    if (type === 'StringList') list.push(v as string);
    else seen.set(no, v);
  }
  switch (type) {
    case 'Time':
      // An empty message is Go's zero time, which JSON writes as null.
      return bytes.length === 0 ? undefined : formatTime((seen.get(1) as number) ?? 0);
    case 'IntOrString':
      return seen.get(1) === 1 ? ((seen.get(3) as string) ?? '') : ((seen.get(2) as number) ?? 0);
    case 'Quantity':
      return (seen.get(1) as string) || '0';
    case 'FieldsV1': {
      const raw = seen.get(1) as string | undefined;
      if (!raw) return undefined;
      try {
        return JSON.parse(Buffer.from(raw, 'base64').toString('utf8'));
      } catch {
        throw new ProtobufDecodeError(`malformed protobuf body: ${path}: fieldsV1 is not JSON`, 400);
      }
    }
    case 'StringList':
      return list;
  }
}

const SPECIAL_FIELDS: Record<SpecialType, Record<number, ScalarType>> = {
  Time: { 1: 'i64', 2: 'i32' },
  IntOrString: { 1: 'i64', 2: 'i32', 3: 's' },
  Quantity: { 1: 's' },
  FieldsV1: { 1: 'bytes' },
  StringList: { 1: 's' },
};

/** metav1.Time marshals to RFC 3339 in UTC with whole seconds: the nanos are dropped. */
function formatTime(seconds: number): string {
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime()))
    throw new ProtobufDecodeError('malformed protobuf body: time out of range', 400);
  return `${date.toISOString().slice(0, 19)}Z`;
}
