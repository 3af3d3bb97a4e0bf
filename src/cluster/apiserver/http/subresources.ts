/**
 * Subresources: status (and namespaces' finalize), scale, pods/binding, pods/eviction.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserInfo } from '../auth/authn.ts';
import { errors } from '../errors.ts';
import { readBody } from './body.ts';
import { bindPod } from '../binding.ts';
import { invalid } from '../builtin/fielderrors.ts';
import { labelSelectorString } from '../builtin/selector.ts';
import { getPath, setPath } from '../meta.ts';
import type { KubeObject } from '../types.ts';
import {
  type HandlerDeps,
  patchFromRequest,
  readDecoded,
  sendJson,
  sendObject,
  writeOptions,
} from './handler.ts';
import type { ResourcePath } from './router.ts';
import { servePodLog, serveTokenRequest } from './pod-log-token.ts';

interface SubContext {
  deps: HandlerDeps;
  req: IncomingMessage;
  res: ServerResponse;
  p: ResourcePath;
  q: URLSearchParams;
  method: string;
  user: UserInfo;
}

type SubHandler = (c: SubContext) => Promise<void>;

const status: SubHandler = async ({ deps, req, res, p, q, method, user }) => {
  const ns = p.namespace ?? '';
  const name = p.name!;
  if (method === 'GET') return sendObject(req, res, 200, p.rt, deps.api.get(p.rt, ns, name), q);
  if (method === 'PUT') {
    const body = await readDecoded(req);
    const opts = writeOptions(q, user, p.subresource);
    const obj = await deps.api.update(p.rt, ns, name, body, opts);
    return sendObject(req, res, 200, p.rt, obj, q, opts.warnings);
  }
  if (method === 'PATCH') {
    const { object, warnings } = await patchFromRequest(deps, req, p, q, user);
    return sendObject(req, res, 200, p.rt, object, q, warnings);
  }
  throw errors.methodNotAllowed(method.toLowerCase(), {
    group: p.rt.group,
    resource: `${p.rt.resource}/status`,
  });
};

/** PUT namespaces/<n>/finalize replaces spec.finalizers, the namespace controller's hand-off. */
const finalize: SubHandler = async ({ deps, req, res, p, q, method, user }) => {
  if (method !== 'PUT')
    throw errors.methodNotAllowed(method.toLowerCase(), { group: '', resource: 'namespaces/finalize' });
  const body = (await readDecoded(req)) as KubeObject;
  const obj = await deps.api.updateWith(
    p.rt,
    '',
    p.name!,
    writeOptions(q, user, 'finalize'),
    (cur) => ({
      ...cur,
      spec: {
        ...(cur.spec as object),
        finalizers: (body.spec as { finalizers?: string[] } | undefined)?.finalizers ?? [],
      },
    }),
    false,
  );
  return sendObject(req, res, 200, p.rt, obj, q);
};

function toScale(
  obj: KubeObject,
  specPath: string,
  statusPath: string,
  selectorPath: string | undefined,
): KubeObject {
  const raw = selectorPath ? getPath(obj, selectorPath) : undefined;
  // CRDs point at a selector string; built-in workloads at a LabelSelector object.
  const selector = raw && typeof raw === 'object' ? labelSelectorString(raw) : raw;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: obj.metadata.name,
      namespace: obj.metadata.namespace,
      uid: obj.metadata.uid,
      resourceVersion: obj.metadata.resourceVersion,
      creationTimestamp: obj.metadata.creationTimestamp,
    },
    spec: { replicas: (getPath(obj, specPath) as number | undefined) ?? 0 },
    status: {
      replicas: (getPath(obj, statusPath) as number | undefined) ?? 0,
      ...(typeof selector === 'string' ? { selector } : {}),
    },
  };
}

const scale: SubHandler = async ({ deps, req, res, p, q, method, user }) => {
  const sc = p.rt.scale;
  if (!sc) throw errors.notFoundPath();
  const ns = p.namespace ?? '';
  const name = p.name!;
  const render = (o: KubeObject) =>
    toScale(o, sc.specReplicasPath, sc.statusReplicasPath, sc.labelSelectorPath);
  if (method === 'GET') return sendJson(res, 200, render(deps.api.get(p.rt, ns, name)));
  let replicas: number;
  let asked: string | undefined;
  if (method === 'PUT') {
    const body = (await readDecoded(req)) as KubeObject;
    replicas = (body.spec as { replicas?: number } | undefined)?.replicas ?? 0;
    asked = body.metadata?.resourceVersion;
  } else if (method === 'PATCH') {
    // Patch the Scale view, then carry spec.replicas over to the object.
    const current = render(deps.api.get(p.rt, ns, name));
    const patched = deps.api.hooks.patcher!.apply(
      { ...p.rt, kind: 'Scale', group: 'autoscaling', version: 'v1', strategy: {} },
      current,
      { contentType: (req.headers['content-type'] ?? '').split(';')[0]!, body: await readBody(req) },
      writeOptions(q, user, 'scale'),
    );
    replicas = (patched.spec as { replicas?: number } | undefined)?.replicas ?? 0;
  } else {
    throw errors.methodNotAllowed(method.toLowerCase(), {
      group: p.rt.group,
      resource: `${p.rt.resource}/scale`,
    });
  }
  if (!Number.isInteger(replicas) || replicas < 0) {
    throw errors.invalid('Scale', 'autoscaling', name, [
      invalid('spec.replicas', replicas, 'must be greater than or equal to 0'),
    ]);
  }
  const obj = await deps.api.updateWith(
    p.rt,
    ns,
    name,
    writeOptions(q, user, ''),
    (cur) => {
      if (asked) cur.metadata.resourceVersion = asked;
      setPath(cur as Record<string, unknown>, sc.specReplicasPath, replicas);
      return cur;
    },
    true,
  );
  return sendJson(res, 200, render(obj));
};

/** POST pods/<name>/binding: the scheduler's write, setting spec.nodeName exactly once. */
const binding: SubHandler = async ({ deps, req, res, p, q, method, user }) => {
  if (method !== 'POST')
    throw errors.methodNotAllowed(method.toLowerCase(), { group: '', resource: 'pods/binding' });
  const body = (await readDecoded(req)) as KubeObject;
  body.metadata = { ...(body.metadata ?? {}), name: p.name };
  await bindPod(deps.api, p.namespace ?? '', body, writeOptions(q, user, 'binding'));
  sendJson(res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
};

/** POST pods/<name>/eviction: a graceful delete (no PodDisruptionBudgets are served). */
const eviction: SubHandler = async ({ deps, req, res, p, method, user }) => {
  if (method !== 'POST')
    throw errors.methodNotAllowed(method.toLowerCase(), { group: '', resource: 'pods/eviction' });
  const body = (await readDecoded(req)) as {
    deleteOptions?: { gracePeriodSeconds?: number; preconditions?: { uid?: string } };
  };
  await deps.api.delete(p.rt, p.namespace ?? '', p.name!, {
    user: user.name,
    groups: user.groups,
    gracePeriodSeconds: body.deleteOptions?.gracePeriodSeconds,
    preconditions: body.deleteOptions?.preconditions,
  });
  sendJson(res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
};

export const subresourceHandlers: Record<string, SubHandler> = {
  token: serveTokenRequest,
  log: servePodLog,
  status,
  finalize,
  scale,
  binding,
  eviction,
};
