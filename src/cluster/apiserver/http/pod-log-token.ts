import { isObject } from '../../../lib/json.ts';
import { arrayOf, recordOf, str } from '../builtin/common.ts';
import { invalid } from '../builtin/field-errors.ts';
import { errors } from '../errors.ts';
import type { KubeObject } from '../types.ts';
import { readDecoded, type SubresourceContext, sendJson } from './handler.ts';

const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;
const DEFAULT_EXPIRATION_SECONDS = 3600;

/** POST serviceaccounts/<name>/token: a bearer token the server accepts until it expires. */
export async function serveTokenRequest({ deps, req, res, p, method }: SubresourceContext): Promise<void> {
  if (method !== 'POST')
    throw errors.methodNotAllowed(method.toLowerCase(), { group: '', resource: 'serviceaccounts/token' });
  const ns = p.namespace ?? '';
  const name = p.name!;
  const sa = deps.api.get(p.rt, ns, name);
  const body = await readDecoded(req);
  const spec = isObject(body) ? recordOf(body.spec) : {};
  const seconds = spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  const errs = [];
  if (typeof seconds !== 'number' || !Number.isInteger(seconds)) {
    errs.push(invalid('spec.expirationSeconds', seconds, 'must be an integer'));
  } else if (seconds < MIN_EXPIRATION_SECONDS) {
    errs.push(invalid('spec.expirationSeconds', seconds, 'may not specify a duration less than 10 minutes'));
  } else if (seconds > MAX_EXPIRATION_SECONDS) {
    errs.push(
      invalid('spec.expirationSeconds', seconds, 'may not specify a duration larger than 2^32 seconds'),
    );
  }
  if (errs.length) throw errors.invalid('TokenRequest', 'authentication.k8s.io', name, errs);
  const audiences = arrayOf<string>(spec.audiences);
  const expiresAt = Date.now() + (seconds as number) * 1000;
  const token = deps.authn.mintServiceAccountToken(ns, name, expiresAt);
  sendJson(res, 201, {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name, namespace: ns, creationTimestamp: null },
    spec: {
      audiences: audiences.length ? audiences : deps.authn.audiences,
      expirationSeconds: seconds,
      boundObjectRef: spec.boundObjectRef ?? null,
    },
    status: {
      token,
      expirationTimestamp: new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      uid: sa.metadata.uid,
    },
  });
}

/** The log text of one container, from the simulated kubelet when the cluster wires one. */
export type PodLogs = (
  pod: KubeObject,
  container: string,
  opts: { previous: boolean; attach?: boolean },
) => string;

/** The status the kubelet reports for a container of any kind. */
export function containerStatus(pod: KubeObject, container: string): Record<string, unknown> | undefined {
  const status = recordOf(pod.status);
  return [
    ...arrayOf(status.containerStatuses),
    ...arrayOf(status.initContainerStatuses),
    ...arrayOf(status.ephemeralContainerStatuses),
  ].find((s) => s.name === container);
}

function containerNames(pod: KubeObject, field: string): string[] {
  return arrayOf(recordOf(pod.spec)[field]).map((c) => str(c.name));
}

/**
 * The container a pods/log, exec or attach request means, as `validateContainer` (used by
 * LogLocation and streamLocation in pkg/registry/core/pod/strategy.go) chooses it: the only
 * container when none is named, else one of the pod's containers of any kind.
 */
export function chooseContainer(pod: KubeObject, requested: string): string {
  const name = pod.metadata.name!;
  const containers = containerNames(pod, 'containers');
  const init = containerNames(pod, 'initContainers');
  const ephemeral = containerNames(pod, 'ephemeralContainers');
  if (requested === '') {
    if (containers.length === 1) return containers[0]!;
    let msg = `a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`;
    if (init.length) msg += ` or one of the init containers: [${init.join(' ')}]`;
    if (ephemeral.length) msg += ` or one of the ephemeral containers: [${ephemeral.join(' ')}]`;
    throw errors.badRequest(msg);
  }
  if (![...containers, ...init, ...ephemeral].includes(requested)) {
    throw errors.badRequest(`container ${requested} is not valid for pod ${name}`);
  }
  return requested;
}

/** GET pods/<name>/log: the container's log, chosen as LogLocation chooses it. */
export async function servePodLog({ deps, res, p, q, method }: SubresourceContext): Promise<void> {
  if (method !== 'GET')
    throw errors.methodNotAllowed(method.toLowerCase(), { group: '', resource: 'pods/log' });
  const pod = deps.api.get(p.rt, p.namespace ?? '', p.name!);
  const name = pod.metadata.name!;
  const container = chooseContainer(pod, q.get('container') ?? '');
  for (const key of ['tailLines', 'limitBytes', 'sinceSeconds']) {
    const v = q.get(key);
    if (v !== null && !(Number.isInteger(Number(v)) && Number(v) >= (key === 'tailLines' ? 0 : 1))) {
      const cmp = key === 'tailLines' ? 'greater than or equal to 0' : 'greater than 0';
      throw errors.invalid('PodLogOptions', '', name, [invalid(key, Number(v), `must be ${cmp}`)]);
    }
  }
  res.setHeader('Content-Type', 'text/plain');
  // No node yet: LogLocation gives no location and the server answers an empty log.
  if (!str(recordOf(pod.spec).nodeName)) {
    res.writeHead(200);
    res.end();
    return;
  }
  const st = containerStatus(pod, container);
  const waiting = recordOf(recordOf(st?.state).waiting);
  if (!st || (st.state && isObject(recordOf(st.state).waiting))) {
    const reason = str(waiting.reason) || 'ContainerCreating';
    throw errors.badRequest(`container "${container}" in pod "${name}" is waiting to start: ${reason}`);
  }
  let text = deps.podLogs?.(pod, container, { previous: q.get('previous') === 'true' }) ?? '';
  const tail = q.get('tailLines');
  if (tail !== null) {
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    const kept = Number(tail) === 0 ? [] : lines.slice(-Number(tail));
    text = kept.length ? `${kept.join('\n')}\n` : '';
  }
  const limit = q.get('limitBytes');
  if (limit !== null) text = Buffer.from(text).subarray(0, Number(limit)).toString();
  res.writeHead(200);
  res.end(text);
}
