/**
 * VolumeBinding's pure checks (volume_binding.go PreFilter/Filter, binder.go FindPodVolumes)
 * and the FailedScheduling message they produce through schedulePod.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { ClusterState, schedulePod } from '../../../src/cluster/scheduler/core/index.ts';
import {
  ERR_REASON_BIND_CONFLICT,
  ERR_REASON_NODE_CONFLICT,
  ERR_UNBOUND_IMMEDIATE,
  SELECTED_NODE,
  topologyAdmits,
  type VolumeLookup,
  volumeFilter,
  volumePreFilter,
} from '../../../src/cluster/scheduler/volume-binding.ts';
import type { Node, Pod } from '../../../src/kube/builtin.ts';
import { node as buildNode, pod as buildPod } from '../../support/objects.ts';

function lookup(objs: { claims?: KubeObject[]; pvs?: KubeObject[]; classes?: KubeObject[] }): VolumeLookup {
  return {
    claim: (ns, n) => objs.claims?.find((c) => c.metadata.namespace === ns && c.metadata.name === n),
    volume: (n) => objs.pvs?.find((v) => v.metadata.name === n),
    storageClass: (n) => objs.classes?.find((c) => c.metadata.name === n),
    volumes: () => objs.pvs ?? [],
  };
}

const claim = (name: string, spec: Record<string, unknown>, extra: Partial<KubeObject['metadata']> = {}) =>
  ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ...extra },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
  }) as KubeObject;

const pod = (...claims: string[]) =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', uid: 'p1' },
    spec: {
      containers: [{ name: 'c' }],
      volumes: claims.map((c) => ({ name: c, persistentVolumeClaim: { claimName: c } })),
    },
  }) as KubeObject;

const wffc = (name: string, extra: Record<string, unknown> = {}) =>
  ({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner: 'ebs.csi.aws.com',
    volumeBindingMode: 'WaitForFirstConsumer',
    ...extra,
  }) as unknown as KubeObject;

const zoneA = { name: 'a1', labels: { 'topology.kubernetes.io/zone': 'a', 'kubernetes.io/hostname': 'a1' } };
const zoneB = { name: 'b1', labels: { 'topology.kubernetes.io/zone': 'b', 'kubernetes.io/hostname': 'b1' } };

describe('VolumeBinding PreFilter', () => {
  test('a pod without claims is skipped', () => {
    assert.deepEqual(volumePreFilter(pod(), lookup({})), { kind: 'skip' });
  });
  test("a generic ephemeral volume's claim <pod>-<volume> must exist and be the pod's", () => {
    const eph = pod();
    (eph.spec as { volumes: unknown[] }).volumes = [
      { name: 'tmp', ephemeral: { volumeClaimTemplate: { spec: {} } } },
    ];
    assert.deepEqual(volumePreFilter(eph, lookup({})), {
      kind: 'reject',
      message: 'persistentvolumeclaim "p-tmp" not found',
    });
    const foreign = claim('p-tmp', { volumeName: 'pv1' });
    assert.deepEqual(volumePreFilter(eph, lookup({ claims: [foreign] })), {
      kind: 'reject',
      message: 'PVC default/p-tmp was not created for pod default/p (pod is not owner)',
    });
    const owned = claim(
      'p-tmp',
      { volumeName: 'pv1' },
      { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'p1', controller: true }] },
    );
    const res = volumePreFilter(eph, lookup({ claims: [owned] }));
    assert.notEqual(res.kind, 'reject');
  });
  test('a missing claim, a claim being deleted, an unbound Immediate claim are rejected with upstream wording', () => {
    assert.deepEqual(volumePreFilter(pod('x'), lookup({})), {
      kind: 'reject',
      message: 'persistentvolumeclaim "x" not found',
    });
    const deleting = claim('x', {}, { deletionTimestamp: '2026-01-01T00:00:00Z' });
    assert.deepEqual(volumePreFilter(pod('x'), lookup({ claims: [deleting] })), {
      kind: 'reject',
      message: 'persistentvolumeclaim "x" is being deleted',
    });
    // A class that does not exist is not WaitForFirstConsumer (IsDelayBindingMode): Immediate.
    const immediate = claim('x', { storageClassName: 'gone' });
    assert.deepEqual(volumePreFilter(pod('x'), lookup({ claims: [immediate] })), {
      kind: 'reject',
      message: ERR_UNBOUND_IMMEDIATE,
    });
  });
  test('bound and WaitForFirstConsumer claims pass to Filter', () => {
    const r = volumePreFilter(
      pod('b', 'w'),
      lookup({
        claims: [claim('b', { volumeName: 'pv-b' }), claim('w', { storageClassName: 'local' })],
        classes: [wffc('local')],
      }),
    );
    assert.equal(r.kind, 'ok');
    if (r.kind !== 'ok') return;
    assert.deepEqual(
      [r.claims.bound.map((c) => c.metadata.name), r.claims.delayBinding.map((c) => c.metadata.name)],
      [['b'], ['w']],
    );
  });
});

describe('VolumeBinding Filter', () => {
  const pvOn = (name: string, host: string, extra: Record<string, unknown> = {}) =>
    ({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name },
      spec: {
        capacity: { storage: '5Gi' },
        accessModes: ['ReadWriteOnce'],
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [host] }] },
            ],
          },
        },
        ...extra,
      },
      status: { phase: 'Available' },
    }) as KubeObject;

  test("a bound claim's volume node affinity must admit the node", () => {
    const l = lookup({ pvs: [pvOn('pv-b', 'a1')] });
    const claims = { bound: [claim('b', { volumeName: 'pv-b' })], delayBinding: [] };
    assert.ok('volumes' in volumeFilter(claims, zoneA, l));
    assert.deepEqual(volumeFilter(claims, zoneB, l), {
      status: {
        code: 'UnschedulableAndUnresolvable',
        plugin: 'VolumeBinding',
        reasons: [ERR_REASON_NODE_CONFLICT],
      },
    });
  });

  test('a WaitForFirstConsumer claim fits where allowedTopologies admit provisioning', () => {
    const cls = wffc('zonal', {
      allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['a'] }] }],
    });
    const w = claim('w', { storageClassName: 'zonal' });
    const claims = { bound: [], delayBinding: [w] };
    const l = lookup({ classes: [cls] });
    const ok = volumeFilter(claims, zoneA, l);
    assert.ok('volumes' in ok && ok.volumes.claimsToSelectNode[0] === w);
    const no = volumeFilter(claims, zoneB, l);
    assert.ok('status' in no);
    assert.deepEqual(no.status.reasons, [ERR_REASON_BIND_CONFLICT]);
  });

  test('a static volume of the class admits its own node only; no-provisioner never provisions', () => {
    const cls = wffc('local', { provisioner: 'kubernetes.io/no-provisioner' });
    const claims = { bound: [], delayBinding: [claim('w', { storageClassName: 'local' })] };
    const l = lookup({ classes: [cls], pvs: [pvOn('local-a1', 'a1', { storageClassName: 'local' })] });
    const onA = volumeFilter(claims, zoneA, l);
    assert.ok('volumes' in onA);
    assert.deepEqual(
      onA.volumes.staticBindings.map((b) => b.volume.metadata.name),
      ['local-a1'],
    );
    assert.deepEqual(onA.volumes.claimsToSelectNode, []);
    assert.ok('status' in volumeFilter(claims, zoneB, l));
  });

  test('a claim with a selected node fits that node only', () => {
    const cls = wffc('std');
    const w = claim('w', { storageClassName: 'std' }, { annotations: { [SELECTED_NODE]: 'b1' } });
    const l = lookup({ classes: [cls] });
    assert.ok('status' in volumeFilter({ bound: [], delayBinding: [w] }, zoneA, l));
    assert.ok('volumes' in volumeFilter({ bound: [], delayBinding: [w] }, zoneB, l));
  });

  test('topology terms: none admit all; a term needs every key', () => {
    assert.equal(topologyAdmits(undefined, zoneB), true);
    const terms = [
      {
        matchLabelExpressions: [
          { key: 'topology.kubernetes.io/zone', values: ['b'] },
          { key: 'rack', values: ['r1'] },
        ],
      },
    ];
    assert.equal(topologyAdmits(terms, zoneB), false);
  });
});

describe('VolumeBinding in schedulePod', () => {
  const node = (name: string) =>
    buildNode<Node>(name, { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } });

  test("a PreFilter rejection is the message, and preemption isn't helpful on any node", () => {
    const state = new ClusterState();
    for (const n of ['n1', 'n2', 'n3']) state.upsertNode(node(n));
    const st = {
      code: 'UnschedulableAndUnresolvable' as const,
      plugin: 'VolumeBinding',
      reasons: ['persistentvolumeclaim "x" not found'],
    };
    const r = schedulePod(state, buildPod<Pod>('p', { uid: 'p' }), { extra: { preFilterReject: st } });
    assert.equal(r.status, 'Unschedulable');
    if (r.status !== 'Unschedulable') return;
    assert.equal(
      r.error.message,
      '0/3 nodes are available: persistentvolumeclaim "x" not found. no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
    );
  });

  test('Filter reasons are counted per node like every other plugin', () => {
    const state = new ClusterState();
    for (const n of ['n1', 'n2']) state.upsertNode(node(n));
    const filter = () => ({
      code: 'UnschedulableAndUnresolvable' as const,
      plugin: 'VolumeBinding',
      reasons: [ERR_REASON_BIND_CONFLICT],
    });
    const r = schedulePod(state, buildPod<Pod>('p', { uid: 'p' }), { extra: { filter } });
    assert.equal(r.status, 'Unschedulable');
    if (r.status !== 'Unschedulable') return;
    assert.match(
      r.error.message,
      /^0\/2 nodes are available: 2 node\(s\) didn't find available persistent volumes to bind\. /,
    );
  });
});
