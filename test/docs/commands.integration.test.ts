/**
 * Every shell command in README, docs/, the READMEs under config/ and examples/, and
 * `troupe up`'s banner runs here, in the order its document gives it, as a reader would
 * type it: in a scratch copy of the checkout (so relative paths and `.troupe/kubeconfig`
 * work), with `troupe` on PATH, one embedded cluster per document. A block fails the test
 * if any of its commands fails (bash -e -o pipefail).
 *
 * - The cluster: a document's commands run against the cluster the document itself starts
 *   (`npm start`, `npm run troupe -- cluster …`, `troupe up` …), which the test runs in the
 *   background until it prints its banner; or, when the document starts none, against a
 *   `troupe up` the test starts before its first command. Every cluster is stopped as
 *   Ctrl+C stops it (SIGINT to its process group) when the next starts, when a comment
 *   says `# stop the cluster …`, and after the document; it must exit 0.
 * - A block marked `<!-- doc-test: on its own troupe cluster -->` (or `troupe up`) runs apart,
 *   on a new cluster of that kind, and the document goes on with its own: an alternative
 *   install that starts on a cluster without troupe, or a check that needs troupe's
 *   controllers serving (which the embedded cluster's simulated pods do not run).
 *   A block marked `<!-- doc-test: file NAME -->` (any language) is written to NAME in the
 *   scratch checkout before the document's commands run: a file the document describes and
 *   a command uses.
 * - A watch (`kubectl get … -w`) or a follow (`logs -f`) runs until it has printed its
 *   first line, then is stopped: it passed if it had not failed by then.
 * - What a trailing comment says a command prints is checked: `kubectl auth can-i …  # yes`
 *   or `# no`, `# prints nothing`, and on a cluster's start `# prints: …` (`…` for any text).
 *
 * The commands that cannot run here are in SKIPPED, each named by its document and its
 * first line, with the reason (and, where part of it runs, what runs instead); an entry
 * that names no command fails the test, so the list cannot go stale.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, test } from 'node:test';
import { MAIN, ROOT, START_TIMEOUT_MS, scratchCheckout } from '../support/troupe-process.ts';
import { waitFor } from '../support/wait.ts';
import {
  bannerCommands,
  type DocBlock,
  docFiles,
  fencedBlocks,
  PREAMBLE,
  shellBlocks,
  steps,
  withCheck,
} from './doc-commands.ts';

interface Skip {
  why: string;
  /** What runs in its place (part of the command), if anything. */
  instead?: string;
}

const NO_PROCESSES = "the embedded cluster's pods run no processes";
const CERT_MANAGER = 'needs cert-manager (its CRDs and controller) in the cluster';

/**
 * docs/persistence.md restarts, backs up, restores and resets its cluster: its own test runs
 * every command of it, in order, and checks what each promises (the same uid and
 * resourceVersion across a restart, what the backup holds, an empty cluster after --reset).
 */
const PERSISTENCE_DOC =
  'runs in test/cli/persistence-docs.integration.test.ts, which runs every command of docs/persistence.md in order and checks what the page says of each';

/** Commands that cannot run against an embedded cluster in a test: `file:first line` → why. */
const SKIPPED: Record<string, Skip> = {
  'docs/persistence.md:npm run troupe -- cluster --nodes 2': { why: PERSISTENCE_DOC },
  'docs/persistence.md:export KUBECONFIG=$PWD/.troupe/kubeconfig': { why: PERSISTENCE_DOC },
  'docs/persistence.md:kubectl create configmap hello --from-literal=greeting=hi': { why: PERSISTENCE_DOC },
  "docs/persistence.md:kubectl get configmap hello -o jsonpath='{.metadata.uid} {.metadata.resourceVersion}'":
    { why: PERSISTENCE_DOC },
  "docs/persistence.md:node -e \"new (require('node:sqlite').DatabaseSync)('.troupe/state.db').exec(\\\"VACUUM INTO 'troupe-backup.db'\\\")\"":
    { why: PERSISTENCE_DOC },
  'docs/persistence.md:kubectl delete configmap hello': { why: PERSISTENCE_DOC },
  'docs/persistence.md:rm -f .troupe/state.db-wal .troupe/state.db-shm && cp troupe-backup.db .troupe/state.db':
    { why: PERSISTENCE_DOC },
  'docs/persistence.md:kubectl get configmap hello': { why: PERSISTENCE_DOC },
  'docs/persistence.md:npm run troupe -- cluster --nodes 2 --reset': { why: PERSISTENCE_DOC },
  'docs/persistence.md:kubectl get configmap hello --ignore-not-found': { why: PERSISTENCE_DOC },

  'README.md:npm install && npm start': {
    why: 'npm install needs the registry, and the checkout under test is installed',
    instead: 'npm start',
  },
  'README.md:npm install && npm test': { why: 'the whole suite, which this test is part of' },
  'docs/install.md:make docker-build docker-push IMG=registry.example.com/troupe:0.1.0': {
    why: 'builds and pushes a container image: needs docker and a registry (test/packaging/dockerfile-replay.integration.test.ts replays the Dockerfile)',
  },
  'docs/install.md:kubectl -n troupe-system get lease troupe-controller-manager -o jsonpath=\'{.spec.holderIdentity}{"\\n"}\'':
    {
      why: `the Lease is taken by a running manager: ${NO_PROCESSES} (test/runtime/leader.integration.test.ts takes one)`,
    },
  'docs/install.md:kubectl -n troupe-system port-forward service/troupe-controller-manager-metrics-service 8443 &':
    {
      why: `forwards to the manager's metrics port: ${NO_PROCESSES}`,
    },
  'docs/install.md:curl -sk -H "Authorization: Bearer $TOKEN" https://localhost:8443/metrics \\': {
    why: 'reads the metrics through the port-forward above (test/runtime/metrics-auth.integration.test.ts reads them with a token the metrics-reader role allows)',
  },
  'docs/install.md:kubectl patch mutatingwebhookconfiguration podsequence-mutating-webhook --type=json \\': {
    why: "a template: <CA_BUNDLE> stands for the bundle the script printed, in the command it printed (test/packaging/appwrapper-webhooks-install.integration.test.ts runs the script's printed patches)",
  },
  'config/webhook/README.md:kubectl patch mutatingwebhookconfiguration podsequence-mutating-webhook \\': {
    why: 'a template: <CA_BUNDLE> stands for the bundle the script printed, in the command it printed',
  },
  "docs/install.md:kubectl apply -f - <<'EOF'": {
    why: `cert-manager's Issuer and Certificate: ${CERT_MANAGER}`,
  },
  'docs/install.md:kubectl create namespace pod-sequence-system': {
    why: 'the cert-manager alternative starts without the namespace, which generate-certs.sh, the alternative above it, created',
  },
  'docs/install.md:kubectl apply --server-side -k config/overlays/appwrapper-webhooks-certmanager': {
    why: CERT_MANAGER,
  },
  'docs/install.md:kubectl apply --server-side -k config/overlays/certmanager': { why: CERT_MANAGER },
  'docs/install.md:kubectl -n troupe-system get certificate troupe-serving-cert': {
    why: `a Certificate that cert-manager issued: ${CERT_MANAGER}`,
  },
  'docs/install.md:read -rs RUNPOD_KEY': {
    why: 'reads the key from the terminal',
    instead: 'RUNPOD_KEY=test-key',
  },
  'docs/install.md:kubectl -n kube-system logs -f deployment/runpod-controller': {
    why: `follows the controller's log: ${NO_PROCESSES}`,
  },
  'docs/install.md:kubectl -n troupe-system port-forward deployment/troupe-controller-manager 8082 &': {
    why: `forwards to the manager's dashboard port: ${NO_PROCESSES}`,
  },
  'docs/install.md:kubectl apply --server-side -k config/overlays/<name>': {
    why: 'a template: <name> is one of the overlays listed below it, each applied by its own block',
  },
  'docs/dashboard.md:kubectl -n troupe-system logs deploy/troupe-controller-manager | grep dashboard': {
    why: `the manager's log: ${NO_PROCESSES}`,
  },
  'docs/dashboard.md:kubectl -n troupe-system port-forward deploy/troupe-controller-manager 8082': {
    why: `forwards to the manager's dashboard port: ${NO_PROCESSES}`,
  },
  'docs/runtime.md:NODE_OPTIONS=--max-semi-space-size=16 MALLOC_MMAP_THRESHOLD_=131072 troupe run …': {
    why: "a template: … stands for the manager's own flags",
  },
};

/** A command that runs a cluster in the foreground until Ctrl+C. */
const SERVER = /^(npm start|npm run troupe -- (up|cluster)|troupe (up|cluster))(\s|$)/;
/** A comment telling the reader to stop the cluster. */
const STOP = /^#\s*stop the cluster\b/i;
/** The cluster the test starts for a document that starts none. */
const DEFAULT_SERVER = 'troupe up --log-level=warn';

/** A cluster started as a reader starts it, in its own process group (as a terminal does). */
interface Server {
  command: string;
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function startServer(command: string, cwd: string, env: NodeJS.ProcessEnv): Server {
  const child = spawn('bash', ['-c', `exec ${command}`], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { command, child, output: () => out, exited };
}

function ended(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Ctrl+C: SIGINT to the group; SIGKILL if it has not exited by START_TIMEOUT_MS. The exit code. */
async function stopServer(server: Server): Promise<number | null> {
  const group = -server.child.pid!;
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(group, sig);
    } catch {
      // Already gone.
    }
  };
  if (!ended(server.child)) signal('SIGINT');
  const timeout = new Promise<'timeout'>((r) => setTimeout(r, START_TIMEOUT_MS, 'timeout').unref());
  if ((await Promise.race([server.exited, timeout])) === 'timeout') {
    signal('SIGKILL');
    await server.exited;
    return -1;
  }
  // Whatever it started in its group (npm's child) goes with it.
  signal('SIGKILL');
  return server.exited;
}

/** One document's run: its scratch checkout, its environment, its cluster. */
class DocRun {
  private dir = '';
  private home = '';
  private env: NodeJS.ProcessEnv = {};
  private removeScratch?: () => Promise<void>;
  private server?: Server;
  private started = false;
  /** Problems found while stopping clusters, asserted after cleanup. */
  private problems: string[] = [];

  private readonly files: DocBlock[];

  /** `files`: the document's blocks marked `file NAME`. */
  constructor(files: DocBlock[]) {
    this.files = files;
  }

  private async setup(): Promise<void> {
    if (this.dir) return;
    const scratch = await scratchCheckout();
    this.dir = scratch.dir;
    this.removeScratch = scratch.remove;
    this.home = await mkdtemp(join(tmpdir(), 'troupe-docs-home-'));
    const bin = join(this.home, 'bin');
    await mkdir(bin);
    await writeFile(join(bin, 'troupe'), `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`);
    await chmod(join(bin, 'troupe'), 0o755);
    this.env = {
      ...process.env,
      HOME: this.home,
      KUBECONFIG: join(this.dir, '.troupe/kubeconfig'),
      PATH: `${bin}:${join(ROOT, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
      // npm start would ask the registry whether npm is current.
      npm_config_update_notifier: 'false',
    };
    for (const block of this.files) {
      const name = block.marks.map((m) => /^file (\S+)$/.exec(m)?.[1]).find(Boolean)!;
      await writeFile(join(this.dir, name), `${block.script}\n`);
    }
  }

  /** Starts `command`, after stopping the running cluster, and waits for its banner. */
  async start(command: string, expected = ''): Promise<Server> {
    await this.setup();
    await this.stop();
    const server = startServer(command, this.dir, this.env);
    this.server = server;
    this.started = true;
    // A check that throws counts as "not yet" for waitFor: an exit ends the wait, then fails.
    const banner = await waitFor(
      `${command} to print its banner`,
      () => ended(server.child) || (server.output().includes('Press Ctrl+C') && server.output()),
      { timeoutMs: START_TIMEOUT_MS },
    );
    if (banner === true)
      assert.fail(
        `${command} exited ${server.child.exitCode ?? server.child.signalCode}:\n${server.output()}`,
      );
    // What the dashboard doc tells the reader to take from the printed URL.
    const dashboard = /Dashboard: (\S+)/.exec(banner)?.[1];
    if (dashboard) {
      this.env.DASHBOARD = new URL(dashboard).origin;
      this.env.TOKEN = new URL(dashboard).searchParams.get('token') ?? '';
    }
    const prints = /^prints: (.*)$/.exec(expected)?.[1];
    if (prints) {
      const pattern = prints
        .split('…')
        .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*');
      assert.match(banner, new RegExp(pattern), `${command}: the document says it prints "${prints}"`);
    }
    return server;
  }

  /** Stops the running cluster, as Ctrl+C does; a non-zero exit is reported at the end. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const code = await stopServer(server);
    if (code !== 0)
      this.problems.push(
        `${server.command} ended with ${code ?? server.child.signalCode}:\n${server.output()}`,
      );
  }

  /** Runs one block, command by command (a block marked `on its own …`: on that cluster). */
  async run(block: DocBlock): Promise<string> {
    const own = block.marks.map((m) => /^on its own (.+)$/.exec(m)?.[1]).find(Boolean);
    if (own) {
      const apart = new DocRun([]);
      let failure: unknown;
      let out = '';
      try {
        await apart.start(own);
        out = await apart.runSteps(block);
      } catch (err) {
        failure = err;
      }
      await apart.close().catch((err: unknown) => {
        failure ??= err;
      });
      if (failure) throw failure;
      return out;
    }
    return this.runSteps(block);
  }

  private async runSteps(block: DocBlock): Promise<string> {
    await this.setup();
    let segment: string[] = [];
    let out = '';
    const flush = async () => {
      if (segment.length === 0) return;
      // A document that starts no cluster of its own gets one before its first command.
      if (!this.started) await this.start(DEFAULT_SERVER);
      out += await runBash(this.dir, this.env, block.where, segment.join('\n'));
      segment = [];
    };
    for (const step of steps(block.script)) {
      if (step.kind === 'comment') {
        if (STOP.test(step.text)) {
          await flush();
          await this.stop();
        }
        continue;
      }
      const skip = SKIPPED[keyOf(block, step.first)];
      const text = skip ? skip.instead : step.text;
      if (text === undefined) continue;
      if (SERVER.test(text)) {
        await flush();
        await this.start(text, step.comment);
        continue;
      }
      segment.push(withCheck(step, text));
    }
    await flush();
    return out;
  }

  /** Stops the cluster and removes the scratch checkout; then asserts the clusters exited 0. */
  async close(): Promise<void> {
    await this.stop();
    await this.removeScratch?.();
    if (this.home) await rm(this.home, { recursive: true, force: true });
    assert.deepEqual(this.problems, [], 'every cluster exits 0 on Ctrl+C');
  }

  /** The output of the running cluster (its banner and log). */
  output(): string {
    return this.server?.output() ?? '';
  }
}

/** Runs a script with bash; resolves with its output, rejects with it on failure. */
function runBash(cwd: string, env: NodeJS.ProcessEnv, where: string, script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', `${PREAMBLE}\n${script}`], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${where} exited ${code}:\n${script}\n---\n${out}`)),
    );
  });
}

function keyOf(block: DocBlock, first: string): string {
  return `${relative(ROOT, block.file)}:${first}`;
}

/** Whether anything of the block runs. */
function runs(block: DocBlock): boolean {
  return steps(block.script).some((step) => {
    if (step.kind !== 'command') return false;
    const skip = SKIPPED[keyOf(block, step.first)];
    return !skip || skip.instead !== undefined;
  });
}

const files = docFiles(ROOT);
const blocks = files.flatMap((f) => shellBlocks(ROOT, f));

test('every entry of SKIPPED names a command that exists and gives a reason', () => {
  const keys = new Set(
    blocks.flatMap((b) => steps(b.script).flatMap((s) => (s.kind === 'command' ? [keyOf(b, s.first)] : []))),
  );
  for (const [key, skip] of Object.entries(SKIPPED)) {
    assert.ok(keys.has(key), `SKIPPED entry matches no command: ${key}`);
    assert.ok(skip.why.length > 10, `SKIPPED entry without a reason: ${key}`);
  }
});

// Documents run two at a time (each has its own scratch checkout and cluster; the blocks of
// one document run one after the other, in order): most of a document's time is waiting on its cluster.
describe('the commands of the documents', { concurrency: 2 }, () => {
  for (const file of files) {
    const name = relative(ROOT, file);
    const runnable = shellBlocks(ROOT, file).filter(runs);
    if (runnable.length === 0) continue;
    const written = fencedBlocks(ROOT, file).filter((b) => b.marks.some((m) => m.startsWith('file ')));
    describe(`the commands of ${name}`, { concurrency: 1 }, () => {
      const doc = new DocRun(written);
      after(() => doc.close());
      for (const block of runnable) {
        test(block.where, async () => {
          await doc.run(block);
        });
      }
    });
  }

  describe("the commands of troupe up's banner", () => {
    const doc = new DocRun([]);
    after(() => doc.close());
    test('run as printed', async () => {
      await doc.start(DEFAULT_SERVER);
      const script = bannerCommands(doc.output());
      assert.match(script, /^export KUBECONFIG=/);
      await doc.run({ where: 'banner', file: join(ROOT, 'src/cli/up.ts'), script, marks: [], lang: 'sh' });
    });
  });
});
