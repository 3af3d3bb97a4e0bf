/**
 * The "adding a capability" checklist of docs/architecture.md, kept honest: every folder is
 * in the one list, every CRD under config/crd/ belongs to a capability, and the RBAC that
 * config/ ships is exactly the union of what the capabilities declare.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { capabilities, type PolicyRule } from '../../src/controllers/capabilities.ts';
import { loadCrds } from '../../src/controllers/crds.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const all = capabilities();

test('every folder under src/controllers/ is a capability of the list, with its capability.ts', () => {
  const folders = readdirSync(join(ROOT, 'src/controllers')).filter((f) =>
    statSync(join(ROOT, 'src/controllers', f)).isDirectory(),
  );
  assert.deepEqual(all.map((c) => c.name).sort(), folders.sort());
  for (const f of folders) assert.ok(statSync(join(ROOT, 'src/controllers', f, 'capability.ts')).isFile());
});

test('controller names are unique across capabilities (--controllers selects by them)', () => {
  const names = all.flatMap((c) => [...new Set([c.name, ...c.controllers.map((d) => d.name)])]);
  assert.deepEqual(
    names.filter((n, i) => names.indexOf(n) !== i),
    [],
  );
});

test('every CRD under config/crd/ belongs to one capability, which loads it from there', () => {
  const files = readdirSync(join(ROOT, 'config/crd')).filter(
    (f) => f.endsWith('.yaml') && f !== 'kustomization.yaml',
  );
  const owned = all.flatMap((c) => c.crdFiles);
  assert.deepEqual([...owned].sort(), files.sort());
  const kustomization = parseAllDocuments(
    readFileSync(join(ROOT, 'config/crd/kustomization.yaml'), 'utf8'),
  )[0]!.toJS();
  assert.deepEqual(
    [...kustomization.resources].sort(),
    files.sort(),
    'config/crd/kustomization.yaml lists every CRD',
  );
  for (const c of all) {
    assert.deepEqual(
      c.crds,
      c.crdFiles.flatMap((f) => loadCrds(f)),
      `${c.name}: its CRDs are its files'`,
    );
    for (const crd of c.crds) assert.equal(crd.kind, 'CustomResourceDefinition');
  }
});

/** A rule as the (group, resource, verb, name) grants it adds up to: RBAC is a union. */
function grants(rules: PolicyRule[]): string[] {
  const out = new Set<string>();
  for (const r of rules)
    for (const g of r.apiGroups)
      for (const res of r.resources)
        for (const v of r.verbs)
          for (const n of r.resourceNames ?? ['*']) out.add(`${g || 'core'}/${res} ${v} ${n}`);
  return [...out].sort();
}

test("each ClusterRole config/ ships for the manager is the union of its capabilities' rules", () => {
  const files = [...new Set(all.map((c) => c.rbac.file))];
  assert.ok(files.includes('config/rbac/role.yaml'));
  for (const file of files) {
    const roles = parseAllDocuments(readFileSync(join(ROOT, file), 'utf8'))
      .map((d) => d.toJS())
      .filter((d) => d?.kind === 'ClusterRole');
    assert.equal(roles.length, 1, `${file}: one ClusterRole`);
    const declared = grants(all.filter((c) => c.rbac.file === file).flatMap((c) => c.rbac.rules));
    assert.deepEqual(grants(roles[0].rules), declared, `${file} grants what its capabilities declare`);
  }
});

test("the dashboard's viewer role may read every capability's CRD kinds", () => {
  const role = parseAllDocuments(readFileSync(join(ROOT, 'config/rbac/dashboard_viewer_role.yaml'), 'utf8'))
    .map((d) => d.toJS())
    .find((d) => d?.kind === 'ClusterRole');
  const granted = new Set(grants(role.rules));
  const missing: string[] = [];
  for (const c of all) {
    for (const crd of c.crds) {
      const spec = crd.spec as { group: string; names: { plural: string } };
      for (const verb of ['get', 'list', 'watch']) {
        const g = `${spec.group}/${spec.names.plural} ${verb} *`;
        if (!granted.has(g)) missing.push(`${c.name}: ${g}`);
      }
    }
  }
  assert.deepEqual(missing, []);
});

test('docs/architecture.md names every capability folder', () => {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const line = doc.split('\n').find((l) => l.includes('one folder per capability:')) ?? '';
  assert.deepEqual(
    all.map((c) => c.name).filter((n) => !line.includes(`${n}/`)),
    [],
    'the folder list in docs/architecture.md',
  );
});
