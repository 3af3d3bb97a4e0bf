/**
 * Decoder behaviour on hand-built bodies: the apimachinery types with their own JSON form,
 * Go's omitempty/pointer rules, inlined structs, packed numbers, and the errors callers map
 * to 400/415.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import {
  decodeKubernetesProtobuf,
  decodeKubernetesProtobufDetailed,
  isKubernetesProtobuf,
  messageForKind,
  ProtobufDecodeError,
  supportedKinds,
} from '../../../../src/cluster/apiserver/protobuf/index.ts';

type Part = (w: BinaryWriter) => void;

const build = (...parts: Part[]): Uint8Array => {
  const w = new BinaryWriter();
  for (const p of parts) p(w);
  return w.finish();
};
const str =
  (no: number, v: string): Part =>
  (w) =>
    w.tag(no, WireType.LengthDelimited).string(v);
const raw =
  (no: number, v: Uint8Array): Part =>
  (w) =>
    w.tag(no, WireType.LengthDelimited).bytes(v);
const int =
  (no: number, v: number): Part =>
  (w) =>
    w.tag(no, WireType.Varint).int64(v);
const int32 =
  (no: number, v: number): Part =>
  (w) =>
    w.tag(no, WireType.Varint).int32(v);
const bool =
  (no: number, v: boolean): Part =>
  (w) =>
    w.tag(no, WireType.Varint).bool(v);
const sub = (no: number, ...parts: Part[]): Part => raw(no, build(...parts));
const entry = (no: number, key: string, value: Part): Part => sub(no, str(1, key), value);
const time = (no: number, seconds: number, nanos = 0): Part => sub(no, int(1, seconds), int32(2, nanos));

function envelope(apiVersion: string, kind: string, object: Uint8Array, extra: Part[] = []): Uint8Array {
  const body = build(sub(1, str(1, apiVersion), str(2, kind)), raw(2, object), ...extra);
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), body]);
}

function rejects(body: Uint8Array, status: 400 | 415, message: RegExp): void {
  assert.throws(
    () => decodeKubernetesProtobuf(body),
    (err: unknown) =>
      err instanceof ProtobufDecodeError && err.status === status && message.test(err.message),
  );
}

describe('protobuf envelope', () => {
  test('recognises the content type with or without parameters', () => {
    assert.equal(isKubernetesProtobuf('application/vnd.kubernetes.protobuf'), true);
    assert.equal(isKubernetesProtobuf('application/vnd.kubernetes.protobuf; charset=binary'), true);
    assert.equal(isKubernetesProtobuf('application/json'), false);
    assert.equal(isKubernetesProtobuf(undefined), false);
  });

  test('a body without the k8s\\0 prefix is a 400', () => {
    rejects(Buffer.from('{"kind":"ConfigMap"}'), 400, /k8s\\0/);
    rejects(Buffer.from('k8s'), 400, /k8s\\0/);
  });

  test('truncated bytes are a 400', () => {
    const body = envelope('v1', 'ConfigMap', build(sub(1, str(1, 'cm'))));
    rejects(body.subarray(0, body.length - 3), 400, /malformed protobuf body/);
  });

  test('a kind without a decoder is a 415 naming it', () => {
    rejects(envelope('example.com/v1', 'Widget', build()), 415, /example\.com\/v1, Kind=Widget/);
  });

  test('a body that does not name its kind is a 400', () => {
    rejects(envelope('v1', '', build()), 400, /apiVersion and kind/);
  });

  test('compressed or non-protobuf payloads are a 415', () => {
    rejects(envelope('v1', 'ConfigMap', build(), [str(3, 'gzip')]), 415, /content encoding "gzip"/);
    rejects(envelope('v1', 'ConfigMap', build(), [str(4, 'application/json')]), 415, /application\/json/);
  });

  test('a field on the wrong wire type is a 400 naming the path', () => {
    const body = envelope('v1', 'ConfigMap', build(sub(1, int(1, 5))));
    rejects(body, 400, /ConfigMap\.metadata\.name: wire type 0 cannot carry a string/);
  });

  test('every supported kind has a top-level message with ObjectMeta', () => {
    for (const { apiVersion, kind } of supportedKinds()) {
      const m = messageForKind(apiVersion, kind);
      assert.ok(m, `${apiVersion} ${kind}`);
      assert.equal(m.fields.get(1)?.name, 'metadata', `${apiVersion} ${kind}`);
    }
    assert.equal(messageForKind('meta.k8s.io/v1', 'DeleteOptions')?.name, 'meta.DeleteOptions');
  });
});

describe('ObjectMeta', () => {
  test('times are RFC 3339 seconds in UTC; a zero (empty) time is left out', () => {
    const obj = decodeKubernetesProtobuf(
      envelope(
        'v1',
        'ConfigMap',
        build(sub(1, str(1, 'cm'), sub(8), time(9, 1_715_000_000, 999_000_000), int(10, 0), int(7, 3))),
      ),
    );
    assert.deepEqual(obj.metadata, {
      name: 'cm',
      deletionTimestamp: '2024-05-06T12:53:20Z',
      deletionGracePeriodSeconds: 0,
      generation: 3,
    });
  });

  test('an object whose body has no metadata still gets one, as Go writes it', () => {
    const obj = decodeKubernetesProtobuf(envelope('v1', 'ConfigMap', build(entry(2, 'k', str(2, 'v')))));
    assert.deepEqual(obj, { apiVersion: 'v1', kind: 'ConfigMap', metadata: {}, data: { k: 'v' } });
  });

  test('labels, owner references with false pointers, finalizers, managed fields', () => {
    const meta = sub(
      1,
      str(1, 'p'),
      str(3, 'ns'),
      entry(11, 'app', str(2, 'web')),
      entry(12, 'note', str(2, '')),
      sub(
        13,
        str(5, 'apps/v1'),
        str(1, 'ReplicaSet'),
        str(3, 'rs'),
        str(4, 'uid-1'),
        bool(6, true),
        bool(7, false),
      ),
      str(14, 'example.com/cleanup'),
      sub(
        17,
        str(1, 'kubectl'),
        str(2, 'Update'),
        str(3, 'v1'),
        time(4, 0),
        str(6, 'FieldsV1'),
        sub(7, raw(1, Buffer.from('{"f:metadata":{"f:labels":{}}}'))),
      ),
    );
    const obj = decodeKubernetesProtobuf(envelope('v1', 'Pod', build(meta)));
    assert.deepEqual(obj.metadata, {
      name: 'p',
      namespace: 'ns',
      labels: { app: 'web' },
      annotations: { note: '' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'rs',
          uid: 'uid-1',
          controller: true,
          blockOwnerDeletion: false,
        },
      ],
      finalizers: ['example.com/cleanup'],
      managedFields: [
        {
          manager: 'kubectl',
          operation: 'Update',
          apiVersion: 'v1',
          time: '1970-01-01T00:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': {} } },
        },
      ],
    });
  });
});

describe('Pod spec', () => {
  const container = (...parts: Part[]) => sub(2, str(1, 'c'), ...parts);

  test('omitempty zeros are dropped, pointer and non-omitempty zeros kept', () => {
    const spec = sub(
      2,
      container(
        str(2, ''),
        sub(6, int32(3, 0), str(4, '')),
        sub(8, entry(1, 'cpu', sub(2, str(1, '500m'))), entry(2, 'memory', sub(2, str(1, '1Gi')))),
        sub(15, bool(2, false), int(4, 0), bool(16, false)),
      ),
      str(3, ''),
      int(4, 0),
      int32(25, -5),
      bool(11, false),
    );
    const obj = decodeKubernetesProtobuf(envelope('v1', 'Pod', build(sub(1, str(1, 'p')), spec)));
    assert.deepEqual(obj.spec, {
      containers: [
        {
          name: 'c',
          ports: [{ containerPort: 0 }],
          resources: { limits: { cpu: '500m' }, requests: { memory: '1Gi' } },
          securityContext: { privileged: false, runAsUser: 0 },
        },
      ],
      terminationGracePeriodSeconds: 0,
      priority: -5,
    });
  });

  test('int-or-string ports, inlined probe handlers and volume sources', () => {
    const intOrString = (no: number, v: number | string) =>
      typeof v === 'number' ? sub(no, int(1, 0), int32(2, v)) : sub(no, int(1, 1), str(3, v));
    const spec = sub(
      2,
      sub(1, str(1, 'cfg'), sub(2, sub(19, sub(1, str(1, 'app-config')), int32(3, 420)))),
      sub(1, str(1, 'scratch'), sub(2, sub(2, sub(2, str(1, '1Gi'))))),
      container(
        sub(10, sub(1, sub(2, str(1, '/healthz'), intOrString(2, 8080))), int32(4, 5)),
        sub(11, sub(1, sub(3, intOrString(1, 'http')))),
      ),
    );
    const obj = decodeKubernetesProtobuf(envelope('v1', 'Pod', build(spec)));
    assert.deepEqual(obj.spec, {
      volumes: [
        { name: 'cfg', configMap: { name: 'app-config', defaultMode: 420 } },
        { name: 'scratch', emptyDir: { sizeLimit: '1Gi' } },
      ],
      containers: [
        {
          name: 'c',
          livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 5 },
          readinessProbe: { tcpSocket: { port: 'http' } },
        },
      ],
    });
  });

  test('repeated numbers decode packed and unpacked alike', () => {
    const packed =
      (no: number, values: number[]): Part =>
      (w) => {
        w.tag(no, WireType.LengthDelimited).fork();
        for (const v of values) w.int64(v);
        w.join();
      };
    const spec = sub(2, sub(14, packed(4, [1000, 2000]), int(4, 3000)));
    const obj = decodeKubernetesProtobuf(envelope('v1', 'Pod', build(spec)));
    assert.deepEqual(obj.spec, { securityContext: { supplementalGroups: [1000, 2000, 3000] } });
  });

  test('ephemeral containers inline the container fields', () => {
    const spec = sub(
      2,
      sub(34, sub(1, str(1, 'debugger'), str(2, 'busybox'), bool(16, true)), str(2, 'app')),
    );
    const obj = decodeKubernetesProtobuf(envelope('v1', 'Pod', build(spec)));
    assert.deepEqual(obj.spec, {
      ephemeralContainers: [{ name: 'debugger', image: 'busybox', stdin: true, targetContainerName: 'app' }],
    });
  });
});

describe('other kinds', () => {
  test('secret data is base64, stringData stays text', () => {
    const body = envelope(
      'v1',
      'Secret',
      build(
        entry(2, 'bin', raw(2, new Uint8Array([0, 255, 10]))),
        entry(4, 'plain', str(2, 'text')),
        str(3, 'Opaque'),
      ),
    );
    assert.deepEqual(decodeKubernetesProtobuf(body), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {},
      data: { bin: Buffer.from([0, 255, 10]).toString('base64') },
      stringData: { plain: 'text' },
      type: 'Opaque',
    });
  });

  test('SubjectAccessReview extra values are string lists', () => {
    const spec = sub(
      2,
      sub(1, str(2, 'get'), str(5, 'pods')),
      str(3, 'alice'),
      str(4, 'devs'),
      entry(5, 'scopes', sub(2, str(1, 'a'), str(1, 'b'))),
    );
    const obj = decodeKubernetesProtobuf(
      envelope('authorization.k8s.io/v1', 'SubjectAccessReview', build(spec)),
    );
    assert.deepEqual(obj.spec, {
      resourceAttributes: { verb: 'get', resource: 'pods' },
      user: 'alice',
      groups: ['devs'],
      extra: { scopes: ['a', 'b'] },
    });
  });

  test('DeleteOptions decode under any group version and carry no metadata', () => {
    const body = envelope(
      'meta.k8s.io/v1',
      'DeleteOptions',
      build(int(1, 0), sub(2, str(1, 'uid-9')), str(4, 'Foreground'), str(5, 'All')),
    );
    assert.deepEqual(decodeKubernetesProtobuf(body), {
      apiVersion: 'meta.k8s.io/v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: 0,
      preconditions: { uid: 'uid-9' },
      propagationPolicy: 'Foreground',
      dryRun: ['All'],
    });
  });

  test('a "__proto__" map key is an ordinary entry', () => {
    const body = envelope(
      'v1',
      'ConfigMap',
      build(sub(1, entry(11, '__proto__', str(2, 'x'))), entry(2, '__proto__', str(2, 'y'))),
    );
    const obj = decodeKubernetesProtobuf(body);
    assert.deepEqual(
      obj,
      JSON.parse(
        '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"labels":{"__proto__":"x"}},"data":{"__proto__":"y"}}',
      ),
    );
    assert.equal(Object.getPrototypeOf(obj.data), Object.prototype);
  });

  test('fields the tables do not know are skipped and reported', () => {
    const body = envelope('v1', 'ConfigMap', build(sub(1, str(1, 'cm'), str(99, 'future')), int(77, 1)));
    const { object, unknownFields } = decodeKubernetesProtobufDetailed(body);
    assert.deepEqual(object, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } });
    assert.deepEqual(unknownFields, ['ConfigMap.metadata: field 99', 'ConfigMap: field 77']);
  });
});
