/**
 * Container logs of simulated pods, as KWOK serves them (kwok.x-k8s.io/v1alpha1 `Logs`, named
 * after a pod in its namespace, and `ClusterLogs`, selecting pods by namespace and name): each
 * `spec.logs[]` entry names containers (none: every container) and a `logsFile` (and
 * `previousLogsFile` for `--previous`) whose content is the log. `pods/log` (`kubectl logs`)
 * reads it through the API server's log hook; a pod no Logs object covers has an empty log.
 * The files are read on the machine running the cluster, as KWOK reads them on its own.
 */

import { readFileSync } from 'node:fs';
import { recordOf as rec } from '../../lib/json.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, isConflict } from '../client.ts';
import { STAGE_GROUP, STAGE_VERSION } from './crd.ts';

const CRD_GVR = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
} as const;
export const LOGS_GVR = { group: STAGE_GROUP, version: STAGE_VERSION, resource: 'logs' } as const;
export const CLUSTER_LOGS_GVR = {
  group: STAGE_GROUP,
  version: STAGE_VERSION,
  resource: 'clusterlogs',
} as const;

type Json = Record<string, unknown>;
const strs = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

const logEntry = {
  type: 'object',
  properties: {
    containers: {
      type: 'array',
      items: { type: 'string' },
      description: 'Containers is list of container names.',
    },
    logsFile: { type: 'string', description: 'LogsFile is the file from which the log forward starts' },
    previousLogsFile: {
      type: 'string',
      description: 'PreviousLogsFile is the file from which the previous log forward starts',
    },
    follow: { type: 'boolean', description: 'Follow up if true' },
  },
};

function crd(kind: string, plural: string, scope: 'Namespaced' | 'Cluster', spec: Json): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${STAGE_GROUP}`, labels: { 'app.kubernetes.io/managed-by': 'troupe' } },
    spec: {
      group: STAGE_GROUP,
      scope,
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: STAGE_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec,
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        },
      ],
    },
  };
}

export function logsCRDs(): KubeObject[] {
  const logs = { type: 'object', properties: { logs: { type: 'array', items: logEntry } } };
  const selector = {
    type: 'object',
    properties: {
      matchNamespaces: { type: 'array', items: { type: 'string' } },
      matchNames: { type: 'array', items: { type: 'string' } },
    },
  };
  return [
    crd('Logs', 'logs', 'Namespaced', logs),
    crd('ClusterLogs', 'clusterlogs', 'Cluster', {
      type: 'object',
      properties: { selector, logs: { type: 'array', items: logEntry } },
    }),
  ];
}

/** Creates the Logs and ClusterLogs CRDs unless they exist. */
export async function ensureLogsCRDs(client: ClusterClient): Promise<void> {
  for (const c of logsCRDs()) {
    if (client.get(CRD_GVR, '', c.metadata.name!)) continue;
    try {
      await client.create(CRD_GVR, c);
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
}

/** The log of one container: the file of the first Logs entry, then ClusterLogs entry, for it. */
export function containerLog(
  client: ClusterClient,
  pod: KubeObject,
  container: string,
  previous: boolean,
): string {
  const ns = pod.metadata.namespace ?? '';
  const name = pod.metadata.name ?? '';
  const candidates: Json[][] = [];
  if (client.served(LOGS_GVR)) {
    const own = client.get(LOGS_GVR, ns, name);
    if (own) candidates.push(rec(own.spec).logs as Json[]);
  }
  if (client.served(CLUSTER_LOGS_GVR)) {
    for (const cl of client.list(CLUSTER_LOGS_GVR)) {
      const sel = rec(rec(cl.spec).selector);
      const namespaces = strs(sel.matchNamespaces);
      const names = strs(sel.matchNames);
      if (namespaces.length && !namespaces.includes(ns)) continue;
      if (names.length && !names.includes(name)) continue;
      candidates.push(rec(cl.spec).logs as Json[]);
    }
  }
  for (const entries of candidates) {
    for (const e of Array.isArray(entries) ? entries : []) {
      const containers = strs(e.containers);
      if (containers.length && !containers.includes(container)) continue;
      const file = previous ? e.previousLogsFile : e.logsFile;
      if (typeof file !== 'string' || file === '') return '';
      try {
        return readFileSync(file, 'utf8');
      } catch (err) {
        return `failed to read log file ${file}: ${(err as Error).message}\n`;
      }
    }
  }
  return '';
}
