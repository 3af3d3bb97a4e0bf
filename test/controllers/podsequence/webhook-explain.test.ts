import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_GATE } from '../../../src/apis/scheduling.example.com/v1alpha1.ts';
import { explainPod, explainSequence } from '../../../src/controllers/podsequence/explain.ts';
import type { Pod } from '../../../src/controllers/podsequence/objects.ts';
import { taintKey } from '../../../src/controllers/podsequence/taints.ts';
import {
  mutateDaemonSet,
  mutatePod,
  podSequenceWebhookConfiguration,
} from '../../../src/controllers/podsequence/webhook.ts';
import { groups, pod, sequence } from './fixtures.ts';

const nodeSeq = () =>
  sequence(
    {
      scope: 'Node',
      podGroups: [
        { name: 'plugin', podSelector: { matchLabels: { app: 'plugin' } } },
        { name: 'agent', podSelector: { matchLabels: { app: 'agent' } } },
        { name: 'work', podSelector: { matchLabels: { app: 'work' } } },
      ],
    },
    'gpu',
  );

function bare(name: string, labels: Record<string, string>): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels },
    spec: { containers: [] },
  };
}

describe('webhook mutations', () => {
  test('later groups get the gate; node scope adds tolerations for the later groups', () => {
    const first = mutatePod(bare('p', { app: 'plugin' }), 'default', [nodeSeq()], DEFAULT_GATE);
    assert.deepEqual(
      first.pod.spec!.schedulingGates,
      [{ name: DEFAULT_GATE }],
      'node scope gates the first group too',
    );
    assert.deepEqual(
      first.pod.spec!.tolerations!.map((t) => t.key),
      [taintKey('default', 'gpu', 1), taintKey('default', 'gpu', 2)],
    );
    const middle = mutatePod(bare('a', { app: 'agent' }), 'default', [nodeSeq()], DEFAULT_GATE);
    assert.deepEqual(middle.pod.spec!.schedulingGates, [{ name: DEFAULT_GATE }]);
    assert.deepEqual(
      middle.pod.spec!.tolerations!.map((t) => t.key),
      [taintKey('default', 'gpu', 2)],
    );
    const again = mutatePod(middle.pod, 'default', [nodeSeq()], DEFAULT_GATE);
    assert.deepEqual(again.changes, [], 'idempotent');
  });

  test('cluster scope: gate only; pods elsewhere, bound pods and invalid sequences are left alone', () => {
    const seq = sequence({ podGroups: groups(['a'], ['b']) });
    assert.deepEqual(
      mutatePod(bare('a', {}), 'default', [seq], DEFAULT_GATE).changes,
      [],
      'the first group waits for nothing',
    );
    const b = mutatePod(bare('b', {}), 'default', [seq], DEFAULT_GATE);
    assert.deepEqual(b.pod.spec!.schedulingGates, [{ name: DEFAULT_GATE }]);
    assert.equal(b.pod.spec!.tolerations, undefined);
    assert.deepEqual(mutatePod(bare('b', {}), 'other', [seq], DEFAULT_GATE).changes, []);
    const bound = bare('b', {});
    bound.spec!.nodeName = 'n1';
    assert.deepEqual(mutatePod(bound, 'default', [seq], DEFAULT_GATE).changes, []);
    const invalid = sequence({ podGroups: groups(['b'], ['b']) });
    assert.deepEqual(mutatePod(bare('b', {}), 'default', [invalid], DEFAULT_GATE).changes, []);
  });

  test('DaemonSet templates of node-scoped groups tolerate the later taints', () => {
    const ds = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'plugin', namespace: 'default' },
      spec: {
        template: {
          metadata: { labels: { app: 'plugin' } },
          spec: { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }] },
        },
      },
    };
    const out = mutateDaemonSet(ds, 'default', [nodeSeq()], DEFAULT_GATE);
    assert.deepEqual(
      out.ds.spec!.template!.spec!.tolerations!.map((t) => t.key),
      ['nvidia.com/gpu', taintKey('default', 'gpu', 1), taintKey('default', 'gpu', 2)],
    );
  });

  test('one webhook entry for pods and DaemonSets, so one caBundle patch covers both', () => {
    const cfg = podSequenceWebhookConfiguration({
      service: { namespace: 'pod-sequence-system', name: 'svc' },
      caBundle: 'PEM',
    });
    const hooks = cfg.webhooks as {
      clientConfig: { caBundle: string; service: { path: string } };
      rules: { resources: string[] }[];
      failurePolicy: string;
    }[];
    assert.equal(hooks.length, 1);
    assert.deepEqual(
      hooks[0]!.rules.map((r) => r.resources[0]),
      ['pods', 'daemonsets'],
    );
    assert.equal(hooks[0]!.clientConfig.caBundle, Buffer.from('PEM').toString('base64'));
    assert.equal(hooks[0]!.clientConfig.service.path, '/mutate-v1-pod');
    assert.equal(hooks[0]!.failurePolicy, 'Ignore');
  });
});

describe('explain', () => {
  const seq = sequence({ podGroups: groups(['pod-1', 'pod-2'], ['pod-3']) });
  const pods = [
    pod('pod-1', { state: 'ready', releasedBy: 'default/seq' }),
    pod('pod-2', { state: 'scheduled', releasedBy: 'default/seq' }),
    pod('pod-3'),
  ];

  test('a gated pod says which pods of which group it waits for', () => {
    const text = explainPod(pods[2]!, { sequences: [seq], pods });
    assert.match(text, /Pod default\/pod-3: gated by podsequence.example.com\/sequence-gate/);
    assert.match(text, /PodSequence default\/seq \(InProgress\), group 'G2' \(2\/2\): gated by .*, waiting:/);
    assert.match(text, /group 'G1' \(1\/2\) must be Ready first: pod-2 Running, not Ready/);
  });

  test('a released pod says who released it; an unrelated pod says so', () => {
    assert.match(explainPod(pods[0]!, { sequences: [seq], pods }), /released by default\/seq; Ready/);
    assert.match(explainPod(pod('x'), { sequences: [seq], pods }), /No PodSequence selects this pod/);
  });

  test('the sequence report lists every group and pod', () => {
    const text = explainSequence({ seq, pods });
    assert.match(text, /PodSequence default\/seq: InProgress, scope Cluster/);
    assert.match(
      text,
      /Group 'G1' \(1\/2\) \[current\], pods 2:\n {2}pod-1: Ready\n {2}pod-2: Running, not Ready/,
    );
    assert.match(text, /Group 'G2' \(2\/2\) \[waiting\], pods 1:\n {2}pod-3: gated/);
  });

  test('node scope: what each node waits for', () => {
    const s = nodeSeq();
    const ps = [
      pod('plugin-a', { labels: { app: 'plugin' }, state: 'scheduled', pinned: 'node-a' }),
      pod('agent-a', { labels: { app: 'agent' }, pinned: 'node-a' }),
    ];
    assert.match(
      explainSequence({ seq: s, pods: ps }),
      /Node node-a: InProgress, waiting for group 'plugin' \(1\/3\): 0\/1 Ready \(plugin-a Running, not Ready\)/,
    );
    assert.match(
      explainPod(ps[1]!, { sequences: [s], pods: ps }),
      /on node node-a: group 'plugin' \(1\/3\): 0\/1 Ready/,
    );
  });
});
