/**
 * Storage on the embedded cluster: the simulated provisioner and PV binder — Immediate and
 * WaitForFirstConsumer classes, static volumes, reclaim policies — and a StatefulSet whose
 * volumeClaimTemplates get bound claims.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { testClusterForSuite } from '../../support/cluster.ts';
import { pythonScenario } from '../../support/python.ts';
import { waitFor } from '../../support/wait.ts';

const CLASSES = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: ebs.csi.aws.com
reclaimPolicy: Retain
`;

describe('volumes: provisioning and binding', () => {
  const c = testClusterForSuite({ nodes: 2, timeScale: 20 }, (cluster) =>
    cluster.kubectl(['apply', '-f', '-'], CLASSES),
  );

  test('an Immediate claim is provisioned and bound at once; Retain keeps the volume Released', async () => {
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  storageClassName: fast
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 2Gi}}
`,
    );
    const core = c.kc.makeApiClient(CoreV1Api);
    const pvc = await waitFor('claim bound', async () => {
      const r = await core.readNamespacedPersistentVolumeClaim({ name: 'data', namespace: 'default' });
      return r.status?.phase === 'Bound' ? r : undefined;
    });
    assert.equal(pvc.spec?.volumeName, `pvc-${pvc.metadata?.uid}`);
    assert.equal(pvc.status?.capacity?.storage, '2Gi');
    const row = await c.kubectl(['get', 'pvc', 'data', '--no-headers']);
    assert.match(row, new RegExp(`^data\\s+Bound\\s+pvc-${pvc.metadata?.uid}\\s+2Gi\\s+RWO\\s+fast\\s+`));
    const pv = await core.readPersistentVolume({ name: pvc.spec!.volumeName! });
    assert.equal(pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by'], 'ebs.csi.aws.com');
    assert.equal(pv.status?.phase, 'Bound');
    await c.kubectl(['delete', 'pvc', 'data']);
    await waitFor('volume released', async () => {
      const v = await core.readPersistentVolume({ name: pvc.spec!.volumeName! });
      return v.status?.phase === 'Released';
    });
  });

  test('a static volume that fits binds a claim without provisioning', async () => {
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: PersistentVolume
metadata: {name: manual-1}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  hostPath: {path: /data/1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: static, namespace: default}
spec:
  storageClassName: ""
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`,
    );
    const core = c.kc.makeApiClient(CoreV1Api);
    const pvc = await waitFor('static claim bound', async () => {
      const r = await core.readNamespacedPersistentVolumeClaim({ name: 'static', namespace: 'default' });
      return r.status?.phase === 'Bound' ? r : undefined;
    });
    assert.equal(pvc.spec?.volumeName, 'manual-1');
    assert.equal(pvc.status?.capacity?.storage, '5Gi');
  });

  test('a StatefulSet with volumeClaimTemplates on a WaitForFirstConsumer class runs with bound claims', async () => {
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: db
        image: postgres
        volumeMounts: [{name: data, mountPath: /var/lib/postgresql}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`,
    );
    const core = c.kc.makeApiClient(CoreV1Api);
    await waitFor('two ready replicas', async () => {
      const out = await c.kubectl(['get', 'sts', 'db', '-o', 'jsonpath={.status.readyReplicas}']);
      return out === '2';
    });
    for (const ord of [0, 1]) {
      const claim = await waitFor(`data-db-${ord} bound`, async () => {
        const r = await core.readNamespacedPersistentVolumeClaim({
          name: `data-db-${ord}`,
          namespace: 'default',
        });
        return r.status?.phase === 'Bound' ? r : undefined;
      });
      assert.equal(claim.spec?.storageClassName, 'standard');
      const pod = await core.readNamespacedPod({ name: `db-${ord}`, namespace: 'default' });
      assert.equal(claim.metadata?.annotations?.['volume.kubernetes.io/selected-node'], pod.spec?.nodeName);
      const pv = await core.readPersistentVolume({ name: claim.spec!.volumeName! });
      assert.deepEqual(
        pv.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.[0]?.values,
        [pod.spec?.nodeName],
      );
    }
  });

  test('a generic ephemeral volume gets its claim <pod>-<volume>, owned by the pod and gone with it', async () => {
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: Pod
metadata: {name: scratch, namespace: default}
spec:
  containers:
  - name: c
    image: busybox
    volumeMounts: [{name: work, mountPath: /work}]
  volumes:
  - name: work
    ephemeral:
      volumeClaimTemplate:
        metadata: {labels: {kind: scratch}}
        spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`,
    );
    const core = c.kc.makeApiClient(CoreV1Api);
    await waitFor(
      'pod running',
      async () =>
        (await core.readNamespacedPod({ name: 'scratch', namespace: 'default' })).status?.phase === 'Running',
    );
    const pvc = await core.readNamespacedPersistentVolumeClaim({
      name: 'scratch-work',
      namespace: 'default',
    });
    assert.equal(pvc.status?.phase, 'Bound', 'the default WaitForFirstConsumer class bound it for the pod');
    assert.equal(pvc.metadata?.labels?.kind, 'scratch');
    const owner = pvc.metadata?.ownerReferences?.[0];
    assert.equal(owner?.kind, 'Pod');
    assert.equal(owner?.name, 'scratch');
    assert.equal(owner?.controller, true);
    await c.kubectl(['delete', 'pod', 'scratch', '--wait=false']);
    await waitFor('claim collected with its pod', async () => {
      const r = await c.kubectlResult(['get', 'pvc', 'scratch-work']);
      return r.code !== 0 && /not found/.test(r.stderr);
    });
  });

  test('a WaitForFirstConsumer claim without a pod waits, with the upstream event', async () => {
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: later, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`,
    );
    const core = c.kc.makeApiClient(CoreV1Api);
    await waitFor('WaitForFirstConsumer event', async () => {
      const evs = await core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: 'involvedObject.name=later,reason=WaitForFirstConsumer',
      });
      return evs.items[0]?.message === 'waiting for first consumer to be created before binding';
    });
    const row = await c.kubectl(['get', 'pvc', 'later', '--no-headers']);
    assert.match(row, /^later\s+Pending\s+/);
  });

  test('a StatefulSet on a WaitForFirstConsumer class whose allowedTopologies name one zone runs there', async () => {
    const nodes = (await c.kubectl(['get', 'nodes', '-o', 'jsonpath={.items[*].metadata.name}'])).split(' ');
    assert.ok(nodes.length >= 2);
    const [inZone, ...others] = nodes as [string, ...string[]];
    await c.kubectl(['label', 'node', inZone, 'topology.kubernetes.io/zone=zone-a', '--overwrite']);
    for (const n of others)
      await c.kubectl(['label', 'node', n, 'topology.kubernetes.io/zone=zone-b', '--overwrite']);
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: zonal}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions:
  - {key: topology.kubernetes.io/zone, values: [zone-a]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: zoned, namespace: default}
spec:
  replicas: 3
  serviceName: zoned
  selector: {matchLabels: {app: zoned}}
  template:
    metadata: {labels: {app: zoned}}
    spec:
      containers: [{name: c, image: busybox}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      storageClassName: zonal
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`,
    );
    await waitFor('three ready replicas', async () => {
      const out = await c.kubectl(['get', 'sts', 'zoned', '-o', 'jsonpath={.status.readyReplicas}']);
      return out === '3';
    });
    const placed = await c.kubectl([
      'get',
      'pods',
      '-l',
      'app=zoned',
      '-o',
      'jsonpath={range .items[*]}{.spec.nodeName}{"\\n"}{end}',
    ]);
    assert.deepEqual(placed.trim().split('\n'), [inZone, inZone, inZone]);
    const selected = await c.kubectl([
      'get',
      'pvc',
      'data-zoned-0',
      '-o',
      'jsonpath={.metadata.annotations.volume\\.kubernetes\\.io/selected-node}',
    ]);
    assert.equal(selected, inZone);
  });

  test('a pod whose claim does not exist gets the upstream FailedScheduling message, then runs once it does', async () => {
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: Pod
metadata: {name: orphan, namespace: default}
spec:
  containers: [{name: c, image: busybox}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: missing}}]
`,
    );
    const nodes = (await c.kubectl(['get', 'nodes', '-o', 'name'])).trim().split('\n').length;
    const want = `0/${nodes} nodes are available: persistentvolumeclaim "missing" not found. preemption: 0/${nodes} nodes are available: ${nodes} Preemption is not helpful for scheduling.`;
    await waitFor('FailedScheduling event', async () => {
      const out = await c.kubectl([
        'get',
        'events',
        '--field-selector',
        'involvedObject.name=orphan,reason=FailedScheduling',
        '-o',
        'jsonpath={.items[*].message}',
      ]);
      return out === want;
    });
    const cond = await c.kubectl([
      'get',
      'pod',
      'orphan',
      '-o',
      'jsonpath={.status.conditions[?(@.type=="PodScheduled")].message}',
    ]);
    assert.equal(cond, want);
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: missing, namespace: default}
spec:
  storageClassName: fast
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`,
    );
    await waitFor('pod running', async () => {
      const out = await c.kubectl(['get', 'pod', 'orphan', '-o', 'jsonpath={.status.phase}']);
      return out === 'Running';
    });
  });

  test('local volumes: a WaitForFirstConsumer claim binds the volume of the node its pod goes to', async () => {
    const nodes = (await c.kubectl(['get', 'nodes', '-o', 'jsonpath={.items[*].metadata.name}'])).split(' ');
    const target = nodes[nodes.length - 1]!;
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: local-disk}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local
  local: {path: /mnt/disk}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [${target}]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: scratch, namespace: default}
spec:
  storageClassName: local
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: uses-local, namespace: default}
spec:
  containers: [{name: c, image: busybox}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: scratch}}]
`,
    );
    await waitFor('pod running', async () => {
      const out = await c.kubectl(['get', 'pod', 'uses-local', '-o', 'jsonpath={.status.phase}']);
      return out === 'Running';
    });
    assert.equal(await c.kubectl(['get', 'pod', 'uses-local', '-o', 'jsonpath={.spec.nodeName}']), target);
    const row = await c.kubectl(['get', 'pvc', 'scratch', '--no-headers']);
    assert.match(row, /^scratch\s+Bound\s+local-disk\s+10Gi\s+RWO\s+local\s+/);
  });

  test('a WaitForFirstConsumer claim no node can provision for gets the bind-conflict FailedScheduling', async () => {
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: nowhere}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions:
  - {key: topology.kubernetes.io/zone, values: [zone-z]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: stranded, namespace: default}
spec:
  storageClassName: nowhere
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: stranded, namespace: default}
spec:
  containers: [{name: c, image: busybox}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: stranded}}]
`,
    );
    const n = (await c.kubectl(['get', 'nodes', '-o', 'name'])).trim().split('\n').length;
    const want = `0/${n} nodes are available: ${n} node(s) didn't find available persistent volumes to bind. preemption: 0/${n} nodes are available: ${n} Preemption is not helpful for scheduling.`;
    await waitFor('FailedScheduling event', async () => {
      const out = await c.kubectl([
        'get',
        'events',
        '--field-selector',
        'involvedObject.kind=Pod,involvedObject.name=stranded,reason=FailedScheduling',
        '-o',
        'jsonpath={.items[*].message}',
      ]);
      return out === want;
    });
    const row = await c.kubectl(['get', 'pvc', 'stranded', '--no-headers']);
    assert.match(row, /^stranded\s+Pending\s+/);
  });

  test('the Python client sees a zonal WaitForFirstConsumer claim bound in its zone and a missing claim refused', async () => {
    const nodes = (await c.kubectl(['get', 'nodes', '-o', 'jsonpath={.items[*].metadata.name}'])).split(' ');
    const [inZone, ...others] = nodes as [string, ...string[]];
    await c.kubectl(['label', 'node', inZone, 'topology.kubernetes.io/zone=zone-a', '--overwrite']);
    for (const n of others)
      await c.kubectl(['label', 'node', n, 'topology.kubernetes.io/zone=zone-b', '--overwrite']);
    await c.kubectl(['create', 'namespace', 'pyvol']);
    const o = await pythonScenario('volumes', c.kubeconfigPath, 'pyvol');
    const n = nodes.length;
    assert.deepEqual(o, {
      node: inZone,
      selected: inZone,
      orphan: `0/${n} nodes are available: persistentvolumeclaim "absent" not found. preemption: 0/${n} nodes are available: ${n} Preemption is not helpful for scheduling.`,
    });
  });
});
