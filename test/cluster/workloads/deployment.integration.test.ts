import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { GVR } from '../../../src/cluster/client.ts';
import {
  type Deployment,
  maxUnavailable,
  resolveFenceposts,
} from '../../../src/cluster/workloads/deployment-util.ts';
import { waitFor } from '../../support/wait.ts';
import {
  autoRun,
  CONTAINER,
  cond,
  createNamespace,
  get,
  startCluster,
  status,
  type TestCluster,
} from './harness.ts';

const NS = 'deploy';

type DStatus = {
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  observedGeneration?: number;
};

function deployment(name: string, replicas: number, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: CONTAINER } },
      ...extra,
    },
  };
}

function setImage(o: KubeObject, image: string): void {
  (o.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image =
    image;
}

describe('maxSurge/maxUnavailable resolution', () => {
  const d = (replicas: number, maxSurge: unknown, maxUnavailable: unknown) =>
    ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {},
      spec: { replicas, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge, maxUnavailable } } },
    }) as Deployment;
  test('percentages: surge rounds up, unavailable rounds down', () => {
    assert.deepEqual(resolveFenceposts(d(10, '25%', '25%')), { surge: 3, unavailable: 2 });
    assert.deepEqual(resolveFenceposts(d(3, '25%', '25%')), { surge: 1, unavailable: 0 });
  });
  test('both zero allows one unavailable; maxUnavailable is capped at replicas', () => {
    assert.deepEqual(resolveFenceposts(d(4, 0, 0)), { surge: 0, unavailable: 1 });
    assert.equal(maxUnavailable(d(2, 0, 5)), 2);
  });
});

describe('Deployment controller', () => {
  let c: TestCluster;
  let stopRun: () => void;
  before(async () => {
    c = await startCluster();
    await createNamespace(c.client, NS);
    await createNamespace(c.client, 'stuck');
    stopRun = autoRun(c.client, NS);
  });
  after(async () => {
    stopRun();
    await c.close();
  });
  const dNow = (name: string) => get(c.client, GVR.deployments, NS, name)!;
  const rssOf = (d: KubeObject) =>
    c.client
      .list(GVR.replicasets, NS)
      .filter((r) => r.metadata.ownerReferences?.some((o) => o.uid === d.metadata.uid));
  const replicas = (r: KubeObject) => (r.spec as { replicas: number }).replicas;
  const rolledOut = (name: string, n: number) => () => {
    const d = dNow(name);
    const s = status<DStatus>(d);
    return (
      s.observedGeneration === d.metadata.generation &&
      s.updatedReplicas === n &&
      s.replicas === n &&
      s.availableReplicas === n &&
      cond(d, 'Progressing')?.reason === 'NewReplicaSetAvailable'
    );
  };

  test('creates a ReplicaSet named by the pod-template-hash and reports a complete rollout', async () => {
    const d = await c.client.create(GVR.deployments, deployment('web', 3));
    await waitFor('rolled out', rolledOut('web', 3));
    const [r, ...rest] = rssOf(d);
    assert.equal(rest.length, 0);
    const hash = r!.metadata.labels!['pod-template-hash']!;
    assert.match(hash, /^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
    assert.equal(r!.metadata.name, `web-${hash}`);
    assert.deepEqual((r!.spec as { selector: unknown }).selector, {
      matchLabels: { app: 'web', 'pod-template-hash': hash },
    });
    const tmplLabels = (r!.spec as { template: { metadata: { labels: Record<string, string> } } }).template
      .metadata.labels;
    assert.deepEqual(tmplLabels, { app: 'web', 'pod-template-hash': hash });
    assert.equal(r!.metadata.annotations?.['deployment.kubernetes.io/revision'], '1');
    assert.equal(r!.metadata.annotations?.['deployment.kubernetes.io/desired-replicas'], '3');
    assert.equal(r!.metadata.annotations?.['deployment.kubernetes.io/max-replicas'], '4');
    const dd = dNow('web');
    assert.equal(dd.metadata.annotations?.['deployment.kubernetes.io/revision'], '1');
    const s = status<DStatus>(dd);
    assert.equal(s.readyReplicas, 3);
    assert.equal(s.unavailableReplicas, undefined);
    const avail = cond(dd, 'Available')!;
    assert.equal(avail.status, 'True');
    assert.equal(avail.reason, 'MinimumReplicasAvailable');
    assert.equal(avail.message, 'Deployment has minimum availability.');
    const prog = cond(dd, 'Progressing')!;
    assert.equal(prog.status, 'True');
    assert.equal(prog.message, `ReplicaSet "web-${hash}" has successfully progressed.`);
    const pods = c.client.list(GVR.pods, NS, { labelSelector: `pod-template-hash=${hash}` });
    assert.equal(pods.length, 3);
    const ev = c.client
      .list(GVR.events, NS)
      .find((e) => e.reason === 'ScalingReplicaSet' && (e.involvedObject as { name: string }).name === 'web');
    assert.equal(ev?.message, `Scaled up replica set web-${hash} to 3 from 0`);
  });

  test('rolling update stays within maxSurge and maxUnavailable', async () => {
    const d = await c.client.create(
      GVR.deployments,
      deployment('roll', 4, {
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      }),
    );
    await waitFor('v1 rolled out', rolledOut('roll', 4));
    let maxTotal = 0;
    let minAvailable = Number.POSITIVE_INFINITY;
    const stopWatch = c.client.watch(
      GVR.replicasets,
      () => {
        const rss = rssOf(d);
        maxTotal = Math.max(
          maxTotal,
          rss.reduce((n, r) => n + replicas(r), 0),
        );
        minAvailable = Math.min(
          minAvailable,
          rss.reduce((n, r) => n + ((r.status as { availableReplicas?: number }).availableReplicas ?? 0), 0),
        );
      },
      { namespace: NS },
    );
    await c.client.mutate(GVR.deployments, NS, 'roll', (o) => setImage(o, 'busybox:2'));
    await waitFor('v2 rolled out', rolledOut('roll', 4));
    stopWatch();
    assert.ok(maxTotal <= 5, `at most replicas+maxSurge pods were desired (saw ${maxTotal})`);
    assert.ok(minAvailable >= 4, `never below replicas-maxUnavailable available (saw ${minAvailable})`);
    const rss = rssOf(d);
    assert.equal(rss.length, 2);
    const byRev = new Map(rss.map((r) => [r.metadata.annotations?.['deployment.kubernetes.io/revision'], r]));
    assert.equal(replicas(byRev.get('2')!), 4);
    assert.equal(replicas(byRev.get('1')!), 0);
    assert.equal(dNow('roll').metadata.annotations?.['deployment.kubernetes.io/revision'], '2');
  });

  test('Recreate scales the old ReplicaSet to zero before the new one starts', async () => {
    const d = await c.client.create(
      GVR.deployments,
      deployment('rec', 2, { strategy: { type: 'Recreate' } }),
    );
    await waitFor('v1 rolled out', rolledOut('rec', 2));
    const overlap: number[] = [];
    const stopWatch = c.client.watch(
      GVR.replicasets,
      () => {
        const rss = rssOf(d);
        if (rss.length === 2 && rss.every((r) => replicas(r) > 0)) overlap.push(1);
      },
      { namespace: NS },
    );
    await c.client.mutate(GVR.deployments, NS, 'rec', (o) => setImage(o, 'busybox:2'));
    await waitFor('v2 rolled out', rolledOut('rec', 2));
    stopWatch();
    assert.equal(overlap.length, 0, 'old and new ReplicaSets never had replicas at the same time');
  });

  test('scaling resizes the ReplicaSet and records the event', async () => {
    const d = await c.client.create(GVR.deployments, deployment('scale', 2));
    await waitFor('rolled out', rolledOut('scale', 2));
    await c.client.mutate(GVR.deployments, NS, 'scale', (o) => {
      (o.spec as { replicas: number }).replicas = 5;
    });
    await waitFor('scaled to 5', rolledOut('scale', 5));
    const r = rssOf(d)[0]!;
    assert.equal(r.metadata.annotations?.['deployment.kubernetes.io/desired-replicas'], '5');
    await waitFor('event', () =>
      c.client
        .list(GVR.events, NS)
        .some(
          (e) =>
            e.reason === 'ScalingReplicaSet' &&
            e.message === `Scaled up replica set ${r.metadata.name} to 5 from 2`,
        ),
    );
  });

  test('revisionHistoryLimit removes the oldest scaled-down ReplicaSets', async () => {
    const d = await c.client.create(GVR.deployments, deployment('hist', 1, { revisionHistoryLimit: 1 }));
    await waitFor('v1', rolledOut('hist', 1));
    for (const image of ['busybox:2', 'busybox:3']) {
      await c.client.mutate(GVR.deployments, NS, 'hist', (o) => setImage(o, image));
      await waitFor(`${image} rolled out`, rolledOut('hist', 1));
    }
    await waitFor('one old ReplicaSet kept', () => rssOf(d).length === 2);
    const revs = rssOf(d)
      .map((r) => r.metadata.annotations?.['deployment.kubernetes.io/revision'])
      .sort();
    assert.deepEqual(revs, ['2', '3']);
  });

  test('deleting a Deployment garbage-collects its ReplicaSet and pods', async () => {
    const d = await c.client.create(GVR.deployments, deployment('gc', 2));
    await waitFor('rolled out', rolledOut('gc', 2));
    const rsUid = rssOf(d)[0]!.metadata.uid;
    await c.client.delete(GVR.deployments, NS, 'gc', { propagationPolicy: 'Background' });
    await waitFor(
      'ReplicaSet gone',
      () => !c.client.list(GVR.replicasets, NS).some((r) => r.metadata.uid === rsUid),
    );
    await waitFor('pods gone', () => c.client.list(GVR.pods, NS, { labelSelector: 'app=gc' }).length === 0);
  });

  test('a paused Deployment does not roll out until resumed', async () => {
    const d = await c.client.create(GVR.deployments, deployment('pause', 1));
    await waitFor('rolled out', rolledOut('pause', 1));
    await c.client.mutate(GVR.deployments, NS, 'pause', (o) => {
      (o.spec as { paused: boolean }).paused = true;
      setImage(o, 'busybox:2');
    });
    await waitFor(
      'paused condition',
      () => cond(dNow('pause'), 'Progressing')?.reason === 'DeploymentPaused',
    );
    assert.equal(cond(dNow('pause'), 'Progressing')!.status, 'Unknown');
    assert.equal(rssOf(d).length, 1, 'no new ReplicaSet while paused');
    await c.client.mutate(GVR.deployments, NS, 'pause', (o) => {
      (o.spec as { paused: boolean }).paused = false;
    });
    await waitFor('rolled out after resume', rolledOut('pause', 1));
    assert.equal(rssOf(d).length, 2);
  });

  test('a rollout that makes no progress exceeds its progress deadline', async () => {
    const d = deployment('stuck', 1, { progressDeadlineSeconds: 1 });
    d.metadata.namespace = 'stuck';
    await c.client.create(GVR.deployments, d);
    await waitFor(
      'ProgressDeadlineExceeded',
      () =>
        cond(get(c.client, GVR.deployments, 'stuck', 'stuck'), 'Progressing')?.reason ===
        'ProgressDeadlineExceeded',
      { timeoutMs: 10_000 },
    );
    const p = cond(get(c.client, GVR.deployments, 'stuck', 'stuck'), 'Progressing')!;
    assert.equal(p.status, 'False');
    assert.match(p.message as string, /^ReplicaSet "stuck-[a-z0-9]+" has timed out progressing\.$/);
    assert.equal(cond(get(c.client, GVR.deployments, 'stuck', 'stuck'), 'Available')!.status, 'False');
  });
});
