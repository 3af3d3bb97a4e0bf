/**
 * The HTTP codec over Api: routing, authentication, authorization, content
 * negotiation (JSON, YAML, Table), watch streaming, Status errors and metrics.
 *
 * Why one file: one request's path through routing, authentication, authorization,
 * negotiation and the verbs; the codecs and helpers are beside it in http/.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { random } from '../../../lib/random.ts';
import { SHARED_CLOCK_HEADER, SHARED_CLOCK_KEY } from '../../../lib/virtual-clock.ts';
import type { Api, DeleteOptions, FieldValidation, ListOptions, WatchOptions, WriteOptions } from '../api.ts';
import { qr } from '../api.ts';
import type { Authenticator, UserInfo } from '../auth/authn.ts';
import type { Authorizer, RequestAttributes } from '../auth/rbac.ts';
import { bindPod } from '../binding.ts';
import {
  type ApiError,
  encodeStatus,
  errors,
  type StatusObject,
  successStatus,
  toApiError,
} from '../errors.ts';
import type { Faults } from '../faults.ts';
import { forbidden, invalid, notSupported, required, tooLong } from '../field-errors.ts';
import type { ApiMetrics } from '../metrics.ts';
import type { RenderedSwagger } from '../openapi/v2.ts';
import { isBuiltinGroup, type ResourceRegistry } from '../registry.ts';
import type { StoredRecord } from '../store.ts';
import { jsonOf } from '../stored-json.ts';
import type { FieldError } from '../types.ts';
import { groupVersion, type KubeObject, type ResourceType } from '../types.ts';
import { decodeRequestBody, readBody, readBodyBytes } from './body.ts';
import { AGGREGATED_V2_TYPE, AGGREGATED_V2BETA1_TYPE, type Discovery } from './discovery.ts';
import { holdUntilDurable, shows } from './durable-response.ts';
import { serveOpenAPIV2 } from './openapi-v2.ts';
import type { PodLogs } from './pod-log-token.ts';
import type { PodPortForward } from './portforward.ts';
import { queryBool, queryInt64, queryOptionalBool, queryString } from './query.ts';
import { serveAccessReview, serveRulesReview, serveSelfSubjectReview, serveTokenReview } from './reviews.ts';
import { parsePath, type ResourcePath } from './router.ts';
import type { PodAttach, PodExec } from './streaming.ts';
import { subresourceHandlers } from './subresources.ts';
import { type IncludeObject, tableVersion, toTable, wantsTable } from './table.ts';

export interface OpenApiProvider {
  v3Paths(): unknown;
  /** The rendered document of a group-version path (`api/v1`, `apis/apps/v1`) and its hash. */
  v3GroupVersionRendered(path: string): { json: string; hash: string } | undefined;
  /** The /openapi/v2 document (JSON, protobuf on demand) of everything served. */
  v2Rendered(): RenderedSwagger;
}

export type NonResourceHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
) => boolean | Promise<boolean>;

export interface HandlerDeps {
  api: Api;
  registry: ResourceRegistry;
  discovery: Discovery;
  authn: Authenticator;
  authz: Authorizer;
  /** Enforce RBAC for non-admin users (otherwise RBAC only answers access reviews). */
  enforceRbac: boolean;
  faults: Faults;
  metrics: ApiMetrics;
  openapi?: OpenApiProvider;
  version: Record<string, string>;
  /** Extra non-resource endpoints (health, metrics) checked before 404. */
  extra: NonResourceHandler[];
  log?: (msg: string, fields: Record<string, unknown>) => void;
  /** Paths anyone may read without a token, as system:public-info-viewer allows. */
  publicPaths: Set<string>;
  /** Container logs for pods/log (the simulated kubelet's); empty logs without it. */
  podLogs?: PodLogs;
  /** Commands run by pods/exec (the simulated kubelet's); without it exec reports an error. */
  podExec?: PodExec;
  /** The process an interactive pods/attach reaches, when the kubelet runs one. */
  podAttach?: PodAttach;
  /** Where pods/portforward connects a pod's port (the simulated kubelet's); nowhere without it. */
  podPortForward?: PodPortForward;
}

/**
 * A virtual clock stands still while a request is served (released when the response is
 * written, or once a watch is established); keyed by response so a watch can release early.
 */
const requestHolds = new WeakMap<ServerResponse, () => void>();

/** Numbers the watch streams whose events a shared virtual clock counts (keys unique in the process). */
let watches = 0;

/** What a subresource handler gets: the request, its parsed path and the caller. */
export interface SubresourceContext {
  deps: HandlerDeps;
  req: IncomingMessage;
  res: ServerResponse;
  p: ResourcePath;
  q: URLSearchParams;
  method: string;
  user: UserInfo;
}

export function createHandler(deps: HandlerDeps) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const started = process.hrtime.bigint();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const clock = deps.api.clock;
    if (clock.hold) {
      const release = clock.hold(`apiserver ${req.method} ${url.pathname}`);
      requestHolds.set(res, release);
      res.on('close', release);
    }
    const labels = { verb: 'GET', group: '', version: '', resource: '', subresource: '', code: '0' };
    if (deps.api.store.durable) holdUntilDurable(res, deps.api.store);
    res.on('finish', () => {
      labels.code = String(res.statusCode);
      const secs = Number(process.hrtime.bigint() - started) / 1e9;
      deps.metrics.observe(labels, secs);
      deps.log?.('request', {
        method: req.method,
        path: url.pathname,
        code: res.statusCode,
        ms: Math.round(secs * 1000),
      });
    });
    handle(deps, req, res, url, labels).catch((err: unknown) => {
      const e = toApiError(err);
      if (e.code >= 500)
        deps.log?.('request failed', {
          path: url.pathname,
          error: err instanceof Error ? err.stack : String(err),
        });
      sendStatus(res, e);
    });
  };
}

async function handle(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  labels: Record<string, string>,
): Promise<void> {
  const path = url.pathname;
  const method = (req.method ?? 'GET').toUpperCase();
  const isPublic = deps.publicPaths.has(path) && method === 'GET';
  const user = deps.authn.authenticate(req);
  if (!user && !isPublic) throw errors.unauthorized();
  const effective = user ? impersonate(deps, req, user) : undefined;

  const parsed = parsePath(path, deps.registry);
  if (parsed.kind !== 'resource') {
    if (effective && !isPublic)
      await authorize(deps, effective, { nonResourceURL: path, verb: method.toLowerCase() });
    return serveNonResource(deps, req, res, url, parsed);
  }
  const p = parsed;
  const q = url.searchParams;
  const watching = queryBool(q, 'watch') || path.includes('/watch/');
  const verb = verbFor(method, p, watching);
  Object.assign(labels, {
    verb: verb.toUpperCase(),
    group: p.rt.group,
    version: p.rt.version,
    resource: p.rt.resource,
    subresource: p.subresource,
  });
  if (!p.rt.verbs.includes(verb) && !(p.subresource && verb !== 'list')) {
    throw errors.methodNotAllowed(verb, qr(p.rt));
  }
  if (p.subresource && !p.rt.subresources.includes(p.subresource)) throw errors.notFoundPath();
  if (p.namespace === undefined && p.rt.namespaced && p.name !== undefined) throw errors.notFoundPath();
  const attrs: RequestAttributes = {
    verb,
    apiGroup: p.rt.group,
    resource: p.rt.resource,
    subresource: p.subresource,
    namespace: p.namespace ?? '',
    name: p.name ?? '',
  };
  await authorize(deps, effective!, attrs);
  await deps.faults.beforeRequest(verb);
  const caller = effective!;

  if (p.rt.group === 'authorization.k8s.io' && verb === 'create') {
    if (p.rt.resource === 'selfsubjectrulesreviews') return serveRulesReview(deps, req, res, caller);
    return serveAccessReview(deps, req, res, p, caller);
  }
  if (p.rt.group === 'authentication.k8s.io' && verb === 'create') {
    if (p.rt.resource === 'selfsubjectreviews') return serveSelfSubjectReview(deps, req, res, caller);
    return serveTokenReview(deps, req, res);
  }
  if (p.rt === deps.registry.get('', 'v1', 'bindings') && verb === 'create') {
    const body = (await readDecoded(req)) as KubeObject;
    await bindPod(deps.api, p.namespace ?? '', body, writeOptions(q, caller, 'binding', undefined, 'create'));
    return sendStatusObject(res, 201, successStatus(201));
  }
  if (p.subresource && subresourceHandlers[p.subresource]) {
    return subresourceHandlers[p.subresource]!({ deps, req, res, p, q, method, user: effective! });
  }
  switch (verb) {
    case 'get': {
      // The stored JSON goes out as is unless a Table is asked for: no parse/stringify round trip.
      if (!wantsTable(req.headers.accept)) {
        const rec = deps.api.getRecord(p.rt, p.namespace ?? '', p.name!);
        shows(res, rec.rv);
        return sendRaw(res, 200, deps.api.encode(p.rt, rec));
      }
      return sendObject(req, res, 200, p.rt, deps.api.get(p.rt, p.namespace ?? '', p.name!), q);
    }
    case 'list':
      return serveList(deps, req, res, p, q);
    case 'watch':
      return serveWatch(deps, req, res, p, q);
    case 'create': {
      const body = await readDecoded(req, p.rt);
      const opts = writeOptions(q, caller, p.subresource, req.headers['user-agent'], 'create');
      const ns = p.namespace ?? (p.rt.namespaced ? namespaceOf(body) : '');
      const obj = await deps.api.create(p.rt, ns, body, opts);
      warn(res, opts);
      return sendObject(req, res, 201, p.rt, obj, q);
    }
    case 'update': {
      const body = await readDecoded(req, p.rt);
      const opts = writeOptions(q, caller, p.subresource, req.headers['user-agent'], 'update');
      const obj = await deps.api.update(p.rt, p.namespace ?? '', p.name!, body, opts);
      warn(res, opts);
      return sendObject(req, res, 200, p.rt, obj, q);
    }
    case 'patch': {
      const obj = await patchFromRequest(deps, req, p, q, caller);
      return sendObject(req, res, 200, p.rt, obj.object, q, obj.warnings);
    }
    case 'delete': {
      const opts = await deleteOptions(req, q, caller);
      const { object, deleted } = await deps.api.delete(p.rt, p.namespace ?? '', p.name!, opts);
      // Most kinds answer a completed deletion with a Status; pods return the object.
      if (deleted && !(p.rt.group === '' && p.rt.resource === 'pods')) {
        return sendStatusObject(
          res,
          200,
          successStatus(undefined, {
            name: p.name,
            group: p.rt.group,
            kind: p.rt.resource,
            uid: object.metadata.uid,
          }),
        );
      }
      return sendObject(req, res, 200, p.rt, object, q);
    }
    case 'deletecollection': {
      const opts = await deleteOptions(req, q, caller);
      const items = await deps.api.deleteCollection(p.rt, p.namespace, listOptions(q), opts);
      return sendJson(res, 200, {
        kind: p.rt.listKind,
        apiVersion: groupVersion(p.rt),
        metadata: { resourceVersion: String(deps.api.store.currentRv) },
        items,
      });
    }
    default:
      throw errors.methodNotAllowed(verb, qr(p.rt));
  }
}

export async function patchFromRequest(
  deps: HandlerDeps,
  req: IncomingMessage,
  p: ResourcePath,
  q: URLSearchParams,
  user: UserInfo,
): Promise<{ object: KubeObject; warnings: string[] }> {
  const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
  const known = [
    'application/json-patch+json',
    'application/merge-patch+json',
    'application/strategic-merge-patch+json',
    'application/apply-patch+yaml',
  ];
  if (!known.includes(contentType)) throw errors.unsupportedMediaType(contentType || '<none>');
  const opts = writeOptions(q, user, p.subresource, req.headers['user-agent'], 'patch', contentType);
  const body = await readBody(req);
  if (body.trim() === '') throw errors.badRequest('the body of the request was empty');
  const force = queryBool(q, 'force');
  const object = await deps.api.patch(p.rt, p.namespace ?? '', p.name!, { contentType, body, force }, opts);
  return { object, warnings: opts.warnings ?? [] };
}

function verbFor(method: string, p: ResourcePath, watching: boolean): string {
  switch (method) {
    case 'GET':
      if (watching) return 'watch';
      return p.name === undefined ? 'list' : 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return p.name === undefined ? 'deletecollection' : 'delete';
    default:
      return method.toLowerCase();
  }
}

function impersonate(deps: HandlerDeps, req: IncomingMessage, user: UserInfo): UserInfo {
  const asUser = req.headers['impersonate-user'];
  if (typeof asUser !== 'string' || asUser === '') return user;
  if (!user.groups.includes('system:masters')) {
    throw errors.forbiddenRaw(
      `users "${asUser}" is forbidden: User "${user.name}" cannot impersonate resource "users" in API group "" at the cluster scope`,
    );
  }
  const rawGroups = req.headers['impersonate-group'];
  const groups = Array.isArray(rawGroups) ? rawGroups : rawGroups ? [rawGroups] : [];
  return deps.authn.impersonated(asUser, groups);
}

async function authorize(deps: HandlerDeps, user: UserInfo, attrs: RequestAttributes): Promise<void> {
  if (user.groups.includes('system:masters')) return;
  if (!deps.enforceRbac) return;
  const decision = deps.authz.authorize(user, attrs);
  if (decision.allowed) return;
  throw errors.forbiddenRaw(forbiddenMessage(user, attrs), {
    name: attrs.name,
    group: attrs.apiGroup,
    kind: attrs.resource,
  });
}

function forbiddenMessage(user: UserInfo, a: RequestAttributes): string {
  if (a.nonResourceURL) return `forbidden: User "${user.name}" cannot ${a.verb} path "${a.nonResourceURL}"`;
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const what = a.name
    ? `${a.resource}${a.apiGroup ? `.${a.apiGroup}` : ''} "${a.name}"`
    : `${a.resource}${a.apiGroup ? `.${a.apiGroup}` : ''}`;
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  return `${what} is forbidden: User "${user.name}" cannot ${a.verb} resource "${res}" in API group "${a.apiGroup}" ${scope}`;
}

async function serveNonResource(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  parsed: ReturnType<typeof parsePath>,
): Promise<void> {
  const accept = req.headers.accept ?? '';
  const host = req.headers.host ?? '127.0.0.1';
  switch (parsed.kind) {
    case 'api':
      if (accept.includes('as=APIGroupDiscoveryList')) return sendAggregated(res, deps, true, accept);
      return sendRaw(res, 200, deps.discovery.apiVersions(host));
    case 'apis':
      if (accept.includes('as=APIGroupDiscoveryList')) return sendAggregated(res, deps, false, accept);
      return sendRaw(res, 200, deps.discovery.apiGroupList());
    case 'group': {
      const doc = deps.discovery.apiGroup(parsed.group);
      if (!doc) throw errors.notFoundPath();
      return sendRaw(res, 200, doc);
    }
    case 'groupVersion': {
      const doc = deps.discovery.resourceList(parsed.group, parsed.version);
      if (!doc) throw errors.notFoundPath();
      return sendRaw(res, 200, doc);
    }
    case 'unknownResource':
      throw errors.notFoundPath();
    default:
      break;
  }
  const path = url.pathname;
  if (path === '/version' || path === '/version/') {
    shows(res, 0);
    return sendJson(res, 200, deps.version);
  }
  if (deps.openapi) {
    if (path === '/openapi/v2' || path === '/openapi/v2/')
      return serveOpenAPIV2(req, res, deps.openapi.v2Rendered());
    if (path === '/openapi/v3' || path === '/openapi/v3/') return sendJson(res, 200, deps.openapi.v3Paths());
    if (path.startsWith('/openapi/v3/')) {
      const doc = deps.openapi.v3GroupVersionRendered(path.slice('/openapi/v3/'.length));
      if (doc === undefined) throw errors.notFoundPath();
      // The discovery document links here with ?hash=, so the content is immutable.
      res.setHeader('ETag', `"${doc.hash}"`);
      res.setHeader(
        'Cache-Control',
        url.searchParams.has('hash') ? 'public, immutable' : 'no-cache, private',
      );
      return sendRaw(res, 200, doc.json);
    }
  }
  for (const h of deps.extra) {
    if (await h(req, res, path)) return;
  }
  throw errors.notFoundPath();
}

function sendAggregated(res: ServerResponse, deps: HandlerDeps, core: boolean, accept: string): void {
  const v2 = accept.includes('v=v2;') || accept.includes('v=v2,') || /v=v2($|;|,)/.test(accept);
  res.setHeader('Content-Type', v2 ? AGGREGATED_V2_TYPE : AGGREGATED_V2BETA1_TYPE);
  res.setHeader('Vary', 'Accept');
  res.writeHead(200);
  res.end(deps.discovery.aggregated(core, v2 ? 'v2' : 'v2beta1'));
}

function serveList(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  p: ResourcePath,
  q: URLSearchParams,
): void {
  const result = deps.api.list(p.rt, p.namespace, listOptions(q));
  shows(res, Number(result.resourceVersion));
  const accept = req.headers.accept ?? '';
  if (wantsTable(accept)) {
    const objects = result.records.map((r) => deps.api.decode(p.rt, r));
    sendJson(
      res,
      200,
      toTable(p.rt, objects, {
        resourceVersion: result.resourceVersion,
        continue: result.continue,
        remainingItemCount: result.remainingItemCount,
        include: includeObject(q),
        version: tableVersion(accept),
      }),
    );
    return;
  }
  // Streamed concatenation of stored JSON: no parse/stringify round trip for big lists.
  const meta: Record<string, unknown> = { resourceVersion: result.resourceVersion };
  if (result.continue) meta.continue = result.continue;
  if (result.remainingItemCount !== undefined) meta.remainingItemCount = result.remainingItemCount;
  res.setHeader('Content-Type', 'application/json');
  res.writeHead(200);
  res.write(
    `{"kind":${JSON.stringify(p.rt.listKind)},"apiVersion":${JSON.stringify(groupVersion(p.rt))},"metadata":${JSON.stringify(meta)},"items":[`,
  );
  const chunk: string[] = [];
  let size = 0;
  for (let i = 0; i < result.records.length; i++) {
    const s = deps.api.encode(p.rt, result.records[i]!);
    chunk.push(i === 0 ? s : `,${s}`);
    size += s.length;
    if (size > 256 * 1024) {
      res.write(chunk.join(''));
      chunk.length = 0;
      size = 0;
    }
  }
  chunk.push(']}\n');
  res.end(chunk.join(''));
}

function serveWatch(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  p: ResourcePath,
  q: URLSearchParams,
): void {
  const opts: WatchOptions = {
    ...listOptions(q, true),
    allowWatchBookmarks: queryBool(q, 'allowWatchBookmarks'),
    sendInitialEvents: queryOptionalBool(q, 'sendInitialEvents'),
  };
  if (p.name !== undefined) {
    // GET /.../pods/<name>?watch=true watches one object.
    const byName = `metadata.name=${p.name}`;
    opts.fieldSelector = opts.fieldSelector ? `${opts.fieldSelector},${byName}` : byName;
  }
  const accept = req.headers.accept ?? '';
  const asTable = wantsTable(accept);
  const include = includeObject(q);
  let headersSent = false;
  const write = (type: string, json: string, rv: number) => {
    shows(res, rv);
    let objectJson = json;
    if (asTable && type !== 'BOOKMARK' && type !== 'ERROR') {
      const obj = JSON.parse(json) as KubeObject;
      objectJson = JSON.stringify(
        toTable(p.rt, [obj], { include, noHeaders: headersSent, version: tableVersion(accept) }),
      );
      headersSent = true;
    }
    if (clockKey) clock.busy?.(clockKey, 1);
    const ok = res.write(`{"type":"${type}","object":${objectJson}}\n`);
    // A watcher that cannot keep up is closed, as kube-apiserver does, rather than
    // buffering without bound; the client relists or resumes.
    if (!ok && res.writableLength > 64 * 1024 * 1024) stop('slow consumer');
  };
  // Headers go out with the first event or once the watch is registered: a request the
  // storage refuses outright (a malformed resourceVersion, a bad selector) gets an HTTP error.
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Transfer-Encoding', 'chunked');
  res.statusCode = 200;
  // A client sharing the server's virtual clock acknowledges each event it has handled:
  // until then the event counts as work in flight and time stands still.
  const clock = deps.api.clock;
  const clockKey =
    clock.id !== undefined && req.headers[SHARED_CLOCK_HEADER] === clock.id
      ? `watch ${++watches}`
      : undefined;
  if (clockKey) res.setHeader(SHARED_CLOCK_KEY, clockKey);
  let cancel: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  let bookmarkTimer: NodeJS.Timeout | undefined;
  let stopped = false;
  const stop = (_why: string) => {
    if (stopped) return;
    stopped = true;
    cancel?.();
    clearTimeout(timer);
    clearInterval(bookmarkTimer);
    deps.faults.untrackWatch(stopNow);
    // Events still unread when the stream ends will never be acknowledged.
    if (clockKey) clock.clear?.(clockKey);
    res.end();
  };
  const stopNow = () => stop('fault');
  req.on('close', () => stop('client closed'));
  try {
    cancel = deps.api.watch(p.rt, p.namespace, opts, { event: (type, json, rv) => write(type, json, rv) });
  } catch (err) {
    const e = toApiError(err);
    // The watch cache reports a resourceVersion it cannot serve (expired, too large) as an
    // ERROR event on an established watch (`newErrWatcher` in storage/cacher/cacher.go).
    if (!res.headersSent && e.code !== 410 && e.code !== 504) throw e;
    res.write(`{"type":"ERROR","object":${encodeStatus(e.status).trimEnd()}}\n`);
    stop('error');
    return;
  }
  res.flushHeaders();
  // Established: what follows is counted per event, not as one long request.
  requestHolds.get(res)?.();
  const timeout = queryInt64(q, 'timeoutSeconds') ?? 0;
  const limitMs = timeout > 0 ? timeout * 1000 : (1800 + random() * 1800) * 1000;
  timer = setTimeout(() => stop('timeout'), limitMs);
  if (opts.allowWatchBookmarks) {
    bookmarkTimer = setInterval(() => {
      const rv = deps.api.store.currentRv;
      write('BOOKMARK', deps.api.bookmarkJson(p.rt, rv), rv);
    }, 5000);
  }
  deps.faults.trackWatch(stopNow);
}

/**
 * ListOptions as the parameter codec decodes them, validated as
 * `apimachinery/pkg/apis/meta/internalversion/validation` ValidateListOptions does for a list
 * or a watch (the WatchList feature on): 422 `ListOptions.meta.k8s.io "" is invalid`.
 */
export function listOptions(q: URLSearchParams, watching = false): ListOptions {
  const opts: ListOptions = {};
  // Decoding (400) comes before validation (422), as in the list handler.
  const limit = queryInt64(q, 'limit');
  queryInt64(q, 'timeoutSeconds');
  const errs = listOptionsErrors(q, watching);
  if (errs.length) throw errors.invalid('ListOptions', 'meta.k8s.io', '', errs);
  const ls = queryString(q, 'labelSelector');
  const fs = queryString(q, 'fieldSelector');
  if (ls) opts.labelSelector = ls;
  if (fs) opts.fieldSelector = fs;
  // The storage layer treats a limit of zero or less as no limit.
  if (limit !== undefined && limit > 0) opts.limit = limit;
  const cont = queryString(q, 'continue');
  if (cont) opts.continue = cont;
  const rv = queryString(q, 'resourceVersion');
  if (rv !== undefined) opts.resourceVersion = rv;
  const rvm = queryString(q, 'resourceVersionMatch');
  if (rvm) opts.resourceVersionMatch = rvm;
  return opts;
}

function listOptionsErrors(q: URLSearchParams, watching: boolean): FieldError[] {
  const match = queryString(q, 'resourceVersionMatch') ?? '';
  const rv = queryString(q, 'resourceVersion') ?? '';
  const cont = queryString(q, 'continue') ?? '';
  const initial = queryOptionalBool(q, 'sendInitialEvents');
  const errs: FieldError[] = [];
  const path = 'resourceVersionMatch';
  if (watching) {
    if (initial !== undefined && match !== 'NotOlderThan')
      errs.push(forbidden(path, 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    if (match) {
      if (initial === undefined)
        errs.push(
          forbidden(path, 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'),
        );
      if (match !== 'NotOlderThan') errs.push(notSupported(path, match, ['NotOlderThan']));
      if (cont) errs.push(forbidden(path, 'resourceVersionMatch is forbidden when continue is provided'));
    }
    return errs;
  }
  if (match) {
    if (!rv)
      errs.push(forbidden(path, 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (cont) errs.push(forbidden(path, 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan')
      errs.push(notSupported(path, match, ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && rv === '0')
      errs.push(forbidden(path, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (initial !== undefined)
    errs.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errs;
}

/** The verbs whose options kube-apiserver validates (`ValidateCreateOptions` and siblings). */
export type WriteVerb = 'create' | 'update' | 'patch';
const OPTIONS_KIND: Record<WriteVerb, string> = {
  create: 'CreateOptions',
  update: 'UpdateOptions',
  patch: 'PatchOptions',
};

/**
 * Create, update and patch options from the query, validated as
 * `apimachinery/pkg/apis/meta/v1/validation` does: a 422 naming e.g. `PatchOptions.meta.k8s.io ""`.
 */
export function writeOptions(
  q: URLSearchParams,
  user: UserInfo,
  subresource: string,
  userAgent: string | undefined,
  verb: WriteVerb,
  patchType?: string,
): WriteOptions {
  const dryRun = q.getAll('dryRun');
  const fv = queryString(q, 'fieldValidation') ?? '';
  const fieldManager = queryString(q, 'fieldManager') ?? '';
  const errs: FieldError[] = [];
  if (verb === 'patch') {
    if (patchType !== 'application/apply-patch+yaml') {
      if (q.has('force')) errs.push(forbidden('force', 'may not be specified for non-apply patch'));
    } else if (fieldManager === '') errs.push(required('fieldManager', 'is required for apply patch'));
  }
  errs.push(...fieldManagerErrors(fieldManager), ...dryRunErrors(dryRun));
  if (!['', 'Ignore', 'Warn', 'Strict'].includes(fv))
    errs.push(notSupported('fieldValidation', fv, ['', 'Ignore', 'Strict', 'Warn']));
  if (errs.length) throw errors.invalid(OPTIONS_KIND[verb], 'meta.k8s.io', '', errs);
  return {
    user: user.name,
    groups: user.groups,
    dryRun: dryRun.length > 0,
    fieldManager: fieldManager || undefined,
    fieldValidation: (fv || undefined) as FieldValidation | undefined,
    subresource,
    warnings: [],
    userAgent,
  };
}

/** ValidateFieldManager: at most 128 bytes, printable characters only. */
function fieldManagerErrors(fm: string): FieldError[] {
  const errs: FieldError[] = [];
  if (Buffer.byteLength(fm) > 128) errs.push(tooLong('fieldManager', 128));
  let at = 0;
  for (const ch of fm) {
    if (/[^\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(ch)) {
      const cp = ch.codePointAt(0)!;
      const u = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
      errs.push(invalid('fieldManager', fm, `invalid character ${u} (at position ${at})`));
    }
    at += Buffer.byteLength(ch);
  }
  return errs;
}

/** ValidateDryRun: every value must be `All`; the bad value prints as the Go slice it is. */
function dryRunErrors(dryRun: string[]): FieldError[] {
  if (dryRun.every((d) => d === 'All')) return [];
  return [notSupported('dryRun', dryRun, ['All'])];
}

async function deleteOptions(
  req: IncomingMessage,
  q: URLSearchParams,
  user: UserInfo,
): Promise<DeleteOptions> {
  const bytes = await readBodyBytes(req);
  let body: Record<string, unknown> = {};
  if (bytes.length > 0 && bytes.toString('utf8').trim() !== '') {
    const decoded = decodeRequestBody(bytes, req.headers['content-type'] ?? 'application/json', false);
    if (decoded && typeof decoded === 'object') body = decoded as Record<string, unknown>;
  }
  const opts: DeleteOptions = { user: user.name, groups: user.groups };
  const grace = queryInt64(q, 'gracePeriodSeconds') ?? body.gracePeriodSeconds;
  if (grace !== undefined && grace !== null) {
    if (!Number.isInteger(grace))
      throw errors.badRequest(
        `gracePeriodSeconds: Invalid value: ${JSON.stringify(grace)}: must be an integer`,
      );
    opts.gracePeriodSeconds = grace as number;
  }
  const policy = (queryString(q, 'propagationPolicy') ?? body.propagationPolicy) as string | undefined;
  const orphan = queryOptionalBool(q, 'orphanDependents') ?? body.orphanDependents;
  if (policy !== undefined && policy !== null) {
    if (policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') {
      throw errors.badRequest(
        `propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
      );
    }
    opts.propagationPolicy = policy;
  } else if (orphan === true) opts.propagationPolicy = 'Orphan';
  const dry = [...q.getAll('dryRun'), ...((body.dryRun as string[] | undefined) ?? [])];
  const dryErrs = dryRunErrors(dry);
  if (dryErrs.length) throw errors.invalid('DeleteOptions', 'meta.k8s.io', '', dryErrs);
  opts.dryRun = dry.length > 0;
  const pre = body.preconditions as { uid?: string; resourceVersion?: string } | undefined;
  if (pre) opts.preconditions = pre;
  return opts;
}

export async function readDecoded(req: IncomingMessage, rt?: ResourceType): Promise<unknown> {
  const bytes = await readBodyBytes(req);
  const ct = req.headers['content-type'] ?? 'application/json';
  return decodeRequestBody(bytes, ct, rt !== undefined && !isBuiltinGroup(rt.group), rt?.kind);
}

function namespaceOf(body: unknown): string {
  const ns = (body as KubeObject | null)?.metadata?.namespace;
  return typeof ns === 'string' ? ns : '';
}

function includeObject(q: URLSearchParams): IncludeObject {
  const v = queryString(q, 'includeObject');
  return v === 'None' || v === 'Object' ? v : 'PartialObjectMetadata';
}

function warn(res: ServerResponse, opts: WriteOptions): void {
  setWarnings(res, opts.warnings ?? []);
}

function setWarnings(res: ServerResponse, warnings: string[]): void {
  if (warnings.length)
    res.setHeader(
      'Warning',
      warnings.map((w) => `299 - ${JSON.stringify(w)}`),
    );
}

export function sendObject(
  req: IncomingMessage,
  res: ServerResponse,
  code: number,
  rt: ResourceType,
  obj: KubeObject,
  q: URLSearchParams,
  warnings: string[] = [],
): void {
  setWarnings(res, warnings);
  // A dry run's answer carries no new resourceVersion: it may show anything up to the latest write.
  const rv = Number(obj.metadata?.resourceVersion);
  if (rv > 0) shows(res, rv);
  const accept = req.headers.accept ?? '';
  if (wantsTable(accept) && obj.kind === rt.kind) {
    sendJson(res, code, toTable(rt, [obj], { include: includeObject(q), version: tableVersion(accept) }));
    return;
  }
  sendRaw(res, code, jsonOf(obj));
}

export function sendJson(res: ServerResponse, code: number, body: unknown): void {
  sendRaw(res, code, JSON.stringify(body));
}

/** A JSON body ends with a newline, as Go's json.Encoder (kube-apiserver's serializer) writes it. */
export function sendRaw(res: ServerResponse, code: number, json: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.setHeader('Content-Type', 'application/json');
  res.writeHead(code);
  res.end(json.endsWith('\n') ? json : `${json}\n`);
}

export function sendStatusObject(res: ServerResponse, code: number, status: StatusObject): void {
  sendRaw(res, code, encodeStatus(status));
}

export function sendStatus(res: ServerResponse, err: ApiError): void {
  if (err.status.details?.retryAfterSeconds !== undefined && !res.headersSent) {
    res.setHeader('Retry-After', String(err.status.details.retryAfterSeconds));
  }
  sendStatusObject(res, err.code, err.status);
}

export type { StoredRecord };
