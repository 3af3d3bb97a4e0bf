/**
 * Test support for test/packaging: the flags `troupe run` parses from a rendered Deployment,
 * so that a test starts the manager exactly as the manifests would.
 */
import assert from 'node:assert/strict';
import { Command } from 'commander';
import { addManagerOptions, type ManagerFlags } from '../../src/cli/manager-flags.ts';
import type { KubeDoc } from '../../scripts/gen-install.ts';

interface Container {
  args: string[];
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
}

export type Deployment = KubeDoc & {
  spec: { template: { spec: { serviceAccountName: string; containers: Container[] } } };
};

/**
 * The flags of the Deployment's container: its args, and its environment with the downward
 * API resolved. Probe and metrics servers move to free loopback ports and logs are silenced;
 * `overrides` (flags, later ones win) change what a test must, such as where certificates are.
 */
export function deploymentFlags(dep: Deployment, overrides: string[] = []): ManagerFlags {
  const [c] = dep.spec.template.spec.containers;
  assert.ok(c);
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    const field = e.valueFrom?.fieldRef?.fieldPath;
    if (field === 'metadata.namespace') env[e.name] = dep.metadata.namespace ?? '';
    else if (e.value !== undefined) env[e.name] = e.value;
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
        ...c.args.slice(1),
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
