/**
 * The real kubectl (v1.32) against a small HTTPS server: every protobuf body kubectl sends
 * must decode to the object kubectl itself prints with `--dry-run=client -o json` (Go's JSON
 * encoding of the same struct), and kubectl must accept the JSON answers.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  type DecodedObject,
  decodeKubernetesProtobufDetailed,
  isKubernetesProtobuf,
} from '../../../../src/cluster/apiserver/protobuf/index.ts';
import { type ServingCert, selfSignedCert } from '../../../../src/cluster/apiserver/tls.ts';
import { type CapturedRequest, type KubectlServer, startKubectlServer } from './kubectl-server.ts';

interface Decoded {
  request: CapturedRequest;
  object: DecodedObject;
  unknownFields: string[];
}

const decoded: Decoded[] = [];

const notFound = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  reason: 'NotFound',
  code: 404,
};
const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, spec: {} };
const victim = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'victim', namespace: 'default' },
  spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
  status: { phase: 'Running' },
};
let victimDeleted = false;

/**
 * A CronJob read back as JSON: its job template uses most PodSpec fields, so `kubectl create
 * job --from=cronjob/nightly` round-trips them JSON → Go → protobuf → our decoder.
 */
const jobSpec = {
  parallelism: 2,
  completions: 4,
  activeDeadlineSeconds: 600,
  backoffLimitPerIndex: 1,
  maxFailedIndexes: 2,
  completionMode: 'Indexed',
  suspend: false,
  ttlSecondsAfterFinished: 0,
  podFailurePolicy: {
    rules: [
      { action: 'FailIndex', onExitCodes: { containerName: 'main', operator: 'In', values: [42, 43] } },
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
    ],
  },
  template: {
    metadata: { labels: { app: 'nightly' }, annotations: { note: 'x' } },
    spec: {
      restartPolicy: 'Never',
      serviceAccountName: 'runner',
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 0,
      nodeSelector: { disk: 'ssd' },
      priorityClassName: 'high',
      hostAliases: [{ ip: '10.0.0.1', hostnames: ['db.local'] }],
      dnsPolicy: 'None',
      dnsConfig: {
        nameservers: ['1.1.1.1'],
        searches: ['svc.local'],
        options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }],
      },
      imagePullSecrets: [{ name: 'regcred' }],
      securityContext: {
        runAsUser: 0,
        runAsNonRoot: false,
        fsGroup: 2000,
        supplementalGroups: [3000, 4000],
        seccompProfile: { type: 'RuntimeDefault' },
        sysctls: [{ name: 'net.core.somaxconn', value: '1024' }],
      },
      tolerations: [
        { key: 'gpu', operator: 'Exists', effect: 'NoSchedule' },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 30,
        },
      ],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }],
          },
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 10, preference: { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] } },
          ],
        },
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 100,
              podAffinityTerm: {
                labelSelector: { matchLabels: { app: 'nightly' } },
                topologyKey: 'kubernetes.io/hostname',
              },
            },
          ],
        },
      },
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'zone',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['nightly'] }] },
        },
      ],
      volumes: [
        {
          name: 'cfg',
          configMap: { name: 'app', items: [{ key: 'k', path: 'p', mode: 256 }], optional: true },
        },
        { name: 'creds', secret: { secretName: 'creds', defaultMode: 384 } },
        { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
        { name: 'data', persistentVolumeClaim: { claimName: 'data', readOnly: true } },
        { name: 'host', hostPath: { path: '/var/log', type: 'Directory' } },
        {
          name: 'info',
          downwardAPI: {
            items: [
              { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
              {
                path: 'cpu',
                resourceFieldRef: { containerName: 'main', resource: 'limits.cpu', divisor: '1m' },
              },
            ],
          },
        },
        {
          name: 'token',
          projected: {
            sources: [
              { serviceAccountToken: { audience: 'vault', expirationSeconds: 3600, path: 'token' } },
              { configMap: { name: 'ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            ],
          },
        },
      ],
      initContainers: [
        {
          name: 'init',
          image: 'busybox',
          command: ['sh', '-c', 'true'],
          resources: {},
          restartPolicy: 'Always',
          startupProbe: { exec: { command: ['cat', '/ready'] }, failureThreshold: 30, periodSeconds: 1 },
        },
      ],
      containers: [
        {
          name: 'main',
          image: 'example.com/app:1',
          args: ['--mode=batch'],
          workingDir: '/work',
          ports: [
            { name: 'http', containerPort: 8080, protocol: 'TCP' },
            { containerPort: 9090, hostPort: 9090 },
          ],
          env: [
            { name: 'PLAIN', value: 'v' },
            { name: 'EMPTY' },
            { name: 'POD', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
            { name: 'KEY', valueFrom: { secretKeyRef: { name: 'creds', key: 'k', optional: false } } },
            { name: 'CFG', valueFrom: { configMapKeyRef: { name: 'app', key: 'k' } } },
          ],
          envFrom: [
            { prefix: 'APP_', configMapRef: { name: 'app' } },
            { secretRef: { name: 'creds', optional: true } },
          ],
          resources: {
            limits: { cpu: '2', memory: '1Gi', 'nvidia.com/gpu': '1' },
            requests: { cpu: '500m', memory: '512Mi' },
          },
          volumeMounts: [
            { name: 'cfg', mountPath: '/etc/app', readOnly: true },
            { name: 'scratch', mountPath: '/tmp', subPath: 'x' },
          ],
          livenessProbe: {
            httpGet: {
              path: '/healthz',
              port: 'http',
              scheme: 'HTTP',
              httpHeaders: [{ name: 'X-Probe', value: '1' }],
            },
            initialDelaySeconds: 5,
            timeoutSeconds: 2,
          },
          readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 3 },
          startupProbe: { grpc: { port: 9090, service: 'health' } },
          lifecycle: { preStop: { sleep: { seconds: 5 } }, postStart: { exec: { command: ['echo', 'up'] } } },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'FallbackToLogsOnError',
          imagePullPolicy: 'IfNotPresent',
          securityContext: {
            privileged: false,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            runAsGroup: 1000,
            capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] },
          },
          stdin: true,
          tty: true,
        },
      ],
    },
  },
};
const cronJob = {
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name: 'nightly', namespace: 'default', uid: 'cronjob-uid' },
  spec: { schedule: '0 3 * * *', jobTemplate: { metadata: { labels: { team: 'data' } }, spec: jobSpec } },
};
const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: { selector: { matchLabels: { app: 'web' } }, template: jobSpec.template },
};
const original = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'app', namespace: 'default', labels: { app: 'web' } },
  spec: jobSpec.template.spec,
};

/** The JSON reads kubectl makes before it writes: drain's node and pods, the CronJob, the Pod to copy. */
function respondJson(request: CapturedRequest): { status: number; body: unknown } {
  if (request.path === '/api/v1/nodes/n1') return { status: 200, body: node };
  if (request.path === '/api/v1/pods') {
    return {
      status: 200,
      body: { apiVersion: 'v1', kind: 'PodList', metadata: {}, items: victimDeleted ? [] : [victim] },
    };
  }
  if (request.path === '/api/v1/namespaces/default/pods/victim' && !victimDeleted)
    return { status: 200, body: victim };
  if (request.path === '/apis/batch/v1/namespaces/default/cronjobs/nightly')
    return { status: 200, body: cronJob };
  if (request.path === '/api/v1/namespaces/default/pods/app') return { status: 200, body: original };
  if (request.path === '/apis/apps/v1/namespaces/default/deployments/web')
    return { status: 200, body: deployment };
  return { status: 404, body: notFound };
}

/** Answers as kube-apiserver would, in JSON: echo created objects, fill in review statuses. */
function respond(request: CapturedRequest): { status: number; body: unknown } {
  if (!isKubernetesProtobuf(request.contentType)) return respondJson(request);
  const { object, unknownFields } = decodeKubernetesProtobufDetailed(request.body);
  decoded.push({ request, object, unknownFields });
  const reply = structuredClone(object) as Record<string, unknown>;
  switch (object.kind) {
    case 'SelfSubjectAccessReview':
      reply.status = { allowed: true, reason: 'test' };
      break;
    case 'SelfSubjectRulesReview':
      reply.status = {
        resourceRules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }],
        nonResourceRules: [],
        incomplete: false,
      };
      break;
    case 'TokenRequest':
      reply.status = { token: 'issued-token', expirationTimestamp: '2030-01-01T00:00:00Z' };
      break;
    case 'SelfSubjectReview':
      reply.status = { userInfo: { username: 'alice', groups: ['devs', 'system:authenticated'] } };
      break;
    case 'DeleteOptions':
      victimDeleted = true;
      return { status: 200, body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' } };
  }
  return { status: 201, body: reply };
}

/** JSON as kube-apiserver would receive it from Go: nulls (nil pointers/slices, zero Time) dropped. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => [k, withoutNulls(v)]),
    );
  }
  return value;
}

let server: KubectlServer;
let files: string;
let cert: ServingCert;

before(async () => {
  server = await startKubectlServer(respond);
  files = await mkdtemp(join(tmpdir(), 'troupe-pb-files-'));
  await writeFile(join(files, 'blob.bin'), Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
  await writeFile(join(files, 'app.properties'), 'color=blue\nsize=2\n');
  cert = await selfSignedCert('tls-test');
  await writeFile(join(files, 'tls.crt'), cert.cert);
  await writeFile(join(files, 'tls.key'), cert.key);
});

after(async () => {
  await server.close();
  await rm(files, { recursive: true, force: true });
});

/** Runs kubectl and returns the one protobuf body it sent, decoded. */
async function send(...args: string[]): Promise<Decoded & { stdout: string }> {
  const before = decoded.length;
  const stdout = await server.kubectl(...args);
  const sent = decoded.slice(before);
  assert.equal(sent.length, 1, `kubectl ${args.join(' ')} sent ${sent.length} protobuf bodies`);
  const one = sent[0]!;
  assert.deepEqual(one.unknownFields, [], 'every field kubectl sent is in the tables');
  assert.match(one.request.accept, /application\/json/, 'kubectl accepts JSON answers');
  return { ...one, stdout };
}

/** Creates with kubectl and checks the decoded body against kubectl's own JSON of the object. */
async function createMatchesDryRun(...args: string[]): Promise<DecodedObject> {
  const end = args.includes('--') ? args.indexOf('--') : args.length;
  const dryRun = [...args.slice(0, end), '--dry-run=client', '-o', 'json', ...args.slice(end)];
  const printed = JSON.parse(await server.kubectl(...dryRun));
  const { object, stdout } = await send(...args);
  assert.deepEqual(object, withoutNulls(printed));
  assert.match(stdout, / (created|autoscaled)\n$/);
  return object;
}

describe('kubectl protobuf bodies decode to the JSON shape', () => {
  test('create configmap', async () => {
    const obj = await createMatchesDryRun(
      'create',
      'configmap',
      'cm1',
      '--from-literal=a=b',
      '--from-literal=c=',
    );
    assert.deepEqual(obj, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm1' },
      data: { a: 'b', c: '' },
    });
  });

  test('create configmap from files (binaryData)', async () => {
    const obj = await createMatchesDryRun(
      'create',
      'configmap',
      'cm2',
      `--from-file=${join(files, 'blob.bin')}`,
      `--from-file=${join(files, 'app.properties')}`,
    );
    assert.deepEqual(obj.data, { 'app.properties': 'color=blue\nsize=2\n' });
    assert.deepEqual(
      Buffer.from((obj.binaryData as Record<string, string>)['blob.bin']!, 'base64'),
      Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
    );
  });

  test('create namespace', async () => {
    const obj = await createMatchesDryRun('create', 'namespace', 'ns1');
    assert.deepEqual(obj, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'ns1' },
      spec: {},
      status: {},
    });
  });

  test('create serviceaccount', async () => {
    const obj = await createMatchesDryRun('create', 'serviceaccount', 'sa1', '-n', 'team');
    assert.deepEqual(obj, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'sa1', namespace: 'team' },
    });
  });

  test('create secret generic', async () => {
    const obj = await createMatchesDryRun(
      'create',
      'secret',
      'generic',
      's1',
      '--from-literal=user=admin',
      `--from-file=${join(files, 'blob.bin')}`,
      '--type=example.com/custom',
    );
    assert.equal(obj.type, 'example.com/custom');
    const data = obj.data as Record<string, string>;
    assert.equal(data.user, Buffer.from('admin').toString('base64'));
    assert.equal(data['blob.bin'], Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString('base64'));
  });

  test('create secret tls', async () => {
    const obj = await createMatchesDryRun(
      'create',
      'secret',
      'tls',
      'tls1',
      `--cert=${join(files, 'tls.crt')}`,
      `--key=${join(files, 'tls.key')}`,
    );
    assert.equal(obj.type, 'kubernetes.io/tls');
    assert.equal(
      Buffer.from((obj.data as Record<string, string>)['tls.crt']!, 'base64').toString(),
      cert.cert,
    );
  });

  test('create secret docker-registry', async () => {
    const obj = await createMatchesDryRun(
      'create',
      'secret',
      'docker-registry',
      'regcred',
      '--docker-server=registry.example.com',
      '--docker-username=u',
      '--docker-password=p',
    );
    assert.equal(obj.type, 'kubernetes.io/dockerconfigjson');
  });

  test('create deployment', async () => {
    const obj = await createMatchesDryRun(
      'create',
      'deployment',
      'web',
      '--image=nginx:1.27',
      '--replicas=3',
      '--port=8080',
    );
    assert.deepEqual(obj, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            containers: [
              { name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 8080 }], resources: {} },
            ],
          },
        },
        strategy: {},
      },
      status: {},
    });
  });

  test('create deployment with a command', async () => {
    const obj = await createMatchesDryRun(
      'create',
      'deployment',
      'worker',
      '--image=busybox',
      '--',
      'sh',
      '-c',
      'sleep 1',
    );
    const spec = (obj.spec as { template: { spec: { containers: { command: string[] }[] } } }).template.spec;
    assert.deepEqual(spec.containers[0]!.command, ['sh', '-c', 'sleep 1']);
  });

  test('create job', async () => {
    const obj = await createMatchesDryRun('create', 'job', 'once', '--image=busybox', '--', 'echo', 'hi');
    assert.equal(obj.kind, 'Job');
  });

  test('create cronjob', async () => {
    const obj = await createMatchesDryRun(
      'create',
      'cronjob',
      'tick',
      '--image=busybox',
      '--schedule=*/5 * * * *',
      '--restart=OnFailure',
      '--',
      'date',
    );
    const spec = obj.spec as {
      schedule: string;
      jobTemplate: { spec: { template: { spec: { restartPolicy: string } } } };
    };
    assert.equal(spec.schedule, '*/5 * * * *');
    assert.equal(spec.jobTemplate.spec.template.spec.restartPolicy, 'OnFailure');
  });

  test('create service clusterip (int-or-string targetPort)', async () => {
    const obj = await createMatchesDryRun(
      'create',
      'service',
      'clusterip',
      'svc',
      '--tcp=80:8080',
      '--tcp=443:https',
    );
    const ports = (obj.spec as { ports: { targetPort: unknown }[] }).ports;
    assert.deepEqual(
      ports.map((p) => p.targetPort),
      [8080, 'https'],
    );
  });

  test('create service nodeport', async () => {
    await createMatchesDryRun('create', 'service', 'nodeport', 'np', '--tcp=80:8080', '--node-port=30080');
  });

  test('create role and rolebinding', async () => {
    const role = await createMatchesDryRun(
      'create',
      'role',
      'reader',
      '--verb=get,list',
      '--resource=pods,deployments.apps',
    );
    assert.deepEqual(role.rules, [
      { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] },
      { verbs: ['get', 'list'], apiGroups: ['apps'], resources: ['deployments'] },
    ]);
    await createMatchesDryRun(
      'create',
      'rolebinding',
      'read',
      '--role=reader',
      '--user=alice',
      '--serviceaccount=team:sa1',
    );
  });

  test('create clusterrole and clusterrolebinding', async () => {
    await createMatchesDryRun('create', 'clusterrole', 'node-reader', '--verb=get', '--resource=nodes');
    await createMatchesDryRun('create', 'clusterrole', 'health', '--verb=get', '--non-resource-url=/healthz');
    await createMatchesDryRun(
      'create',
      'clusterrolebinding',
      'node-readers',
      '--clusterrole=node-reader',
      '--group=devs',
    );
  });

  test('create quota (Quantity maps)', async () => {
    const obj = await createMatchesDryRun(
      'create',
      'quota',
      'q',
      '--hard=cpu=1500m,memory=2Gi,pods=10',
      '--scopes=BestEffort',
    );
    assert.deepEqual(obj.spec, { hard: { cpu: '1500m', memory: '2Gi', pods: '10' }, scopes: ['BestEffort'] });
  });

  test('create priorityclass', async () => {
    const obj = await createMatchesDryRun(
      'create',
      'priorityclass',
      'high',
      '--value=1000',
      '--description=important',
      '--preemption-policy=Never',
    );
    assert.equal(obj.value, 1000);
    assert.equal(obj.preemptionPolicy, 'Never');
  });

  test('create ingress', async () => {
    const obj = await createMatchesDryRun(
      'create',
      'ingress',
      'ing',
      '--class=nginx',
      '--rule=foo.com/bar*=svc:8080,tls=my-cert',
      '--rule=foo.com/api=api:http',
      '--default-backend=def:http',
    );
    const spec = obj.spec as { rules: { http: { paths: unknown[] } }[] };
    assert.deepEqual(spec.rules[0]!.http.paths, [
      { path: '/bar', pathType: 'Prefix', backend: { service: { name: 'svc', port: { number: 8080 } } } },
      { path: '/api', pathType: 'Exact', backend: { service: { name: 'api', port: { name: 'http' } } } },
    ]);
  });

  test('autoscale deployment', async () => {
    const obj = await createMatchesDryRun(
      'autoscale',
      'deployment',
      'web',
      '--min=2',
      '--max=5',
      '--cpu-percent=80',
    );
    assert.deepEqual(obj.spec, {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 2,
      maxReplicas: 5,
      targetCPUUtilizationPercentage: 80,
    });
  });

  test('create poddisruptionbudget (int-or-string percent)', async () => {
    const obj = await createMatchesDryRun(
      'create',
      'poddisruptionbudget',
      'pdb',
      '--selector=app=web',
      '--min-available=50%',
    );
    assert.equal((obj.spec as { minAvailable: unknown }).minAvailable, '50%');
    const other = await createMatchesDryRun(
      'create',
      'pdb',
      'pdb2',
      '--selector=app=web',
      '--max-unavailable=1',
    );
    assert.equal((other.spec as { maxUnavailable: unknown }).maxUnavailable, 1);
  });
});

describe('kubectl requests without a dry-run form', () => {
  test('auth can-i sends a SelfSubjectAccessReview and reads the JSON answer', async () => {
    const { object, stdout, request } = await send('auth', 'can-i', 'list', 'pods', '-n', 'team');
    assert.equal(request.path, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews');
    assert.deepEqual(object, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: {},
      spec: { resourceAttributes: { namespace: 'team', verb: 'list', resource: 'pods' } },
      status: { allowed: false },
    });
    assert.equal(stdout, 'yes\n');
  });

  test('auth can-i with a subresource and a name', async () => {
    const { object } = await send('auth', 'can-i', 'update', 'deployments.apps/web', '--subresource=scale');
    assert.deepEqual((object.spec as { resourceAttributes: unknown }).resourceAttributes, {
      namespace: 'default',
      verb: 'update',
      group: 'apps',
      resource: 'deployments',
      subresource: 'scale',
      name: 'web',
    });
  });

  test('auth can-i --list sends a SelfSubjectRulesReview', async () => {
    const { object, stdout } = await send('auth', 'can-i', '--list', '-n', 'team');
    assert.deepEqual(object, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      metadata: {},
      spec: { namespace: 'team' },
      status: { incomplete: false },
    });
    assert.match(stdout, /pods\s+\[\]\s+\[\]\s+\[get list\]/);
  });

  test('create token sends a TokenRequest', async () => {
    const { object, stdout, request } = await send(
      'create',
      'token',
      'sa1',
      '-n',
      'team',
      '--audience=api',
      '--audience=vault',
      '--duration=10m',
    );
    assert.equal(request.path, '/api/v1/namespaces/team/serviceaccounts/sa1/token');
    assert.deepEqual(object, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      metadata: {},
      spec: { audiences: ['api', 'vault'], expirationSeconds: 600 },
      // token has no omitempty in Go, so an empty one is written
      status: { token: '' },
    });
    assert.equal(stdout, 'issued-token');
  });

  test('auth whoami sends a SelfSubjectReview', async () => {
    const { object, stdout } = await send('auth', 'whoami');
    assert.deepEqual(object, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
      metadata: {},
      status: { userInfo: {} },
    });
    assert.match(stdout, /Username\s+alice/);
  });

  test('drain --disable-eviction deletes with protobuf DeleteOptions', async () => {
    const { object, request, stdout } = await send(
      'drain',
      'n1',
      '--force',
      '--disable-eviction',
      '--grace-period=7',
      '--timeout=30s',
    );
    assert.equal(request.method, 'DELETE');
    assert.equal(request.path, '/api/v1/namespaces/default/pods/victim');
    assert.deepEqual(object, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 7 });
    assert.match(stdout, /node\/n1 drained/);
  });

  test('create job --from=cronjob round-trips a rich pod template', async () => {
    const { object, request } = await send('create', 'job', 'manual', '--from=cronjob/nightly');
    assert.equal(request.path, '/apis/batch/v1/namespaces/default/jobs');
    assert.deepEqual(object, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'manual',
        labels: { team: 'data' },
        annotations: { 'cronjob.kubernetes.io/instantiate': 'manual' },
        ownerReferences: [
          { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'cronjob-uid', controller: true },
        ],
      },
      spec: jobSpec,
      status: {},
    });
  });

  test('debug --copy-to creates the copied Pod', async () => {
    const { object } = await send(
      'debug',
      'app',
      '--copy-to=app-debug',
      '--image=busybox',
      '--container=dbg',
    );
    assert.equal(object.kind, 'Pod');
    assert.deepEqual(object.metadata, { name: 'app-debug', namespace: 'default' });
    const spec = object.spec as { containers: { name: string }[]; volumes: unknown };
    assert.deepEqual(
      spec.containers.map((c) => c.name),
      ['main', 'dbg'],
    );
    assert.deepEqual(spec.volumes, original.spec.volumes);
  });
});
