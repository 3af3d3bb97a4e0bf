/**
 * GET/POST pods/<name>/portforward. kube-apiserver checks the pod (PortForwardREST in
 * pkg/registry/core/pod/rest/subresources.go: it exists, a node is assigned) and proxies to the
 * kubelet. kubectl 1.32 asks for a WebSocket with the subprotocol `SPDY/3.1+portforward.k8s.io`
 * (client-go tools/portforward/tunneling_dialer.go: SPDY frames carried in binary messages,
 * which the API server's streamtunnel.go hands to the kubelet's SPDY server), and falls back to
 * a plain `Upgrade: SPDY/3.1` (fallback_dialer.go); both are served here, in process. Clients
 * of the older WebSocket protocol (`v4.channel.k8s.io`, the Python client's) name the ports in
 * the query and get a data and an error channel per port, each starting with the port as two
 * little-endian bytes (the kubelet's portforward/websocket.go).
 *
 * On the session, the kubelet's handler (pkg/kubelet/cri/streaming/portforward/httpstream.go)
 * takes streams in pairs sharing a `requestID` header: `streamType` `error` and `data`, each with
 * the `port`. Once both came, the pod's port is connected to the data stream; when that fails
 * the reason is written on the error stream, and both streams close. Where a simulated pod's
 * port leads is the simulated kubelet's to say (KWOK's PortForward objects); nowhere is a
 * refused connection, as on a pod with nothing listening.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { SpdySession, type SpdyStream } from '../../../lib/spdy.ts';
import { recordOf, str } from '../builtin/common.ts';
import { errors } from '../errors.ts';
import type { KubeObject } from '../types.ts';
import type { SubresourceContext } from './handler.ts';
import { upgradeHead } from './streaming.ts';

/** A canned HTTP answer for one path (KWOK's HTTPRoute). */
export interface HttpRoute {
  location: string;
  code: number;
  headers: { name: string; value: string }[];
  body: string;
}

/**
 * Where a pod's port leads: a command run with the connection as stdin/stdout, an address, or
 * canned HTTP answers served on the connection.
 */
export type ForwardTarget =
  | { command: string[] }
  | { address: string; port: number }
  | { httpRoutes: HttpRoute[] };

export type PodPortForward = (pod: KubeObject, port: number) => ForwardTarget | undefined;

/** portforward.PortForwardProtocolV1Name, and the WebSocket tunnelling prefix of KEP-4006. */
const PROTOCOL = 'portforward.k8s.io';
const TUNNEL_PROTOCOL = `SPDY/3.1+${PROTOCOL}`;
const V4 = 'v4.channel.k8s.io';

const wss = new WebSocketServer({
  noServer: true,
  handleProtocols: (offered) => [TUNNEL_PROTOCOL, V4].find((p) => offered.has(p)) ?? false,
});

/** The kubelet's NewV4Options: the ports a WebSocket channel request forwards. */
function channelPorts(values: string[]): number[] {
  if (values.length === 0) throw errors.badRequest('query parameter "port" is required');
  const ports: number[] = [];
  for (const v of values) {
    if (v === '') throw errors.badRequest('query parameter "port" cannot be empty');
    for (const part of v.split(',')) {
      const n = /^\d+$/.test(part) ? Number(part) : Number.NaN;
      if (!(n <= 65535)) throw errors.badRequest(`unable to parse "${v}" as a port`);
      if (n < 1) throw errors.badRequest(`port "${v}" must be > 0`);
      ports.push(n);
    }
  }
  return ports;
}

export async function servePodPortForward(c: SubresourceContext): Promise<void> {
  const { deps, p, method, req, res } = c;
  if (method !== 'GET' && method !== 'POST')
    throw errors.methodNotAllowed(method.toLowerCase(), { group: '', resource: 'pods/portforward' });
  const pod = deps.api.get(p.rt, p.namespace ?? '', p.name!);
  if (!str(recordOf(pod.spec).nodeName))
    throw errors.badRequest(`pod ${pod.metadata.name} does not have a host assigned`);
  const forward = (port: number) => deps.podPortForward?.(pod, port);
  const kind = String(req.headers.upgrade ?? '').toLowerCase();
  if (kind === 'websocket') {
    const offered = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((s) => s.trim());
    if (!offered.includes(TUNNEL_PROTOCOL)) {
      if (!offered.includes(V4))
        throw errors.badRequest(
          `unable to upgrade: none of the offered protocols [${offered.join(' ')}] is served (${TUNNEL_PROTOCOL}, ${V4})`,
        );
      // The API server passes PodPortForwardOptions' `ports` to the kubelet as `port`.
      const ports = channelPorts([...c.q.getAll('ports'), ...c.q.getAll('port')]);
      wss.handleUpgrade(req, req.socket as Duplex, upgradeHead(req), (ws) =>
        serveChannels(ws, pod, ports, forward),
      );
      return;
    }
    wss.handleUpgrade(req, req.socket as Duplex, upgradeHead(req), (ws) => {
      const session = new SpdySession((b) => ws.send(b));
      ws.on('message', (data: Buffer, isBinary: boolean) => {
        if (isBinary) session.receive(data);
      });
      ws.on('close', () => session.close());
      ws.on('error', () => {});
      session.on('close', () => ws.close(1000));
      serveSession(session, pod, forward);
    });
    return;
  }
  if (kind !== 'spdy/3.1') throw errors.badRequest('Upgrade request required');
  // httpstream.Handshake: a client naming protocols must name ours; one naming none is legacy.
  const versions = String(req.headers['x-stream-protocol-version'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (versions.length && !versions.includes(PROTOCOL)) {
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.writeHead(403);
    res.end(
      `unable to upgrade: unable to negotiate protocol: client supports [${versions.join(' ')}], server supports [${PROTOCOL}]\n`,
    );
    return;
  }
  const socket = req.socket;
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n${versions.length ? `X-Stream-Protocol-Version: ${PROTOCOL}\r\n` : ''}\r\n`,
  );
  const session = new SpdySession((b) => socket.write(b));
  socket.on('data', (d: Buffer) => session.receive(d));
  socket.on('close', () => session.close());
  socket.on('error', () => {});
  session.on('close', () => socket.destroy());
  const head = upgradeHead(req);
  if (head.length) session.receive(head);
  serveSession(session, pod, forward);
}

interface Pair {
  data?: SpdyStream;
  error?: SpdyStream;
}

/** Pairs the session's streams by request and forwards each complete pair. */
function serveSession(
  session: SpdySession,
  pod: KubeObject,
  forward: (port: number) => ReturnType<PodPortForward>,
) {
  const pairs = new Map<string, Pair>();
  session.on('stream', (s) => {
    const port = Number(s.headers.get('port') ?? '');
    const type = s.headers.get('streamtype');
    // httpStreamReceived: a stream without a valid port and type is refused.
    if (!Number.isInteger(port) || port < 1 || port > 65535 || (type !== 'error' && type !== 'data')) {
      s.reset();
      return;
    }
    s.reply().catch(() => session.close());
    // Clients older than request ids pair by stream id (the kubelet's requestID()).
    const id = s.headers.get('requestid') ?? String(type === 'error' ? s.id : s.id - 2);
    const pair = pairs.get(id) ?? {};
    pairs.set(id, pair);
    if (pair[type]) {
      pair.error?.end(`error processing stream for request ${id}: ${type} stream already assigned`);
      s.reset();
      return;
    }
    pair[type] = s;
    if (pair.data && pair.error) {
      pairs.delete(id);
      forwardPair(pod, port, forward(port), pair.data, pair.error);
    }
  });
}

/** One WebSocket, a data and an error channel per port (2i, 2i+1), closed once all are done. */
function serveChannels(
  ws: WebSocket,
  pod: KubeObject,
  ports: number[],
  forward: (port: number) => ReturnType<PodPortForward>,
): void {
  const send = (ch: number, b: Buffer) => {
    if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([ch]), b]));
  };
  const channel = (ch: number) =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _enc, done) {
        send(ch, chunk);
        done();
      },
    });
  const data: Duplex[] = [];
  let open = ports.length;
  ports.forEach((port, i) => {
    const d = channel(2 * i);
    const e = channel(2 * i + 1);
    data.push(d);
    const prefix = Buffer.from([port & 0xff, port >> 8]);
    send(2 * i, prefix);
    send(2 * i + 1, prefix);
    e.on('finish', () => {
      if (--open === 0) ws.close(1000);
    });
    forwardPair(pod, port, forward(port), d, e);
  });
  ws.on('message', (msg: Buffer, isBinary: boolean) => {
    // Only data channels (even) are the client's to write.
    if (isBinary && msg.length > 0 && msg[0]! % 2 === 0) data[msg[0]! / 2]?.push(msg.subarray(1));
  });
  ws.on('close', () => {
    for (const d of data) d.destroy();
  });
  ws.on('error', () => {});
}

/** Go's net error text for a refused dial, as the kubelet reports it. */
function dialError(err: NodeJS.ErrnoException): string {
  return err.code === 'ECONNREFUSED' ? 'connect: connection refused' : err.message;
}

function forwardPair(
  pod: KubeObject,
  port: number,
  target: ForwardTarget | undefined,
  data: Duplex,
  error: Duplex,
): void {
  // A stream torn down by the client must not take the server with it.
  data.on('error', () => {});
  error.on('error', () => {});
  let failed = false;
  const fail = (reason: string) => {
    if (failed || error.writableEnded) return;
    failed = true;
    const m = pod.metadata;
    error.end(`error forwarding port ${port} to pod ${m.namespace}/${m.name}, uid ${m.uid ?? ''}: ${reason}`);
    data.end();
  };
  // The client closes its side of the error stream at once; keep reading so it can end.
  error.resume();
  if (!target) {
    fail(`dial tcp4 127.0.0.1:${port}: connect: connection refused`);
    return;
  }
  if ('httpRoutes' in target) {
    // KWOK's httpRoutes handler: the exact path's answer, else Go's NotFound.
    const routes = target.httpRoutes;
    const server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://pod').pathname;
      const route = routes.find((r) => r.location === path);
      if (!route) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('404 page not found\n');
        return;
      }
      try {
        for (const h of route.headers) res.setHeader(h.name, h.value);
        res.writeHead(route.code);
        res.end(route.body);
      } catch (err) {
        // Past the object's schema, a header Node still refuses: say so rather than crash.
        if (res.headersSent) return void res.destroy();
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`httpRoutes answer for ${path} cannot be sent: ${(err as Error).message}\n`);
      }
    });
    // The server ends its side once it answered (HTTP/1.0, Connection: close); a v4 channel
    // never sees the client's side end, so that is when the port is done.
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      server.close();
      if (!error.writableEnded) error.end();
    };
    data.on('finish', finish);
    data.on('close', finish);
    server.emit('connection', data);
    return;
  }
  if ('command' in target) {
    const [cmd, ...args] = target.command;
    const child = spawn(cmd!, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    data.pipe(child.stdin);
    child.stdout.pipe(data);
    child.stdin.on('error', () => {});
    data.on('close', () => child.kill());
    child.on('error', (err) => fail(err.message));
    child.on('exit', (code) => (code ? fail(`exit status ${code}`) : !error.writableEnded && error.end()));
    return;
  }
  const addr = `${target.address}:${target.port}`;
  const sock = connect({ host: target.address, port: target.port });
  let connected = false;
  sock.on('connect', () => {
    connected = true;
    data.pipe(sock);
    sock.pipe(data);
  });
  sock.on('error', (err: NodeJS.ErrnoException) => {
    if (!connected) fail(`failed to dial ${addr}: dial tcp ${addr}: ${dialError(err)}`);
    else data.destroy();
  });
  sock.on('close', () => {
    if (!error.writableEnded) error.end();
  });
  data.on('close', () => sock.destroy());
}
