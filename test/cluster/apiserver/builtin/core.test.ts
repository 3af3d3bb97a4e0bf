import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  coreEventToEventsV1,
  eventsV1ToCoreEvent,
} from '../../../../src/cluster/apiserver/builtin/events.ts';
import { ServiceAllocator } from '../../../../src/cluster/apiserver/builtin/service-allocator.ts';
import { ApiError } from '../../../../src/cluster/apiserver/errors.ts';
import type { KubeObject } from '../../../../src/cluster/apiserver/types.ts';
import { create, created, ctx, messages, mutate, rtFor, update } from './harness.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests reach into loose JSON
type Any = any;

describe('namespaces', () => {
  const ns = rtFor('namespaces');

  test('create: Active, kubernetes finalizer, name label', () => {
    const n = created(ns, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } }) as Any;
    assert.deepEqual(n.status, { phase: 'Active' });
    assert.deepEqual(n.spec.finalizers, ['kubernetes']);
    assert.equal(n.metadata.labels['kubernetes.io/metadata.name'], 'team-a');
    assert.equal(n.metadata.generation, undefined);
  });

  test('names are DNS-1123 labels', () => {
    const r = create(ns, { metadata: { name: 'a.b' } });
    assert.deepEqual(messages(r.errors), ['metadata.name: Invalid value: "a.b": must not contain dots']);
    const upper = create(ns, { metadata: { name: 'Team' } });
    assert.deepEqual(messages(upper.errors), [
      `metadata.name: Invalid value: "Team": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
    ]);
  });

  test('main-endpoint updates keep finalizers and status; the name label is re-asserted', () => {
    const n = created(ns, { metadata: { name: 'x' } });
    const r = update(
      ns,
      n,
      mutate(n, (o: Any) => {
        o.spec.finalizers = [];
        o.status = { phase: 'Terminating' };
        o.metadata.labels = { other: '1' };
      }),
    );
    assert.deepEqual(r.errors, []);
    assert.deepEqual((r.obj as Any).spec.finalizers, ['kubernetes']);
    assert.equal((r.obj as Any).status.phase, 'Active');
    assert.deepEqual(r.obj.metadata.labels, { other: '1', 'kubernetes.io/metadata.name': 'x' });
  });

  test('finalize may change finalizers; status phase must agree with deletion', () => {
    const n = created(ns, { metadata: { name: 'x' } });
    const fin = update(
      ns,
      n,
      mutate(n, (o: Any) => (o.spec.finalizers = [])),
      'finalize',
    );
    assert.deepEqual((fin.obj as Any).spec.finalizers, []);
    const st = update(ns, n, { ...n, status: { phase: 'Terminating' } }, 'status');
    assert.deepEqual(messages(st.errors), [
      'status.Phase: Invalid value: "Terminating": may only be \'Active\' if `deletionTimestamp` is empty',
    ]);
  });

  test('table and field selector', () => {
    const n = created(ns, { metadata: { name: 'x' } });
    assert.deepEqual(ns.strategy.table!.cells(n, new Date('2025-01-03T00:00:00Z')), ['x', 'Active', '2d']);
    assert.deepEqual(ns.strategy.selectableFields!(n), { 'status.phase': 'Active' });
  });
});

describe('nodes', () => {
  const nodes = rtFor('nodes');
  const node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: 'n1',
      labels: { 'node-role.kubernetes.io/control-plane': '', 'node-role.kubernetes.io/worker': '' },
    },
    spec: { taints: [{ key: 'gpu', effect: 'NoSchedule' }] },
    status: {
      capacity: { cpu: '4', memory: '16384Mi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True' }],
      addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
      nodeInfo: { kubeletVersion: 'v1.32.0-kwok' },
    },
  };

  test('status may be set on create; allocatable defaults to capacity; quantities canonical', () => {
    const n = created(nodes, node) as Any;
    assert.deepEqual(n.status.capacity, { cpu: '4', memory: '16Gi', pods: '110' });
    assert.deepEqual(n.status.allocatable, n.status.capacity);
    assert.equal(n.status.conditions[0].type, 'Ready');
  });

  test('taint effects are required and supported', () => {
    const r = create(
      nodes,
      mutate(node, (n: Any) => n.spec.taints.push({ key: 'x' }, { key: 'y', effect: 'Sometimes' })),
    );
    assert.deepEqual(messages(r.errors), [
      'spec.taints[1].effect: Required value',
      'spec.taints[2].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ]);
  });

  test('spec updates are allowed; podCIDR and providerID only from empty', () => {
    const n = created(nodes, node);
    assert.deepEqual(
      update(
        nodes,
        n,
        mutate(n, (o: Any) => (o.spec.unschedulable = true)),
      ).errors,
      [],
    );
    const withCidr = update(
      nodes,
      n,
      mutate(n, (o: Any) => (o.spec.podCIDR = '10.244.1.0/24')),
    );
    assert.deepEqual(withCidr.errors, []);
    assert.deepEqual((withCidr.obj as Any).spec.podCIDRs, ['10.244.1.0/24']);
    const changed = update(
      nodes,
      withCidr.obj,
      mutate(withCidr.obj, (o: Any) => {
        o.spec.podCIDRs = ['10.244.2.0/24'];
        o.spec.podCIDR = '10.244.2.0/24';
      }),
    );
    assert.deepEqual(messages(changed.errors), [
      'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
    ]);
  });

  test('main endpoint keeps status, /status keeps spec', () => {
    const n = created(nodes, node);
    const main = update(
      nodes,
      n,
      mutate(n, (o: Any) => (o.status.conditions[0].status = 'False')),
    );
    assert.equal((main.obj as Any).status.conditions[0].status, 'True');
    const st = update(
      nodes,
      n,
      mutate(n, (o: Any) => {
        o.status.conditions[0].status = 'False';
        o.spec.unschedulable = true;
      }),
      'status',
    );
    assert.equal((st.obj as Any).status.conditions[0].status, 'False');
    assert.equal((st.obj as Any).spec.unschedulable, undefined);
  });

  test('table and field selector', () => {
    const n = mutate(created(nodes, node), (o: Any) => (o.spec.unschedulable = true));
    assert.deepEqual(nodes.strategy.table!.cells(n, new Date('2025-01-01T00:01:00Z')), [
      'n1',
      'Ready,SchedulingDisabled',
      'control-plane,worker',
      '60s',
      'v1.32.0-kwok',
      '10.0.0.1',
      '<none>',
      '<unknown>',
      '<unknown>',
      '<unknown>',
    ]);
    assert.deepEqual(nodes.strategy.selectableFields!(n), { 'spec.unschedulable': 'true' });
    const bare = created(nodes, { metadata: { name: 'n2' } });
    assert.equal(nodes.strategy.table!.cells(bare, new Date())[1], 'Unknown');
  });
});

describe('configmaps and secrets', () => {
  const cms = rtFor('configmaps');
  const secrets = rtFor('secrets');

  test('configmap keys are validated and may not repeat across data and binaryData', () => {
    const r = create(cms, {
      metadata: { name: 'c' },
      data: { 'a/b': 'x', k: 'v' },
      binaryData: { k: 'eA==' },
    });
    assert.deepEqual(messages(r.errors), [
      `data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
      'data[k]: Invalid value: "k": duplicate of key present in binaryData',
      'binaryData[k]: Invalid value: "k": duplicate of key present in data',
    ]);
  });

  test('immutable configmaps refuse data changes', () => {
    const c = created(cms, { metadata: { name: 'c' }, data: { a: '1' }, immutable: true });
    const r = update(
      cms,
      c,
      mutate(c, (o: Any) => (o.data.a = '2')),
    );
    assert.deepEqual(messages(r.errors), ['data: Forbidden: field is immutable when `immutable` is set']);
    assert.deepEqual(cms.strategy.table!.cells(c, new Date('2025-01-01T00:00:09Z')), ['c', 1, '9s']);
  });

  test('secrets: Opaque by default, stringData folded into data', () => {
    const s = created(secrets, {
      metadata: { name: 's' },
      stringData: { password: 'hunter2' },
      data: { user: 'YWRtaW4=' },
    }) as Any;
    assert.equal(s.type, 'Opaque');
    assert.deepEqual(s.data, { user: 'YWRtaW4=', password: 'aHVudGVyMg==' });
    assert.equal(s.stringData, undefined);
    assert.deepEqual(secrets.strategy.selectableFields!(s), { type: 'Opaque' });
    assert.deepEqual(secrets.strategy.table!.cells(s, new Date('2025-01-01T00:00:00Z')), [
      's',
      'Opaque',
      2,
      '0s',
    ]);
  });

  test('typed secrets need their keys; type is immutable', () => {
    const tls = create(secrets, { metadata: { name: 't' }, type: 'kubernetes.io/tls', data: {} });
    assert.deepEqual(messages(tls.errors), [
      'data[tls.key]: Required value',
      'data[tls.crt]: Required value',
    ]);
    const s = created(secrets, { metadata: { name: 's' } });
    const r = update(
      secrets,
      s,
      mutate(s, (o: Any) => (o.type = 'example.com/other')),
    );
    assert.deepEqual(messages(r.errors), ['type: Invalid value: "example.com/other": field is immutable']);
  });
});

describe('services', () => {
  const services = rtFor('services');
  const svc = { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } };

  test('defaults', () => {
    const s = created(services, svc) as Any;
    assert.equal(s.spec.type, 'ClusterIP');
    assert.equal(s.spec.sessionAffinity, 'None');
    assert.equal(s.spec.internalTrafficPolicy, 'Cluster');
    assert.deepEqual(s.spec.ports, [{ port: 80, protocol: 'TCP', targetPort: 80 }]);
    assert.deepEqual(s.status, { loadBalancer: {} });
    const lb = created(
      services,
      mutate(svc, (o: Any) => (o.spec.type = 'LoadBalancer')),
    ) as Any;
    assert.equal(lb.spec.externalTrafficPolicy, 'Cluster');
    assert.equal(lb.spec.allocateLoadBalancerNodePorts, true);
  });

  test('names are DNS-1035 labels', () => {
    const r = create(
      services,
      mutate(svc, (o: Any) => (o.metadata.name = '1web')),
    );
    assert.deepEqual(messages(r.errors), [
      `metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ]);
  });

  test('ports: required, named when several, in range', () => {
    assert.deepEqual(messages(create(services, { metadata: { name: 'a' }, spec: {} }).errors), [
      'spec.ports: Required value',
    ]);
    const r = create(services, {
      metadata: { name: 'a' },
      spec: { ports: [{ port: 80 }, { port: 70000, name: 'b' }] },
    });
    assert.deepEqual(messages(r.errors), [
      'spec.ports[0].name: Required value',
      'spec.ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive',
      // targetPort was defaulted from port, so it is out of range too (as upstream).
      'spec.ports[1].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
    ]);
  });

  /** An ApiError's message, for assert.throws. */
  const refusal = (message: string) => (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.equal(err.message, message);
    return true;
  };

  test('the REST layer allocates on create and keeps what it allocated on update', () => {
    const alloc = new ServiceAllocator({ clusterIPRange: '10.96.0.0/28' });
    const nodePort = mutate(svc, (o: Any) => (o.spec.type = 'NodePort'));
    const s = created(services, nodePort) as Any;
    alloc.beginCreate(s)(true);
    assert.match(s.spec.clusterIP, /^10\.96\.0\.([1-9]|1[0-4])$/);
    assert.deepEqual(s.spec.clusterIPs, [s.spec.clusterIP]);
    assert.deepEqual(s.spec.ipFamilies, ['IPv4']);
    assert.equal(s.spec.ipFamilyPolicy, 'SingleStack');
    const port = s.spec.ports[0].nodePort;
    assert.ok(port >= 30086 && port <= 32767, `${port} is above the static band`);
    assert.deepEqual(services.strategy.validateCreate!(s, ctx()), []);
    // Resubmitting the manifest keeps the addresses (patchAllocatedValues).
    const again = mutate(nodePort, (o: Any) => (o.metadata = s.metadata)) as Any;
    services.strategy.default?.(again);
    alloc.beginUpdate(again, s)(true);
    const applied = update(services, s, again);
    assert.deepEqual(applied.errors, []);
    assert.equal((applied.obj as Any).spec.clusterIP, s.spec.clusterIP);
    assert.equal((applied.obj as Any).spec.ports[0].nodePort, port);
    const moved = update(
      services,
      s,
      mutate(s, (o: Any) => {
        o.spec.clusterIP = '10.96.5.5';
        o.spec.clusterIPs = ['10.96.5.5'];
      }),
    );
    assert.deepEqual(messages(moved.errors), [
      'spec.clusterIPs[0]: Invalid value: ["10.96.5.5"]: may not change once set',
    ]);
    assert.deepEqual(services.strategy.table!.cells(s, new Date('2025-01-01T00:00:05Z')), [
      'web',
      'NodePort',
      s.spec.clusterIP,
      '<none>',
      `80:${port}/TCP`,
      '5s',
      'app=web',
    ]);
  });

  test('a type change drops what only the old type needed', () => {
    const alloc = new ServiceAllocator();
    const s = created(
      services,
      mutate(svc, (o: Any) => (o.spec.type = 'NodePort')),
    ) as Any;
    alloc.beginCreate(s)(true);
    const toClusterIP = mutate(s, (o: Any) => (o.spec.type = 'ClusterIP'));
    alloc.beginUpdate(toClusterIP, s)(true);
    const r = update(services, s, toClusterIP);
    assert.deepEqual(r.errors, []);
    assert.equal((r.obj as Any).spec.ports[0].nodePort, undefined);
    assert.equal((r.obj as Any).spec.externalTrafficPolicy, undefined);
    assert.equal((r.obj as Any).spec.clusterIP, s.spec.clusterIP);
    // The node port went back to the range: a new Service may ask for it.
    const asks = created(
      services,
      mutate(svc, (o: Any) => {
        o.metadata.name = 'other';
        o.spec.type = 'NodePort';
        o.spec.ports[0].nodePort = s.spec.ports[0].nodePort;
      }),
    );
    alloc.beginCreate(asks)(true);
  });

  test('headless and ExternalName services get no address', () => {
    const alloc = new ServiceAllocator();
    const headless = created(
      services,
      mutate(svc, (o: Any) => (o.spec.clusterIP = 'None')),
    ) as Any;
    alloc.beginCreate(headless)(true);
    assert.deepEqual(headless.spec.clusterIPs, ['None']);
    assert.equal(headless.spec.ipFamilyPolicy, 'SingleStack');
    assert.deepEqual(headless.spec.ipFamilies, ['IPv4']);
    // Without a selector its endpoints may come from either family.
    const bare = created(services, {
      metadata: { name: 'bare' },
      spec: { clusterIP: 'None', ports: [{ port: 80 }] },
    }) as Any;
    alloc.beginCreate(bare)(true);
    assert.equal(bare.spec.ipFamilyPolicy, 'RequireDualStack');
    assert.deepEqual(bare.spec.ipFamilies, ['IPv4', 'IPv6']);
    const external = created(services, {
      metadata: { name: 'ext' },
      spec: { type: 'ExternalName', externalName: 'example.com' },
    }) as Any;
    alloc.beginCreate(external)(true);
    assert.equal(external.spec.clusterIP, undefined);
    assert.equal(external.spec.ipFamilies, undefined);
  });

  test('taken, foreign and exhausted addresses are refused; releases make room', () => {
    const alloc = new ServiceAllocator({ clusterIPRange: '10.96.0.0/29', nodePortRange: '30000-30001' });
    const asking = (ip: string) =>
      created(
        services,
        mutate(svc, (o: Any) => (o.spec.clusterIP = ip)),
      );
    alloc.beginCreate(asking('10.96.0.1'))(true);
    assert.throws(
      () => alloc.beginCreate(asking('10.96.0.1')),
      refusal(
        'Service "web" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.1"]: failed to allocate IP 10.96.0.1: provided IP is already allocated',
      ),
    );
    assert.throws(
      () => alloc.beginCreate(asking('10.0.0.7')),
      refusal(
        'Service "web" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.7"]: failed to allocate IP 10.0.0.7: the provided IP (10.0.0.7) is not in the valid range. The range of valid IPs is 10.96.0.0/29',
      ),
    );
    assert.throws(
      () => alloc.beginCreate(asking('fd00::10')),
      refusal(
        'Service "web" is invalid: spec.clusterIPs[0]: Invalid value: ["fd00::10"]: IPv6 is not configured on this cluster',
      ),
    );
    const made = [2, 3, 4, 5, 6].map(() => {
      const s = created(services, svc);
      alloc.beginCreate(s)(true);
      return s;
    });
    assert.throws(
      () => alloc.beginCreate(created(services, svc)),
      refusal('Internal error occurred: failed to allocate a serviceIP: range is full'),
    );
    // A write that is not stored (refused later) gives its address back.
    alloc.afterDelete(made[0]!);
    alloc.beginCreate(created(services, svc))(false);
    const last = created(services, svc) as Any;
    alloc.beginCreate(last)(true);
    assert.equal(last.spec.clusterIP, (made[0] as Any).spec.clusterIP);
  });

  test('service ranges a kube-apiserver would refuse do not start', () => {
    assert.throws(() => new ServiceAllocator({ clusterIPRange: '10.0.0.0/8' }), /the mask must be >= 12/);
    assert.throws(() => new ServiceAllocator({ clusterIPRange: '10.96.0.0' }), /not an IPv4 CIDR/);
    assert.throws(() => new ServiceAllocator({ nodePortRange: '32767-30000' }), /<first>-<last>/);
  });

  test('node ports outside the range or taken are refused', () => {
    const alloc = new ServiceAllocator({ nodePortRange: '30000-30001' });
    // Allocation runs before validation, which would also refuse a repeated node port.
    const ports = (...nodePorts: number[]) =>
      create(services, {
        metadata: { name: 'np' },
        spec: {
          type: 'NodePort',
          ports: nodePorts.map((nodePort, i) => ({ name: `p${i}`, port: 80 + i, nodePort })),
        },
      }).obj as Any;
    assert.throws(
      () => alloc.beginCreate(ports(29999)),
      refusal(
        'Service "np" is invalid: spec.ports[0].nodePort: Invalid value: 29999: provided port is not in the valid range. The range of valid ports is 30000-30001',
      ),
    );
    assert.throws(
      () => alloc.beginCreate(ports(30000, 30000)),
      refusal(
        'Service "np" is invalid: spec.ports[1].nodePort: Invalid value: 30000: provided port is already allocated',
      ),
    );
    alloc.beginCreate(ports(30001))(true);
    const rest = ports(0);
    alloc.beginCreate(rest)(true);
    assert.equal(rest.spec.ports[0].nodePort, 30000);
    assert.throws(
      () => alloc.beginCreate(ports(0)),
      refusal('Internal error occurred: failed to allocate a nodePort: range is full'),
    );
  });

  test('a dry run reserves nothing and checks only what upstream’s dry-run allocators check', () => {
    const alloc = new ServiceAllocator({ nodePortRange: '30000-30001' });
    const service = (spec: Record<string, unknown>, ...nodePorts: number[]) =>
      create(services, {
        metadata: { name: 'np' },
        spec: {
          type: 'NodePort',
          ...spec,
          ports: nodePorts.map((nodePort, i) => ({ name: `p${i}`, port: 80 + i, nodePort })),
        },
      }).obj as Any;
    alloc.beginCreate(service({ clusterIP: '10.96.0.10' }, 30000))(true);
    // A held address and a port out of range pass; a held port does not.
    const asked = service({ clusterIP: '10.96.0.10' }, 29999, 0);
    alloc.beginCreate(asked, true)(false);
    assert.equal(asked.spec.clusterIP, '10.96.0.10');
    // A value to pick is a placeholder: the network address, the next port after the highest.
    assert.deepEqual(
      asked.spec.ports.map((p: Any) => p.nodePort),
      [29999, 30000],
    );
    const picked = service({}, 0);
    alloc.beginCreate(picked, true)(true);
    assert.equal(picked.spec.clusterIP, '10.96.0.0');
    assert.equal(picked.spec.ports[0].nodePort, 32769);
    assert.throws(
      () => alloc.beginCreate(service({}, 30000), true),
      refusal(
        'Service "np" is invalid: spec.ports[0].nodePort: Invalid value: 30000: provided port is already allocated',
      ),
    );
    const real = service({}, 0);
    alloc.beginCreate(real)(true);
    assert.equal(real.spec.ports[0].nodePort, 30001);
  });
});

describe('events', () => {
  const core = rtFor('events');
  const v1 = rtFor('events', 'events.k8s.io');
  const legacy = {
    metadata: { name: 'p.1' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'p', fieldPath: 'spec.containers{c}' },
    reason: 'Scheduled',
    message: 'Successfully assigned default/p to n1',
    type: 'Normal',
    source: { component: 'default-scheduler' },
    firstTimestamp: '2025-01-01T00:00:00Z',
    lastTimestamp: '2025-01-01T00:01:00Z',
    count: 2,
  };

  test('core/v1: involvedObject namespace must match', () => {
    assert.deepEqual(create(core, legacy).errors, []);
    const r = create(core, legacy, 'other');
    assert.deepEqual(messages(r.errors), [
      'involvedObject.namespace: Invalid value: "default": does not match event.namespace',
    ]);
  });

  test('events.k8s.io/v1 is strict, with internal field names', () => {
    const r = create(v1, {
      metadata: { name: 'e' },
      regarding: { kind: 'Pod', namespace: 'default', name: 'p' },
      type: 'Odd',
      deprecatedCount: 3,
    });
    assert.deepEqual(messages(r.errors), [
      'eventTime: Required value',
      'type: Invalid value: "": has invalid value: Odd',
      'count: Invalid value: "": needs to be unset',
    ]);
    const ok = create(v1, {
      metadata: { name: 'e' },
      eventTime: '2025-01-01T00:00:00.000000Z',
      reportingController: 'example.com/ctl',
      reportingInstance: 'ctl-1',
      action: 'Bind',
      reason: 'Scheduled',
      regarding: { kind: 'Pod', namespace: 'default', name: 'p' },
      note: 'hello',
      type: 'Normal',
    });
    assert.deepEqual(ok.errors, []);
  });

  test('conversion round-trips between the two shapes', () => {
    const asV1 = coreEventToEventsV1({ apiVersion: 'v1', kind: 'Event', ...legacy } as KubeObject) as Any;
    assert.equal(asV1.apiVersion, 'events.k8s.io/v1');
    assert.equal(asV1.note, legacy.message);
    assert.equal(asV1.deprecatedCount, 2);
    assert.deepEqual(asV1.regarding, legacy.involvedObject);
    assert.deepEqual(eventsV1ToCoreEvent(asV1), { apiVersion: 'v1', kind: 'Event', ...legacy });
  });

  test('table and field selectors', () => {
    const e = created(core, legacy);
    assert.deepEqual(core.strategy.table!.cells(e, new Date('2025-01-01T00:03:00Z')), [
      '2m',
      'Normal',
      'Scheduled',
      'pod/p',
      'spec.containers{c}',
      'default-scheduler',
      'Successfully assigned default/p to n1',
      '3m',
      2,
      'p.1',
    ]);
    const f = core.strategy.selectableFields!(e);
    assert.equal(f['involvedObject.name'], 'p');
    assert.equal(f.reason, 'Scheduled');
    assert.equal(f.source, 'default-scheduler');
    assert.equal(f.type, 'Normal');
    assert.equal(v1.strategy.selectableFields!(coreEventToEventsV1(e))['regarding.name'], 'p');
  });
});

describe('service accounts and endpoints', () => {
  test('service account table counts secrets', () => {
    const sa = rtFor('serviceaccounts');
    const a = created(sa, { metadata: { name: 'default' }, secrets: [{ name: 'tok' }] });
    assert.deepEqual(sa.strategy.table!.cells(a, new Date('2025-01-01T00:00:00Z')), ['default', 1, '0s']);
  });

  test('endpoints: defaults, validation and the ENDPOINTS cell', () => {
    const ep = rtFor('endpoints');
    const e = created(ep, {
      metadata: { name: 'web' },
      subsets: [
        {
          addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }, { ip: '10.0.0.3' }, { ip: '10.0.0.4' }],
          ports: [{ port: 80 }],
        },
      ],
    }) as Any;
    assert.equal(e.subsets[0].ports[0].protocol, 'TCP');
    assert.equal(
      ep.strategy.table!.cells(e, new Date('2025-01-01T00:00:00Z'))[1],
      '10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 1 more...',
    );
    const bad = create(ep, { metadata: { name: 'web' }, subsets: [{ addresses: [{ ip: 'nope' }] }] });
    assert.deepEqual(messages(bad.errors), [
      'subsets[0].addresses[0].ip: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    ]);
  });
});

test('ctx helper defaults', () => {
  assert.deepEqual(ctx(), { subresource: '', dryRun: false, user: 'tester' });
});
