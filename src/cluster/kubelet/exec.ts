/**
 * `kubectl exec` (and an interactive `kubectl attach`/`kubectl debug -it`) into a simulated
 * container. KWOK maps pods to local commands (`Exec`/`ClusterExec` run them on the machine
 * hosting the cluster); troupe runs nothing on the host: the command is interpreted by the
 * simulated shell the RunPod stand-in also uses (src/cluster/runpod/shell.ts: `sh -c`, echo,
 * printf, env, sleep, exit …), with the container's literal environment, so scripts that
 * probe a pod get plausible answers and exit codes. A shell started without `-c` and with
 * stdin reads commands line by line, as an interactive shell does; with a TTY it echoes what
 * is typed and shows a `# ` prompt, since the terminal on kubectl's side is in raw mode.
 */

import type { Clock } from '../../lib/clock.ts';
import { arrayOf, recordOf as rec } from '../../lib/json.ts';
import type { ExecIO } from '../apiserver/http/streaming.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ProcessIO, runProcess } from '../runpod/shell.ts';

const SHELL = /(^|\/)(ba|da)?sh$/;

/** Whether a program is a shell the simulated one stands in for. */
export const isShell = (program: string): boolean => SHELL.test(program);

function containerEnv(pod: KubeObject, container: string): Record<string, string> {
  const spec = rec(pod.spec);
  const c = [
    ...arrayOf(spec.containers),
    ...arrayOf(spec.initContainers),
    ...arrayOf(spec.ephemeralContainers),
  ].find((x) => x.name === container);
  const env: Record<string, string> = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOSTNAME: pod.metadata.name ?? '',
    HOME: '/root',
  };
  // Only literal values: references to Secrets and fields are resolved by a real kubelet.
  for (const e of arrayOf(c?.env)) if (typeof e.value === 'string') env[String(e.name)] = e.value;
  return env;
}

function processIO(io: ExecIO, env: Record<string, string>, clock: Clock, timeScale: number): ProcessIO {
  return {
    env,
    write: (line, stream) => io.write(stream, `${line}\n`),
    // On the cluster's clock, so `sleep 5` takes 5 s of simulated time.
    sleep: (ms) => clock.sleep(ms / timeScale, io.signal),
    signal: io.signal,
  };
}

const CTRL_C = 0x03;
const CTRL_D = 0x04;
const BACKSPACE = new Set([0x08, 0x7f]);

/** Reads stdin as lines; with a TTY, as a terminal's line discipline would deliver them. */
async function* lines(io: ExecIO): AsyncGenerator<string> {
  let line = '';
  for await (const chunk of io.stdin!) {
    for (const byte of chunk) {
      if (io.tty) {
        if (byte === CTRL_D && line === '') return;
        if (byte === CTRL_C) {
          line = '';
          io.write('stdout', '^C\n# ');
          continue;
        }
        if (BACKSPACE.has(byte)) {
          if (line) {
            line = line.slice(0, -1);
            io.write('stdout', '\b \b');
          }
          continue;
        }
      }
      if (byte === 0x0d || byte === 0x0a) {
        if (io.tty) io.write('stdout', '\n');
        yield line;
        line = '';
      } else {
        const ch = String.fromCharCode(byte);
        line += ch;
        if (io.tty) io.write('stdout', ch);
      }
    }
  }
  if (line) yield line;
}

/** An interactive shell: each line is a script; `exit` ends the session with its code. */
async function interactive(
  io: ExecIO,
  env: Record<string, string>,
  clock: Clock,
  timeScale: number,
): Promise<number> {
  let last = 0;
  const prompt = () => io.tty && io.write('stdout', '# ');
  prompt();
  for await (const line of lines(io)) {
    const trimmed = line.trim();
    if (/^exit(\s|$)/.test(trimmed)) {
      const code = Number.parseInt(trimmed.slice(4).trim() || String(last), 10);
      return Number.isFinite(code) ? code & 0xff : 2;
    }
    if (trimmed) last = await runProcess(['sh', '-c', line], processIO(io, env, clock, timeScale));
    prompt();
  }
  return last;
}

/**
 * The simulated kubelet's exec: the command run by the simulated shell. `timeScale` divides
 * its sleeps, as it does every simulated delay of the kubelet's own processes.
 */
export async function execInContainer(
  pod: KubeObject,
  container: string,
  command: string[],
  io: ExecIO,
  clock: Clock,
  timeScale = 1,
): Promise<number> {
  const env = containerEnv(pod, container);
  if (command.length === 1 && isShell(command[0]!) && io.stdin) return interactive(io, env, clock, timeScale);
  return runProcess(command, processIO(io, env, clock, timeScale));
}
