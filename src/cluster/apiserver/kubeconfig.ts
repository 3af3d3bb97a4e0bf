import { stringify } from 'yaml';

/** A kubeconfig that kubectl and @kubernetes/client-node accept as is. */
export function kubeconfigYaml(opts: {
  server: string;
  token: string;
  caPem?: string;
  name?: string;
  namespace?: string;
}): string {
  const name = opts.name ?? 'troupe';
  const cluster: Record<string, unknown> = { server: opts.server };
  if (opts.caPem) cluster['certificate-authority-data'] = Buffer.from(opts.caPem).toString('base64');
  // @kubernetes/client-node refuses plain HTTP unless TLS verification is marked off.
  else if (opts.server.startsWith('http:')) cluster['insecure-skip-tls-verify'] = true;
  const context: Record<string, unknown> = { cluster: name, user: `${name}-admin` };
  if (opts.namespace) context.namespace = opts.namespace;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name: `${name}-admin`, user: { token: opts.token } }],
    contexts: [{ name, context }],
    'current-context': name,
    preferences: {},
  });
}
