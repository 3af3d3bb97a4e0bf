/**
 * Container logs of simulated pods, as KWOK serves them (kwok.x-k8s.io/v1alpha1 `Logs`, named
 * after a pod in its namespace, and `ClusterLogs`, selecting pods by namespace and name): each
 * `spec.logs[]` entry names containers (none: every container) and a `logsFile` (and
 * `previousLogsFile` for `--previous`) whose content is the log. `pods/log` (`kubectl logs`)
 * reads it through the API server's log hook; a pod no Logs object covers has an empty log.
 * `kubectl attach` follows the file KWOK's `Attach`/`ClusterAttach` objects name the same way
 * (`spec.attaches[]`: containers and a `logsFile`), else the container's Logs file.
 * KWOK's `PortForward`/`ClusterPortForward` kinds are installed here too (read by portforward.ts).
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

export const ATTACH_GVR = { group: STAGE_GROUP, version: STAGE_VERSION, resource: 'attaches' } as const;
export const CLUSTER_ATTACH_GVR = {
  group: STAGE_GROUP,
  version: STAGE_VERSION,
  resource: 'clusterattaches',
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

const selector = {
  type: 'object',
  properties: {
    matchNamespaces: { type: 'array', items: { type: 'string' } },
    matchNames: { type: 'array', items: { type: 'string' } },
  },
};

const attachEntry = {
  type: 'object',
  properties: {
    containers: logEntry.properties.containers,
    logsFile: { type: 'string', description: 'LogsFile is the file from which the attach starts' },
  },
};

/** KWOK's Forward (port_forward_types.go): ports (none: every port), a target or a command. */
const forwardEntry = {
  type: 'object',
  properties: {
    ports: {
      type: 'array',
      items: { type: 'integer', format: 'int32' },
      description: 'Ports is a list of ports to forward. if not set, all ports will be forwarded.',
    },
    target: {
      type: 'object',
      required: ['port', 'address'],
      description: 'Target is the target to forward to.',
      properties: {
        port: { type: 'integer', format: 'int32', minimum: 0, maximum: 65535 },
        address: { type: 'string', minLength: 1 },
      },
    },
    command: {
      type: 'array',
      items: { type: 'string' },
      description:
        'Command is the command to run to forward with stdin/stdout. if set, Target will be ignored.',
    },
    httpRoutes: {
      type: 'array',
      description: 'HTTPRoutes defines predefined HTTP responses returned for specific paths.',
      items: {
        type: 'object',
        required: ['location', 'code'],
        properties: {
          location: { type: 'string', description: 'Location is the request path this response answers.' },
          code: { type: 'integer', minimum: 100, maximum: 599 },
          headers: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                // What net/http sends: an RFC 7230 token for the name, no control characters in the value.
                name: { type: 'string', pattern: "^[-!#$%&'*+.^_`|~0-9A-Za-z]+$" },
                value: { type: 'string', pattern: '^[^\\x00-\\x08\\x0a-\\x1f\\x7f]*$' },
              },
            },
          },
          body: { type: 'string' },
        },
      },
    },
  },
};

/** KWOK's Logs, ClusterLogs, Attach, ClusterAttach, PortForward and ClusterPortForward kinds. */
export function logsCRDs(): KubeObject[] {
  const logs = { type: 'array', items: logEntry };
  const attaches = { type: 'array', items: attachEntry };
  const forwards = { type: 'array', items: forwardEntry };
  return [
    crd('Logs', 'logs', 'Namespaced', { type: 'object', properties: { logs } }),
    crd('ClusterLogs', 'clusterlogs', 'Cluster', { type: 'object', properties: { selector, logs } }),
    crd('Attach', 'attaches', 'Namespaced', { type: 'object', properties: { attaches } }),
    crd('ClusterAttach', 'clusterattaches', 'Cluster', {
      type: 'object',
      properties: { selector, attaches },
    }),
    crd('PortForward', 'portforwards', 'Namespaced', {
      type: 'object',
      required: ['forwards'],
      properties: { forwards },
    }),
    crd('ClusterPortForward', 'clusterportforwards', 'Cluster', {
      type: 'object',
      required: ['forwards'],
      properties: { selector, forwards },
    }),
  ];
}

/** Creates the CRDs of logsCRDs() unless they exist. */
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

/**
 * The entry for a container: the pod's own object (named after it) first, then each cluster
 * object whose selector takes the pod; within one, the first entry naming the container or
 * naming none (findContainerInExecs/findAttachInAttaches and the logs lookup of KWOK).
 */
function findEntry(
  client: ClusterClient,
  own: typeof LOGS_GVR | typeof ATTACH_GVR,
  cluster: typeof CLUSTER_LOGS_GVR | typeof CLUSTER_ATTACH_GVR,
  field: 'logs' | 'attaches',
  pod: KubeObject,
  container: string,
): Json | undefined {
  const ns = pod.metadata.namespace ?? '';
  const name = pod.metadata.name ?? '';
  const candidates: Json[][] = [];
  if (client.served(own)) {
    const o = client.get(own, ns, name);
    if (o) candidates.push(rec(o.spec)[field] as Json[]);
  }
  if (client.served(cluster)) {
    for (const cl of client.list(cluster)) {
      const sel = rec(rec(cl.spec).selector);
      const namespaces = strs(sel.matchNamespaces);
      const names = strs(sel.matchNames);
      if (namespaces.length && !namespaces.includes(ns)) continue;
      if (names.length && !names.includes(name)) continue;
      candidates.push(rec(cl.spec)[field] as Json[]);
    }
  }
  for (const entries of candidates) {
    for (const e of Array.isArray(entries) ? entries : []) {
      const containers = strs(e.containers);
      if (!containers.length || containers.includes(container)) return e;
    }
  }
  return undefined;
}

function readLog(file: unknown): string {
  if (typeof file !== 'string' || file === '') return '';
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    return `failed to read log file ${file}: ${(err as Error).message}\n`;
  }
}

/**
 * The log of one container: the file of its Logs entry (`previousLogsFile` for `--previous`);
 * for attach, the file of its Attach entry, else the Logs one.
 */
export function containerLog(
  client: ClusterClient,
  pod: KubeObject,
  container: string,
  opts: { previous: boolean; attach?: boolean },
): string {
  if (opts.attach) {
    const a = findEntry(client, ATTACH_GVR, CLUSTER_ATTACH_GVR, 'attaches', pod, container);
    if (a) return readLog(a.logsFile);
  }
  const e = findEntry(client, LOGS_GVR, CLUSTER_LOGS_GVR, 'logs', pod, container);
  return e ? readLog(opts.previous ? e.previousLogsFile : e.logsFile) : '';
}
