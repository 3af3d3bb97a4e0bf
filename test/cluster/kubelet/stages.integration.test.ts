import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { GVR } from '../../../src/cluster/client.ts';
import { STAGE_GVR } from '../../../src/cluster/kubelet/index.ts';
import type { Stage } from '../../../src/cluster/kubelet/stages/index.ts';
import { waitFor } from '../../support/wait.ts';
import {
  condition,
  createNode,
  createPod,
  eventsFor,
  getPod,
  type KubeletEnv,
  startKubeletEnv,
  waitForPod,
} from './helpers.ts';

// The seed README's Stage, kept verbatim in the repository's samples.
const SEED_STAGE = readFileSync(
  new URL('../../../config/samples/podgroup/kwok-stage-pod-complete-on-ready.yaml', import.meta.url),
  'utf8',
);

type Cond = { type: string; status: string; reason: string; message: string };

function accepted(env: KubeletEnv, name: string): Cond | undefined {
  const s = env.admin.get(STAGE_GVR, '', name);
  return (s?.status as { conditions?: Cond[] } | undefined)?.conditions?.find((c) => c.type === 'Accepted');
}

function waitAccepted(env: KubeletEnv, name: string): Promise<Cond> {
  return waitFor(`Stage ${name} Accepted condition`, () => accepted(env, name));
}

/** The YAML a user would write for a Stage on pods; `spec` is what follows resourceRef, unindented. */
function podStage(name: string, spec: string): string {
  return `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: ${name}
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
${spec.replace(/^(?=.)/gm, '  ')}`;
}

/** Applies a pod Stage with kubectl, as a user would. */
function applyPodStage(env: KubeletEnv, name: string, spec: string) {
  return env.ts.kubectl(['apply', '-f', '-'], podStage(name, spec));
}

/** A Stage that moves pods in phase `from` to Running. */
function toRunningStage(name: string, from: string): Stage & KubeObject {
  return {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name },
    spec: {
      resourceRef: { apiGroup: 'v1', kind: 'Pod' },
      selector: { matchExpressions: [{ key: '.status.phase', operator: 'In', values: [from] }] },
      next: { statusTemplate: 'phase: Running' },
    },
  };
}

async function startWithNode(): Promise<KubeletEnv> {
  const env = await startKubeletEnv({ timeScale: 20 });
  await createNode(env.admin, 'node-1');
  return env;
}

describe('kubelet: Stage objects', () => {
  let env: KubeletEnv;
  before(async () => {
    env = await startWithNode();
  });
  after(() => env.close());

  test('the podgroup seed Stage, applied verbatim with kubectl, completes pods labelled ready', async () => {
    assert.match(SEED_STAGE, /name: pod-complete-on-ready/);
    const out = await env.ts.kubectl(['apply', '-f', '-'], SEED_STAGE);
    assert.match(out.stdout, /stage.kwok.x-k8s.io\/pod-complete-on-ready created/);
    const c = await waitAccepted(env, 'pod-complete-on-ready');
    assert.equal(c.status, 'True');
    const table = await env.ts.kubectl(['get', 'stages']);
    assert.match(table.stdout, /pod-complete-on-ready\s+Pod\s+True/);

    // A gang member that would otherwise run for an hour, like the README's fake-image worker.
    await createPod(env.admin, 'worker-1', {
      labels: { 'podgroup.jhwagner.github.io/name': 'training-job-1' },
      annotations: { 'troupe.dev/run-duration': '1h' },
      containers: [{ name: 'worker', image: 'fake-image' }],
    });
    await waitForPod(env.admin, 'worker-1', 'Running', (p) => p.status?.phase === 'Running');
    await env.ts.kubectl(['label', 'pod', 'worker-1', 'podgroup.jhwagner.github.io/ready=true']);
    const p = await waitForPod(env.admin, 'worker-1', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    assert.equal(condition(p, 'Ready'), 'True');
  });

  test('a Stage whose JQ key or template does not parse is reported and ignored', async () => {
    const brokenKey = podStage(
      'broken-key',
      `selector:
  matchExpressions:
  - key: '.status.phase | ]['
    operator: Exists
next:
  statusTemplate: |
    phase: Failed
`,
    );
    const brokenTemplate = podStage(
      'broken-template',
      `selector:
  matchLabels:
    app: anything
next:
  statusTemplate: |
    phase: {{ .status.phase
`,
    );
    const bad = `${brokenKey}---\n${brokenTemplate}`;
    await env.ts.kubectl(['apply', '-f', '-'], bad);
    const key = await waitAccepted(env, 'broken-key');
    assert.equal(key.status, 'False');
    assert.equal(key.reason, 'InvalidStage');
    assert.match(key.message, /spec\.selector\.matchExpressions\[0\]\.key: Invalid value/);
    const tpl = await waitAccepted(env, 'broken-template');
    assert.equal(tpl.status, 'False');
    assert.match(tpl.message, /spec\.next\.statusTemplate: Invalid value/);
    const ev = await waitFor('InvalidStage event', () =>
      eventsFor(env.admin, 'Stage', 'broken-template').find((e) => e.reason === 'InvalidStage'),
    );
    assert.equal(ev.type, 'Warning');
    assert.match(String(ev.message), /statusTemplate/);
    const described = await env.ts.kubectl(['describe', 'stage', 'broken-key']);
    assert.match(described.stdout, /InvalidStage/);

    // The kubelet carries on.
    await createPod(env.admin, 'after-broken', { labels: { app: 'anything' } });
    const p = await waitForPod(env.admin, 'after-broken', 'Ready', (p) => condition(p, 'Ready') === 'True');
    assert.equal(p.status?.phase, 'Running');
    await env.ts.kubectl(['delete', 'stage', 'broken-key', 'broken-template']);
  });

  test('kubectl rejects a Stage with fields KWOK does not define (strict validation)', async () => {
    const r = await env.ts.kubectlResult(
      ['apply', '-f', '-'],
      `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: typo
spec:
  resourceRef: {kind: Pod}
  selector: {}
  nxt: {}
  next: {}
`,
    );
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /unknown field "spec\.nxt"/);
  });

  test('a KWOK-style Stage using delay, weight, finalizers, event and patches plays', async () => {
    await applyPodStage(
      env,
      'mark-slow',
      `selector:
  matchLabels:
    chaos: slow
  matchExpressions:
  - key: .status.phase
    operator: In
    values: [Running]
  - key: .metadata.annotations["marked"]
    operator: DoesNotExist
weight: 5
weightFrom:
  expressionFrom: .metadata.annotations["weight"]
delay:
  durationMilliseconds: 2000
  jitterDurationMilliseconds: 4000
next:
  event:
    type: Warning
    reason: Slow
    message: pod is slow
  finalizers:
    add:
    - value: example.com/slow
  patches:
  - root: metadata
    type: merge
    template: |
      annotations:
        marked: {{ .metadata.name | Quote }}
immediateNextStage: true
`,
    );
    assert.equal((await waitAccepted(env, 'mark-slow')).status, 'True');
    await createPod(env.admin, 'slow', { labels: { chaos: 'slow' } });
    const p = await waitForPod(env.admin, 'slow', 'marked', (p) => p.metadata.annotations?.marked === 'slow');
    assert.deepEqual(p.metadata.finalizers, ['example.com/slow']);
    const ev = await waitFor('Slow event', () =>
      eventsFor(env.admin, 'Pod', 'slow').find((e) => e.reason === 'Slow'),
    );
    assert.equal(ev.type, 'Warning');
    await env.admin.patch(GVR.pods, 'default', 'slow', 'json', [
      { op: 'remove', path: '/metadata/finalizers' },
    ]);
    await env.ts.kubectl(['delete', 'stage', 'mark-slow']);
  });

  test('a Stage that fails while rendering gets a StageFailed event; other pods are unaffected', async () => {
    await applyPodStage(
      env,
      'renders-badly',
      `selector:
  matchLabels:
    render: bad
next:
  statusTemplate: |
    phase: {{ index .spec.containers 7 }}
`,
    );
    assert.equal((await waitAccepted(env, 'renders-badly')).status, 'True');
    await createPod(env.admin, 'rendered', { labels: { render: 'bad' } });
    const ev = await waitFor('StageFailed event', () =>
      eventsFor(env.admin, 'Stage', 'renders-badly').find((e) => e.reason === 'StageFailed'),
    );
    assert.match(String(ev.message), /playing on Pod default\/rendered: /);
    // The failed stage does not block the pod's other stages.
    await waitForPod(env.admin, 'rendered', 'Ready', (p) => condition(p, 'Ready') === 'True');
    await env.ts.kubectl(['delete', 'stage', 'renders-badly']);
  });

  test('a Stage for a kind the kubelet does not simulate is accepted as stored but reported', async () => {
    await env.ts.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: deployment-stage
spec:
  resourceRef:
    apiGroup: apps/v1
    kind: Deployment
  selector: {}
  next: {}
`,
    );
    const c = await waitAccepted(env, 'deployment-stage');
    assert.equal(c.status, 'False');
    assert.equal(c.reason, 'UnsupportedKind');
    await env.ts.kubectl(['delete', 'stage', 'deployment-stage']);
  });
});

describe('kubelet: combining Stage objects with the defaults', () => {
  let env: KubeletEnv;
  before(async () => {
    env = await startWithNode();
  });
  after(() => env.close());

  const jobOwner = [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'job-uid', controller: true }];

  test('a Stage named like a default replaces it; deleting it brings the default back', async () => {
    // No selector: KWOK plays nothing for it, so this switches Job completion off.
    await applyPodStage(
      env,
      'pod-complete',
      `next:
  statusTemplate: "phase: Succeeded"
`,
    );
    assert.equal((await waitAccepted(env, 'pod-complete')).status, 'True');
    await createPod(env.admin, 'job-pod', { restartPolicy: 'Never', ownerReferences: jobOwner });
    await waitForPod(env.admin, 'job-pod', 'Ready', (p) => condition(p, 'Ready') === 'True');
    await env.kubelet.idle();
    assert.equal(getPod(env.admin, 'job-pod')?.status?.phase, 'Running');
    assert.equal(env.kubelet.pending('Pod', 'default', 'job-pod'), undefined);
    assert.ok(env.kubelet.stages().some((s) => s.name === 'pod-complete' && s.origin === 'cluster'));

    await env.ts.kubectl(['delete', 'stage', 'pod-complete']);
    await waitForPod(env.admin, 'job-pod', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    assert.ok(env.kubelet.stages().some((s) => s.name === 'pod-complete' && s.origin === 'default'));
  });

  test('a user Stage that changes nothing does not starve the defaults', async () => {
    // Matches every pod and writes what pod-ready wrote already: a no-op once the pod runs.
    await env.admin.create(STAGE_GVR, toRunningStage('noop', 'Running'));
    await waitAccepted(env, 'noop');
    await createPod(env.admin, 'timed', {
      restartPolicy: 'Never',
      annotations: { 'troupe.dev/run-duration': '1s' },
    });
    await waitForPod(env.admin, 'timed', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    await createPod(env.admin, 'deleted');
    await waitForPod(env.admin, 'deleted', 'Running', (p) => p.status?.phase === 'Running');
    await env.admin.delete(GVR.pods, 'default', 'deleted');
    await waitFor('pod removed', () => getPod(env.admin, 'deleted') === undefined);
    await env.admin.delete(STAGE_GVR, '', 'noop');
  });
});

describe('kubelet: defaults switched off', () => {
  test('disabledStages leaves a default out; without cluster Stages no CRD is installed', async () => {
    const env = await startKubeletEnv({
      timeScale: 20,
      disabledStages: ['pod-complete'],
      clusterStages: false,
    });
    try {
      const names = env.kubelet.stages().map((s) => s.name);
      assert.ok(!names.includes('pod-complete'));
      assert.ok(names.includes('pod-ready'));
      assert.equal(env.admin.served(STAGE_GVR), false);
    } finally {
      await env.close();
    }
  });

  test('defaultStages: false plays only the stages given', async () => {
    const only = toRunningStage('only-phase', 'Pending');
    const env = await startKubeletEnv({ timeScale: 20, defaultStages: false, stages: [only] });
    try {
      assert.deepEqual(
        env.kubelet.stages().map((s) => `${s.name}/${s.origin}`),
        ['only-phase/option'],
      );
      await createNode(env.admin, 'node-1');
      await createPod(env.admin, 'bare');
      const p = await waitForPod(env.admin, 'bare', 'Running', (p) => p.status?.phase === 'Running');
      assert.equal(p.status?.podIP, undefined);
      // No node stages either: the node never reports conditions.
      assert.equal(
        (env.admin.get(GVR.nodes, '', 'node-1')?.status as { conditions?: unknown })?.conditions,
        undefined,
      );
    } finally {
      await env.close();
    }
  });
});
