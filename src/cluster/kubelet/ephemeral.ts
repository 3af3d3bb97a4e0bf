/**
 * The processes of ephemeral containers (`kubectl debug`). The stage pod-ephemeral-containers
 * reports a new one running; from then on it is a process, as on a real node, and when that
 * process ends the kubelet reports `state.terminated` with its exit code (ephemeral containers
 * are never restarted: convertToAPIContainerStatuses in pkg/kubelet/kubelet_pods.go builds
 * their statuses like any container's, and the pod's phase ignores them).
 *
 * What the process is, since a simulated node has no images:
 * - a command (`kubectl debug … -- sh -c 'exit 3'`): the simulated shell runs it (exec.ts), on
 *   the kubelet's clock and time scale; its output becomes the container's log.
 * - an interactive shell (stdin set and the command a shell without `-c`, or none, as
 *   `kubectl debug -i` gives): it reads what an attach session sends and ends when the session
 *   does (`exit N`, end of input or the client leaving). Troupe closes the container's stdin
 *   with the session, as `stdinOnce` would, so the container is not left waiting for nobody.
 * - no command and no stdin: the image's own entrypoint, unknown here, so it runs until the pod
 *   goes, like any container whose command says nothing of its end (runtime.ts).
 *
 * A process found running after a restart of troupe starts again from its beginning: the
 * simulated shell's state is not stored.
 */
import type { Clock } from '../../lib/clock.ts';
import { arrayOf, recordOf as rec } from '../../lib/json.ts';
import type { ExecIO } from '../apiserver/http/streaming.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, GVR } from '../client.ts';
import type { LogFn } from './engine.ts';
import { execInContainer, isShell } from './exec.ts';
import { formatRFC3339Nano } from './stages/index.ts';

type Json = Record<string, unknown>;

/** A container log kept in memory is cut to its last this many characters. */
const MAX_LOG = 1 << 20;

function ephemeralSpec(pod: KubeObject, name: string): Json | undefined {
  return arrayOf(rec(pod.spec).ephemeralContainers).find((c) => c.name === name);
}

function argvOf(c: Json): string[] {
  return [...arrayOf<string>(c.command), ...arrayOf<string>(c.args)].map(String);
}

/**
 * Whether the container's process is a shell reading what an attach sends: stdin set, and a
 * shell without a script (`-c`) or no command, as pods/attach decides (streaming.ts).
 */
function interactive(c: Json): boolean {
  const argv = argvOf(c);
  return c.stdin === true && (argv.length === 0 || (isShell(argv[0]!) && !argv.includes('-c')));
}

interface Proc {
  abort: AbortController;
  /** Set once the process ended: the state to report. */
  terminated?: Json;
}

export class EphemeralProcesses {
  private readonly client: ClusterClient;
  private readonly clock: Clock;
  private readonly timeScale: number;
  private readonly log: LogFn;
  /** By pod uid, then container name. */
  private readonly procs = new Map<string, Map<string, Proc>>();
  private readonly logs = new Map<string, Map<string, string>>();

  constructor(client: ClusterClient, o: { clock: Clock; timeScale: number; log: LogFn }) {
    this.client = client;
    this.clock = o.clock;
    this.timeScale = o.timeScale;
    this.log = o.log;
  }

  /** A pod of a managed node changed (or went: DELETED). */
  observe(type: string, pod: KubeObject): void {
    const uid = pod.metadata.uid ?? '';
    if (type === 'DELETED' || pod.metadata.deletionTimestamp) {
      for (const p of this.procs.get(uid)?.values() ?? []) p.abort.abort();
      if (type === 'DELETED') {
        this.procs.delete(uid);
        this.logs.delete(uid);
      }
      return;
    }
    for (const st of arrayOf(rec(pod.status).ephemeralContainerStatuses)) {
      const name = String(st.name ?? '');
      const running = rec(rec(st.state).running);
      if (!running.startedAt) continue;
      const known = this.procs.get(uid)?.get(name);
      // A status write racing the stage's (which patches the whole list) may bring back
      // `running` after the end was reported: report it again.
      if (known?.terminated) void this.report(pod, name, known.terminated);
      if (known) continue;
      const spec = ephemeralSpec(pod, name);
      if (!spec || interactive(spec)) continue;
      const argv = argvOf(spec);
      if (argv.length === 0) continue;
      const proc = this.track(uid, name);
      const io: ExecIO = {
        tty: false,
        signal: proc.abort.signal,
        write: (_stream, text) => this.append(uid, name, text),
      };
      this.run(pod, name, proc, execInContainer(pod, name, argv, io, this.clock, this.timeScale));
    }
  }

  /**
   * An attach with stdin to an interactive ephemeral container: the session is its shell, and
   * the container ends with it. Undefined for any other container.
   */
  attach(pod: KubeObject, container: string, io: ExecIO): Promise<number> | undefined {
    const spec = ephemeralSpec(pod, container);
    if (!spec || !interactive(spec) || !io.stdin) return undefined;
    const uid = pod.metadata.uid ?? '';
    const proc = this.procs.get(uid)?.get(container) ?? this.track(uid, container);
    const tee: ExecIO = {
      ...io,
      write: (stream, text) => {
        this.append(uid, container, text);
        io.write(stream, text);
      },
    };
    const done = execInContainer(pod, container, ['sh'], tee, this.clock, this.timeScale);
    this.run(pod, container, proc, done);
    return done;
  }

  /** What an ephemeral container's process wrote, undefined when troupe ran none. */
  output(pod: KubeObject, container: string): string | undefined {
    return this.logs.get(pod.metadata.uid ?? '')?.get(container);
  }

  stop(): void {
    for (const byName of this.procs.values()) for (const p of byName.values()) p.abort.abort();
  }

  private track(uid: string, name: string): Proc {
    let byName = this.procs.get(uid);
    if (!byName) {
      byName = new Map();
      this.procs.set(uid, byName);
    }
    const proc: Proc = { abort: new AbortController() };
    byName.set(name, proc);
    return proc;
  }

  private append(uid: string, name: string, text: string): void {
    let byName = this.logs.get(uid);
    if (!byName) {
      byName = new Map();
      this.logs.set(uid, byName);
    }
    const next = (byName.get(name) ?? '') + text;
    byName.set(name, next.length > MAX_LOG ? next.slice(-MAX_LOG) : next);
  }

  private run(pod: KubeObject, name: string, proc: Proc, done: Promise<number>): void {
    done.then(
      (exitCode) => {
        // A process stopped with its pod (or the kubelet) reports nothing: the pod's own
        // termination, or the next start, says what became of it.
        if (proc.abort.signal.aborted || proc.terminated) return;
        proc.terminated = {
          exitCode,
          reason: exitCode === 0 ? 'Completed' : 'Error',
          finishedAt: formatRFC3339Nano(this.clock.now()),
        };
        return this.report(pod, name, proc.terminated);
      },
      (err: unknown) =>
        this.log('warn', 'kubelet: ephemeral container process failed', { error: String(err) }),
    );
  }

  /** Writes the terminated state over the container's running one (a status update). */
  private async report(pod: KubeObject, name: string, terminated: Json): Promise<void> {
    const ns = pod.metadata.namespace ?? '';
    try {
      await this.client.mutate(
        GVR.pods,
        ns,
        pod.metadata.name ?? '',
        (cur) => {
          if (cur.metadata.uid !== pod.metadata.uid) return cur;
          const statuses = [...arrayOf(rec(cur.status).ephemeralContainerStatuses)];
          const i = statuses.findIndex((s) => s.name === name);
          const st = statuses[i];
          const running = rec(rec(st?.state).running);
          if (!st || !running.startedAt) return cur;
          statuses[i] = {
            ...st,
            ready: false,
            started: false,
            state: {
              terminated: { ...terminated, startedAt: running.startedAt, containerID: st.containerID },
            },
          };
          return { ...cur, status: { ...rec(cur.status), ephemeralContainerStatuses: statuses } };
        },
        'status',
      );
    } catch (err) {
      this.log('warn', 'kubelet: reporting an ephemeral container ended failed', {
        pod: `${ns}/${pod.metadata.name}`,
        container: name,
        error: String(err),
      });
    }
  }
}
