import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bindPod, validateBinding } from '../../../../src/cluster/apiserver/builtin/pods.ts';
import type { KubeObject } from '../../../../src/cluster/apiserver/types.ts';
import { pod as buildPod } from '../../../support/objects.ts';
import { create, created, messages, mutate, rtFor, update } from './harness.ts';

const pods = rtFor('pods');

function pod(
  spec: Record<string, unknown> = {},
  metadata: Record<string, unknown> = {},
): Record<string, unknown> {
  return buildPod('p', { namespace: null, image: 'nginx:1.25', metadata, spec });
}

// biome-ignore lint/suspicious/noExplicitAny: tests reach into loose JSON
type Any = any;

describe('pod defaulting', () => {
  test('fills the spec fields clients see on every pod', () => {
    const obj = created(pods, pod()) as Any;
    assert.equal(obj.spec.restartPolicy, 'Always');
    assert.equal(obj.spec.dnsPolicy, 'ClusterFirst');
    assert.equal(obj.spec.schedulerName, 'default-scheduler');
    assert.equal(obj.spec.terminationGracePeriodSeconds, 30);
    assert.deepEqual(obj.spec.securityContext, {});
    assert.equal(obj.spec.enableServiceLinks, true);
    const c = obj.spec.containers[0];
    assert.equal(c.terminationMessagePath, '/dev/termination-log');
    assert.equal(c.terminationMessagePolicy, 'File');
    assert.equal(c.imagePullPolicy, 'IfNotPresent');
    assert.deepEqual(c.resources, {});
  });

  test('imagePullPolicy follows the tag', () => {
    const policy = (image: string) =>
      (created(pods, pod({ containers: [{ name: 'c', image }] })) as Any).spec.containers[0].imagePullPolicy;
    assert.equal(policy('nginx'), 'Always');
    assert.equal(policy('nginx:latest'), 'Always');
    assert.equal(policy('registry.local:5000/team/app'), 'Always');
    assert.equal(policy('registry.local:5000/team/app:v2'), 'IfNotPresent');
    assert.equal(policy('nginx@sha256:abc'), 'IfNotPresent');
    assert.equal(
      (created(pods, pod({ containers: [{ name: 'c', image: 'x', imagePullPolicy: 'Never' }] })) as Any).spec
        .containers[0].imagePullPolicy,
      'Never',
    );
  });

  test('requests default to limits and quantities are stored canonically', () => {
    const obj = created(
      pods,
      pod({
        containers: [{ name: 'c', image: 'x', resources: { limits: { cpu: '1000m', memory: '1024Mi' } } }],
      }),
    ) as Any;
    assert.deepEqual(obj.spec.containers[0].resources, {
      limits: { cpu: '1', memory: '1Gi' },
      requests: { cpu: '1', memory: '1Gi' },
    });
  });

  test('container ports get TCP and probes their defaults', () => {
    const obj = created(
      pods,
      pod({
        containers: [
          {
            name: 'c',
            image: 'x',
            ports: [{ containerPort: 80 }],
            readinessProbe: { httpGet: { port: 80, path: '/' } },
          },
        ],
      }),
    ) as Any;
    assert.equal(obj.spec.containers[0].ports[0].protocol, 'TCP');
    assert.deepEqual(obj.spec.containers[0].readinessProbe, {
      httpGet: { port: 80, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
  });
});

describe('pod create (prepareForCreate and admission)', () => {
  test('status starts Pending with the QoS class, whatever the client sent', () => {
    const obj = created(pods, { ...pod(), status: { phase: 'Running', podIP: '1.2.3.4' } }) as Any;
    assert.deepEqual(obj.status, { phase: 'Pending', qosClass: 'BestEffort' });
    assert.equal(obj.metadata.generation, 1);
  });

  test('a gated pod gets PodScheduled=False/SchedulingGated', () => {
    const obj = created(pods, pod({ schedulingGates: [{ name: 'example.com/gate' }] })) as Any;
    assert.equal(obj.status.conditions.length, 1);
    const c = obj.status.conditions[0];
    assert.equal(c.type, 'PodScheduled');
    assert.equal(c.status, 'False');
    assert.equal(c.reason, 'SchedulingGated');
    assert.equal(c.message, 'Scheduling is blocked due to non-empty scheduling gates');
    assert.equal(c.lastProbeTime, null);
    assert.match(c.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  test('admission adds the service account, default tolerations and priority', () => {
    const obj = created(pods, pod()) as Any;
    assert.equal(obj.spec.serviceAccountName, 'default');
    assert.equal(obj.spec.serviceAccount, 'default');
    assert.equal(obj.spec.priority, 0);
    assert.equal(obj.spec.preemptionPolicy, 'PreemptLowerPriority');
    assert.deepEqual(obj.spec.tolerations, [
      {
        key: 'node.kubernetes.io/not-ready',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
      {
        key: 'node.kubernetes.io/unreachable',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
    ]);
  });

  test('no default tolerations when the pod already tolerates everything; system priority classes resolve', () => {
    const obj = created(
      pods,
      pod({
        tolerations: [{ operator: 'Exists' }],
        priorityClassName: 'system-node-critical',
        serviceAccountName: 'robot',
      }),
    ) as Any;
    assert.deepEqual(obj.spec.tolerations, [{ operator: 'Exists' }]);
    assert.equal(obj.spec.priority, 2000001000);
    assert.equal(obj.spec.serviceAccount, 'robot');
  });
});

describe('pod create validation', () => {
  test('DNS-1123 subdomain names with the real message', () => {
    const r = create(pods, pod({}, { name: 'Bad_Name' }));
    assert.deepEqual(messages(r.errors), [
      `metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ]);
  });

  test('labels are checked key and value', () => {
    const r = create(pods, pod({}, { labels: { 'bad key': 'v', ok: 'bad value!' } }));
    const m = messages(r.errors);
    assert.equal(m.length, 2);
    assert.match(
      m[0]!,
      /^metadata\.labels: Invalid value: "bad key": name part must consist of alphanumeric characters/,
    );
    assert.match(
      m[1]!,
      /^metadata\.labels: Invalid value: "bad value!": a valid label must be an empty string or consist of/,
    );
  });

  test('needs at least one container, each with a name and an image', () => {
    assert.deepEqual(messages(create(pods, pod({ containers: [] })).errors), [
      'spec.containers: Required value',
    ]);
    assert.deepEqual(messages(create(pods, pod({ containers: [{ image: 'x' }] })).errors), [
      'spec.containers[0].name: Required value',
    ]);
    assert.deepEqual(messages(create(pods, pod({ containers: [{ name: 'c' }] })).errors), [
      'spec.containers[0].image: Required value',
      'spec.containers[0].imagePullPolicy: Required value',
    ]);
  });

  test('container names are unique across app and init containers', () => {
    const r = create(
      pods,
      pod({
        initContainers: [{ name: 'c', image: 'x' }],
        containers: [
          { name: 'c', image: 'x' },
          { name: 'c', image: 'y' },
        ],
      }),
    );
    assert.deepEqual(messages(r.errors), [
      'spec.containers[1].name: Duplicate value: "c"',
      'spec.initContainers[0].name: Duplicate value: "c"',
    ]);
  });

  test('restartPolicy must be supported', () => {
    assert.deepEqual(messages(create(pods, pod({ restartPolicy: 'Sometimes' })).errors), [
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ]);
  });

  test('requests may not exceed limits', () => {
    const r = create(
      pods,
      pod({
        containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } }],
      }),
    );
    assert.deepEqual(messages(r.errors), [
      'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
    ]);
  });

  test('extended resources need equal requests and limits; unknown bare names are refused', () => {
    const r = create(
      pods,
      pod({
        containers: [{ name: 'c', image: 'x', resources: { requests: { 'nvidia.com/gpu': '1', gpu: '1' } } }],
      }),
    );
    assert.deepEqual(messages(r.errors), [
      'spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources',
      'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers',
    ]);
  });

  test('malformed quantities are reported', () => {
    const r = create(
      pods,
      pod({ containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: 'lots' } } }] }),
    );
    assert.deepEqual(messages(r.errors), [
      `spec.containers[0].resources.requests[cpu]: Invalid value: "lots": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
    ]);
  });

  test('scheduling gates: valid names, no duplicates, and no nodeName alongside', () => {
    const r = create(
      pods,
      pod({ nodeName: 'n1', schedulingGates: [{ name: 'a/b/c' }, { name: 'ok' }, { name: 'ok' }] }),
    );
    const m = messages(r.errors);
    assert.ok(
      m[0]!.startsWith('spec.schedulingGates[0]: Invalid value: "a/b/c": a qualified name must consist of'),
    );
    assert.deepEqual(m.slice(1), [
      'spec.schedulingGates[2]: Duplicate value: "ok"',
      'spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared',
    ]);
  });

  test('tolerations are validated', () => {
    const r = create(
      pods,
      pod({
        tolerations: [
          { key: 'k', operator: 'Exists', value: 'v' },
          { operator: 'Equal', effect: 'NoRun' },
        ],
      }),
    );
    assert.deepEqual(messages(r.errors), [
      `spec.tolerations[0].operator: Invalid value: "v": value must be empty when \`operator\` is 'Exists'`,
      'spec.tolerations[1].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
      'spec.tolerations[1].effect: Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ]);
  });

  test('volume mounts must name a volume', () => {
    const r = create(
      pods,
      pod({ containers: [{ name: 'c', image: 'x', volumeMounts: [{ name: 'data', mountPath: '/d' }] }] }),
    );
    assert.deepEqual(messages(r.errors), ['spec.containers[0].volumeMounts[0].name: Not found: "data"']);
  });

  test('a valid pod passes', () => {
    assert.deepEqual(create(pods, pod({ volumes: [{ name: 'data', emptyDir: {} }] })).errors, []);
  });
});

const UPDATE_PREFIX =
  'spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n';

describe('pod update validation', () => {
  const base = created(pods, pod());

  test('images may change and bump the generation', () => {
    const r = update(
      pods,
      base,
      mutate(base, (p: Any) => (p.spec.containers[0].image = 'nginx:1.27')),
    );
    assert.deepEqual(r.errors, []);
    assert.equal(r.obj.metadata.generation, 2);
  });

  test('other spec fields are forbidden with the real message', () => {
    const r = update(
      pods,
      base,
      mutate(base, (p: Any) => (p.spec.restartPolicy = 'Never')),
    );
    assert.equal(r.errors.length, 1);
    assert.ok(messages(r.errors)[0]!.startsWith(UPDATE_PREFIX), messages(r.errors)[0]);
    assert.match(r.errors[0]!.message, /restartPolicy/);
  });

  test('containers may not be added or removed', () => {
    const r = update(
      pods,
      base,
      mutate(base, (p: Any) => p.spec.containers.push({ name: 'd', image: 'x' })),
    );
    assert.deepEqual(messages(r.errors), [
      'spec.containers: Forbidden: pod updates may not add or remove containers',
    ]);
  });

  test('activeDeadlineSeconds may be set and then only lowered', () => {
    const set = update(
      pods,
      base,
      mutate(base, (p: Any) => (p.spec.activeDeadlineSeconds = 100)),
    );
    assert.deepEqual(set.errors, []);
    const raised = update(
      pods,
      set.obj,
      mutate(set.obj, (p: Any) => (p.spec.activeDeadlineSeconds = 200)),
    );
    assert.deepEqual(messages(raised.errors), [
      'spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value',
    ]);
    const unset = update(
      pods,
      set.obj,
      mutate(set.obj, (p: Any) => delete p.spec.activeDeadlineSeconds),
    );
    assert.deepEqual(messages(unset.errors), [
      'spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value',
    ]);
  });

  test('tolerations may only be added (tolerationSeconds may change)', () => {
    const added = update(
      pods,
      base,
      mutate(base, (p: Any) =>
        p.spec.tolerations.push({ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }),
      ),
    );
    assert.deepEqual(added.errors, []);
    const retimed = update(
      pods,
      base,
      mutate(base, (p: Any) => (p.spec.tolerations[0].tolerationSeconds = 60)),
    );
    assert.deepEqual(retimed.errors, []);
    // A default toleration left out is added again by DefaultTolerationSeconds, as on create.
    const defaultsLeftOut = update(
      pods,
      base,
      mutate(base, (p: Any) => p.spec.tolerations.pop()),
    );
    assert.deepEqual(defaultsLeftOut.errors, []);
    assert.deepEqual((defaultsLeftOut.obj as Any).spec.tolerations, (base as Any).spec.tolerations);
    const removed = update(
      pods,
      added.obj,
      mutate(added.obj, (p: Any) => p.spec.tolerations.pop()),
    );
    assert.deepEqual(messages(removed.errors), [
      'spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds',
    ]);
  });

  test('status written on the main endpoint is ignored', () => {
    const r = update(
      pods,
      base,
      mutate(base, (p: Any) => (p.status = { phase: 'Running' })),
    );
    assert.deepEqual(r.errors, []);
    assert.equal((r.obj as Any).status.phase, 'Pending');
    assert.equal(r.obj.metadata.generation, 1);
  });
});

describe('scheduling gates and KEP-3838 on update', () => {
  const gated = created(
    pods,
    pod({
      schedulingGates: [{ name: 'example.com/a' }, { name: 'example.com/b' }],
      nodeSelector: { zone: 'z1' },
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'arch', operator: 'In', values: ['amd64'] }] }],
          },
        },
      },
    }),
  );

  test('adding a gate is refused with the exact message', () => {
    const r = update(
      pods,
      gated,
      mutate(gated, (p: Any) => p.spec.schedulingGates.push({ name: 'x' })),
    );
    assert.deepEqual(messages(r.errors), [
      "spec.schedulingGates[2].name: Forbidden: only deletion is allowed, but found new scheduling gate 'x'",
    ]);
  });

  test('removing gates is allowed, one at a time or all at once', () => {
    const one = update(
      pods,
      gated,
      mutate(gated, (p: Any) => p.spec.schedulingGates.shift()),
    );
    assert.deepEqual(one.errors, []);
    assert.equal(one.obj.metadata.generation, 2);
    const all = update(
      pods,
      gated,
      mutate(gated, (p: Any) => delete p.spec.schedulingGates),
    );
    assert.deepEqual(all.errors, []);
  });

  test('a gated pod may gain nodeSelector entries but not change existing ones', () => {
    const add = update(
      pods,
      gated,
      mutate(gated, (p: Any) => (p.spec.nodeSelector.rack = 'r1')),
    );
    assert.deepEqual(add.errors, []);
    const change = update(
      pods,
      gated,
      mutate(gated, (p: Any) => (p.spec.nodeSelector = { zone: 'z2', rack: 'r1' })),
    );
    assert.deepEqual(messages(change.errors), [
      'spec.nodeSelector: Invalid value: {"zone":"z2","rack":"r1"}: only additions to spec.nodeSelector are allowed (no mutations or deletions)',
    ]);
  });

  test('a gated pod may narrow required node affinity, not widen or replace it', () => {
    const narrowed = update(
      pods,
      gated,
      mutate(gated, (p: Any) =>
        p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions.push(
          {
            key: 'zone',
            operator: 'Exists',
          },
        ),
      ),
    );
    assert.deepEqual(narrowed.errors, []);
    const moreTerms = update(
      pods,
      gated,
      mutate(gated, (p: Any) =>
        p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.push({
          matchExpressions: [],
        }),
      ),
    );
    assert.match(
      messages(moreTerms.errors)[0]!,
      /^spec\.affinity\.nodeAffinity\.requiredDuringSchedulingIgnoredDuringExecution\.nodeSelectorTerms: Invalid value: .*: no additions\/deletions to non-empty NodeSelectorTerms list are allowed$/,
    );
    const replaced = update(
      pods,
      gated,
      mutate(
        gated,
        (p: Any) =>
          (p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values =
            ['arm64']),
      ),
    );
    assert.match(
      messages(replaced.errors)[0]!,
      /nodeSelectorTerms\[0\]: Invalid value: .*: only additions are allowed \(no mutations or deletions\)$/,
    );
  });

  test('a gated pod without affinity may get one', () => {
    const plain = created(pods, pod({ schedulingGates: [{ name: 'g' }] }));
    const r = update(
      pods,
      plain,
      mutate(
        plain,
        (p: Any) =>
          (p.spec.affinity = {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'Exists' }] }],
              },
            },
          }),
      ),
    );
    assert.deepEqual(r.errors, []);
  });

  test('an ungated pod may not change its nodeSelector', () => {
    const plain = created(pods, pod({ nodeSelector: { zone: 'z1' } }));
    const r = update(
      pods,
      plain,
      mutate(plain, (p: Any) => (p.spec.nodeSelector.rack = 'r1')),
    );
    assert.ok(messages(r.errors)[0]!.startsWith(UPDATE_PREFIX));
  });
});

describe('pod status updates', () => {
  const base = created(pods, pod());

  test('only status is taken; spec changes are dropped', () => {
    const next = mutate(base, (p: Any) => {
      p.spec.containers[0].image = 'other';
      p.status = {
        phase: 'Running',
        qosClass: 'BestEffort',
        podIP: '10.0.0.5',
        podIPs: [{ ip: '10.0.0.5' }],
      };
    });
    const r = update(pods, base, next, 'status');
    assert.deepEqual(r.errors, []);
    assert.equal((r.obj as Any).spec.containers[0].image, 'nginx:1.25');
    assert.equal((r.obj as Any).status.phase, 'Running');
  });

  test('qosClass is backfilled when omitted and may not change', () => {
    const omitted = update(pods, base, { ...base, status: { phase: 'Running' } }, 'status');
    assert.equal((omitted.obj as Any).status.qosClass, 'BestEffort');
    const changed = update(
      pods,
      base,
      { ...base, status: { phase: 'Running', qosClass: 'Guaranteed' } },
      'status',
    );
    assert.deepEqual(messages(changed.errors), [
      'status.qosClass: Invalid value: "Guaranteed": field is immutable',
    ]);
  });

  test('terminated containers of a Never pod may not come back', () => {
    const never = created(pods, pod({ restartPolicy: 'Never' }));
    const done = update(
      pods,
      never,
      {
        ...never,
        status: {
          phase: 'Failed',
          qosClass: 'BestEffort',
          containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 1 } } }],
        },
      },
      'status',
    );
    assert.deepEqual(done.errors, []);
    const revived = update(
      pods,
      done.obj,
      {
        ...done.obj,
        status: {
          phase: 'Running',
          qosClass: 'BestEffort',
          containerStatuses: [{ name: 'c', state: { running: {} } }],
        },
      },
      'status',
    );
    assert.deepEqual(messages(revived.errors), [
      'status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state',
    ]);
  });
});

describe('pods/binding', () => {
  const now = new Date('2025-01-01T00:00:05Z');

  test('binds an unbound pod and marks it scheduled', () => {
    const p = created(pods, pod());
    assert.deepEqual(
      bindPod(p, { target: { kind: 'Node', name: 'n1' }, metadata: { annotations: { a: 'b' } } }, now),
      {},
    );
    const x = p as Any;
    assert.equal(x.spec.nodeName, 'n1');
    assert.equal(x.metadata.annotations.a, 'b');
    assert.deepEqual(x.status.conditions, [
      {
        lastProbeTime: null,
        type: 'PodScheduled',
        status: 'True',
        lastTransitionTime: '2025-01-01T00:00:05Z',
      },
    ]);
  });

  test('refuses bound, gated and deleting pods', () => {
    const bound = created(pods, pod({ nodeName: 'n0' }));
    assert.deepEqual(bindPod(bound, { target: { name: 'n1' } }), {
      code: 409,
      error: 'pod p is already assigned to node "n0"',
    });
    const gated = created(pods, pod({ schedulingGates: [{ name: 'g' }] }));
    assert.deepEqual(bindPod(gated, { target: { name: 'n1' } }), {
      code: 409,
      error: 'pod p has non-empty .spec.schedulingGates',
    });
    const deleting = mutate(
      created(pods, pod()),
      (p: KubeObject) => (p.metadata.deletionTimestamp = '2025-01-01T00:00:00Z'),
    );
    assert.equal(
      bindPod(deleting, { target: { name: 'n1' } }).error,
      'pod p is being deleted, cannot be assigned to a host',
    );
  });

  test('validates the Binding body', () => {
    assert.deepEqual(
      validateBinding({ target: { kind: 'Pod' } }).map((e) => `${e.field}: ${e.message}`),
      [
        'target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"',
        'target.name: Required value',
      ],
    );
  });
});

describe('pod table and field selectors', () => {
  test("columns are kube-apiserver's", () => {
    assert.deepEqual(
      pods.strategy.table!.columns.map((c) => [c.name, c.priority ?? 0]),
      [
        ['Name', 0],
        ['Ready', 0],
        ['Status', 0],
        ['Restarts', 0],
        ['Age', 0],
        ['IP', 1],
        ['Node', 1],
        ['Nominated Node', 1],
        ['Readiness Gates', 1],
      ],
    );
  });

  test('cells of a running pod', () => {
    const p = mutate(
      created(pods, pod({ readinessGates: [{ conditionType: 'example.com/ready' }] })),
      (x: Any) => {
        x.spec.nodeName = 'n1';
        x.status = {
          phase: 'Running',
          podIP: '10.0.0.7',
          podIPs: [{ ip: '10.0.0.7' }],
          conditions: [{ type: 'example.com/ready', status: 'True' }],
          containerStatuses: [{ name: 'c', ready: true, restartCount: 0, state: { running: {} } }],
        };
      },
    );
    assert.deepEqual(pods.strategy.table!.cells(p, new Date('2025-01-01T00:03:02Z')), [
      'p',
      '1/1',
      'Running',
      '0',
      '3m2s',
      '10.0.0.7',
      'n1',
      '<none>',
      '1/1',
    ]);
  });

  test('selectable fields', () => {
    const p = created(pods, pod({ nodeName: 'n1' }));
    assert.deepEqual(pods.strategy.selectableFields!(p), {
      'spec.nodeName': 'n1',
      'spec.restartPolicy': 'Always',
      'spec.schedulerName': 'default-scheduler',
      'spec.serviceAccountName': 'default',
      'spec.hostNetwork': 'false',
      'status.phase': 'Pending',
      'status.podIP': '',
      'status.nominatedNodeName': '',
    });
  });
});
