import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { startApiServer } from '../cluster/apiserver/server.ts';
import { parsePort, untilSignal } from './options.ts';

export interface ClusterFlags {
  port: number;
  host: string;
  kubeconfigOut: string;
  tls: boolean;
  authorizationMode: 'AlwaysAllow' | 'RBAC';
}

export function clusterCommand(): Command {
  return new Command('cluster')
    .description('Run the embedded Kubernetes-compatible cluster until interrupted')
    .option('--port <n>', 'port to listen on (0 picks a free one)', parsePort, 6443)
    .option('--host <addr>', 'address to listen on (loopback unless told otherwise)', '127.0.0.1')
    .option('--kubeconfig-out <file>', 'where to write the kubeconfig', '.troupe/kubeconfig')
    .option('--no-tls', 'serve plain HTTP instead of HTTPS with a generated self-signed certificate')
    .addOption(
      new Option('--authorization-mode <mode>', 'AlwaysAllow, or RBAC to enforce RBAC for service-account tokens')
        .choices(['AlwaysAllow', 'RBAC'])
        .default('AlwaysAllow'),
    )
    .action(async (flags: ClusterFlags) => {
      const server = await startApiServer({
        host: flags.host,
        port: flags.port,
        tls: flags.tls,
        authorizationMode: flags.authorizationMode,
      });
      const file = resolve(flags.kubeconfigOut);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, server.kubeconfig, { mode: 0o600 });
      process.stdout.write(
        `troupe cluster: API server at ${server.url}\n` +
          `kubeconfig written to ${file}\n` +
          `  export KUBECONFIG=${file}\n  kubectl get namespaces\n` +
          `Press Ctrl+C to stop.\n`,
      );
      const sig = await untilSignal();
      process.stdout.write(`troupe cluster: ${sig} received, shutting down\n`);
      await server.close();
    });
}
