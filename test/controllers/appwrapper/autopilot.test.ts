/**
 * Autopilot node health, pure parts (upstream v1.2.1 resource_management.go and
 * node_health_monitor.go): anti-affinity injected into pod specs that request a monitored
 * resource, and which nodes' labels mark a resource NoExecute.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PodObject } from '../../../src/apis/workload.codeflare.dev/v1beta2.ts';
import { DEFAULT_AUTOPILOT } from '../../../src/controllers/appwrapper/config.ts';
import { noExecuteNodesOf, podsOnNoExecuteNodes } from '../../../src/controllers/appwrapper/health.ts';
import { injectAutopilotAffinities } from '../../../src/controllers/appwrapper/inject.ts';

const gpuSpec = () => ({
  containers: [{ name: 'c', resources: { requests: { cpu: '200m', 'nvidia.com/gpu': '1' } } }],
});

test('a pod spec requesting a GPU gets required NotIn TESTING/EVICT and preferred NotIn WARN (weight 50)', () => {
  const spec: Record<string, unknown> = gpuSpec();
  injectAutopilotAffinities(spec, DEFAULT_AUTOPILOT);
  assert.deepEqual(spec.affinity, {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          {
            matchExpressions: [
              { key: 'autopilot.ibm.com/gpuhealth', operator: 'NotIn', values: ['TESTING', 'EVICT'] },
            ],
          },
        ],
      },
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 50,
          preference: {
            matchExpressions: [{ key: 'autopilot.ibm.com/gpuhealth', operator: 'NotIn', values: ['WARN'] }],
          },
        },
      ],
    },
  });
});

test('existing required terms each get the expression; a spec without the resource is left alone', () => {
  const spec: Record<string, unknown> = {
    ...gpuSpec(),
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
          ],
        },
      },
    },
  };
  injectAutopilotAffinities(spec, {
    ...DEFAULT_AUTOPILOT,
    resourceTaints: { 'nvidia.com/gpu': [DEFAULT_AUTOPILOT.resourceTaints['nvidia.com/gpu']![2]!] },
  });
  const terms = (
    spec.affinity as {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: { matchExpressions: unknown[] }[];
        };
      };
    }
  ).nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
  assert.equal(terms.length, 2);
  for (const t of terms)
    assert.deepEqual(t.matchExpressions.at(-1), {
      key: 'autopilot.ibm.com/gpuhealth',
      operator: 'NotIn',
      values: ['EVICT'],
    });
  const cpuOnly: Record<string, unknown> = {
    containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }],
  };
  injectAutopilotAffinities(cpuOnly, DEFAULT_AUTOPILOT);
  assert.equal(cpuOnly.affinity, undefined);
});

test('NoExecute nodes: by label value; running GPU pods on them are found, others not', () => {
  const nodes: { metadata: { name: string; labels: Record<string, string> } }[] = [
    { metadata: { name: 'n1', labels: { 'autopilot.ibm.com/gpuhealth': 'EVICT' } } },
    { metadata: { name: 'n2', labels: { 'autopilot.ibm.com/gpuhealth': 'TESTING' } } },
    { metadata: { name: 'n3', labels: {} } },
  ];
  const bad = noExecuteNodesOf(nodes, DEFAULT_AUTOPILOT);
  assert.deepEqual(
    [...bad].map(([n, r]) => [n, [...r]]),
    [['n1', ['nvidia.com/gpu']]],
  );
  const pod = (node: string, spec: object = gpuSpec(), phase = 'Running') =>
    ({
      metadata: { name: `p-${node}` },
      spec: { ...spec, nodeName: node },
      status: { phase },
    }) as unknown as PodObject;
  assert.deepEqual(podsOnNoExecuteNodes([pod('n1'), pod('n2'), pod('n3')], bad), ['n1']);
  assert.deepEqual(
    podsOnNoExecuteNodes(
      [pod('n1', { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] })],
      bad,
    ),
    [],
  );
  assert.deepEqual(podsOnNoExecuteNodes([pod('n1', gpuSpec(), 'Pending')], bad), []);
});
