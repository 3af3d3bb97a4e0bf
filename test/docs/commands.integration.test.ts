/**
 * Every shell command in README, docs and `troupe up`'s banner runs here, against a fresh
 * `troupe up` per document (in a scratch copy of the checkout, so relative paths and
 * `$PWD/.troupe/kubeconfig` work as the reader's would), in the order the document gives
 * them. A block fails the test if any of its commands fails (bash -e -o pipefail).
 *
 * A watch (`kubectl get … -w`) or a follow (`logs -f`) runs until it has printed its first
 * line, then is stopped: it passed if it had not failed by then.
 *
 * The few blocks that cannot run here are in CANNOT_RUN, each with its reason; an entry
 * that matches no block fails the test, so the list cannot go stale.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MAIN, ROOT, scratchCheckout, spawnTroupe, type TroupeProcess } from '../support/troupe-process.ts';
import { bannerCommands, type DocBlock, docFiles, shellBlocks } from './doc-commands.ts';

const PERSISTENCE_WALKTHROUGH =
  'a walk-through of stopping and restarting a cluster that runs in the foreground until Ctrl+C; test/cli/persistence-docs.integration.test.ts runs it, stops included';

/** Blocks that cannot run against an embedded cluster in a test: `file:first command` → why. */
const CANNOT_RUN: Record<string, string> = {
  'README.md:npm install && npm start':
    'npm install needs the registry and npm start runs until stopped; test/cli/up.integration.test.ts runs npm start',
  'docs/embedded-cluster.md:npm run troupe -- cluster --nodes 3':
    'each command runs until Ctrl+C; test/cli/cluster.integration.test.ts runs troupe cluster',
  // The restart walk-through: each step starts the cluster in the foreground until Ctrl+C.
  'docs/persistence.md:npm run troupe -- cluster --nodes 2': PERSISTENCE_WALKTHROUGH,
  "docs/persistence.md:node -e \"new (require('node:sqlite').DatabaseSync)('.troupe/state.db').exec(\\\"VACUUM INTO 'troupe-backup.db'\\\")\"":
    PERSISTENCE_WALKTHROUGH,
  'docs/persistence.md:# stop the cluster first (Ctrl+C), then:': PERSISTENCE_WALKTHROUGH,
  'docs/install.md:make docker-build docker-push IMG=registry.example.com/troupe:0.1.0':
    'builds and pushes a container image: needs docker and a registry',
  'docs/install.md:kubectl -n troupe-system rollout status deployment/troupe-controller-manager':
    "reads the Lease and the logs of running managers: the embedded cluster's pods run no processes",
  'docs/install.md:kubectl create clusterrolebinding troupe-metrics-look --clusterrole=troupe-metrics-reader \\':
    "port-forward reaches a pod's container: the embedded cluster's pods run no processes",
  "docs/dashboard.md:# add --dashboard-address=127.0.0.1:8082 to the manager's args, then:":
    "port-forward reaches a pod's container: the embedded cluster's pods run no processes",
  'docs/install.md:kubectl apply -f config/rbac/dashboard_viewer_role.yaml':
    "ends in a port-forward to the manager's container: the embedded cluster's pods run no processes",
  'docs/install.md:SA=system:serviceaccount:troupe-system:troupe-controller-manager':
    'kubectl auth can-i exits 1 when the answer is no, and two of the answers shown are no (test/packaging/manager-rbac.integration.test.ts checks the rights)',
  'docs/install.md:./config/webhook/generate-certs.sh':
    'a template: <CA_BUNDLE> stands for the bundle the script prints, in the command it prints',
  'docs/install.md:kubectl create namespace pod-sequence-system':
    'needs cert-manager (its CRDs and controller) in the cluster',
  'docs/install.md:kubectl apply --server-side -k config/overlays/appwrapper-webhooks-certmanager':
    'needs cert-manager (its CRDs and controller) in the cluster',
  'docs/install.md:kubectl apply --server-side -k config/overlays/certmanager':
    'needs cert-manager (its CRDs and controller) in the cluster',
  'docs/install.md:kubectl create namespace troupe-system':
    'three alternative installs, each starting on a cluster without troupe-system, which the install above created (test/packaging/overlays.test.ts renders the overlays)',
  'docs/install.md:read -rs RUNPOD_KEY':
    "reads the key from the terminal, and follows a running controller's logs: the embedded cluster's pods run no processes",
  'docs/install.md:kubectl apply --server-side -k config/overlays/<name>':
    'a template: <name> is one of the overlays listed above',
  'docs/runtime.md:NODE_OPTIONS=--max-semi-space-size=16 MALLOC_MMAP_THRESHOLD_=131072 troupe run …':
    "a template: … stands for the manager's own flags",
};

/** Bash run before each block: bounds watches and follows (see the file comment). */
const PREAMBLE = String.raw`
kubectl() {
  local a streaming= logs=
  for a in "$@"; do
    case "$a" in
      logs) logs=1;;
      -w|--watch|--watch=true|--watch-only|--follow|--follow=true) streaming=1;;
      -f) [ -n "$logs" ] && streaming=1;;
    esac
  done
  if [ -z "$streaming" ]; then command kubectl "$@"; return; fi
  local out err pid
  out=$(mktemp); err=$(mktemp)
  command kubectl "$@" >"$out" 2>"$err" &
  pid=$!
  # Until it has printed a line (or ended by itself), for at most a minute.
  for _ in $(seq 600); do
    if [ -s "$out" ] || ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"; wait "$pid" 2>/dev/null || true
    cat "$out"; cat "$err" >&2
    [ -s "$out" ] || { echo "kubectl $*: printed nothing within a minute" >&2; return 1; }
    return 0
  fi
  local rc=0; wait "$pid" || rc=$?
  cat "$out"; cat "$err" >&2
  return "$rc"
}
`;

function firstCommand(block: DocBlock): string {
  return block.script.split('\n').find((l) => l.trim() !== '') ?? '';
}

/** `file:first command`, without its trailing comment. */
function keyOf(block: DocBlock): string {
  return `${relative(ROOT, block.file)}:${firstCommand(block)
    .replace(/\s+#.*$/, '')
    .trim()}`;
}

interface Instance {
  up: TroupeProcess;
  dir: string;
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

/** A fresh `troupe up` in a scratch checkout, with `troupe` on PATH as an installed one is. */
async function startInstance(): Promise<Instance> {
  const scratch = await scratchCheckout();
  const home = await mkdtemp(join(tmpdir(), 'troupe-docs-home-'));
  const bin = join(home, 'bin');
  await mkdir(bin);
  await writeFile(join(bin, 'troupe'), `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`);
  await chmod(join(bin, 'troupe'), 0o755);
  const up = spawnTroupe(['up', '--log-level=warn'], { cwd: scratch.dir });
  const banner = await up.banner();
  const dashboard = /Dashboard: (\S+)/.exec(banner)?.[1] ?? '';
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    KUBECONFIG: join(scratch.dir, '.troupe/kubeconfig'),
    PATH: `${bin}:${join(ROOT, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
    // What the dashboard doc tells the reader to take from the printed URL.
    DASHBOARD: new URL(dashboard).origin,
    TOKEN: new URL(dashboard).searchParams.get('token') ?? '',
  };
  return {
    up,
    dir: scratch.dir,
    env,
    stop: async () => {
      const code = await up.stop();
      await scratch.remove();
      await rm(home, { recursive: true, force: true });
      assert.equal(code, 0, `troupe up ended with ${code ?? up.child.signalCode}: ${up.stderr()}`);
    },
  };
}

/** Runs one block's script with bash; resolves with its output, rejects with it on failure. */
function runBlock(instance: Instance, where: string, script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', `${PREAMBLE}\n${script}`], {
      cwd: instance.dir,
      env: instance.env,
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

const blocks = docFiles(ROOT).flatMap((f) => shellBlocks(ROOT, f));
const byFile = Map.groupBy(blocks, (b) => relative(ROOT, b.file));

test('every entry of CANNOT_RUN names a block that exists and gives a reason', () => {
  const keys = new Set(blocks.map(keyOf));
  for (const [key, why] of Object.entries(CANNOT_RUN)) {
    assert.ok(keys.has(key), `CANNOT_RUN entry matches no block: ${key}`);
    assert.ok(why.length > 10, `CANNOT_RUN entry without a reason: ${key}`);
  }
});

for (const [file, all] of byFile) {
  const fileBlocks = all.filter((b) => CANNOT_RUN[keyOf(b)] === undefined);
  if (fileBlocks.length === 0) continue;
  describe(`the commands of ${file}`, () => {
    let instance: Instance;
    before(async () => {
      instance = await startInstance();
    });
    after(() => instance.stop());
    for (const block of fileBlocks) {
      test(block.where, async () => {
        await runBlock(instance, block.where, block.script);
      });
    }
  });
}

describe("the commands of troupe up's banner", () => {
  let instance: Instance;
  before(async () => {
    instance = await startInstance();
  });
  after(() => instance.stop());
  test('run as printed', async () => {
    const script = bannerCommands(instance.up.stdout());
    assert.match(script, /^export KUBECONFIG=/);
    await runBlock(instance, 'banner', script);
  });
});
