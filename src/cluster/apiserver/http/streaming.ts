/**
 * pods/exec and pods/attach (pods/portforward is portforward.ts): the streaming subresources. kube-apiserver
 * checks the request (the pod, its container chosen as `streamLocation` in
 * pkg/registry/core/pod/strategy.go does, a node assigned) and hands the connection to the
 * kubelet; kubectl 1.32 asks for a WebSocket with the `v5.channel.k8s.io` subprotocol (and falls
 * back to SPDY when that upgrade is refused). Here the simulated kubelet answers in process over
 * the WebSocket channel protocol of k8s.io/apimachinery/pkg/util/remotecommand and
 * client-go/tools/remotecommand/websocket.go: every binary message starts with its stream's id
 * (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize; v5 adds 255 + id to close a stream), the
 * error stream carries the final metav1.Status (`NonZeroExitCode` with an `ExitCode` cause), and
 * a normal close ends every stream. SPDY is not served for exec/attach: a client that can only
 * speak it gets a 400 naming the protocols that are.
 *
 * The WebSocket framing comes from `ws` (the library client-node uses); the channel protocol
 * on top is this file's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { PassThrough } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { arrayOf, recordOf, str } from '../builtin/common.ts';
import { ApiError, errors } from '../errors.ts';
import type { KubeObject } from '../types.ts';
import type { SubresourceContext } from './handler.ts';
import { chooseContainer, containerStatus } from './pod-log-token.ts';
import { queryBool } from './query.ts';

/** What a simulated container process gets: its streams and a signal for the client going away. */
export interface ExecIO {
  /** Standard input when the client attached it (ends when the client closes it). */
  stdin?: AsyncIterable<Buffer>;
  write(stream: 'stdout' | 'stderr', text: string): void;
  tty: boolean;
  signal: AbortSignal;
}

/** Runs a command in a container of a simulated pod; resolves with its exit code. */
export type PodExec = (pod: KubeObject, container: string, command: string[], io: ExecIO) => Promise<number>;

/**
 * The process an attach with stdin reaches when the kubelet runs one for the container (an
 * interactive ephemeral container's shell, which ends with the session); undefined otherwise.
 */
export type PodAttach = (pod: KubeObject, container: string, io: ExecIO) => Promise<number> | undefined;

const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const CLOSE = 255;
const V5 = 'v5.channel.k8s.io';
const V4 = 'v4.channel.k8s.io';
const PROTOCOLS = [V5, V4];

/** The bytes an upgrade request came with past its headers (Node hands them to 'upgrade'). */
const upgradeHeads = new WeakMap<IncomingMessage, Buffer>();

export function rememberUpgradeHead(req: IncomingMessage, head: Buffer): void {
  upgradeHeads.set(req, head);
}

export function upgradeHead(req: IncomingMessage): Buffer {
  return upgradeHeads.get(req) ?? Buffer.alloc(0);
}

const wss = new WebSocketServer({
  noServer: true,
  handleProtocols: (offered) => PROTOCOLS.find((p) => offered.has(p)) ?? false,
});

interface StreamRequest {
  pod: KubeObject;
  container: string;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** The checks kube-apiserver makes before it proxies to the kubelet, and the kubelet's own. */
function checkStreamRequest(c: SubresourceContext, sub: 'exec' | 'attach'): StreamRequest {
  const { deps, p, q, method } = c;
  if (method !== 'GET' && method !== 'POST')
    throw errors.methodNotAllowed(method.toLowerCase(), { group: '', resource: `pods/${sub}` });
  const pod = deps.api.get(p.rt, p.namespace ?? '', p.name!);
  const container = chooseContainer(pod, q.get('container') ?? '');
  if (!str(recordOf(pod.spec).nodeName))
    throw errors.badRequest(`pod ${pod.metadata.name} does not have a host assigned`);
  const r = {
    pod,
    container,
    stdin: queryBool(q, 'stdin'),
    stdout: queryBool(q, 'stdout'),
    stderr: queryBool(q, 'stderr'),
    tty: queryBool(q, 'tty'),
  };
  // The kubelet's remotecommand.NewOptions.
  if (!r.stdin && !r.stdout && !r.stderr)
    throw errors.badRequest('you must specify at least 1 of stdin, stdout, stderr');
  if (sub === 'exec' && q.getAll('command').length === 0)
    throw errors.badRequest('you must specify at least one command for the container');
  return r;
}

/** The kubelet refuses a container that does not run, before any upgrade (plain text). */
function runningContainer(r: StreamRequest): string | undefined {
  const st = containerStatus(r.pod, r.container);
  if (!st || !recordOf(st.state).running) return `container not found ("${r.container}")`;
  return undefined;
}

function refusePlain(res: ServerResponse, code: number, text: string): void {
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.writeHead(code);
  res.end(`${text}\n`);
}

/** Upgrades to a WebSocket, or says why not; the caller has checked the request. */
function upgrade(c: SubresourceContext, run: (ws: WebSocket, protocol: string) => void): void {
  const { req } = c;
  const kind = String(req.headers.upgrade ?? '').toLowerCase();
  if (kind !== 'websocket') {
    throw errors.badRequest(
      kind
        ? `${req.headers.upgrade} streaming is not served by the embedded cluster: use a WebSocket client (${PROTOCOLS.join(', ')})`
        : 'Upgrade request required',
    );
  }
  const offered = String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((s) => s.trim());
  if (!PROTOCOLS.some((p) => offered.includes(p)))
    throw errors.badRequest(
      `unable to upgrade: none of the offered protocols [${offered.join(' ')}] is served (${PROTOCOLS.join(', ')})`,
    );
  // From here the socket is the WebSocket's: the response object is never written.
  wss.handleUpgrade(req, req.socket as Duplex, upgradeHead(req), (ws) => run(ws, ws.protocol));
}

/** One channel-protocol session over an upgraded WebSocket. */
class ChannelSession {
  readonly stdin?: PassThrough;
  readonly abort = new AbortController();
  private readonly ws: WebSocket;
  private readonly tty: boolean;
  private closed = false;

  constructor(ws: WebSocket, protocol: string, wantStdin: boolean, tty: boolean) {
    this.ws = ws;
    this.tty = tty;
    if (wantStdin) this.stdin = new PassThrough();
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary || data.length === 0) return;
      const id = data[0];
      if (id === STDIN) this.stdin?.write(data.subarray(1));
      else if (id === CLOSE && protocol === V5 && data[1] === STDIN) this.stdin?.end();
      // Resize (4) changes nothing for a simulated terminal.
    });
    ws.on('close', () => {
      this.closed = true;
      this.stdin?.end();
      this.abort.abort();
    });
    ws.on('error', () => {});
  }

  write(stream: 'stdout' | 'stderr', text: string): void {
    if (this.closed) return;
    // A terminal's line discipline turns newlines into CR LF; with a TTY stderr joins stdout.
    const out = this.tty ? text.replace(/\r?\n/g, '\r\n') : text;
    const id = stream === 'stderr' && !this.tty ? STDERR : STDOUT;
    this.ws.send(Buffer.concat([Buffer.from([id]), Buffer.from(out)]));
  }

  /** Sends the final Status on the error stream and closes normally. */
  finish(status: Record<string, unknown>): void {
    if (this.closed) return;
    this.closed = true;
    // The close frame goes out once the Status is written: a client polling its socket
    // (python's ws_client) reads one TLS record per poll, and one holding both would leave
    // the close unread until more data came.
    this.ws.send(Buffer.concat([Buffer.from([ERROR]), Buffer.from(JSON.stringify(status))]), () =>
      setImmediate(() => this.ws.close(1000)),
    );
  }
}

const SUCCESS = { metadata: {}, status: 'Success' };

function exitStatus(command: string[], code: number): Record<string, unknown> {
  if (code === 0) return SUCCESS;
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}

function failure(err: unknown): Record<string, unknown> {
  const message =
    err instanceof ApiError ? err.status.message : err instanceof Error ? err.message : String(err);
  return { metadata: {}, status: 'Failure', message, reason: 'InternalError' };
}

function execIO(s: ChannelSession, r: StreamRequest): ExecIO {
  return {
    stdin: s.stdin,
    tty: r.tty,
    signal: s.abort.signal,
    write: (stream, text) => {
      if (stream === 'stdout' ? r.stdout : r.stderr || r.tty) s.write(stream, text);
    },
  };
}

/** GET/POST pods/<name>/exec: runs the command in the simulated container. */
export async function servePodExec(c: SubresourceContext): Promise<void> {
  const r = checkStreamRequest(c, 'exec');
  const notRunning = runningContainer(r);
  if (notRunning) return refusePlain(c.res, 404, notRunning);
  const command = c.q.getAll('command');
  upgrade(c, (ws, protocol) => {
    const s = new ChannelSession(ws, protocol, r.stdin, r.tty);
    const exec = c.deps.podExec;
    if (!exec) {
      s.finish(
        failure(new Error('the embedded API server runs without a kubelet: nothing can run commands')),
      );
      return;
    }
    exec(r.pod, r.container, command, execIO(s, r)).then(
      (code) => s.finish(exitStatus(command, code)),
      (err: unknown) => s.finish(failure(err)),
    );
  });
}

/** True for a container whose process is an interactive shell (sh, bash, or none given). */
function runsInteractiveShell(pod: KubeObject, container: string): boolean {
  const spec = recordOf(pod.spec);
  const all = [
    ...arrayOf(spec.containers),
    ...arrayOf(spec.initContainers),
    ...arrayOf(spec.ephemeralContainers),
  ];
  const ctr = all.find((x) => x.name === container);
  const argv = [...arrayOf<string>(ctr?.command), ...arrayOf<string>(ctr?.args)];
  if (argv.length === 0) return true;
  return /(^|\/)(ba|da)?sh$/.test(argv[0]!) && !argv.includes('-c');
}

const ATTACH_POLL_MS = 1000;

/**
 * GET/POST pods/<name>/attach. KWOK's attach follows the file its `Attach`/`ClusterAttach`
 * object names for the container from its end (`tailLines: 0`, `follow: true`); here the file
 * (or, without one, the container's KWOK Logs file) comes through the simulated kubelet's log
 * hook and is polled as `tail -f` does, until the client leaves or the container stops.
 * A container whose process is a shell and that is attached with stdin (`kubectl debug -it`,
 * `kubectl attach -it`) gets the simulated shell instead, so the session is usable: an
 * interactive ephemeral container's own, which ends the container when it ends (podAttach).
 */
export async function servePodAttach(c: SubresourceContext): Promise<void> {
  const r = checkStreamRequest(c, 'attach');
  const notRunning = runningContainer(r);
  if (notRunning) return refusePlain(c.res, 404, notRunning);
  const { deps, p } = c;
  upgrade(c, (ws, protocol) => {
    const s = new ChannelSession(ws, protocol, r.stdin, r.tty);
    if (r.stdin && deps.podExec && runsInteractiveShell(r.pod, r.container)) {
      const io = execIO(s, r);
      // The kubelet's own process for the container, else a shell of the session's own.
      const run = deps.podAttach?.(r.pod, r.container, io) ?? deps.podExec(r.pod, r.container, ['sh'], io);
      // The kubelet's ServeAttach reports Success however the process ended: the exit code
      // is the container's status to tell, not the session's.
      run.then(
        () => s.finish(SUCCESS),
        (err: unknown) => s.finish(failure(err)),
      );
      return;
    }
    const read = (pod: KubeObject) =>
      deps.podLogs?.(pod, r.container, { previous: false, attach: true }) ?? '';
    let seen = read(r.pod).length;
    const timer = setInterval(() => {
      let pod: KubeObject;
      try {
        pod = deps.api.get(p.rt, p.namespace ?? '', p.name!);
      } catch {
        pod = r.pod;
      }
      const gone =
        pod.metadata.uid !== r.pod.metadata.uid ||
        !recordOf(containerStatus(pod, r.container)?.state).running;
      const text = read(pod);
      if (text.length > seen && r.stdout) s.write('stdout', text.slice(seen));
      seen = Math.max(seen, text.length);
      if (gone) {
        clearInterval(timer);
        s.finish(SUCCESS);
      }
    }, ATTACH_POLL_MS);
    s.abort.signal.addEventListener('abort', () => clearInterval(timer));
  });
}
