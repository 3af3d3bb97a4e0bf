/**
 * Serving /openapi/v2 as kube-openapi's handler does (k8s.io/kube-openapi/pkg/handler/handler.go):
 * the Accept header's clauses in preference order pick the first of JSON, the deprecated
 * protobuf subtype kubectl sends (answered under the current subtype's name) and the current
 * one; nothing acceptable is a bare 406. Both encodings carry the ETag of the JSON bytes, and
 * http.ServeContent's conditional rules answer 304: If-None-Match first, If-Modified-Since
 * only without it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RenderedSwagger } from '../openapi/v2.ts';
import { OPENAPI_V2_PROTOBUF } from '../openapi/v2-protobuf.ts';

const JSON_TYPE = 'application/json';
const PROTOBUF_DEPRECATED_SUBTYPE = 'com.github.proto-openapi.spec.v2@v1.0+protobuf';
const PROTOBUF_SUBTYPE = 'com.github.proto-openapi.spec.v2.v1.0+protobuf';

type Encoding = 'json' | 'protobuf';
const OFFERED: Array<[subtype: string, encoding: Encoding]> = [
  ['json', 'json'],
  [PROTOBUF_DEPRECATED_SUBTYPE, 'protobuf'],
  [PROTOBUF_SUBTYPE, 'protobuf'],
];

interface Clause {
  type: string;
  subtype: string;
  q: number;
}

/**
 * goautoneg.ParseAccept: clauses sorted by q, then by specificity (`*` sorts after a name).
 * Written here rather than taken from `negotiator`: kube-openapi's rule is "the first sorted
 * clause that any offered type matches, offered types in server order", which a
 * preference-ranking negotiator does not state exactly.
 */
function parseAccept(header: string): Clause[] {
  const clauses: Clause[] = [];
  for (const part of header.split(',')) {
    const [range = '', ...params] = part.split(';').map((s) => s.trim());
    if (range === '') continue;
    const [type = '', subtype = '*'] = range === '*' ? ['*', '*'] : range.split('/');
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=').map((s) => s.trim());
      if (k === 'q' && v !== undefined) q = Number.parseFloat(v);
    }
    if (Number.isFinite(q)) clauses.push({ type, subtype, q });
  }
  const wild = (s: string) => (s === '*' ? 1 : 0);
  return clauses.sort(
    (a, b) => b.q - a.q || wild(a.type) - wild(b.type) || wild(a.subtype) - wild(b.subtype),
  );
}

/** The encoding an Accept header asks for, or undefined when it accepts neither. */
export function negotiateOpenAPIV2(accept: string | undefined): Encoding | undefined {
  for (const c of parseAccept(accept || '*/*')) {
    if (c.q <= 0) continue;
    for (const [subtype, encoding] of OFFERED) {
      if (c.type !== 'application' && c.type !== '*') continue;
      if (c.subtype !== subtype && c.subtype !== '*') continue;
      return encoding;
    }
  }
  return undefined;
}

/** Whether the request's validators say the client's copy is current (net/http's rules). */
function notModified(req: IncomingMessage, etag: string, lastModified: Date): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) {
    if (inm.trim() === '*') return true;
    // Weak comparison, as checkIfNoneMatch does.
    return inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
  }
  const ims = req.headers['if-modified-since'];
  if (ims === undefined) return false;
  const since = Date.parse(ims);
  return Number.isFinite(since) && lastModified.getTime() <= since;
}

export function serveOpenAPIV2(req: IncomingMessage, res: ServerResponse, doc: RenderedSwagger): void {
  res.setHeader('Vary', 'Accept');
  const encoding = negotiateOpenAPIV2(req.headers.accept);
  if (!encoding) {
    res.writeHead(406);
    res.end();
    return;
  }
  const etag = `"${doc.etag}"`;
  res.setHeader('Content-Type', encoding === 'json' ? JSON_TYPE : OPENAPI_V2_PROTOBUF);
  res.setHeader('ETag', etag);
  res.setHeader('Last-Modified', doc.lastModified.toUTCString());
  if (notModified(req, etag, doc.lastModified)) {
    res.removeHeader('Content-Type');
    res.writeHead(304);
    res.end();
    return;
  }
  const body = encoding === 'json' ? Buffer.from(doc.json) : doc.protobuf();
  res.setHeader('Content-Length', body.byteLength);
  res.writeHead(200);
  res.end(req.method === 'HEAD' ? undefined : body);
}
