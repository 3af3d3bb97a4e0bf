/**
 * `troupe simulate`'s speed: simulated time / wall time per policy for a scenario (default the
 * 500-node, 4,000-GPU training day), and whether two runs with the same seed give the same
 * report. Each policy runs on a fresh embedded cluster with troupe's controllers, as the CLI
 * runs it; the wall time includes starting them.
 *
 * Run: node bench/simulate.ts [--scenario scenarios/training-day.yaml] [--end 2h]
 *        [--policy NAME]... [--time-scale 60] [--twice]
 *   --end shortens the scenario (gangs arriving later are dropped), for a quick look.
 *   --twice runs every policy again and compares the two JSON reports.
 */
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';
import { loadScenario, runOnEmbeddedCluster } from '../src/cli/simulate.ts';
import { parseGoDuration } from '../src/kube/duration.ts';
import { flag, machine } from './support.ts';

const args = process.argv.slice(2);
const file = flag('scenario', 'scenarios/training-day.yaml');
const scaled = flag('time-scale', '');
const timeScale = scaled ? Number(scaled) : undefined;
const twice = args.includes('--twice');
const only = args.flatMap((a, i) => (a === '--policy' && args[i + 1] ? [args[i + 1]!] : []));

const scenario = await loadScenario(file);
const end = flag('end', '');
if (end) {
  const ms = parseGoDuration(end);
  if (ms === undefined || ms <= 0) throw new Error(`--end ${end}: not a duration`);
  scenario.endMs = Math.min(scenario.endMs, ms);
  scenario.gangs = scenario.gangs.filter((g) => g.atMs < scenario.endMs);
}
const policies = scenario.policies.filter((p) => only.length === 0 || only.includes(p.name));
const pods = scenario.gangs.reduce((n, g) => n + g.size, 0);
console.log(
  `${file}: ${scenario.gangs.length} gangs, ${pods} pods, ${scenario.endMs / 1000}s simulated on ${
    timeScale === undefined ? 'the virtual clock' : `the wall clock × ${timeScale}`
  }; ${machine()}; load average ${loadavg()[0]!.toFixed(1)}`,
);
// Process CPU as well as wall time: on a machine shared with other work, CPU moves less.
// The report's hash: the same before and after a change that should not alter behaviour.
console.log(
  'policy                 simulated    wall   sim/wall      CPU   sim/CPU  identical twice  report',
);
for (const policy of policies) {
  const runs: { wall: number; cpu: number; json: string; simulated: number }[] = [];
  for (let k = 0; k < (twice ? 2 : 1); k++) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const result = await runOnEmbeddedCluster(scenario, policy, { timeScale });
    runs.push({
      wall: (performance.now() - started) / 1000,
      cpu: ((u) => (u.user + u.system) / 1e6)(process.cpuUsage(cpu)),
      json: JSON.stringify(result),
      simulated: result.simulatedSeconds,
    });
  }
  const r = runs[0]!;
  const same = twice ? (runs[0]!.json === runs[1]!.json ? 'yes' : 'no') : '-';
  console.log(
    `${policy.name.padEnd(20)} ${`${r.simulated.toFixed(0)}s`.padStart(10)} ${`${r.wall.toFixed(1)}s`.padStart(7)} ${`${(r.simulated / r.wall).toFixed(0)}x`.padStart(9)} ${`${r.cpu.toFixed(1)}s`.padStart(8)} ${`${(r.simulated / r.cpu).toFixed(0)}x`.padStart(8)}  ${same.padEnd(15)}  ${createHash('sha256').update(r.json).digest('hex').slice(0, 12)}`,
  );
}
