/**
 * Generates the built-in OpenAPI v3 component schemas that the embedded API server publishes
 * (src/cluster/apiserver/openapi/data/*.json) from the `kubernetes-models` package.
 *
 * Why a generator and committed JSON instead of reading the package at run time:
 * `kubernetes-models` carries the upstream field descriptions, enums and required lists only in its
 * `.d.ts` files (its `.js` files are compiled ajv validators without descriptions), so using it at
 * run time would mean parsing TypeScript declarations on every start and shipping an 18 MB
 * dependency. Here we parse those declarations once, keep only the closure of the kinds the
 * embedded server serves, and write one JSON file per Go package (formatted the way biome, which
 * checks src/, wants it), loaded lazily.
 * Integer formats (int32/int64/byte), which the `.d.ts` files lose, come from the matching
 * `@kubernetes/client-node` model's attribute map (both are generated from the same upstream spec).
 *
 * Run: ./node_modules/.bin/node scripts/gen-openapi.ts        (writes the files)
 *      ./node_modules/.bin/node scripts/gen-openapi.ts --check (exits 1 if they are stale)
 */

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as clientNode from '@kubernetes/client-node';

type Schema = Record<string, unknown>;

const ROOT = path.resolve(import.meta.dirname, '..');
const MODELS_DIR = path.join(ROOT, 'node_modules/kubernetes-models');
const APIMACHINERY_DIR = path.join(ROOT, 'node_modules/@kubernetes-models/apimachinery');
export const DATA_DIR = path.join(ROOT, 'src/cluster/apiserver/openapi/data');

/** Kinds whose schemas (and everything they reference) are published. Lists are added automatically. */
const ROOT_KINDS: Array<[groupDir: string, version: string, kinds: string[]]> = [
  [
    '',
    'v1',
    [
      'Namespace',
      'Pod',
      'Node',
      'Event',
      'ConfigMap',
      'Secret',
      'Service',
      'ServiceAccount',
      'Endpoints',
      'Binding',
      'PersistentVolumeClaim',
      'PersistentVolume',
      'ResourceQuota',
      'LimitRange',
      'ComponentStatus',
      'PodTemplate',
      'ReplicationController',
    ],
  ],
  ['apps', 'v1', ['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'ControllerRevision']],
  ['batch', 'v1', ['Job', 'CronJob']],
  ['coordination.k8s.io', 'v1', ['Lease']],
  ['events.k8s.io', 'v1', ['Event']],
  ['rbac.authorization.k8s.io', 'v1', ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']],
  [
    'admissionregistration.k8s.io',
    'v1',
    [
      'MutatingWebhookConfiguration',
      'ValidatingWebhookConfiguration',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ],
  ],
  ['apiextensions.k8s.io', 'v1', ['CustomResourceDefinition']],
  ['apiregistration.k8s.io', 'v1', ['APIService']],
  ['authentication.k8s.io', 'v1', ['TokenReview', 'SelfSubjectReview', 'TokenRequest']],
  [
    'authorization.k8s.io',
    'v1',
    ['SubjectAccessReview', 'SelfSubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview'],
  ],
  ['autoscaling', 'v1', ['Scale', 'HorizontalPodAutoscaler']],
  ['autoscaling', 'v2', ['HorizontalPodAutoscaler']],
  ['certificates.k8s.io', 'v1', ['CertificateSigningRequest']],
  ['flowcontrol.apiserver.k8s.io', 'v1', ['FlowSchema', 'PriorityLevelConfiguration']],
  ['networking.k8s.io', 'v1', ['Ingress', 'IngressClass', 'NetworkPolicy']],
  ['node.k8s.io', 'v1', ['RuntimeClass']],
  ['policy', 'v1', ['Eviction', 'PodDisruptionBudget']],
  ['scheduling.k8s.io', 'v1', ['PriorityClass']],
  ['discovery.k8s.io', 'v1', ['EndpointSlice']],
  [
    'storage.k8s.io',
    'v1',
    ['StorageClass', 'CSIDriver', 'CSINode', 'CSIStorageCapacity', 'VolumeAttachment'],
  ],
];
/** Kinds that have no List type (subresource bodies and review requests). */
const NO_LIST = new Set([
  'Binding',
  'Scale',
  'Eviction',
  'SubjectAccessReview',
  'SelfSubjectAccessReview',
  'LocalSubjectAccessReview',
  'SelfSubjectRulesReview',
  'TokenReview',
  'SelfSubjectReview',
  'TokenRequest',
]);

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const META_ROOTS = [
  'Status',
  'DeleteOptions',
  'Patch',
  'WatchEvent',
  'APIResourceList',
  'ObjectMeta',
  'ListMeta',
];

/** Hand-kept schemas for the few apimachinery types whose JSON form is not a plain object. */
const SPECIAL: Record<string, Schema> = {
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { oneOf: [{ type: 'string' }, { type: 'number' }] },
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': {
    format: 'int-or-string',
    oneOf: [{ type: 'integer' }, { type: 'string' }],
  },
  [`${META}Time`]: { type: 'string', format: 'date-time' },
  [`${META}MicroTime`]: { type: 'string', format: 'date-time' },
  [`${META}Duration`]: { type: 'string' },
};
/** Empty Go structs with custom JSON that take any value: published without a type. */
const ANY_VALUE = new Set([
  'JSON',
  'JSONSchemaPropsOrBool',
  'JSONSchemaPropsOrArray',
  'JSONSchemaPropsOrStringArray',
]);

/** Go package (OpenAPI name prefix) of a kubernetes-models directory: `apps/v1` -> `io.k8s.api.apps.v1`. */
function packageOf(file: string): string {
  if (file.startsWith(APIMACHINERY_DIR)) {
    const rel = path.relative(APIMACHINERY_DIR, path.dirname(file));
    return `io.k8s.apimachinery.pkg.${rel.split(path.sep).join('.')}`;
  }
  const parts = path.relative(MODELS_DIR, path.dirname(file)).split(path.sep);
  if (parts.length === 1) return `io.k8s.api.core.${parts[0]}`;
  const [group, version] = parts as [string, string];
  if (group === 'apiextensions.k8s.io')
    return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${version}`;
  if (group === 'apiregistration.k8s.io') return `io.k8s.kube-aggregator.pkg.apis.apiregistration.${version}`;
  return `io.k8s.api.${group.split('.')[0]}.${version}`;
}

function fullNameOf(file: string): string {
  return `${packageOf(file)}.${path.basename(file, '.d.ts')}`;
}

/** `io.k8s.api.core.v1.Pod` -> `IoK8sApiCoreV1Pod`, the identifier kubernetes-models exports it as. */
function pascalIdentifier(fullName: string): string {
  return fullName
    .split(/[.-]/)
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

function fileOfKind(groupDir: string, version: string, kind: string): string {
  return groupDir === ''
    ? path.join(MODELS_DIR, version, `${kind}.d.ts`)
    : path.join(MODELS_DIR, groupDir, version, `${kind}.d.ts`);
}

// ---------------------------------------------------------------------------------------------
// .d.ts parsing. The files are machine-generated with a fixed shape, so a small scanner suffices
// (typescript 7 ships no JS compiler API to do this with).

function cleanDoc(raw: string): string {
  const inner = raw.replace(/^\/\*\*/, '').replace(/\*\/$/, '');
  const lines = inner.split('\n').map((l) => l.replace(/^\s*\* ?/, '').replace(/\s+$/, ''));
  while (lines.length > 0 && lines[0]!.trim() === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  return lines.join('\n').replace(/\*\\\//g, '*/');
}

/** The JSDoc comment that ends right before `index`, if any. */
function docBefore(text: string, index: number): string | undefined {
  const before = text.slice(0, index).trimEnd();
  if (!before.endsWith('*/')) return undefined;
  const start = before.lastIndexOf('/**');
  return start < 0 ? undefined : cleanDoc(before.slice(start));
}

type TypeNode =
  | { t: 'prim'; name: 'string' | 'number' | 'boolean' | 'any' }
  | { t: 'lit'; value: string }
  | { t: 'array'; items: TypeNode }
  | { t: 'map'; values: TypeNode }
  | { t: 'object' }
  | { t: 'ref'; file: string }
  | { t: 'union'; members: TypeNode[] };

function tokenize(source: string): string[] {
  const src = source.replace(/\/\*[\s\S]*?\*\//g, ' ');
  const tokens: string[] = [];
  const re = /\s*("(?:[^"\\]|\\.)*"|[A-Za-z_$][\w$]*|[<>{}[\]|;:(),?])/y;
  let end = 0;
  for (let m = re.exec(src); m; m = re.exec(src)) {
    tokens.push(m[1]!);
    end = re.lastIndex;
  }
  if (src.slice(end).trim() !== '') throw new Error(`cannot tokenize type near: ${src.slice(end, end + 40)}`);
  return tokens;
}

class TypeParser {
  private pos = 0;
  private readonly tokens: string[];
  private readonly resolveIdent: (name: string) => TypeNode;
  constructor(tokens: string[], resolveIdent: (name: string) => TypeNode) {
    this.tokens = tokens;
    this.resolveIdent = resolveIdent;
  }

  parse(): TypeNode {
    const node = this.union();
    if (this.pos !== this.tokens.length)
      throw new Error(`trailing tokens: ${this.tokens.slice(this.pos).join(' ')}`);
    return node;
  }

  private peek(): string | undefined {
    return this.tokens[this.pos];
  }

  private expect(tok: string): void {
    if (this.tokens[this.pos] !== tok) throw new Error(`expected ${tok}, got ${this.tokens[this.pos]}`);
    this.pos++;
  }

  private union(): TypeNode {
    const members = [this.postfix()];
    while (this.peek() === '|') {
      this.pos++;
      members.push(this.postfix());
    }
    return members.length === 1 ? members[0]! : { t: 'union', members };
  }

  private postfix(): TypeNode {
    let node = this.primary();
    while (this.peek() === '[' && this.tokens[this.pos + 1] === ']') {
      this.pos += 2;
      node = { t: 'array', items: node };
    }
    return node;
  }

  private primary(): TypeNode {
    const tok = this.tokens[this.pos++];
    if (tok === undefined) throw new Error('unexpected end of type');
    if (tok.startsWith('"')) return { t: 'lit', value: JSON.parse(tok) as string };
    if (tok === 'string' || tok === 'number' || tok === 'boolean' || tok === 'any')
      return { t: 'prim', name: tok };
    if (tok === 'unknown') return { t: 'prim', name: 'any' };
    if (tok === 'Array') {
      this.expect('<');
      const items = this.union();
      this.expect('>');
      return { t: 'array', items };
    }
    if (tok === '(') {
      const inner = this.union();
      this.expect(')');
      return inner;
    }
    if (tok === '{') {
      if (this.peek() === '}') {
        this.pos++;
        return { t: 'object' };
      }
      if (this.peek()?.startsWith('"')) {
        // kubernetes-models inlines a kind used inside another type (PersistentVolumeClaim in
        // volumeClaimTemplates and in its List); upstream references it. Recover the kind from
        // its `spec` type: `...Spec.d.ts` -> `....d.ts`.
        let kindFile: string | undefined;
        for (let depth = 1; depth > 0; this.pos++) {
          const t = this.tokens[this.pos];
          if (t === undefined) throw new Error('unterminated inline object');
          if (t === '{') depth++;
          else if (t === '}') depth--;
          else if (/^I\w+Spec$/.test(t)) {
            const ref = this.resolveIdent(t);
            if (ref.t === 'ref') kindFile = ref.file.replace(/Spec\.d\.ts$/, '.d.ts');
          }
        }
        if (!kindFile) throw new Error('inline object type without a spec reference');
        return { t: 'ref', file: kindFile };
      }
      this.expect('[');
      this.pos++; // key name
      this.expect(':');
      this.expect('string');
      this.expect(']');
      this.expect(':');
      const values = this.union();
      if (this.peek() === ';') this.pos++;
      this.expect('}');
      return { t: 'map', values };
    }
    return this.resolveIdent(tok);
  }
}

interface Member {
  name: string;
  optional: boolean;
  doc?: string;
  type: TypeNode;
}

interface ParsedDecl {
  fullName: string;
  doc?: string;
  /** Interface members, or undefined for a type alias. */
  members?: Member[];
  alias?: TypeNode;
  typeMeta?: { apiVersion: string; kind: string };
}

/** Splits an interface body into members: optional JSDoc, `"name"?: Type;` with nested braces. */
function parseMembers(body: string, resolveIdent: (name: string) => TypeNode): Member[] {
  const members: Member[] = [];
  let i = 0;
  let doc: string | undefined;
  while (i < body.length) {
    const ch = body[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if (body.startsWith('/**', i)) {
      const end = body.indexOf('*/', i);
      doc = cleanDoc(body.slice(i, end + 2));
      i = end + 2;
      continue;
    }
    const keyMatch = /^"((?:[^"\\]|\\.)*)"(\??):/.exec(body.slice(i));
    if (!keyMatch) throw new Error(`cannot parse member near: ${body.slice(i, i + 60)}`);
    i += keyMatch[0].length;
    let depth = 0;
    let j = i;
    let inString = false;
    for (; j < body.length; j++) {
      const c = body[j]!;
      if (inString) {
        if (c === '\\') j++;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === '{' || c === '<' || c === '(' || c === '[') depth++;
      else if (c === '}' || c === '>' || c === ')' || c === ']') depth--;
      else if (c === ';' && depth === 0) break;
    }
    const typeSrc = body.slice(i, j);
    const member: Member = {
      name: JSON.parse(`"${keyMatch[1]}"`) as string,
      optional: keyMatch[2] === '?',
      type: parseTypeSrc(typeSrc, resolveIdent),
    };
    if (doc !== undefined) member.doc = doc;
    members.push(member);
    doc = undefined;
    i = j + 1;
  }
  return members;
}

function resolveImport(fromFile: string, spec: string): string | undefined {
  if (spec.startsWith('.')) return path.resolve(path.dirname(fromFile), spec.replace(/\.js$/, '.d.ts'));
  const apim = '@kubernetes-models/apimachinery/';
  if (spec.startsWith(apim)) return path.join(APIMACHINERY_DIR, `${spec.slice(apim.length)}.d.ts`);
  return undefined;
}

function parseDeclFile(file: string): ParsedDecl {
  const text = readFileSync(file, 'utf8');
  const fullName = fullNameOf(file);
  const exportMatch = /export type \{ (\w+) as (\w+),/.exec(text);
  if (!exportMatch) throw new Error(`${file}: no canonical export`);
  const [, localName, canonical] = exportMatch as unknown as [string, string, string];
  if (canonical !== `I${pascalIdentifier(fullName)}`) {
    throw new Error(`${file}: exported as ${canonical}, expected I${pascalIdentifier(fullName)}`);
  }
  const imports = new Map<string, string>();
  for (const m of text.matchAll(/^import \{([^}]+)\} from "([^"]+)";$/gm)) {
    const target = resolveImport(file, m[2]!);
    if (!target) continue;
    for (const name of m[1]!.split(',')) imports.set(name.trim(), target);
  }
  const resolveIdent = (name: string): TypeNode => {
    if (name === localName) return { t: 'ref', file };
    const target = imports.get(name);
    if (!target) throw new Error(`${file}: unknown type ${name}`);
    return { t: 'ref', file: target };
  };

  const ifaceRe = new RegExp(`export interface ${localName}( extends TypeMeta)? \\{\\n([\\s\\S]*?)^\\}`, 'm');
  const iface = ifaceRe.exec(text);
  if (iface) {
    const decl: ParsedDecl = { fullName, members: parseMembers(iface[2]!, resolveIdent) };
    const doc = docBefore(text, iface.index);
    if (doc !== undefined) decl.doc = doc;
    if (iface[1]) {
      const lit = (n: string) => {
        const m = decl.members!.find((x) => x.name === n)?.type;
        if (m?.t !== 'lit') throw new Error(`${file}: ${n} is not a literal`);
        return m.value;
      };
      decl.typeMeta = { apiVersion: lit('apiVersion'), kind: lit('kind') };
    }
    return decl;
  }
  const aliasRe = new RegExp(`export type ${localName} = ([^;]+);`);
  const alias = aliasRe.exec(text);
  if (!alias) throw new Error(`${file}: neither interface nor alias ${localName}`);
  const decl: ParsedDecl = { fullName, alias: new TypeParser(tokenize(alias[1]!), resolveIdent).parse() };
  const doc = docBefore(text, alias.index);
  if (doc !== undefined) decl.doc = doc;
  return decl;
}

// ---------------------------------------------------------------------------------------------
// Conversion to OpenAPI v3 schemas, shaped the way kube-openapi publishes them: properties sorted,
// a `$ref` with sibling keys wrapped in `allOf`, group-version-kind on top-level kinds.

interface Attr {
  baseName: string;
  type: string;
  format: string;
}

/** The @kubernetes/client-node model generated from the same upstream definition, if any. */
function clientNodeAttrs(fullName: string, memberNames: string[]): Map<string, Attr> | undefined {
  const parts = fullName.split('.');
  const name = parts[parts.length - 1]!;
  const version = parts[parts.length - 2]!;
  const group = parts[parts.length - 3]!;
  const ver = version.charAt(0).toUpperCase() + version.slice(1);
  const grp = group.charAt(0).toUpperCase() + group.slice(1);
  const candidates = [`${ver}${name}`, `${grp}${ver}${name}`];
  const models = clientNode as unknown as Record<string, { getAttributeTypeMap?: () => Attr[] } | undefined>;
  for (const candidate of candidates) {
    const attrs = models[candidate]?.getAttributeTypeMap?.();
    if (!attrs) continue;
    const byName = new Map(attrs.map((a) => [a.baseName, a]));
    const shared = memberNames.filter((n) => byName.has(n)).length;
    if (shared >= memberNames.length * 0.8) return byName;
  }
  return undefined;
}

function numberSchema(format: string | undefined): Schema {
  if (format === 'int32' || format === 'int64') return { type: 'integer', format };
  if (format === 'double' || format === 'float') return { type: 'number', format };
  // Upstream numbers without a known format are nearly all integers (counts, seconds, ports).
  return { type: 'integer' };
}

function refTo(file: string): Schema {
  return { $ref: `#/components/schemas/${fullNameOf(file)}` };
}

function typeToSchema(node: TypeNode, format: string | undefined, refs: Set<string>): Schema {
  switch (node.t) {
    case 'prim':
      if (node.name === 'string') return format ? { type: 'string', format } : { type: 'string' };
      if (node.name === 'boolean') return { type: 'boolean' };
      if (node.name === 'number') return numberSchema(format);
      return {};
    case 'lit':
      return { type: 'string', enum: [node.value] };
    case 'union': {
      if (node.members.every((m) => m.t === 'lit')) {
        return { type: 'string', enum: node.members.map((m) => (m as { value: string }).value).sort() };
      }
      throw new Error(`unsupported union ${JSON.stringify(node)}`);
    }
    case 'array':
      return { type: 'array', items: typeToSchema(node.items, format, refs) };
    case 'map':
      return { type: 'object', additionalProperties: typeToSchema(node.values, format, refs) };
    case 'object':
      return { type: 'object' };
    case 'ref':
      refs.add(node.file);
      return refTo(node.file);
  }
}

function withDescription(schema: Schema, description: string | undefined): Schema {
  if (description === undefined || description === '') return schema;
  if (typeof schema.$ref === 'string') return { allOf: [schema], description };
  return { description, ...schema };
}

function sortKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortKeys) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
    return out as T;
  }
  return value;
}

interface Generated {
  schemas: Map<string, Schema>;
  gvkIndex: Record<string, string>;
}

function typeMetaDescriptions(): { apiVersion: string; kind: string } {
  const status = parseDeclFile(path.join(APIMACHINERY_DIR, 'apis/meta/v1/Status.d.ts'));
  const get = (n: string) => status.members!.find((m) => m.name === n)?.doc ?? '';
  return { apiVersion: get('apiVersion'), kind: get('kind') };
}

function buildSchemas(): Generated {
  const typeMetaDocs = typeMetaDescriptions();
  const schemas = new Map<string, Schema>();
  const gvkIndex: Record<string, string> = {};
  const queue: string[] = [];
  for (const [groupDir, version, kinds] of ROOT_KINDS) {
    for (const kind of kinds) {
      queue.push(fileOfKind(groupDir, version, kind));
      if (!NO_LIST.has(kind)) queue.push(fileOfKind(groupDir, version, `${kind}List`));
    }
  }
  for (const name of META_ROOTS) queue.push(path.join(APIMACHINERY_DIR, 'apis/meta/v1', `${name}.d.ts`));

  const seen = new Set<string>();
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!existsSync(file)) throw new Error(`missing model file ${file}`);
    const decl = parseDeclFile(file);
    const refs = new Set<string>();
    let schema: Schema;
    const special = SPECIAL[decl.fullName];
    if (special) {
      schema = { ...special };
    } else if (decl.alias) {
      schema = typeToSchema(decl.alias, undefined, refs);
    } else if (decl.members!.length === 0) {
      const short = decl.fullName.slice(decl.fullName.lastIndexOf('.') + 1);
      schema = ANY_VALUE.has(short) ? {} : { type: 'object' };
    } else {
      const members = decl.members!;
      const attrs = clientNodeAttrs(
        decl.fullName,
        members.map((m) => m.name),
      );
      const properties: Record<string, Schema> = {};
      const required: string[] = [];
      for (const m of members) {
        if (decl.typeMeta && (m.name === 'apiVersion' || m.name === 'kind')) {
          properties[m.name] = { description: typeMetaDocs[m.name], type: 'string' };
          continue;
        }
        const format = attrs?.get(m.name)?.format || undefined;
        properties[m.name] = withDescription(typeToSchema(m.type, format, refs), m.doc);
        if (!m.optional) required.push(m.name);
      }
      schema = { type: 'object', properties };
      if (required.length > 0) schema.required = required;
    }
    if (decl.doc) schema.description = decl.doc;
    if (decl.typeMeta) {
      const { apiVersion, kind } = decl.typeMeta;
      const slash = apiVersion.indexOf('/');
      const group = slash < 0 ? '' : apiVersion.slice(0, slash);
      const version = apiVersion.slice(slash + 1);
      schema['x-kubernetes-group-version-kind'] = [{ group, kind, version }];
      gvkIndex[`${apiVersion}/${kind}`] = decl.fullName;
    }
    schemas.set(decl.fullName, schema);
    for (const r of refs) queue.push(r);
  }

  // Meta kinds registered in every group, as the real scheme does for the groups served here.
  const servedGVs = [...new Set(ROOT_KINDS.map(([g, v]) => (g === '' ? v : `${g}/${v}`)))].sort();
  const everyGroup = (kind: string) =>
    servedGVs.map((gv) => {
      const slash = gv.indexOf('/');
      return { group: slash < 0 ? '' : gv.slice(0, slash), kind, version: gv.slice(slash + 1) };
    });
  schemas.get(`${META}Status`)!['x-kubernetes-group-version-kind'] = [
    { group: '', kind: 'Status', version: 'v1' },
  ];
  schemas.get(`${META}APIResourceList`)!['x-kubernetes-group-version-kind'] = [
    { group: '', kind: 'APIResourceList', version: 'v1' },
  ];
  schemas.get(`${META}DeleteOptions`)!['x-kubernetes-group-version-kind'] = everyGroup('DeleteOptions');
  schemas.get(`${META}WatchEvent`)!['x-kubernetes-group-version-kind'] = everyGroup('WatchEvent');
  gvkIndex['v1/Status'] = `${META}Status`;
  return { schemas, gvkIndex };
}

/** Biome (the repository's formatter) formats JSON under src/; we write what it would. */
function biomeFormat(fileName: string, content: string): string {
  return execFileSync(
    path.join(ROOT, 'node_modules/.bin/biome'),
    ['format', `--stdin-file-path=${path.join(path.relative(ROOT, DATA_DIR), fileName)}`],
    { cwd: ROOT, input: content, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
}

/** File name -> content of everything under DATA_DIR. */
export function generateOpenAPIData(): Map<string, string> {
  const { schemas, gvkIndex } = buildSchemas();
  const byPackage = new Map<string, Record<string, Schema>>();
  for (const [name, schema] of [...schemas].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const pkg = name.slice(0, name.lastIndexOf('.'));
    let bucket = byPackage.get(pkg);
    if (!bucket) {
      bucket = {};
      byPackage.set(pkg, bucket);
    }
    bucket[name] = sortKeys(schema);
  }
  const modelsVersion = (
    JSON.parse(readFileSync(path.join(MODELS_DIR, 'package.json'), 'utf8')) as { version: string }
  ).version;
  const files = new Map<string, string>();
  const index = {
    source: `kubernetes-models@${modelsVersion}`,
    packages: [...byPackage.keys()].sort(),
    gvk: sortKeys(gvkIndex),
  };
  files.set('index.json', biomeFormat('index.json', JSON.stringify(index)));
  for (const [pkg, bucket] of byPackage)
    files.set(`${pkg}.json`, biomeFormat(`${pkg}.json`, JSON.stringify(bucket)));
  return files;
}

function main(): void {
  const check = process.argv.includes('--check');
  const files = generateOpenAPIData();
  const existing = existsSync(DATA_DIR) ? readdirSync(DATA_DIR).filter((f) => f.endsWith('.json')) : [];
  if (check) {
    const stale = [...files].filter(
      ([f, c]) => !existsSync(path.join(DATA_DIR, f)) || readFileSync(path.join(DATA_DIR, f), 'utf8') !== c,
    );
    const extra = existing.filter((f) => !files.has(f));
    if (stale.length > 0 || extra.length > 0) {
      console.error(`stale: ${stale.map(([f]) => f).join(', ')} extra: ${extra.join(', ')}`);
      process.exit(1);
    }
    return;
  }
  mkdirSync(DATA_DIR, { recursive: true });
  for (const f of existing) if (!files.has(f)) rmSync(path.join(DATA_DIR, f));
  let total = 0;
  for (const [f, c] of files) {
    writeFileSync(path.join(DATA_DIR, f), c);
    total += Buffer.byteLength(c);
  }
  console.log(`wrote ${files.size} files, ${total} bytes, to ${path.relative(ROOT, DATA_DIR)}`);
}

if (import.meta.main) main();

function parseTypeSrc(src: string, resolveIdent: (name: string) => TypeNode): TypeNode {
  try {
    return new TypeParser(tokenize(src), resolveIdent).parse();
  } catch (err) {
    throw new Error(`cannot parse type ${JSON.stringify(src)}: ${(err as Error).message}`);
  }
}
