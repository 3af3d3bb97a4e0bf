import type { WriteOptions } from '../api.ts';
import { bindPod } from '../binding.ts';
import { invalid } from '../builtin/field-errors.ts';
import { labelSelectorString } from '../builtin/selector.ts';
import { errors, successStatus } from '../errors.ts';
import { takeDisruption } from '../eviction.ts';
import { notSupported } from '../field-errors.ts';
import { checkPatchedSubresourceDecodes, checkSubresourceBodyDecodes } from '../gotypes/index.ts';
import { getPath, setPath } from '../meta.ts';
import { checkPatchContentType } from '../patch/index.ts';
import { translatePatchError } from '../patcher.ts';
import type { KubeObject } from '../types.ts';
import { readBody } from './body.ts';
import {
  patchFromRequest,
  readDecoded,
  type SubresourceContext,
  sendJson,
  sendObject,
  sendStatusObject,
  writeOptions,
} from './handler.ts';
import { servePodLog, serveTokenRequest } from './pod-log-token.ts';
import { servePodPortForward } from './portforward.ts';
import { serveProxy } from './proxy.ts';
import { queryBool } from './query.ts';
import { servePodAttach, servePodExec } from './streaming.ts';

type SubHandler = (c: SubresourceContext) => Promise<void>;

const status: SubHandler = async ({ deps, req, res, p, q, method, user }) => {
  const ns = p.namespace ?? '';
  const name = p.name!;
  if (method === 'GET') return sendObject(req, res, 200, p.rt, deps.api.get(p.rt, ns, name), q);
  if (method === 'PUT') {
    const body = await readDecoded(req);
    const opts = writeOptions(q, user, p.subresource, req.headers['user-agent'], 'update');
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
    writeOptions(q, user, 'finalize', req.headers['user-agent'], 'update'),
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
  // CRDs point at a selector string; built-in workloads at a LabelSelector object, and
  // ReplicationControllers at a plain label map (labels.SelectorFromSet).
  const isLabelMap =
    raw && typeof raw === 'object' && !('matchLabels' in raw) && !('matchExpressions' in raw);
  const selector =
    raw && typeof raw === 'object' ? labelSelectorString(isLabelMap ? { matchLabels: raw } : raw) : raw;
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

/**
 * GET/PUT/PATCH <resource>/scale: the autoscaling/v1 Scale view of a workload. A patch takes
 * the patch types of the parent's endpoint (strategic merge for built-in kinds only, as
 * kube-apiserver's installer and the CRD handler's `serveScale` offer) and is applied to the
 * Scale, whose spec.replicas is then carried over to the object.
 */
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
  let opts: WriteOptions;
  if (method === 'PUT') {
    opts = writeOptions(q, user, 'scale', req.headers['user-agent'], 'update');
    const body = (await readDecoded(req)) as KubeObject;
    checkSubresourceBodyDecodes('autoscaling/v1', 'Scale', body);
    replicas = (body.spec as { replicas?: number } | undefined)?.replicas ?? 0;
    asked = body.metadata?.resourceVersion;
  } else if (method === 'PATCH') {
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    opts = writeOptions(q, user, 'scale', req.headers['user-agent'], 'patch', contentType);
    translatePatchError(() =>
      checkPatchContentType(contentType, { group: p.rt.group, version: p.rt.version, kind: p.rt.kind }),
    );
    const current = render(deps.api.get(p.rt, ns, name));
    const patchBody = await readBody(req);
    const patched = deps.api.hooks.patcher!.apply(
      { ...p.rt, kind: 'Scale', group: 'autoscaling', version: 'v1', strategy: {} },
      current,
      { contentType, body: patchBody, force: queryBool(q, 'force') },
      opts,
    );
    checkPatchedSubresourceDecodes('autoscaling/v1', 'Scale', patched, contentType, patchBody);
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
    { ...opts, subresource: '', applying: false },
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
  checkSubresourceBodyDecodes('v1', 'Binding', body);
  body.metadata = { ...(body.metadata ?? {}), name: p.name };
  await bindPod(
    deps.api,
    p.namespace ?? '',
    body,
    writeOptions(q, user, 'binding', req.headers['user-agent'], 'create'),
  );
  sendStatusObject(res, 201, successStatus(201));
};

/**
 * POST pods/<name>/eviction: a graceful delete (no PodDisruptionBudgets are served). The dry
 * run of the request (query) and of its deleteOptions must agree, as `propagateDryRun` in
 * `pkg/registry/core/pod/storage/eviction.go` requires.
 */
const eviction: SubHandler = async ({ deps, req, res, p, q, method, user }) => {
  if (method !== 'POST')
    throw errors.methodNotAllowed(method.toLowerCase(), { group: '', resource: 'pods/eviction' });
  const create = writeOptions(q, user, 'eviction', req.headers['user-agent'], 'create');
  const body = (await readDecoded(req)) as {
    deleteOptions?: {
      gracePeriodSeconds?: number;
      preconditions?: { uid?: string };
      dryRun?: string[];
    };
  };
  const asVersion = (body as { apiVersion?: unknown }).apiVersion;
  checkSubresourceBodyDecodes(
    typeof asVersion === 'string' && asVersion.startsWith('policy/') ? asVersion : 'policy/v1',
    'Eviction',
    body,
  );
  const queryDry = q.getAll('dryRun');
  const bodyDry = body.deleteOptions?.dryRun ?? [];
  if (queryDry.length && bodyDry.length && queryDry.join('\u0000') !== bodyDry.join('\u0000')) {
    throw errors.badRequest(
      `Inconsistent dryRun options, createOptions: [${queryDry.join(' ')}], deleteOptions: [${bodyDry.join(' ')}]`,
    );
  }
  if (bodyDry.some((d) => d !== 'All')) {
    throw errors.invalid('DeleteOptions', 'meta.k8s.io', '', [notSupported('dryRun', bodyDry, ['All'])]);
  }
  const dryRun = create.dryRun || bodyDry.length > 0;
  await takeDisruption(deps.api, deps.api.get(p.rt, p.namespace ?? '', p.name!), dryRun);
  await deps.api.delete(p.rt, p.namespace ?? '', p.name!, {
    user: user.name,
    groups: user.groups,
    dryRun,
    gracePeriodSeconds: body.deleteOptions?.gracePeriodSeconds,
    preconditions: body.deleteOptions?.preconditions,
  });
  sendStatusObject(res, 201, successStatus(201));
};

export const subresourceHandlers: Record<string, SubHandler> = {
  token: serveTokenRequest,
  log: servePodLog,
  status,
  // The ephemeralcontainers subresource writes the Pod; its strategy keeps all but the list.
  ephemeralcontainers: status,
  exec: servePodExec,
  attach: servePodAttach,
  portforward: servePodPortForward,
  proxy: serveProxy,
  finalize,
  scale,
  binding,
  eviction,
};
