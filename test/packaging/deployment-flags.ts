/**
 * Test support for test/packaging: the flags `troupe run` parses from a rendered Deployment,
 * so that a test starts the manager exactly as the manifests would.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import type { KubeDoc } from '../../scripts/gen-install.ts';
import { addManagerOptions, type ManagerFlags } from '../../src/cli/manager-flags.ts';

interface Container {
  args: string[];
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  volumeMounts?: { name: string; mountPath: string }[];
}

export type Deployment = KubeDoc & {
  spec: {
    template: {
      spec: {
        serviceAccountName: string;
        containers: Container[];
        volumes?: { name: string; configMap?: { name: string } }[];
      };
    };
  };
};

/**
 * The container's ConfigMap volumes as the kubelet would mount them: each ConfigMap of
 * `docs` written to a folder of its own. Returns mount path → local folder.
 */
function mountConfigMaps(dep: Deployment, c: Container, docs: KubeDoc[]): [string, string][] {
  const out: [string, string][] = [];
  for (const m of c.volumeMounts ?? []) {
    const cmName = dep.spec.template.spec.volumes?.find((v) => v.name === m.name)?.configMap?.name;
    if (!cmName) continue;
    const cm = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === cmName) as
      | (KubeDoc & { data?: Record<string, string> })
      | undefined;
    assert.ok(cm, `ConfigMap ${cmName} (volume ${m.name}) is in the manifests`);
    const dir = mkdtempSync(join(tmpdir(), 'troupe-configmap-'));
    mkdirSync(dir, { recursive: true });
    for (const [k, v] of Object.entries(cm.data ?? {})) writeFileSync(join(dir, k), v);
    out.push([m.mountPath, dir]);
  }
  return out;
}

/**
 * The flags of the Deployment's container: its args, and its environment with the downward
 * API resolved. Probe and metrics servers move to free loopback ports and logs are silenced;
 * `overrides` (flags, later ones win) change what a test must, such as where certificates are.
 */
export function deploymentFlags(
  dep: Deployment,
  overrides: string[] = [],
  /** The other manifests, for the ConfigMaps the Deployment mounts. */
  docs: KubeDoc[] = [],
): ManagerFlags {
  const [c] = dep.spec.template.spec.containers;
  assert.ok(c);
  const mounts = mountConfigMaps(dep, c, docs);
  // Paths into a mounted ConfigMap point at its local copy.
  const local = (v: string) => {
    for (const [path, dir] of mounts)
      if (v.startsWith(`${path}/`)) return join(dir, v.slice(path.length + 1));
    return v;
  };
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    const field = e.valueFrom?.fieldRef?.fieldPath;
    if (field === 'metadata.namespace') env[e.name] = dep.metadata.namespace ?? '';
    else if (e.value !== undefined) env[e.name] = local(e.value);
    else assert.fail(`env ${e.name}: only values and metadata.namespace are resolved here`);
  }
  const cmd = addManagerOptions(new Command('run').exitOverride(), {
    healthProbeBindAddress: ':8081',
    metricsBindAddress: ':8443',
    metricsSecure: true,
    webhookPort: 9443,
    dashboardAddress: '0',
  });
  // An action, so that commander runs the preAction checks (switch values from the
  // environment, flag combinations) as it does for `troupe run`.
  cmd.action(() => {});
  assert.equal(c.args[0], 'run');
  const saved = { ...process.env };
  // commander reads option environment variables from process.env while parsing.
  Object.assign(process.env, env);
  try {
    cmd.parse(
      [
        ...c.args
          .slice(1)
          .map((a) => a.replace(/^(--[^=]+=)(.*)$/, (_, f: string, v: string) => f + local(v))),
        '--health-probe-bind-address=127.0.0.1:0',
        '--metrics-bind-address=127.0.0.1:0',
        '--log-level=silent',
        ...overrides,
      ],
      { from: 'user' },
    );
  } finally {
    for (const k of Object.keys(env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
  return cmd.opts<ManagerFlags>();
}
