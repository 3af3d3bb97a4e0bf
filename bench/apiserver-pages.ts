/**
 * Continued list pages while objects are being written: a client pages through every pod
 * (limit 500) while one pod is created before each page, so each continued page reads the
 * table as of its first page with writes since. ms per page (and its create), in process.
 * Run: node bench/apiserver-pages.ts [--pods 50000]
 */
import { startApiServer } from '../src/cluster/apiserver/server.ts';
import { flag } from './support.ts';

const PODS = Number(flag('pods', '50000'));
const server = await startApiServer({ port: 0 });
const user = { user: 'admin', groups: ['system:masters'] };
const pods = server.api.registry.get('', 'v1', 'pods')!;
const pod = (i: number) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `p-${i}` },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
});
let i = 0;
for (; i < PODS; i++) await server.api.create(pods, 'default', pod(i), user);
let token = server.api.list(pods, undefined, { limit: 500 }).continue;
let pages = 0;
const started = performance.now();
while (token && pages < 100) {
  await server.api.create(pods, 'default', pod(i++), user);
  token = server.api.list(pods, undefined, { limit: 500, continue: token }).continue;
  pages++;
}
console.log(
  `${PODS} pods, a create before each continued page of 500: ${((performance.now() - started) / pages).toFixed(2)} ms per page and create (${pages} pages)`,
);
await server.close();
