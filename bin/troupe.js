#!/usr/bin/env node
// Installed entry point: runs the compiled CLI (npm run build), so it works where
// Node's TypeScript type stripping does not apply (inside node_modules).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../build/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  // A checkout before `npm run build`: say so instead of Node's module-not-found stack.
  process.stderr.write(
    `troupe: ${fileURLToPath(main)} is missing: run \`npm run build\` first, or from a checkout run \`npm run troupe -- <command>\` (no build needed)\n`,
  );
  process.exit(1);
}
await import(main.href);
