/**
 * The API server's own write path, without HTTP: pod creates/s through Api.create, for
 * comparing two trees on a machine too loaded for bench/apiserver.ts's HTTP figures to mean
 * anything (run it in a worktree of each and alternate the runs).
 * Run: node bench/apiserver-writes.ts [--writes 20000]
 */
import { startApiServer } from '../src/cluster/apiserver/server.ts';

const args = process.argv.slice(2);
const WRITES = Number(args[args.indexOf('--writes') + 1] || 20_000) || 20_000;

const server = await startApiServer({ port: 0 });
const user = { user: 'admin', groups: ['system:masters'] };
const pods = server.api.registry.get('', 'v1', 'pods')!;
const namespaces = server.api.registry.get('', 'v1', 'namespaces')!;
await server.api.create(namespaces, '', { metadata: { name: 'bench' } }, user);
const pod = (i: number) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `p-${i}`, labels: { app: 'bench' } },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
});
let i = 0;
// Warm-up: JIT and the first allocations are not what a steady write costs.
for (; i < 2000; i++) await server.api.create(pods, 'bench', pod(i), user);
const started = performance.now();
// Process CPU as well as wall time: on a loaded machine it moves less with the other load.
const cpu = process.cpuUsage();
for (let k = 0; k < WRITES; k++, i++) await server.api.create(pods, 'bench', pod(i), user);
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
console.log(
  `in-process pod creates: ${Math.round(WRITES / seconds)}/s (${WRITES} writes); CPU per create ${((used.user + used.system) / WRITES).toFixed(1)} µs`,
);
await server.close();
