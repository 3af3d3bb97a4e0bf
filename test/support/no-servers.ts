/**
 * Preloaded by `npm test` and `npm run test:unit`: a test file not named
 * `*.integration.test.ts` that starts a server, or a process that could be one, fails at
 * once with the rule, so that the unit set (`npm run test:unit`) stays fast and needs
 * nothing but Node. Commands run to completion (`execFileSync`, e.g. a formatter) are tools,
 * not servers, and stay allowed.
 */
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

const rule =
  'a test that starts a server or a process is named *.integration.test.ts (docs/architecture.md, "Tests")';

// `npm test`: each file runs in its own process (the runner spawns them); only a unit test
// file's is guarded. `npm run test:unit` runs its files (unit tests only) in one process.
const file = process.env.NODE_TEST_CONTEXT ? process.argv[1] : undefined;
if (file?.endsWith('.test.ts') && !file.endsWith('.integration.test.ts')) guard(file);
else if (process.execArgv.includes('--test-isolation=none')) guard('a unit test');

function guard(file: string): void {
  net.Server.prototype.listen = function listen(): never {
    throw new Error(`${file}: listen(): ${rule}`);
  };
  const cp = childProcess as unknown as Record<string, unknown>;
  for (const name of ['spawn', 'exec', 'execFile', 'fork'] as const) {
    cp[name] = () => {
      throw new Error(`${file}: child_process.${name}(): ${rule}`);
    };
  }
  // Named ESM imports of node:child_process read the patched functions from here on.
  syncBuiltinESMExports();
}
