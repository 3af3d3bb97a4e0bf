/**
 * The "adding a capability" checklist of docs/architecture.md, kept honest: every folder is
 * in the one list, every CRD under config/crd/ belongs to a capability, and the RBAC that
 * config/ ships is exactly the union of what the capabilities declare.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { Command } from 'commander';
import { parseAllDocuments } from 'yaml';
import { dashboardParts } from '../../src/cli/capabilities.ts';
import { explainKinds, explainPod, parseRef } from '../../src/cli/explain.ts';
import { addManagerOptions } from '../../src/cli/manager-flags.ts';
import { type Capability, capabilities, type PolicyRule } from '../../src/controllers/capabilities.ts';
import { loadCrds } from '../../src/controllers/crds.ts';
import { watchedKindOf } from '../../src/dashboard/kinds.ts';
import type { KubeObject } from '../../src/runtime/index.ts';
import { crd } from '../support/objects.ts';

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

/** Every import in src/ that reaches into `src/controllers/<folder>/`, from outside that folder. */
function importsOfFolders(dir: string, folders: string[], out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) importsOfFolders(p, folders, out);
    else if (p.endsWith('.ts')) {
      for (const m of readFileSync(p, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
        const target = resolve(dir, m[1]!);
        for (const f of folders) {
          const folder = join(ROOT, 'src/controllers', f);
          if (target.startsWith(`${folder}/`) && !p.startsWith(`${folder}/`))
            out.push(`${p.slice(ROOT.length + 1)} imports ${m[1]}`);
        }
      }
    }
  }
  return out;
}

test('no code outside a capability folder reads it but the one list: the CLI and the dashboard go through the contract', () => {
  const names = all.map((c) => c.name);
  assert.deepEqual(
    importsOfFolders(join(ROOT, 'src'), names).filter(
      (i) => !i.startsWith('src/controllers/capabilities.ts '),
    ),
    [],
  );
});

/** A capability the code has never seen, as a new folder would declare it. */
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' };
const widget: Capability = {
  name: 'widget',
  summary: 'widgets for the test',
  controllers: [],
  crdFiles: [],
  crds: [crd('example.com', 'Widget', 'widgets')],
  rbac: { file: 'config/rbac/role.yaml', rules: [] },
  flags: [
    { flag: '--widget-speed <n>', description: 'how fast widgets spin', value: 'positive', default: 1 },
  ],
  explain: {
    kinds: [
      {
        kind: WIDGET,
        names: ['widget', 'widgets', 'wd'],
        usage: 'widget (wd)',
        explain: async (_r, obj) => `Widget ${obj.metadata.name}: spinning`,
      },
    ],
    pod: { lines: async (_r, pod) => [`Widget of ${pod.metadata.name}: none`] },
  },
  status: [
    {
      key: 'widgets',
      title: 'Widgets',
      kind: WIDGET,
      row: () => ({ speed: 1 }),
      columns: [{ header: 'SPEED', cell: (r) => String(r.speed) }],
    },
  ],
};

test('a new capability brings its own flags, explain kinds and dashboard table through the contract', async () => {
  const list = [...capabilities(), widget];
  // Flags: `troupe run`/`up` add them with their TROUPE_ variable, number checks included.
  const defaults = {
    healthProbeBindAddress: ':8081',
    metricsBindAddress: ':8443',
    webhookPort: 9443,
    dashboardAddress: '0',
  };
  const cmd = addManagerOptions(new Command('run').exitOverride(), defaults, list);
  assert.equal(cmd.parse(['--widget-speed', '3'], { from: 'user' }).opts().widgetSpeed, 3);
  const option = cmd.options.find((o) => o.long === '--widget-speed');
  assert.equal(option?.envVar, 'TROUPE_WIDGET_SPEED');
  const bad = addManagerOptions(new Command('run').exitOverride(), defaults, list).configureOutput({
    writeErr: () => {},
  });
  assert.throws(() => bad.parse(['--widget-speed', '-1'], { from: 'user' }), /is not a positive number/);

  // troupe explain: its names, its usage, its lines about a pod after the pod's progress.
  const kinds = explainKinds(list);
  assert.equal(parseRef('wd/w1', kinds).kind.provider, widget.explain?.kinds?.[0]);
  assert.throws(() => parseRef('nope/x', kinds), /or widget \(wd\)$/);
  const reader = {
    get: async () => undefined,
    list: async () => undefined,
    paint: { bold: (t: string) => t, phase: (t: string) => t },
  };
  const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' } };
  const text = await explainPod(list, reader, pod);
  assert.match(text, /^Pod default\/p: /);
  assert.match(text, /\nProgress: Pending: waiting for the scheduler\n(.*\n)*Widget of p: none$/);

  // The dashboard: its status section as a table, watched through its CRD.
  const parts = dashboardParts([widget]);
  assert.deepEqual(
    parts.tables?.map((t) => t.key),
    ['widgets'],
  );
  assert.equal(watchedKindOf(WIDGET, parts.crds ?? [])?.resource, 'widgets');
});

test("flag values reach the capabilities' factories", () => {
  const byName = (values: Record<string, unknown>) => new Map(capabilities(values).map((c) => [c.name, c]));
  assert.equal(byName({}).get('podsequence')?.webhooks, undefined);
  assert.ok(byName({ podsequenceMode: 'full' }).get('podsequence')?.webhooks);
  assert.equal(byName({}).get('appwrapper')?.webhooks, undefined);
  assert.ok(byName({ appwrapperWebhooks: true }).get('appwrapper')?.webhooks);
  // Every flag is declared once across the capabilities.
  const flags = capabilities().flatMap((c) => (c.flags ?? []).map((f) => f.flag.split(' ')[0]));
  assert.deepEqual(
    flags.filter((f, i) => flags.indexOf(f) !== i),
    [],
  );
});
