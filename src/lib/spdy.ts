/**
 * The server side of a SPDY/3.1 session: the framing kubectl's port-forward speaks
 * (k8s.io/apimachinery/pkg/util/httpstream/spdy over moby/spdystream; draft-mbelshe-httpbis-spdy-00
 * section 2). Streams are opened by the client (SYN_STREAM with a header block), answered
 * (SYN_REPLY), carry DATA frames until each side sends FIN, and may be reset (RST_STREAM); PING is
 * echoed. Header blocks are zlib streams with SPDY/3's fixed dictionary, one compression context
 * per direction for the whole session.
 *
 * Hand-written because no npm library fits: spdy-transport (the only maintained SPDY library)
 * parses SYN_STREAM as an HTTP request and refuses one without `:method`/`:path`, which
 * port-forward's streams (`streamtype`, `port`, `requestid`) never carry. Its dictionary module
 * is used for the header compression. Flow control (WINDOW_UPDATE) is not kept: spdystream, the
 * client, neither sends nor honours windows.
 *
 * The transport is the caller's: `send` writes bytes (one WebSocket message, or a socket write),
 * `receive` takes bytes in any chunking.
 */
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { Duplex } from 'node:stream';
import { constants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';

/** SPDY/3's header dictionary (section 2.6.10.1), loaded with the first session. */
let dictionary: Buffer | undefined;
function spdy3Dictionary(): Buffer {
  dictionary ??= (
    createRequire(import.meta.url)('spdy-transport/lib/spdy-transport/protocol/spdy/dictionary.js') as Record<
      number,
      Buffer
    >
  )[3]!;
  return dictionary;
}

const VERSION = 3;
const SYN_STREAM = 1;
const SYN_REPLY = 2;
const RST_STREAM = 3;
const PING = 6;
const GOAWAY = 7;
const HEADERS = 8;
const FLAG_FIN = 0x01;
const HEADER_BYTES = 8;
/** RST_STREAM status codes (section 2.6.3). */
export const RST_PROTOCOL_ERROR = 1;
export const RST_CANCEL = 5;
/** Largest DATA payload written at once (the length field allows 16 MiB). */
const MAX_DATA = 64 * 1024;

/** One zlib context used block by block, each block ended with a sync flush. */
class ZContext {
  private readonly z: Inflate | Deflate;
  private out: Buffer[] = [];
  private chain: Promise<unknown> = Promise.resolve();

  constructor(z: Inflate | Deflate) {
    this.z = z;
    z.on('data', (c: Buffer) => this.out.push(c));
    z.on('error', () => {});
  }

  /** Runs one block through the context; blocks complete in call order. */
  run(block: Buffer): Promise<Buffer> {
    const next = this.chain.then(
      () =>
        new Promise<Buffer>((resolve, reject) => {
          this.z.once('error', reject);
          this.z.write(block);
          this.z.flush(constants.Z_SYNC_FLUSH, () => {
            this.z.off('error', reject);
            const b = Buffer.concat(this.out);
            this.out = [];
            resolve(b);
          });
        }),
    );
    this.chain = next.catch(() => {});
    return next;
  }

  close(): void {
    this.z.close();
  }
}

function decodeHeaderBlock(b: Buffer): Map<string, string> {
  const headers = new Map<string, string>();
  let at = 0;
  const u32 = () => {
    if (at + 4 > b.length) throw new Error('truncated header block');
    const v = b.readUInt32BE(at);
    at += 4;
    return v;
  };
  const bytes = () => {
    const n = u32();
    if (at + n > b.length) throw new Error('truncated header block');
    const s = b.toString('utf8', at, at + n);
    at += n;
    return s;
  };
  const count = u32();
  for (let i = 0; i < count; i++) {
    const name = bytes().toLowerCase();
    headers.set(name, bytes());
  }
  return headers;
}

function encodeHeaderBlock(headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    parts.push(b);
  };
  const entries = Object.entries(headers);
  u32(entries.length);
  for (const [k, v] of entries) {
    for (const s of [k.toLowerCase(), v]) {
      const b = Buffer.from(s);
      u32(b.length);
      parts.push(b);
    }
  }
  return Buffer.concat(parts);
}

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(HEADER_BYTES);
  h.writeUInt16BE(0x8000 | VERSION, 0);
  h.writeUInt16BE(type, 2);
  h.writeUInt32BE(payload.length, 4);
  h[4] = flags;
  return Buffer.concat([h, payload]);
}

function dataFrame(id: number, flags: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(HEADER_BYTES);
  h.writeUInt32BE(id & 0x7fffffff, 0);
  h.writeUInt32BE(payload.length, 4);
  h[4] = flags;
  return Buffer.concat([h, payload]);
}

/** A client-opened stream: readable with the client's DATA, writable as ours. */
export class SpdyStream extends Duplex {
  readonly id: number;
  readonly headers: Map<string, string>;
  private readonly session: SpdySession;

  constructor(session: SpdySession, id: number, headers: Map<string, string>) {
    super({ allowHalfOpen: true });
    this.session = session;
    this.id = id;
    this.headers = headers;
  }

  override _read(): void {}

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    for (let at = 0; at < chunk.length; at += MAX_DATA)
      this.session.sendRaw(dataFrame(this.id, 0, chunk.subarray(at, at + MAX_DATA)));
    done();
  }

  override _final(done: (err?: Error | null) => void): void {
    this.session.sendRaw(dataFrame(this.id, FLAG_FIN, Buffer.alloc(0)));
    done();
  }

  /** Answers the SYN_STREAM; the client waits for it before it uses the stream. */
  reply(): Promise<void> {
    return this.session.reply(this.id);
  }

  /** Ends the stream abruptly in both directions. */
  reset(status = RST_CANCEL): void {
    this.session.reset(this.id, status);
  }
}

export interface SpdySessionEvents {
  stream: [SpdyStream];
  close: [];
}

/**
 * One server-side session. Emits `stream` for every SYN_STREAM (after its headers are
 * decoded) and `close` when the client goes away or the session breaks.
 */
export class SpdySession extends EventEmitter<SpdySessionEvents> {
  private readonly send: (b: Buffer) => void;
  private readonly inflate = new ZContext(createInflate({ dictionary: spdy3Dictionary() }));
  private readonly deflate = new ZContext(createDeflate({ dictionary: spdy3Dictionary() }));
  private readonly streams = new Map<number, SpdyStream>();
  private pending: Buffer = Buffer.alloc(0);
  /** Frames are handled in order; header blocks decode asynchronously. */
  private inChain: Promise<void> = Promise.resolve();
  /** Frames go out in order; a SYN_REPLY's header block encodes asynchronously. */
  private outChain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(send: (b: Buffer) => void) {
    super();
    this.send = send;
  }

  receive(chunk: Buffer): void {
    if (this.closed) return;
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= HEADER_BYTES) {
      const len = this.pending.readUInt32BE(4) & 0xffffff;
      if (this.pending.length < HEADER_BYTES + len) break;
      const frame = this.pending.subarray(0, HEADER_BYTES + len);
      this.pending = this.pending.subarray(HEADER_BYTES + len);
      this.inChain = this.inChain.then(() => this.handle(frame)).catch(() => this.close());
    }
  }

  private async handle(f: Buffer): Promise<void> {
    if (this.closed) return;
    const flags = f[4]!;
    const body = f.subarray(HEADER_BYTES);
    if (!(f[0]! & 0x80)) {
      const s = this.streams.get(f.readUInt32BE(0) & 0x7fffffff);
      if (!s) return;
      if (body.length) s.push(Buffer.from(body));
      if (flags & FLAG_FIN) s.push(null);
      return;
    }
    const type = f.readUInt16BE(2);
    switch (type) {
      case SYN_STREAM: {
        const id = body.readUInt32BE(0) & 0x7fffffff;
        const headers = decodeHeaderBlock(await this.inflate.run(body.subarray(10)));
        const s = new SpdyStream(this, id, headers);
        this.streams.set(id, s);
        s.on('close', () => this.streams.delete(id));
        if (flags & FLAG_FIN) s.push(null);
        this.emit('stream', s);
        return;
      }
      case SYN_REPLY:
      case HEADERS:
        // Decoded only to keep the shared zlib context in step; nothing here uses them.
        await this.inflate.run(body.subarray(4));
        return;
      case RST_STREAM: {
        const s = this.streams.get(body.readUInt32BE(0) & 0x7fffffff);
        s?.destroy();
        return;
      }
      case PING:
        this.sendRaw(f);
        return;
      case GOAWAY:
        this.close();
        return;
      default:
        // SETTINGS, WINDOW_UPDATE and unknown types carry nothing this side keeps.
        return;
    }
  }

  /** Queues bytes behind any frame still being encoded. */
  sendRaw(b: Buffer): void {
    this.outChain = this.outChain.then(() => {
      if (!this.closed) this.send(b);
    });
  }

  reply(id: number): Promise<void> {
    const block = this.deflate.run(encodeHeaderBlock({}));
    const sent = this.outChain.then(async () => {
      const id4 = Buffer.alloc(4);
      id4.writeUInt32BE(id);
      const frame = controlFrame(SYN_REPLY, 0, Buffer.concat([id4, await block]));
      if (!this.closed) this.send(frame);
    });
    this.outChain = sent.catch(() => {});
    return sent;
  }

  reset(id: number, status: number): void {
    const p = Buffer.alloc(8);
    p.writeUInt32BE(id, 0);
    p.writeUInt32BE(status, 4);
    this.sendRaw(controlFrame(RST_STREAM, 0, p));
    this.streams.get(id)?.destroy();
  }

  /** Ends every stream; the transport is the caller's to close. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.streams.values()) s.destroy();
    this.streams.clear();
    this.inflate.close();
    this.deflate.close();
    this.emit('close');
  }
}
