import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { coreEventToEventsV1, eventsV1ToCoreEvent } from '../../../src/cluster/apiserver/builtin/events.ts';
import { allocateServiceAddresses } from '../../../src/cluster/apiserver/builtin/services.ts';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
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

  test('address allocation and keeping allocated values on update', () => {
    const s = created(
      services,
      mutate(svc, (o: Any) => (o.spec.type = 'NodePort')),
    );
    assert.equal(
      allocateServiceAddresses(s, { usedIPs: new Set(['10.96.0.1']), usedNodePorts: new Set([30000]) }),
      undefined,
    );
    const spec = (s as Any).spec;
    assert.equal(spec.clusterIP, '10.96.0.2');
    assert.deepEqual(spec.clusterIPs, ['10.96.0.2']);
    assert.deepEqual(spec.ipFamilies, ['IPv4']);
    assert.equal(spec.ipFamilyPolicy, 'SingleStack');
    assert.equal(spec.ports[0].nodePort, 30001);
    const applied = update(
      services,
      s,
      mutate(svc, (o: Any) => {
        o.spec.type = 'NodePort';
        o.metadata = s.metadata;
      }),
    );
    assert.deepEqual(applied.errors, []);
    assert.equal((applied.obj as Any).spec.clusterIP, '10.96.0.2');
    assert.equal((applied.obj as Any).spec.ports[0].nodePort, 30001);
    const moved = update(
      services,
      s,
      mutate(s, (o: Any) => {
        o.spec.clusterIP = '10.96.0.9';
        o.spec.clusterIPs = ['10.96.0.9'];
      }),
    );
    assert.deepEqual(messages(moved.errors), [
      'spec.clusterIPs[0]: Invalid value: ["10.96.0.9"]: may not change once set',
    ]);
    assert.deepEqual(services.strategy.table!.cells(s, new Date('2025-01-01T00:00:05Z')), [
      'web',
      'NodePort',
      '10.96.0.2',
      '<none>',
      '80:30001/TCP',
      '5s',
      'app=web',
    ]);
  });

  test('headless services get no address; taken addresses are refused', () => {
    const h = created(
      services,
      mutate(svc, (o: Any) => (o.spec.clusterIP = 'None')),
    ) as Any;
    assert.equal(allocateServiceAddresses(h, { usedIPs: new Set(), usedNodePorts: new Set() }), undefined);
    assert.deepEqual(h.spec.clusterIPs, ['None']);
    const taken = created(
      services,
      mutate(svc, (o: Any) => (o.spec.clusterIP = '10.96.0.1')),
    );
    assert.match(
      allocateServiceAddresses(taken, { usedIPs: new Set(['10.96.0.1']), usedNodePorts: new Set() }) ?? '',
      /already allocated/,
    );
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
