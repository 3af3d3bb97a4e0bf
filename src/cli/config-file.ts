/**
 * Options come from (lowest to highest) defaults, a YAML config file (`--config`), the
 * environment (TROUPE_*) and flags. Commander handles env and flags; this loads the file
 * and sets its values with source 'config' before parsing, so commander's precedence
 * rules order the rest.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { parse } from 'yaml';

export class ConfigFileError extends Error {}

/** Finds `--config <file>` / `--config=<file>` in argv for one subcommand. */
export function configPathFromArgv(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--config') return argv[i + 1];
    if (a.startsWith('--config=')) return a.slice('--config='.length);
  }
  return process.env.TROUPE_CONFIG;
}

export function applyConfigFile(cmd: Command, file: string): void {
  let doc: unknown;
  try {
    doc = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigFileError(
      `cannot read config file ${file}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (doc === null || doc === undefined) return;
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new ConfigFileError(`config file ${file}: expected a mapping of option names to values`);
  const known = new Map(cmd.options.map((o) => [o.attributeName(), o]));
  for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
    const attr = key.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const opt = known.get(attr);
    if (!opt || attr === 'config') {
      throw new ConfigFileError(
        `config file ${file}: unknown option "${key}" (known: ${[...known.keys()].filter((k) => k !== 'config').join(', ')})`,
      );
    }
    // Values go through the option's own parser, so a bad value reads like a bad flag.
    const parsed =
      opt.parseArg && typeof value !== 'boolean' ? opt.parseArg(String(value), undefined) : value;
    cmd.setOptionValueWithSource(attr, parsed, 'config');
  }
}
