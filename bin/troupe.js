#!/usr/bin/env node
// Installed entry point: runs the compiled CLI (npm run build), so it works where
// Node's TypeScript type stripping does not apply (inside node_modules).
import '../build/cli/main.js';
