/**
 * Finding the cluster, in client-go's order: an explicit kubeconfig path, then
 * $KUBECONFIG (a list of files, merged, first one wins on conflicts), then the in-cluster
 * service account, then ~/.kube/config.
 */

import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export type KubeConfigSource = 'explicit' | 'env' | 'in-cluster' | 'home';

export interface LoadKubeConfigOptions {
  /** Path given on the command line (`--kubeconfig`). */
  kubeconfig?: string;
  /** Context to use instead of the file's current-context. */
  context?: string;
  env?: NodeJS.ProcessEnv;
  /** Prefix of the service account directory (client-node's loadFromCluster pathPrefix), for tests. */
  pathPrefix?: string;
  home?: string;
}

export interface LoadedKubeConfig {
  kubeConfig: KubeConfig;
  source: KubeConfigSource;
  /** The namespace of the current context, or the pod's namespace in-cluster. */
  namespace: string | undefined;
  /** Where the cluster's address came from (a file, or the service account), for messages. */
  origin: string;
}

export function loadKubeConfig(opts: LoadKubeConfigOptions = {}): LoadedKubeConfig {
  const env = opts.env ?? process.env;
  const kc = new KubeConfig();
  let source: KubeConfigSource;
  let origin: string;
  if (opts.kubeconfig) {
    if (!existsSync(opts.kubeconfig))
      throw new Error(`kubeconfig ${opts.kubeconfig} does not exist: check the --kubeconfig path`);
    loadFile(kc, opts.kubeconfig);
    source = 'explicit';
    origin = opts.kubeconfig;
  } else if (env.KUBECONFIG && existingFiles(env.KUBECONFIG).length > 0) {
    const files = existingFiles(env.KUBECONFIG);
    loadFile(kc, files[0]!);
    for (const f of files.slice(1)) {
      const extra = new KubeConfig();
      loadFile(extra, f);
      mergeMissing(kc, extra);
    }
    source = 'env';
    origin = files.join(delimiter);
  } else if (inClusterAvailable(env, `${opts.pathPrefix ?? ''}${SERVICE_ACCOUNT_DIR}`)) {
    kc.loadFromCluster(opts.pathPrefix);
    source = 'in-cluster';
    origin = 'the in-cluster service account';
  } else {
    const file = join(opts.home ?? homedir(), '.kube', 'config');
    if (!existsSync(file)) {
      throw new Error(
        'no cluster configuration: pass --kubeconfig, set KUBECONFIG, run in a pod, or create ~/.kube/config',
      );
    }
    loadFile(kc, file);
    source = 'home';
    origin = file;
  }
  if (opts.context) {
    if (!kc.getContextObject(opts.context))
      throw new Error(`context ${opts.context} not found in kubeconfig ${origin}`);
    kc.setCurrentContext(opts.context);
  }
  if (!kc.getCurrentCluster())
    throw new Error(
      `kubeconfig ${origin} has no current cluster: set current-context to a context whose cluster it defines`,
    );
  return { kubeConfig: kc, source, origin, namespace: currentNamespace(kc, source, opts.pathPrefix) };
}

/** Loads one kubeconfig file; a parse error names the file (the YAML parser's own message does not). */
function loadFile(kc: KubeConfig, file: string): void {
  try {
    kc.loadFromFile(file);
  } catch (err) {
    const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new Error(
      `kubeconfig ${file} is not a valid kubeconfig: ${why}; fix the file, or point --kubeconfig or KUBECONFIG at another`,
    );
  }
}

/** A KubeConfig from YAML text (e.g. the embedded cluster's kubeconfig). */
export function kubeConfigFromString(yaml: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(yaml);
  return kc;
}

function existingFiles(list: string): string[] {
  return list.split(delimiter).filter((f) => f && existsSync(f));
}

/** KUBECONFIG merge rule: the first file to define a name wins. */
function mergeMissing(into: KubeConfig, from: KubeConfig): void {
  const has = <T extends { name: string }>(list: T[], name: string) => list.some((x) => x.name === name);
  for (const c of from.clusters) if (!has(into.clusters, c.name)) into.addCluster(c);
  for (const u of from.users) if (!has(into.users, u.name)) into.addUser(u);
  for (const c of from.contexts) if (!has(into.contexts, c.name)) into.addContext(c);
  if (!into.currentContext && from.currentContext) into.setCurrentContext(from.currentContext);
}

function inClusterAvailable(env: NodeJS.ProcessEnv, dir: string): boolean {
  return Boolean(
    env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT && existsSync(join(dir, 'token')),
  );
}

function currentNamespace(kc: KubeConfig, source: KubeConfigSource, prefix?: string): string | undefined {
  if (source === 'in-cluster') {
    try {
      return (
        readFileSync(join(`${prefix ?? ''}${SERVICE_ACCOUNT_DIR}`, 'namespace'), 'utf8').trim() || undefined
      );
    } catch {
      return undefined;
    }
  }
  return kc.getContextObject(kc.getCurrentContext())?.namespace || undefined;
}
