/**
 * The physical floor for API server writes: an HTTPS server on the same TLS stack that
 * reads each request body and answers 201 with a pod-sized JSON body, doing nothing else.
 * bench/apiserver.ts measures it with the same client in the same run, so the API
 * server's figures can be read as ratios on a noisy, shared machine.
 */
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { selfSignedCert } from '../src/cluster/apiserver/tls.ts';

const cert = await selfSignedCert();
const reply = JSON.stringify({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'x', resourceVersion: '1' },
  spec: {},
  status: { phase: 'Pending' },
}).padEnd(1700);
const server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString('utf8'));
    res.setHeader('Content-Type', 'application/json');
    res.writeHead(201);
    res.end(reply);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, ca: cert.ca })}\n`,
  );
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
