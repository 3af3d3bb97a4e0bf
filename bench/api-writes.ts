/**
 * Process CPU per pod create through the API's write path in process (no HTTP, no TLS): the
 * decoding, defaulting, admission, validation, field tracking and storage that every write
 * pays. On a busy machine this is steadier than writes/s over HTTPS; compare two trees by
 * running each one's copy of this script in turns and taking the lowest of several rounds.
 * Run: node bench/api-writes.ts [--creates 4000] [--rounds 5]
 */
import { startApiServer } from '../src/cluster/apiserver/server.ts';
import { flag, machine, pod } from './support.ts';

const creates = Number(flag('creates', '4000'));
const rounds = Number(flag('rounds', '5'));

const server = await startApiServer({ port: 0 });
try {
  const api = server.api;
  const pods = api.registry.get('', 'v1', 'pods')!;
  const namespaces = api.registry.get('', 'v1', 'namespaces')!;
  const opts = () => ({ user: 'bench', groups: ['system:masters'], fieldManager: 'bench' });
  await api.create(namespaces, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'b' } }, opts());
  // Warm-up: compiled code paths and loaded schemas.
  for (let i = 0; i < 500; i++) await api.create(pods, 'b', pod(`w-${i}`), opts());
  const perCreate: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const before = process.cpuUsage();
    for (let i = 0; i < creates; i++) await api.create(pods, 'b', pod(`r${r}-${i}`), opts());
    const used = process.cpuUsage(before);
    perCreate.push((used.user + used.system) / creates);
  }
  perCreate.sort((a, b) => a - b);
  console.log(`machine: ${machine()}`);
  console.log(
    `CPU per in-process pod create: lowest ${perCreate[0]!.toFixed(1)} µs, median ${perCreate[Math.floor(rounds / 2)]!.toFixed(1)} µs (${rounds} rounds of ${creates})`,
  );
} finally {
  await server.close();
}
