/**
 * The SPDY/3.1 server session on bytes a client writes: a client-side header compressor is
 * built here with the same dictionary, frames split at awkward points, and malformed input.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { constants, createDeflate, createInflate } from 'node:zlib';
import { SpdySession, type SpdyStream } from '../../src/lib/spdy.ts';

const DICT = (
  createRequire(import.meta.url)('spdy-transport/lib/spdy-transport/protocol/spdy/dictionary.js') as Record<
    number,
    Buffer
  >
)[3]!;

function block(headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  const u32 = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
  parts.push(u32(Object.keys(headers).length));
  for (const [k, v] of Object.entries(headers))
    parts.push(u32(k.length), Buffer.from(k), u32(v.length), Buffer.from(v));
  return Buffer.concat(parts);
}

/** Compresses with one shared context, as a client does across its header blocks. */
function compressor() {
  const z = createDeflate({ dictionary: DICT });
  const out: Buffer[] = [];
  z.on('data', (c: Buffer) => out.push(c));
  return (b: Buffer) =>
    new Promise<Buffer>((resolve) => {
      z.write(b);
      z.flush(constants.Z_SYNC_FLUSH, () => resolve(Buffer.concat(out.splice(0))));
    });
}

function control(type: number, flags: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt16BE(0x8003, 0);
  h.writeUInt16BE(type, 2);
  h.writeUInt32BE(payload.length, 4);
  h[4] = flags;
  return Buffer.concat([h, payload]);
}

function data(id: number, flags: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt32BE(id, 0);
  h.writeUInt32BE(payload.length, 4);
  h[4] = flags;
  return Buffer.concat([h, payload]);
}

async function synStream(
  compress: (b: Buffer) => Promise<Buffer>,
  id: number,
  headers: Record<string, string>,
) {
  const p = Buffer.alloc(10);
  p.writeUInt32BE(id, 0);
  return control(1, 0, Buffer.concat([p, await compress(block(headers))]));
}

test('streams open with their headers, are answered, carry data both ways and end with FIN; PING is echoed', async () => {
  const sent: Buffer[] = [];
  const session = new SpdySession((b) => sent.push(b));
  const compress = compressor();
  const streams: SpdyStream[] = [];
  session.on('stream', (s) => streams.push(s));
  const bytes = Buffer.concat([
    await synStream(compress, 1, { streamType: 'error', port: '80', requestID: '0' }),
    await synStream(compress, 3, { streamType: 'data', port: '80', requestID: '0' }),
    data(3, 0x01, Buffer.from('hello')),
    control(6, 0, Buffer.from([0, 0, 0, 7])),
  ]);
  // Any chunking: one byte, then the rest in two.
  session.receive(bytes.subarray(0, 1));
  session.receive(bytes.subarray(1, 20));
  session.receive(bytes.subarray(20));
  const s = await (async () => {
    while (streams.length < 2) await new Promise((r) => setImmediate(r));
    return streams[1]!;
  })();
  assert.deepEqual(
    [...streams[0]!.headers],
    [
      ['streamtype', 'error'],
      ['port', '80'],
      ['requestid', '0'],
    ],
  );
  assert.equal(s.id, 3);
  let got = '';
  s.on('data', (d: Buffer) => {
    got += d.toString();
  });
  await once(s, 'end');
  assert.equal(got, 'hello');
  await s.reply();
  s.end('world');
  await once(s, 'finish');
  await new Promise((r) => setImmediate(r));
  const types = sent.map((f) =>
    f[0]! & 0x80 ? `ctl${f.readUInt16BE(2)}` : `data${f.readUInt32BE(0)}:${f[4]}`,
  );
  assert.deepEqual(types, ['ctl6', 'ctl2', 'data3:0', 'data3:1']);
  assert.equal(sent[2]!.subarray(8).toString(), 'world');
  // The reply's header block inflates with the dictionary to zero headers.
  const inflate = createInflate({ dictionary: DICT });
  const replyBlock: Buffer[] = [];
  inflate.on('data', (c: Buffer) => replyBlock.push(c));
  inflate.write(sent[1]!.subarray(12));
  await new Promise<void>((r) => inflate.flush(constants.Z_SYNC_FLUSH, () => r()));
  assert.deepEqual(Buffer.concat(replyBlock), Buffer.alloc(4));
  session.close();
});

test('a header block that does not inflate closes the session instead of throwing', async () => {
  const session = new SpdySession(() => {});
  const closed = once(session, 'close');
  const p = Buffer.alloc(10);
  p.writeUInt32BE(1, 0);
  session.receive(control(1, 0, Buffer.concat([p, Buffer.from('not zlib at all')])));
  await closed;
  session.receive(data(1, 0, Buffer.from('ignored after close')));
});
