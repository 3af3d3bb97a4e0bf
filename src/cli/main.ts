#!/usr/bin/env node
/**
 * The troupe command: composes the embedded cluster, the controller runtime and the
 * controllers. Nothing else in the project imports from here.
 */
import { Command, CommanderError } from 'commander';
import { clusterCommand } from './cluster.ts';
import { applyConfigFile, ConfigFileError, configPathFromArgv } from './config-file.ts';
import { explainCommand } from './explain.ts';
import { runCommand } from './run.ts';
import { simulateCommand } from './simulate.ts';
import { statusCommand } from './status.ts';
import { upCommand } from './up.ts';

export function program(): Command {
  const cmd = new Command('troupe')
    .description(
      'Kubernetes controllers for pods that move as a group, with an embedded cluster to run them on',
    )
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();
  cmd.addCommand(clusterCommand());
  cmd.addCommand(runCommand());
  cmd.addCommand(upCommand());
  cmd.addCommand(statusCommand());
  cmd.addCommand(explainCommand());
  cmd.addCommand(simulateCommand());
  return cmd;
}

async function main(): Promise<void> {
  try {
    const prog = program();
    const sub = prog.commands.find((c) => c.name() === process.argv[2]);
    const config = configPathFromArgv(process.argv.slice(3));
    if (sub && config && sub.options.some((o) => o.long === '--config')) applyConfigFile(sub, config);
    await prog.parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode);
    if (err instanceof ConfigFileError) {
      process.stderr.write(`troupe: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`troupe: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}

await main();
