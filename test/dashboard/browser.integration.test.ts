/**
 * The dashboard in a real browser against the embedded cluster: Debian's Chromium loads the
 * page with the printed URL, and what the page shows is checked against the cluster while
 * the seed's PodSequence sample and gang sample run. Screenshots go to a temporary folder,
 * or to docs/screenshots/ (the README's) with TROUPE_UPDATE_SCREENSHOTS=1, so a test run
 * leaves the checkout clean.
 */

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { KubeObject } from '../../src/runtime/index.ts';
import { waitFor } from '../support/wait.ts';
import { attr, launchChromium, waitForAttr } from './browser.ts';
import { loadYaml, ROOT, type Stack, startStack } from './stack.ts';

const SHOTS =
  process.env.TROUPE_UPDATE_SCREENSHOTS === '1'
    ? join(ROOT, 'docs', 'screenshots')
    : join(tmpdir(), 'troupe-screenshots');
const SEQ = '[data-sequence="default/podgroups-example"]';

interface Pod extends KubeObject {
  spec?: { schedulingGates?: unknown[]; nodeName?: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

async function clusterPod(stack: Stack, name: string): Promise<Pod | undefined> {
  return stack.manager.client.tryGet<Pod>({ apiVersion: 'v1', kind: 'Pod' }, name, 'default');
}

function isReady(pod: Pod | undefined): boolean {
  return pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

describe('dashboard in Chromium', { timeout: 180_000 }, () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let sample: KubeObject[];

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    stack = await startStack({ timeScale: 2 });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    sample = await loadYaml('config/samples/podgroups-example.yaml');
  });

  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  test('the printed URL logs in once and the page goes live', async () => {
    const res = await page.goto(stack.dashboard.url);
    assert.equal(res?.status(), 200);
    // The token was traded for a cookie: it is no longer in the address bar.
    assert.equal(page.url(), stack.dashboard.baseUrl);
    await waitForAttr(page, '[data-connection]', 'data-connection', 'live');
    // Marks this page load: if the page reloaded, the marker would be gone.
    await page.evaluate('window.__sameLoad = true');
  });

  test('nodes are those of the cluster', async () => {
    await page.waitForSelector('#nodes [data-node]');
    const names = await page
      .locator('#nodes [data-node]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-node')));
    const nodes = await stack.manager.client.list({ apiVersion: 'v1', kind: 'Node' });
    assert.deepEqual(names.sort(), nodes.items.map((n) => n.metadata.name).sort());
    for (const n of nodes.items) {
      const ready = (
        n.status as { conditions?: { type: string; status: string }[] } | undefined
      )?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      await waitForAttr(
        page,
        `#nodes [data-node="${n.metadata.name}"]`,
        'data-ready',
        String(ready === true),
      );
    }
  });

  test('a sequence waits on a missing pod, tier by tier as the cluster moves', async () => {
    // Everything but pod-4: the Application Layer cannot complete without it.
    for (const obj of sample.filter((o) => o.metadata.name !== 'pod-4'))
      await stack.manager.client.create(obj);
    await page.waitForSelector(SEQ);
    // The first tier turns ready on the page once its pods are Ready in the cluster.
    await waitForAttr(page, `${SEQ} [data-tier="0"]`, 'data-tier-state', 'done');
    assert.ok(isReady(await clusterPod(stack, 'pod-1')), 'pod-1 is Ready in the cluster');
    assert.ok(isReady(await clusterPod(stack, 'pod-2')), 'pod-2 is Ready in the cluster');
    for (const name of ['pod-1', 'pod-2']) {
      assert.equal(await attr(page, `${SEQ} [data-tier="0"] [data-pod="${name}"]`, 'data-state'), 'ready');
    }
    await waitForAttr(page, `${SEQ} [data-tier="1"]`, 'data-tier-state', 'current');
    await waitForAttr(page, `${SEQ} [data-tier="1"] [data-pod="pod-4"]`, 'data-state', 'missing');
    assert.equal(await attr(page, `${SEQ} [data-tier="2"]`, 'data-tier-state'), 'waiting');
    // pod-5's tier has not been released: it is gated in the cluster and on the page.
    const pod5 = await clusterPod(stack, 'pod-5');
    assert.ok((pod5?.spec?.schedulingGates ?? []).length > 0, 'pod-5 is still gated');
    assert.equal(await attr(page, `${SEQ} [data-pod="pod-5"]`, 'data-state'), 'gated');
    // Why it waits is written on the page, not only in a tooltip: the gates the cluster has.
    const gates = ((pod5?.spec?.schedulingGates ?? []) as { name: string }[]).map((g) => g.name).join(', ');
    assert.equal(
      await page.locator(`${SEQ} [data-reason-pod="pod-5"]`).textContent(),
      `pod-5 gated: gated by ${gates}`,
    );
    const waiting = (await page.locator(`${SEQ} .waiting`).textContent()) ?? '';
    assert.match(waiting, /pod-4: missing/);
    await page.locator(SEQ).screenshot({ path: join(SHOTS, 'sequence-waiting.png') });
    // pod-3 was released with its tier: once Ready in the cluster it is ready on the page,
    // and the tier still waits for pod-4.
    await waitFor('pod-3 to be Ready in the cluster', async () => isReady(await clusterPod(stack, 'pod-3')));
    await waitForAttr(page, `${SEQ} [data-pod="pod-3"]`, 'data-state', 'ready');
    assert.equal(await attr(page, `${SEQ} [data-tier="1"]`, 'data-tier-state'), 'current');
    assert.equal(await attr(page, `${SEQ} [data-pod="pod-4"]`, 'data-state'), 'missing');
  });

  test('the missing pod arrives and the sequence completes on the page', async () => {
    await stack.manager.client.create(sample.find((o) => o.metadata.name === 'pod-4')!);
    await waitForAttr(page, SEQ, 'data-phase', 'Completed', 60_000);
    for (let k = 0; k < 3; k++)
      assert.equal(await attr(page, `${SEQ} [data-tier="${k}"]`, 'data-tier-state'), 'done');
    for (const name of ['pod-1', 'pod-2', 'pod-3', 'pod-4', 'pod-5']) {
      assert.ok(isReady(await clusterPod(stack, name)), `${name} is Ready in the cluster`);
      await waitForAttr(page, `${SEQ} [data-pod="${name}"]`, 'data-state', 'ready');
    }
    // The timeline shows the controller's releases and the completion, from its Events.
    await page.waitForSelector(`${SEQ} .timeline [data-reason="Completed"]`);
    const reasons = await page
      .locator(`${SEQ} .timeline [data-reason]`)
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-reason')));
    assert.ok(
      reasons.filter((r) => r === 'Released').length >= 3,
      `releases in the timeline: ${reasons.join(', ')}`,
    );
    // The first release of each later tier follows the GroupReady that caused it.
    const events = await page
      .locator(`${SEQ} .timeline [data-reason]`)
      .evaluateAll((els) =>
        els.map((e) => [e.getAttribute('data-reason'), e.querySelector('.event-message')?.textContent ?? '']),
      );
    for (const [i, [reason, message]] of events.entries()) {
      const next = reason === 'GroupReady' ? /; releasing group (.+)$/.exec(message ?? '')?.[1] : undefined;
      if (!next) continue;
      const firstRelease = events.findIndex(([r, m]) => r === 'Released' && m?.includes(`of group ${next} `));
      assert.ok(
        firstRelease > i,
        `${next} released after "${message}": ${events.map((e) => e[0]).join(', ')}`,
      );
    }
    // Every tier shows when it started and when it was ready, on the page.
    for (let k = 0; k < 3; k++) {
      const times = (await page.locator(`${SEQ} [data-tier-times="${k}"]`).textContent()) ?? '';
      assert.match(times, /^started \d\d:\d\d:\d\d · ready \d\d:\d\d:\d\d \(\d+\.\d s\)$/);
    }
    assert.equal(await page.evaluate('window.__sameLoad'), true, 'updates arrived without a reload');
  });

  test('a gang shows its PodGroup phase and members as the cluster has them', async () => {
    for (const obj of await loadYaml('config/samples/podgroup/seed-example.yaml')) {
      await stack.manager.client.create({ ...obj, metadata: { ...obj.metadata, namespace: 'default' } });
    }
    const card = '[data-podgroup="default/training-job-1"]';
    const group = await waitFor(
      'the PodGroup to be Running',
      async () => {
        const g = await stack.manager.client.tryGet<KubeObject & { status?: { state?: { phase?: string } } }>(
          { apiVersion: 'scheduling.incubator.k8s.io/v1alpha1', kind: 'PodGroup' },
          'training-job-1',
          'default',
        );
        return g?.status?.state?.phase === 'Running' ? g : undefined;
      },
      { timeoutMs: 60_000 },
    );
    // The page follows: the PodGroup's card (before the controller created the PodGroup, the
    // page showed the pods' label-only group, whose "Running" is the pods' own), with its phase.
    await waitFor('the page to show the PodGroup with its phase', async () => {
      const labelOnly = await page.locator(`${card} [data-badge="label only"]`).count();
      return labelOnly === 0 && (await attr(page, card, 'data-phase')) === group.status?.state?.phase;
    });
    for (const w of ['worker-1', 'worker-2', 'worker-3']) {
      await waitForAttr(page, `${card} [data-pod="${w}"]`, 'data-state', 'ready');
    }
    await waitForAttr(page, `${card} .progress-text`, 'data-progress', '3/3 running');
  });

  test('a gang whose members finish shows them completed, not running', async () => {
    // The seed's Stage: a pod labelled ready turns Succeeded (only gang members carry it).
    await stack.createFromFile('config/samples/podgroup/kwok-stage-pod-complete-on-ready.yaml');
    const card = '[data-podgroup="default/training-job-1"]';
    for (const w of ['worker-1', 'worker-2', 'worker-3']) {
      await waitFor(
        `${w} to succeed in the cluster`,
        async () => (await clusterPod(stack, w))?.status?.phase === 'Succeeded',
      );
      await waitForAttr(page, `${card} [data-pod="${w}"]`, 'data-state', 'succeeded');
    }
    await waitForAttr(page, `${card} .progress-text`, 'data-progress', '3/3 completed');
    assert.equal(await page.locator(`${card} .progress-text`).textContent(), '3/3 completed');
    // The phase on the page is the PodGroup's in the cluster.
    await waitFor("the page to show the PodGroup's phase", async () => {
      const g = await stack.manager.client.tryGet<KubeObject & { status?: { state?: { phase?: string } } }>(
        { apiVersion: 'scheduling.incubator.k8s.io/v1alpha1', kind: 'PodGroup' },
        'training-job-1',
        'default',
      );
      return (
        g?.status?.state?.phase !== undefined &&
        g.status.state.phase === (await attr(page, card, 'data-phase'))
      );
    });
  });

  test('a node-scoped sequence shows each node progressing on its own', async () => {
    const seq = '[data-sequence="default/csi-driver-sequence"]';
    await stack.createFromFile('config/samples/node-scoped-csi-example.yaml');
    // For the README: the moment the apps tier is under way (or done, if that was quicker).
    await page.waitForSelector(
      `${seq} [data-tier="1"][data-tier-state="current"], ${seq}[data-phase="Completed"]`,
    );
    await page.locator(seq).screenshot({ path: join(SHOTS, 'sequence-node-scope.png') });
    await waitForAttr(page, seq, 'data-phase', 'Completed', 60_000);
    // Every pod of the sequence sits in the row of the node it runs on in the cluster.
    const pods = await stack.manager.client.list<Pod>(
      { apiVersion: 'v1', kind: 'Pod' },
      { namespace: 'default' },
    );
    const members = pods.items.filter((p) => ['csi-driver', 'my-app'].includes(p.metadata.labels?.app ?? ''));
    assert.equal(members.length, 6, 'three CSI driver pods (one per node) and three app pods');
    for (const p of members) {
      assert.ok(isReady(p), `${p.metadata.name} is Ready in the cluster`);
      const cell = `${seq} tr[data-node="${p.spec?.nodeName}"] [data-pod="${p.metadata.name}"]`;
      await waitForAttr(page, cell, 'data-state', 'ready');
    }
  });

  test('screenshot of the whole page for the README', async () => {
    await page.locator('#sequences').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'dashboard.png'), fullPage: true });
  });
  test("why a gang cannot start is on the page, in the cluster's words", async () => {
    const pod = (name: string, cpu: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', labels: { 'podgroup.jhwagner.github.io/name': 'too-big' } },
      spec: { containers: [{ name: 'worker', image: 'fake-image', resources: { requests: { cpu } } }] },
    });
    await stack.manager.client.create(pod('too-big-1', '100m'));
    await stack.manager.client.create(pod('too-big-2', '100000'));
    const card = '[data-podgroup="default/too-big"]';
    // The scheduler's verdict on the pod that fits nowhere, word for word on the page.
    await waitFor("too-big-2's scheduling verdict on the page", async () => {
      const sched = (await clusterPod(stack, 'too-big-2'))?.status?.conditions?.find(
        (c) => c.type === 'PodScheduled',
      ) as { status: string; reason?: string; message?: string } | undefined;
      if (sched?.status !== 'False' || sched.reason !== 'Unschedulable') return false;
      const shown = await page
        .locator(`${card} [data-reason-pod="too-big-2"]`)
        .textContent({ timeout: 1000 });
      return shown === `too-big-2 pending: Unschedulable: ${sched.message}`;
    });
    // The PodGroup's phase, reason and message, as its status has them.
    await waitFor("the PodGroup's status on the page", async () => {
      const g = await stack.manager.client.tryGet<
        KubeObject & { status?: { state?: { phase?: string; reason?: string; message?: string } } }
      >({ apiVersion: 'scheduling.incubator.k8s.io/v1alpha1', kind: 'PodGroup' }, 'too-big', 'default');
      const state = g?.status?.state;
      if (state?.phase !== 'Unschedulable' || state.reason !== 'NotEnoughResources' || !state.message)
        return false;
      return (
        (await attr(page, card, 'data-phase')) === 'Unschedulable' &&
        (await page.locator(`${card} [data-badge="NotEnoughResources"]`).count()) === 1 &&
        (await page.locator(`${card} .message`).textContent({ timeout: 1000 })) === state.message
      );
    });
  });

  test('text from the cluster is shown as text, never run as markup', async () => {
    const hostile = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';
    await stack.manager.client.create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'gpu-train',
        namespace: 'default',
        annotations: { 'runpod.io/managed': 'true', 'runpod.io/offload-error': hostile },
      },
      spec: {
        suspend: true,
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'trainer:1' }] } },
      },
    });
    const notes = page.locator('[data-offload="default/gpu-train"] [data-offload-notes]');
    await notes.waitFor();
    assert.equal(await notes.textContent(), hostile);
    assert.equal(await notes.locator('img, script').count(), 0);
    assert.equal(await page.evaluate('window.__xss'), undefined);
  });
});
