/** The embedded cluster's flags as `troupe up` and `troupe cluster` hand them to the cluster. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Command } from 'commander';
import { addClusterOptions, type ClusterFlags, clusterOptions } from '../../src/cli/cluster-flags.ts';

const dir = mkdtempSync(join(tmpdir(), 'troupe-cluster-flags-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function parse(args: string[]): ClusterFlags {
  const cmd = addClusterOptions(new Command('cluster').exitOverride()).action(() => {});
  cmd.parse(args, { from: 'user' });
  return cmd.opts<ClusterFlags>();
}

test("--kueue-config gives the Kueue stand-in the file's waitForPodsReady; without it, none", () => {
  const file = join(dir, 'kueue.yaml');
  writeFileSync(
    file,
    'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitForPodsReady: {timeout: 2m, blockAdmission: true}\n',
  );
  assert.deepEqual(clusterOptions(parse(['--kueue-config', file, '--time-scale', '10'])).kueue, {
    waitForPodsReady: { timeout: '2m', blockAdmission: true },
  });
  assert.equal(clusterOptions(parse([])).kueue, undefined);
});

test('flags that configure the data plane are refused with --no-data-plane, not silently unused', () => {
  const file = join(dir, 'any.yaml');
  writeFileSync(file, 'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n');
  for (const given of [['--kueue-config', file], ['--node-config', file], ['--gang-scheduling']]) {
    assert.throws(
      () => clusterOptions(parse([...given, '--no-data-plane'])),
      new RegExp(
        `^Error: ${given[0]} configures the data plane, which --no-data-plane leaves out: give one of them$`,
      ),
    );
  }
});

test("--event-ttl reaches the API server in milliseconds, as kube-apiserver's Go duration", () => {
  assert.equal(clusterOptions(parse(['--event-ttl', '1h30m'])).eventTtlMs, 90 * 60_000);
  assert.equal(clusterOptions(parse([])).eventTtlMs, undefined);
});
