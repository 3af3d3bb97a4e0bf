/**
 * Generates src/cluster/apiserver/gotypes/data/*.json: for every struct of Kubernetes' API
 * packages, its JSON fields with their Go types and whether the `json` tag has `omitempty`.
 *
 * Why: kube-apiserver encodes every object from a Go struct, so a field without `omitempty`
 * is always present (a zero `imageID: ""`, a zero `numberReady: 0`), a non-pointer struct is
 * always present even with `omitempty`, and a type mismatch in a body is reported with the Go
 * type's name (`json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas
 * of type int32`). The published OpenAPI schemas do not record any of this (`required` leaves
 * out fields marked `+optional` that have no `omitempty`, and nothing says which fields are
 * pointers), so the source of truth is the Go types themselves: k8s.io/api and
 * k8s.io/apimachinery at the release the embedded server follows.
 *
 * The Go files are read with a small line-based reader instead of a Go parser: the API packages
 * are generated-style code with one field per line and a `json:"..."` tag on each, which is all
 * this needs, and no maintained Go parser runs in Node without a Go toolchain.
 *
 * Run (mirrors of github.com/kubernetes/api and /apimachinery, bare or not):
 *   ./node_modules/.bin/node scripts/gen-go-types.ts <api git dir> <apimachinery git dir> [ref]
 * ref defaults to v0.32.9 (Kubernetes 1.32).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT_DIR = path.join(ROOT, 'src/cluster/apiserver/gotypes/data');

const [apiDir, machineryDir, ref = 'v0.32.9'] = process.argv.slice(2);
if (!apiDir || !machineryDir) {
  console.error('usage: gen-go-types.ts <k8s.io/api git dir> <k8s.io/apimachinery git dir> [ref]');
  process.exit(2);
}

/** Go import path -> the OpenAPI component prefix (`k8s.io/api/core/v1` -> `io.k8s.api.core.v1`). */
function componentPrefix(importPath: string): string {
  const [host, ...rest] = importPath.split('/');
  return [...host!.split('.').reverse(), ...rest].join('.');
}

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
}

interface Field {
  json: string;
  type: string;
  omitempty: boolean;
  inline: boolean;
  /** The `// +default=` marker's value (declarative defaulting), as JSON. */
  defaultValue?: unknown;
}

interface Package {
  prefix: string;
  group?: string;
  version: string;
  structs: Map<string, Field[]>;
  named: Map<string, string>;
}

const BUILTIN = new Set([
  'string',
  'bool',
  'int',
  'int8',
  'int16',
  'int32',
  'int64',
  'uint',
  'uint8',
  'uint16',
  'uint32',
  'uint64',
  'float32',
  'float64',
  'byte',
]);

/** Rewrites a Go type expression with every named type fully qualified by component prefix. */
function qualify(expr: string, prefix: string, imports: Map<string, string>): string {
  return expr.replace(/\b([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?\b/g, (m, a: string, b: string | undefined) => {
    if (b !== undefined) {
      const imported = imports.get(a);
      return imported ? `${imported}.${b}` : m;
    }
    if (a === 'map' || a === 'interface' || BUILTIN.has(a)) return a;
    return `${prefix}.${a}`;
  });
}

function readPackage(dir: string, pkgPath: string, importPath: string): Package | undefined {
  const files = git(dir, 'ls-tree', '--name-only', `${ref}:${pkgPath}`)
    .split('\n')
    .filter(
      (f) =>
        f.endsWith('.go') &&
        !f.endsWith('_test.go') &&
        !f.startsWith('zz_generated') &&
        !f.startsWith('generated') &&
        !f.includes('swagger_doc'),
    );
  if (files.length === 0) return undefined;
  const prefix = componentPrefix(importPath);
  const pkg: Package = {
    prefix,
    version: pkgPath.split('/').at(-1)!,
    structs: new Map(),
    named: new Map(),
  };
  for (const file of files) {
    const src = git(dir, 'show', `${ref}:${pkgPath}/${file}`);
    const group = /const GroupName\s*=\s*"([^"]*)"/.exec(src) ?? /\+groupName=(\S*)/.exec(src);
    if (group && pkg.group === undefined) pkg.group = group[1];
    const imports = new Map<string, string>();
    const importBlock = /^import \(([\s\S]*?)^\)/m.exec(src)?.[1] ?? '';
    for (const line of [...importBlock.split('\n'), ...(src.match(/^import .*$/gm) ?? [])]) {
      const m = /^\s*(?:import\s+)?(\w+\s+)?"([^"]+)"/.exec(line);
      if (!m) continue;
      const p = m[2]!;
      imports.set(m[1]?.trim() ?? p.split('/').at(-1)!, componentPrefix(p));
    }
    // Constants, for `+default=ref(Name)` markers: `Name Type = "value"` in const blocks.
    const consts = new Map<string, unknown>();
    for (const m of src.matchAll(/^\s+(\w+)\s+\w+\s*=\s*("[^"]*"|-?[1-9]\d*|0|true|false)\s*$/gm)) {
      consts.set(m[1]!, JSON.parse(m[2]!));
    }
    const lines = src.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const start = /^type (\w+) struct \{\s*$/.exec(lines[i]!);
      if (!start) {
        const named = /^type (\w+) ([^{=\s/][^/]*?)\s*(?:\/\/.*)?$/.exec(lines[i]!);
        if (named && !named[2]!.startsWith('interface')) {
          pkg.named.set(named[1]!, qualify(named[2]!, prefix, imports));
        }
        continue;
      }
      const fields: Field[] = [];
      let depth = 1;
      let marker: string | undefined;
      for (i++; i < lines.length && depth > 0; i++) {
        // A block comment inside a struct (DaemonEndpoint has one) holds prose, not fields.
        if (/^\s*\/\*/.test(lines[i]!)) {
          while (i < lines.length && !lines[i]!.includes('*/')) i++;
          continue;
        }
        const comment = /^\s*\/\/\s*\+default=(.*)$/.exec(lines[i]!);
        if (comment) marker = comment[1]!.trim();
        if (/^\s*(\/\/.*)?$/.test(lines[i]!)) {
          if (lines[i]!.trim() === '') marker = undefined;
          continue;
        }
        const fieldMarker = marker;
        marker = undefined;
        const line = lines[i]!.replace(/\/\/.*$/, '');
        if (/^\s*}\s*$/.test(line) && depth === 1) break;
        if (line.includes('struct {')) depth++;
        if (/^\s*}/.test(line)) depth--;
        const tag = /`[^`]*json:"([^"]*)"[^`]*`/.exec(line);
        const decl = line.replace(/`[^`]*`/, '').trim();
        if (!decl) continue;
        const parts = decl.split(/\s+/);
        const [name, ...rest] = parts;
        const opts = tag?.[1]?.split(',') ?? [];
        const jsonName = opts[0] ?? '';
        if (jsonName === '-') continue;
        if (rest.length === 0) {
          // An embedded struct without a JSON name: its fields are the outer struct's, as
          // encoding/json inlines them. With a name (`json:"metadata"`) it is an ordinary field.
          const type = qualify(name!, prefix, imports);
          if (jsonName === '')
            fields.push({ json: '', type: type.replace(/^\*/, ''), omitempty: false, inline: true });
          else fields.push({ json: jsonName, type, omitempty: opts.includes('omitempty'), inline: false });
          continue;
        }
        if (!/^[A-Z]/.test(name!)) continue;
        const field: Field = {
          json: jsonName === '' ? name! : jsonName,
          type: qualify(rest.join(''), prefix, imports),
          omitempty: opts.includes('omitempty'),
          inline: opts.includes('inline') && jsonName === '',
        };
        if (fieldMarker !== undefined) {
          const ref = /^ref\((\w+)\)$/.exec(fieldMarker);
          field.defaultValue = ref ? consts.get(ref[1]!) : JSON.parse(fieldMarker);
          if (field.defaultValue === undefined) throw new Error(`unresolved +default=${fieldMarker}`);
        }
        fields.push(field);
      }
      pkg.structs.set(start[1]!, fields);
    }
  }
  return pkg;
}

const packages: Package[] = [];
for (const line of git(apiDir, 'ls-tree', '-r', '-d', '--name-only', ref).split('\n')) {
  if (!/^[a-z]+\/v\d+(?:(?:alpha|beta)\d+)?$/.test(line)) continue;
  const pkg = readPackage(apiDir, line, `k8s.io/api/${line}`);
  if (pkg && pkg.structs.size > 0) packages.push(pkg);
}
for (const p of ['pkg/apis/meta/v1', 'pkg/types']) {
  const pkg = readPackage(machineryDir, p, `k8s.io/apimachinery/${p}`);
  if (pkg) packages.push(pkg);
}

/** Struct fields with embedded structs expanded in place, as encoding/json sees them. */
const byName = new Map<string, Field[]>();
for (const pkg of packages) for (const [n, f] of pkg.structs) byName.set(`${pkg.prefix}.${n}`, f);
function flatten(fields: Field[]): Field[] {
  return fields.flatMap((f) => (f.inline ? flatten(byName.get(f.type) ?? []) : [f]));
}

rmSync(OUT_DIR, { recursive: true, force: true });
mkdirSync(OUT_DIR, { recursive: true });
const index: Record<string, string> = {};
for (const pkg of packages) {
  const structs: Record<string, Array<[string, string, 0 | 1] | [string, string, 0 | 1, unknown]>> = {};
  for (const [n, f] of pkg.structs) {
    structs[n] = flatten(f).map((x) =>
      x.defaultValue === undefined
        ? [x.json, x.type, x.omitempty ? 1 : 0]
        : [x.json, x.type, x.omitempty ? 1 : 0, x.defaultValue],
    );
  }
  const named = Object.fromEntries(pkg.named);
  writeFileSync(
    path.join(OUT_DIR, `${pkg.prefix}.json`),
    `${JSON.stringify({ group: pkg.group ?? null, version: pkg.version, structs, named })}\n`,
  );
  if (pkg.group !== undefined) index[`${pkg.group}/${pkg.version}`] = pkg.prefix;
}
writeFileSync(
  path.join(OUT_DIR, 'index.json'),
  `${JSON.stringify({ source: `k8s.io/api@${ref}, k8s.io/apimachinery@${ref}`, groupVersions: index }, null, 2)}\n`,
);
// Formatted as biome, which checks src/, wants it.
execFileSync(path.join(ROOT, 'node_modules/.bin/biome'), ['format', '--write', OUT_DIR], { stdio: 'ignore' });
console.log(`wrote ${packages.length} packages to ${path.relative(ROOT, OUT_DIR)}`);
