/**
 * Test support: one scenario of test/cluster/apiserver/python/behaviours.py, the second
 * official client (Debian's python3-kubernetes) against a cluster; its last output line is
 * the scenario's JSON verdict.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PYTHON = process.env.TROUPE_PYTHON ?? '/usr/bin/python3';
const SCRIPT = join(import.meta.dirname, '..', 'cluster', 'apiserver', 'python', 'behaviours.py');

export async function pythonScenario<T = Record<string, unknown>>(
  name: string,
  kubeconfig: string,
  namespace: string,
): Promise<T> {
  const { stdout } = await run(PYTHON, [SCRIPT, name, kubeconfig, namespace], { timeout: 120_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as T;
}
