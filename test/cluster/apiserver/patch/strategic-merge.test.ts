import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  PatchError,
  applyStrategicMergePatch as smp,
} from '../../../../src/cluster/apiserver/patch/index.ts';
import { deepFreeze } from './freeze.ts';

// biome-ignore lint/suspicious/noExplicitAny: fixtures navigate free-form JSON objects.
type Obj = Record<string, any>;

const pod = (): Obj =>
  deepFreeze({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'p',
      finalizers: ['a.io/one', 'b.io/two'],
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1' }],
      labels: { app: 'web' },
    },
    spec: {
      containers: [
        {
          name: 'main',
          image: 'nginx:1',
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      initContainers: [{ name: 'init', image: 'busybox' }],
      volumes: [{ name: 'data', emptyDir: {} }],
      imagePullSecrets: [{ name: 'reg1' }],
      tolerations: [{ key: 'k1', operator: 'Exists' }],
      schedulingGates: [{ name: 'g1' }, { name: 'g2' }],
    },
    status: {
      conditions: [
        { type: 'PodScheduled', status: 'False' },
        { type: 'Ready', status: 'False' },
      ],
      containerStatuses: [{ name: 'main', ready: false, restartCount: 0 }],
    },
  });

/** The message of the PatchError `fn` throws with `status`. */
function failure(fn: () => unknown, status: number): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof PatchError, String(e));
    assert.equal(e.status, status);
    return e.message;
  }
  assert.fail('expected a PatchError');
}

function fails(fn: () => unknown, status: number, message?: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof PatchError, String(e));
    assert.equal(e.status, status);
    if (message) assert.match(e.message, message);
    return true;
  });
}

describe('applyStrategicMergePatch: merge keys of Pod', () => {
  test('containers merge by name; a new container goes before the existing ones', () => {
    const out = smp(
      pod(),
      {
        spec: {
          containers: [
            { name: 'main', image: 'nginx:2' },
            { name: 'side', image: 'envoy' },
          ],
        },
      },
      'v1/Pod',
    );
    assert.deepEqual(
      out.spec.containers.map((c: Obj) => [c.name, c.image]),
      [
        ['main', 'nginx:2'],
        ['side', 'envoy'],
      ],
    );
    const added = smp(pod(), { spec: { containers: [{ name: 'side', image: 'envoy' }] } }, 'v1/Pod');
    assert.deepEqual(
      added.spec.containers.map((c: Obj) => c.name),
      ['side', 'main'],
    );
    assert.deepEqual(
      added.spec.containers[1].env,
      pod().spec.containers[0].env,
      'untouched container kept whole',
    );
  });

  test('initContainers and ephemeralContainers merge by name', () => {
    const out = smp(
      pod(),
      {
        spec: {
          initContainers: [{ name: 'init', image: 'busybox:2' }],
          ephemeralContainers: [{ name: 'debug', image: 'alpine' }],
        },
      },
      'v1/Pod',
    );
    assert.deepEqual(out.spec.initContainers, [{ name: 'init', image: 'busybox:2' }]);
    assert.deepEqual(out.spec.ephemeralContainers, [{ name: 'debug', image: 'alpine' }]);
  });

  test('env merges by name, ports by containerPort, volumeMounts by mountPath', () => {
    const out = smp(
      pod(),
      {
        spec: {
          containers: [
            {
              name: 'main',
              env: [{ name: 'B', value: 'changed' }],
              ports: [
                { containerPort: 80, name: 'http' },
                { containerPort: 443, protocol: 'TCP' },
              ],
              volumeMounts: [{ mountPath: '/data', readOnly: true }],
            },
          ],
        },
      },
      'v1/Pod',
    );
    const c = out.spec.containers[0];
    assert.deepEqual(c.env, [
      { name: 'A', value: '1' },
      { name: 'B', value: 'changed' },
    ]);
    assert.deepEqual(c.ports, [
      { containerPort: 80, protocol: 'TCP', name: 'http' },
      { containerPort: 443, protocol: 'TCP' },
    ]);
    assert.deepEqual(c.volumeMounts, [{ name: 'data', mountPath: '/data', readOnly: true }]);
  });

  test('volumes, imagePullSecrets and schedulingGates merge by name', () => {
    const out = smp(
      pod(),
      {
        spec: {
          volumes: [{ name: 'cache', emptyDir: { medium: 'Memory' } }],
          imagePullSecrets: [{ name: 'reg2' }],
          schedulingGates: [{ name: 'g1', $patch: 'delete' }],
        },
      },
      'v1/Pod',
    );
    assert.deepEqual(
      out.spec.volumes.map((v: Obj) => v.name),
      ['cache', 'data'],
    );
    assert.deepEqual(out.spec.imagePullSecrets, [{ name: 'reg2' }, { name: 'reg1' }]);
    assert.deepEqual(out.spec.schedulingGates, [{ name: 'g2' }]);
  });

  test('tolerations have no merge key: a patch replaces them (k8s.io/api has no patchStrategy)', () => {
    const out = smp(pod(), { spec: { tolerations: [{ key: 'k2', operator: 'Exists' }] } }, 'v1/Pod');
    assert.deepEqual(out.spec.tolerations, [{ key: 'k2', operator: 'Exists' }]);
  });

  test('status.conditions merge by type; containerStatuses are replaced whole (atomic in k8s.io/api)', () => {
    const out = smp(
      pod(),
      {
        status: {
          conditions: [{ type: 'Ready', status: 'True' }],
          containerStatuses: [{ name: 'main', ready: true }],
        },
      },
      'v1/Pod',
    );
    assert.deepEqual(out.status.conditions, [
      { type: 'PodScheduled', status: 'False' },
      { type: 'Ready', status: 'True' },
    ]);
    assert.deepEqual(out.status.containerStatuses, [{ name: 'main', ready: true }]);
  });

  test('metadata.ownerReferences merge by uid; finalizers merge as a set', () => {
    const out = smp(
      pod(),
      {
        metadata: {
          ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n', uid: 'u2' }],
          finalizers: ['b.io/two', 'c.io/three'],
        },
      },
      'v1/Pod',
    );
    assert.deepEqual(
      out.metadata.ownerReferences.map((o: Obj) => o.uid),
      ['u2', 'u1'],
    );
    assert.deepEqual(out.metadata.finalizers, ['a.io/one', 'b.io/two', 'c.io/three']);
  });

  test('labels merge key by key and null deletes', () => {
    const out = smp(pod(), { metadata: { labels: { app: null, tier: 'db' } } }, 'v1/Pod');
    assert.deepEqual(out.metadata.labels, { tier: 'db' });
  });
});

describe('applyStrategicMergePatch: other kinds', () => {
  const deployment = (kind: string, apiVersion: string, templatePath: string[]) => {
    const template = {
      metadata: { labels: { app: 'x' } },
      spec: { containers: [{ name: 'c', image: 'i1' }] },
    };
    const spec: Obj = {};
    let at = spec;
    for (const key of templatePath.slice(1, -1)) at = at[key] = {};
    at[templatePath.at(-1)!] = template;
    return deepFreeze({ apiVersion, kind, metadata: { name: 'w' }, spec: spec });
  };

  for (const [gvk, path] of [
    ['apps/v1/Deployment', ['spec', 'template']],
    ['apps/v1/ReplicaSet', ['spec', 'template']],
    ['apps/v1/StatefulSet', ['spec', 'template']],
    ['apps/v1/DaemonSet', ['spec', 'template']],
    ['batch/v1/Job', ['spec', 'template']],
    ['batch/v1/CronJob', ['spec', 'jobTemplate', 'spec', 'template']],
    ['v1/PodTemplate', ['template']],
  ] as const) {
    test(`${gvk} merges the containers of its pod template by name`, () => {
      const [apiVersion, kind] = [gvk.slice(0, gvk.lastIndexOf('/')), gvk.slice(gvk.lastIndexOf('/') + 1)];
      const doc =
        path[0] === 'template'
          ? deepFreeze({
              apiVersion,
              kind,
              metadata: { name: 'w' },
              template: { spec: { containers: [{ name: 'c', image: 'i1' }] } },
            })
          : deployment(kind, apiVersion, [...path]);
      let patch: Obj = {
        containers: [
          { name: 'c', image: 'i2' },
          { name: 'd', image: 'i3' },
        ],
      };
      patch = { spec: patch };
      for (const key of [...path].reverse()) patch = { [key]: patch };
      const out = smp(doc, patch, gvk);
      let tpl: Obj = out;
      for (const key of path) tpl = tpl[key];
      assert.deepEqual(tpl.spec.containers, [
        { name: 'c', image: 'i2' },
        { name: 'd', image: 'i3' },
      ]);
    });
  }

  test('Node status.conditions and status.addresses merge by type', () => {
    const node = deepFreeze({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n' },
      status: {
        conditions: [{ type: 'Ready', status: 'False' }],
        addresses: [
          { type: 'InternalIP', address: '10.0.0.1' },
          { type: 'Hostname', address: 'n' },
        ],
      },
    });
    const out = smp(
      node,
      {
        status: {
          conditions: [{ type: 'Ready', status: 'True' }],
          addresses: [{ type: 'InternalIP', address: '10.0.0.2' }],
        },
      },
      { group: '', version: 'v1', kind: 'Node' },
    );
    assert.deepEqual(out.status.conditions, [{ type: 'Ready', status: 'True' }]);
    assert.deepEqual(out.status.addresses, [
      { type: 'InternalIP', address: '10.0.0.2' },
      { type: 'Hostname', address: 'n' },
    ]);
  });

  test('Service ports merge by port', () => {
    const svc = deepFreeze({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { ports: [{ port: 80, targetPort: 8080 }], selector: { app: 'a' } },
    });
    const out = smp(svc, { spec: { ports: [{ port: 80, targetPort: 9090 }, { port: 443 }] } }, 'v1/Service');
    assert.deepEqual(out.spec.ports, [{ port: 80, targetPort: 9090 }, { port: 443 }]);
  });

  test('Deployment status.conditions merge by type', () => {
    const d = deepFreeze({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      status: { conditions: [{ type: 'Available', status: 'False' }] },
    });
    const out = smp(
      d,
      { status: { conditions: [{ type: 'Progressing', status: 'True' }] } },
      'apps/v1/Deployment',
    );
    assert.deepEqual(
      out.status.conditions.map((c: Obj) => c.type),
      ['Progressing', 'Available'],
    );
  });
});

describe('applyStrategicMergePatch: directives', () => {
  test('$patch: delete removes a keyed list item or a whole map', () => {
    const out = smp(
      pod(),
      {
        metadata: { labels: { $patch: 'delete' } },
        spec: { containers: [{ name: 'main', env: [{ name: 'A', $patch: 'delete' }] }] },
      },
      'v1/Pod',
    );
    assert.deepEqual(out.metadata.labels, {});
    assert.deepEqual(out.spec.containers[0].env, [{ name: 'B', value: '2' }]);
  });

  test('$patch: replace replaces a list or a map instead of merging', () => {
    const out = smp(
      pod(),
      {
        metadata: { labels: { $patch: 'replace', only: 'me' } },
        spec: { containers: [{ name: 'solo', image: 'x' }, { $patch: 'replace' }] },
      },
      'v1/Pod',
    );
    assert.deepEqual(out.metadata.labels, { only: 'me' });
    assert.deepEqual(out.spec.containers, [{ name: 'solo', image: 'x' }]);
  });

  test('$patch: merge is refused by kube-apiserver in maps and in lists', () => {
    fails(
      () => smp(pod(), { metadata: { labels: { $patch: 'merge', x: 'y' } } }, 'v1/Pod'),
      500,
      /unknown patch type: merge in map/,
    );
    fails(
      () => smp(pod(), { spec: { containers: [{ $patch: 'merge' }] } }, 'v1/Pod'),
      500,
      /merging lists cannot yet be specified in the patch/,
    );
  });

  test('$deleteFromPrimitiveList removes values from a set-like list', () => {
    const out = smp(pod(), { metadata: { '$deleteFromPrimitiveList/finalizers': ['a.io/one'] } }, 'v1/Pod');
    assert.deepEqual(out.metadata.finalizers, ['b.io/two']);
  });

  test('$setElementOrder fixes the order of the merged list', () => {
    const out = smp(
      pod(),
      {
        metadata: {
          '$setElementOrder/finalizers': ['b.io/two', 'a.io/one', 'c.io/three'],
          finalizers: ['c.io/three'],
        },
        spec: {
          containers: [
            {
              name: 'main',
              '$setElementOrder/env': [{ name: 'B' }, { name: 'C' }, { name: 'A' }],
              env: [{ name: 'C', value: '3' }],
            },
          ],
        },
      },
      'v1/Pod',
    );
    assert.deepEqual(out.metadata.finalizers, ['b.io/two', 'a.io/one', 'c.io/three']);
    assert.deepEqual(
      out.spec.containers[0].env.map((e: Obj) => e.name),
      ['B', 'C', 'A'],
    );
    assert.ok(!('$setElementOrder/env' in out.spec.containers[0]));
  });

  test('$retainKeys clears the keys it does not list', () => {
    const d = deepFreeze({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } },
    });
    const out = smp(
      d,
      { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
      'apps/v1/Deployment',
    );
    assert.deepEqual(out.spec.strategy, { type: 'Recreate' });
    fails(
      () =>
        smp(d, { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: {} } } }, 'apps/v1/Deployment'),
      400,
      /invalid patch format of retainKeys/,
    );
  });

  test('directives and nulls never reach the stored object for new fields', () => {
    const out = smp(
      pod(),
      { spec: { affinity: { nodeAffinity: { $patch: 'delete' }, podAffinity: { x: null, y: [] } } } },
      'v1/Pod',
    );
    assert.deepEqual(out.spec.affinity, { podAffinity: { y: [] } });
  });
});

describe('applyStrategicMergePatch: errors and purity', () => {
  test('custom resources are refused with 415', () => {
    fails(
      () => smp({ apiVersion: 'example.com/v1', kind: 'Widget' }, {}, 'example.com/v1/Widget'),
      415,
      /accepted media types include: application\/json-patch\+json, application\/merge-patch\+json, application\/apply-patch\+yaml$/,
    );
  });

  test('a list item without its merge key is a 500, as the real server answers', () => {
    fails(
      () => smp(pod(), { spec: { containers: [{ image: 'x' }] } }, 'v1/Pod'),
      500,
      /^map: map\[image:x\] does not contain declared merge key: name$/,
    );
  });

  test('a patch that is not an object is a 400; lists of lists are a 422', () => {
    fails(() => smp(pod(), [1], 'v1/Pod'), 400);
    const empty = deepFreeze({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', finalizers: [] } });
    fails(() => smp(empty, { metadata: { finalizers: [['x']] } }, 'v1/Pod'), 422);
    fails(
      () => smp(pod(), { spec: { containers: [[1]] } }, 'v1/Pod'),
      500,
      /list element types are not identical/,
    );
  });

  test('a patch of the wrong JSON type is named as Go’s decoder names it; null patches nothing', () => {
    for (const [patch, kind] of [
      [[1], 'array'],
      [true, 'bool'],
      [1.5, 'number'],
      ['x', 'string'],
    ] as const) {
      assert.equal(
        failure(() => smp(pod(), patch, 'v1/Pod'), 400),
        `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`,
      );
    }
    assert.deepEqual(smp(pod(), null, 'v1/Pod'), pod());
  });

  test('values of the wrong type are named by their Go types', () => {
    for (const [value, type] of [
      [true, 'bool'],
      [2, 'int64'],
      [2.5, 'float64'],
      ['a.io/one', 'string'],
      [{ a: 1 }, 'map[string]interface {}'],
      [null, '%!s(<nil>)'],
    ] as const) {
      assert.equal(
        failure(() => smp(pod(), { metadata: { '$setElementOrder/finalizers': value } }, 'v1/Pod'), 500),
        `expected a []interface {}, but received a ${type}`,
      );
    }
    assert.equal(
      failure(() => smp(pod(), { metadata: { labels: { $patch: 7 } } }, 'v1/Pod'), 500),
      'unknown patch type: %!s(int64=7) in map: map[$patch:7]',
    );
  });

  test('the input document and the patch are never mutated', () => {
    const doc = pod();
    const patch = deepFreeze({
      metadata: {
        '$setElementOrder/finalizers': ['b.io/two', 'a.io/one'],
        labels: { $patch: 'replace', z: '1' },
      },
      spec: {
        containers: [
          { name: 'main', env: [{ name: 'A', $patch: 'delete' }] },
          { name: 'new', image: 'n' },
        ],
      },
    });
    const before = JSON.stringify(doc);
    smp(doc, patch, 'v1/Pod');
    assert.equal(JSON.stringify(doc), before);
  });
});

describe('applyStrategicMergePatch: every keyed list merges by its key', () => {
  // [kind, path to the list, merge key]: written from k8s.io/api's patchMergeKey tags.
  const cases: [string, string[], string][] = [
    ['v1/Pod', ['spec', 'containers'], 'name'],
    ['v1/Pod', ['spec', 'initContainers'], 'name'],
    ['v1/Pod', ['spec', 'ephemeralContainers'], 'name'],
    ['v1/Pod', ['spec', 'volumes'], 'name'],
    ['v1/Pod', ['spec', 'imagePullSecrets'], 'name'],
    ['v1/Pod', ['spec', 'schedulingGates'], 'name'],
    ['v1/Pod', ['spec', 'hostAliases'], 'ip'],
    ['v1/Pod', ['spec', 'topologySpreadConstraints'], 'topologyKey'],
    ['v1/Pod', ['spec', 'resourceClaims'], 'name'],
    ['v1/Pod', ['status', 'conditions'], 'type'],
    ['v1/Pod', ['status', 'podIPs'], 'ip'],
    ['v1/Pod', ['status', 'hostIPs'], 'ip'],
    ['v1/Pod', ['metadata', 'ownerReferences'], 'uid'],
    ['v1/Node', ['status', 'conditions'], 'type'],
    ['v1/Node', ['status', 'addresses'], 'type'],
    ['v1/Service', ['spec', 'ports'], 'port'],
    ['v1/Namespace', ['status', 'conditions'], 'type'],
    ['v1/PersistentVolumeClaim', ['status', 'conditions'], 'type'],
    ['apps/v1/Deployment', ['status', 'conditions'], 'type'],
    ['apps/v1/ReplicaSet', ['status', 'conditions'], 'type'],
    ['apps/v1/StatefulSet', ['status', 'conditions'], 'type'],
    ['apps/v1/DaemonSet', ['status', 'conditions'], 'type'],
    ['batch/v1/Job', ['status', 'conditions'], 'type'],
    ['apps/v1/Deployment', ['spec', 'template', 'spec', 'containers'], 'name'],
    ['apps/v1/DaemonSet', ['spec', 'template', 'spec', 'volumes'], 'name'],
    ['batch/v1/Job', ['spec', 'template', 'spec', 'initContainers'], 'name'],
    ['policy/v1/PodDisruptionBudget', ['status', 'conditions'], 'type'],
    ['admissionregistration.k8s.io/v1/MutatingWebhookConfiguration', ['webhooks'], 'name'],
  ];
  const nest = (path: string[], leaf: unknown): Obj => {
    let v: unknown = leaf;
    for (const key of [...path].reverse()) v = { [key]: v };
    return v as Obj;
  };
  const at = (doc: Obj, path: string[]): Obj[] => path.reduce((o, k) => o[k], doc) as unknown as Obj[];

  for (const [kind, path, key] of cases) {
    test(`${kind} ${path.join('.')} by ${key}`, () => {
      const doc = deepFreeze(
        nest(path, [
          { [key]: 'k1', x: 1 },
          { [key]: 'k2', x: 2 },
        ]),
      );
      const out = smp(doc, nest(path, [{ [key]: 'k2', y: 3 }, { [key]: 'k3' }]), kind);
      // Ordering as kube-apiserver's: server-only k1 keeps its place before k2, and new k3
      // follows k2 as in the patch.
      assert.deepEqual(at(out, path), [{ [key]: 'k1', x: 1 }, { [key]: 'k2', x: 2, y: 3 }, { [key]: 'k3' }]);
    });
  }

  test('container sub-lists merge by their keys in every container list', () => {
    for (const list of ['containers', 'initContainers', 'ephemeralContainers']) {
      for (const [sub, key] of [
        ['env', 'name'],
        ['ports', 'containerPort'],
        ['volumeMounts', 'mountPath'],
        ['volumeDevices', 'devicePath'],
      ] as const) {
        const doc = deepFreeze({ spec: { [list]: [{ name: 'c', [sub]: [{ [key]: 'a', x: 1 }] }] } });
        const out = smp(doc, { spec: { [list]: [{ name: 'c', [sub]: [{ [key]: 'a', y: 2 }] }] } }, 'v1/Pod');
        assert.deepEqual(out.spec[list]?.[0]?.[sub], [{ [key]: 'a', x: 1, y: 2 }], `${list}.${sub}`);
      }
    }
  });
});
