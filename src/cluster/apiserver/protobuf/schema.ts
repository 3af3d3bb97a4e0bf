/**
 * Message descriptors for the Kubernetes protobuf encoding, kept as data rather than
 * generated code: each message is one line of `number:jsonName:type` tokens, taken from
 * the `protobuf:"…"` and `json:"…"` struct tags of k8s.io/api and k8s.io/apimachinery.
 *
 * Type grammar of a token's third part:
 *   s | b | i32 | i64 | f64 | bytes           scalars (bytes become base64, as in JSON)
 *   Time | IntOrString | Quantity | FieldsV1 | StringList
 *                                            apimachinery types with their own JSON form
 *   @Name | @pkg.Name                        a message of this package / of another one
 *   {T}                                      map<string, T> (repeated key=1/value=2 entries)
 * followed by flags:
 *   []  repeated
 *   !   keep a zero value: the Go field is a pointer or has no `omitempty`, so Go's JSON
 *       encoder writes it even when it is 0, "" or false
 *   ^   embedded struct whose fields JSON inlines into the parent (`json:",inline"`)
 */

export type ScalarType = 's' | 'b' | 'i32' | 'i64' | 'f64' | 'bytes';
export type SpecialType = 'Time' | 'IntOrString' | 'Quantity' | 'FieldsV1' | 'StringList';

export type ValueType =
  | { kind: 'scalar'; type: ScalarType }
  | { kind: 'special'; type: SpecialType }
  | { kind: 'message'; ref: string; message?: MessageDesc };

export interface FieldDesc {
  no: number;
  name: string;
  value: ValueType;
  map: boolean;
  repeated: boolean;
  keep: boolean;
  inline: boolean;
}

export interface MessageDesc {
  /** Qualified name, e.g. `core.PodSpec`. */
  name: string;
  fields: Map<number, FieldDesc>;
}

const SCALARS = new Set<string>(['s', 'b', 'i32', 'i64', 'f64', 'bytes']);
const SPECIALS = new Set<string>(['Time', 'IntOrString', 'Quantity', 'FieldsV1', 'StringList']);

function parseValueType(text: string, pkg: string, where: string): ValueType {
  if (text.startsWith('@')) {
    const ref = text.slice(1);
    return { kind: 'message', ref: ref.includes('.') ? ref : `${pkg}.${ref}` };
  }
  if (SCALARS.has(text)) return { kind: 'scalar', type: text as ScalarType };
  if (SPECIALS.has(text)) return { kind: 'special', type: text as SpecialType };
  throw new Error(`protobuf schema ${where}: unknown type "${text}"`);
}

function parseField(token: string, pkg: string, message: string): FieldDesc {
  const where = `${message} "${token}"`;
  const parts = token.split(':');
  if (parts.length !== 3) throw new Error(`protobuf schema ${where}: expected number:name:type`);
  const [noText, name, typeText] = parts as [string, string, string];
  const no = Number(noText);
  if (!Number.isInteger(no) || no <= 0) throw new Error(`protobuf schema ${where}: bad field number`);
  let rest = typeText;
  const flags = { repeated: false, keep: false, inline: false };
  for (;;) {
    if (rest.endsWith('[]')) {
      flags.repeated = true;
      rest = rest.slice(0, -2);
    } else if (rest.endsWith('!')) {
      flags.keep = true;
      rest = rest.slice(0, -1);
    } else if (rest.endsWith('^')) {
      flags.inline = true;
      rest = rest.slice(0, -1);
    } else break;
  }
  const map = rest.startsWith('{') && rest.endsWith('}');
  const value = parseValueType(map ? rest.slice(1, -1) : rest, pkg, where);
  if (flags.inline && (value.kind !== 'message' || map || flags.repeated)) {
    throw new Error(`protobuf schema ${where}: only a single message can be inlined`);
  }
  return { no, name, value, map, ...flags };
}

/** Parses one package's table (message name → field line) into descriptors. */
export function parsePackage(pkg: string, table: Record<string, string>): MessageDesc[] {
  return Object.entries(table).map(([short, line]) => {
    const name = `${pkg}.${short}`;
    const fields = new Map<number, FieldDesc>();
    const jsonNames = new Set<string>();
    for (const token of line.trim().split(/\s+/)) {
      const field = parseField(token, pkg, name);
      if (fields.has(field.no)) throw new Error(`protobuf schema ${name}: field ${field.no} declared twice`);
      if (!field.inline) {
        if (jsonNames.has(field.name))
          throw new Error(`protobuf schema ${name}: JSON name ${field.name} declared twice`);
        jsonNames.add(field.name);
      }
      fields.set(field.no, field);
    }
    return { name, fields };
  });
}

/** Links message references; throws on a reference to a message no table declares. */
export function linkMessages(messages: MessageDesc[]): Map<string, MessageDesc> {
  const byName = new Map<string, MessageDesc>();
  for (const m of messages) {
    if (byName.has(m.name)) throw new Error(`protobuf schema: message ${m.name} declared twice`);
    byName.set(m.name, m);
  }
  for (const m of messages) {
    for (const f of m.fields.values()) {
      if (f.value.kind !== 'message') continue;
      const target = byName.get(f.value.ref);
      if (!target) throw new Error(`protobuf schema ${m.name}.${f.name}: no message ${f.value.ref}`);
      f.value.message = target;
    }
  }
  return byName;
}
