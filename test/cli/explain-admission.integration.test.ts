/**
 * `troupe explain` on `troupe up`, for what the first hour asks most: why an AppWrapper is
 * not admitted (Kueue's own reason from its Workload, or a missing queue, with the fix) and
 * why a Job was offloaded (GPU, price, remote pod, spend) or not.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { MAIN, scratchCheckout, spawnTroupe, type TroupeProcess } from '../support/troupe-process.ts';
import { waitFor } from '../support/wait.ts';

const run = promisify(execFile);

let up: TroupeProcess;
let scratch: Awaited<ReturnType<typeof scratchCheckout>>;
let env: NodeJS.ProcessEnv;

before(async () => {
  scratch = await scratchCheckout();
  up = spawnTroupe(['up', '--nodes=1', '--log-level=warn'], { cwd: scratch.dir });
  await up.banner();
  env = { ...process.env, KUBECONFIG: join(scratch.dir, '.troupe/kubeconfig') };
});
after(async () => {
  await up.stop();
  await scratch.remove();
});

function kubectl(args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('kubectl', args, { env }, (err, stdout, stderr) =>
      err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
    child.stdin?.end(input);
  });
}

async function explain(ref: string, ...args: string[]): Promise<string> {
  return (await run(process.execPath, [MAIN, 'explain', ref, ...args], { env })).stdout;
}

function appWrapper(name: string, namespace: string, cpu: string, queue?: string): string {
  return JSON.stringify({
    apiVersion: 'workload.codeflare.dev/v1beta2',
    kind: 'AppWrapper',
    metadata: { name, namespace, ...(queue ? { labels: { 'kueue.x-k8s.io/queue-name': queue } } : {}) },
    spec: {
      components: [
        {
          template: {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name },
            spec: {
              restartPolicy: 'Never',
              containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu } } }],
            },
          },
        },
      ],
    },
  });
}

test('an AppWrapper over its queue quota: Kueue says why, and explain says what to do', async () => {
  // user-queue's ClusterQueue has 4 CPUs (samples/kueue-default-queues.yaml).
  await kubectl(['apply', '-f', '-'], appWrapper('big', 'default', '8', 'user-queue'));
  const text = await waitFor('Kueue to have judged the Workload', async () => {
    const t = await explain('aw/big');
    return /Kueue: Workload \S+ waits/.test(t) && t;
  });
  assert.match(text, /^AppWrapper default\/big: Suspended, queue user-queue/m);
  assert.match(
    text,
    /^ {2}Kueue: Workload \S+ waits \(Pending\): .*insufficient quota for cpu in flavor default-flavor/m,
  );
  assert.match(text, /^ {2}Fix: .*raise the ClusterQueue's nominalQuota/m);
  // The component is named before the controller has deployed it.
  assert.match(text, /^ {4}1\. Pod big, 1 pod expected/m);
});

test('an AppWrapper without a queue where no LocalQueue "default" exists: explain says Kueue will not admit it', async () => {
  await kubectl(['create', 'namespace', 'lonely']);
  await kubectl(['apply', '-f', '-'], appWrapper('orphan', 'lonely', '1'));
  const text = await explain('aw/orphan', '-n', 'lonely');
  assert.match(
    text,
    /^ {2}Queue: no kueue\.x-k8s\.io\/queue-name label, and lonely has no LocalQueue "default" to fall back to: Kueue will not admit it\.$/m,
  );
  assert.match(
    text,
    /^ {2}Fix: recreate it with the label kueue\.x-k8s\.io\/queue-name: <queue>, after creating a LocalQueue in lonely$/m,
  );
});

test('explain job/ says where an offloaded Job runs, at what price, and what it has cost', async () => {
  await kubectl(['apply', '-f', join(scratch.dir, 'samples/offload/gpu-job.yaml')]);
  const text = await waitFor('the Job to be offloaded and running remotely', async () => {
    const t = await explain('job/my-gpu-job');
    return /Spend so far/.test(t) && t;
  });
  assert.match(text, /^Job default\/my-gpu-job: /m);
  assert.match(text, /^ {2}Offload: offloaded \(Requested\) to runpod/m);
  assert.match(text, /^ {2}GPU: .+ at 0\.25 USD\/h$/m);
  assert.match(text, /^ {2}Remote pod: \S+/m);
  assert.match(text, /^ {2}Spend so far: \d+\.\d{4} USD over \d+\.\d min/m);
});

test('explain job/ on a Job troupe may not offload says how to let it', async () => {
  await kubectl(['create', 'job', 'plain', '--image=busybox', '--', 'true']);
  const text = await explain('job/plain');
  assert.match(
    text,
    /^ {2}Offload: not managed: troupe offloads only Jobs annotated runpod\.io\/managed: "true"/m,
  );
});
