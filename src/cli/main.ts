#!/usr/bin/env node
/**
 * The troupe command: composes the embedded cluster, the controller runtime and the
 * controllers. Nothing else in the project imports from here.
 */
import { Command, CommanderError } from 'commander';
import { clusterCommand } from './cluster.ts';

export function program(): Command {
  const cmd = new Command('troupe')
    .description('Kubernetes controllers for pods that move as a group, with an embedded cluster to run them on')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();
  cmd.addCommand(clusterCommand());
  return cmd;
}

async function main(): Promise<void> {
  try {
    await program().parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode);
    process.stderr.write(`troupe: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}

await main();
