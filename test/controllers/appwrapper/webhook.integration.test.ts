/**
 * The AppWrapper admission webhooks, served by the runtime's WebhookServer and called by the
 * API server over HTTPS, as on a real cluster.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, kubeConfigFromString } from '../../../src/runtime/index.ts';
import { waitFor } from '../../support/wait.ts';
import { AW, appWrapper, type Env, getAw, podTemplate, startEnv, waitPhase } from './env.ts';

let env: Env;

before(async () => {
  env = await startEnv({ webhook: true, aw: { defaultQueueName: 'user-queue' } });
  // The embedded API server sends webhooks only `system:authenticated` as the caller's groups
  // (not system:masters), so the SubjectAccessReview for the admin needs an explicit binding.
  await env.client.create(
    { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings' },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'test-admins' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:admin' },
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'troupe-admin' },
      ],
    },
  );
});

after(async () => {
  await env.stop();
});

async function rejected(obj: Record<string, unknown>): Promise<string> {
  try {
    await env.client.create(AW, obj as never);
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail('the AppWrapper was admitted');
}

const tmpl = { spec: { containers: [{ name: 'c', image: 'busybox' }] } };

describe('defaulting', () => {
  test('finalizer, creator labels, default queue and suspend are set on create', async () => {
    const created = await env.client.create(AW, appWrapper('defaulted', { queue: null, suspend: false }));
    assert.deepEqual(created.metadata.finalizers, ['workload.codeflare.dev/finalizer']);
    assert.equal(created.metadata.labels?.['workload.codeflare.dev/user'], 'system_admin');
    assert.equal(created.metadata.labels?.['workload.codeflare.dev/userid'], '');
    assert.equal(created.metadata.labels?.['kueue.x-k8s.io/queue-name'], 'user-queue');
    assert.equal((created.spec as { suspend: boolean }).suspend, true);
    await waitPhase(env, 'defaulted', 'Running');
  });

  test('an AppWrapper managed by another controller gets no finalizer and is left alone', async () => {
    const aw = appWrapper('elsewhere');
    (aw.spec as Record<string, unknown>).managedBy = 'kueue.x-k8s.io/multikueue';
    const created = await env.client.create(AW, aw);
    assert.equal(created.metadata.finalizers, undefined);
    // A barrier instead of a sleep: an AppWrapper created after it is handled by the same
    // controller; once that one has a phase, this one's event has been seen too.
    await env.client.create(AW, appWrapper('after-elsewhere'));
    await waitPhase(env, 'after-elsewhere', 'Running');
    assert.equal((getAw(env, 'elsewhere')?.status as { phase?: string } | undefined)?.phase, undefined);
  });
});

describe('validation', () => {
  test('nested AppWrappers are forbidden', async () => {
    const inner = appWrapper('inner');
    const msg = await rejected(
      appWrapper('nest', { components: [{ template: inner }, { template: podTemplate('x') }] }),
    );
    assert.match(
      msg,
      /admission webhook "vappwrapper.kb.io" denied the request: .*spec\.components\[0\]\.template: Forbidden: Nested AppWrappers are forbidden/,
    );
  });

  test('components must stay in the AppWrapper namespace', async () => {
    const t = podTemplate('x');
    (t.metadata as Record<string, unknown>).namespace = 'kube-system';
    const msg = await rejected(appWrapper('ns', { components: [{ template: t }] }));
    assert.match(
      msg,
      /spec\.components\[0\]\.template\.metadata\.namespace: Forbidden: AppWrappers cannot create objects in other namespaces/,
    );
  });

  test('at least one and at most 8 pod specs', async () => {
    const svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { ports: [{ port: 80 }] },
    };
    assert.match(
      await rejected(appWrapper('none', { components: [{ template: svc }] })),
      /components contains no podspecs/,
    );
    const unknown = { apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 't' }, spec: {} };
    assert.match(
      await rejected(appWrapper('unknown', { components: [{ template: unknown }] })),
      /components contains no podspecs/,
    );
    const many = Array.from({ length: 9 }, (_, i) => ({ template: podTemplate(`p${i}`) }));
    assert.match(
      await rejected(appWrapper('many', { components: many })),
      /components contains 9 podspecs; at most 8 are allowed/,
    );
  });

  test('declared pod-set paths must reach a PodSpec and agree with inference', async () => {
    const thing = {
      apiVersion: 'example.com/v1',
      kind: 'Thing',
      metadata: { name: 't' },
      spec: { a: { template: tmpl } },
    };
    assert.match(
      await rejected(
        appWrapper('badpath', { components: [{ template: thing, podSets: [{ path: 'template.spec.b' }] }] }),
      ),
      /spec\.components\[0\]\.podSets\[0\]\.path: Invalid value: "template\.spec\.b": path does not refer to a v1\.PodSpecTemplate: at path position 'template\.spec\.' missing field 'b'/,
    );
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j' },
      spec: { parallelism: 2, template: tmpl },
    };
    assert.match(
      await rejected(
        appWrapper('mismatch', {
          components: [{ template: job, podSets: [{ replicas: 3, path: 'template.spec.template' }] }],
        }),
      ),
      /replica count 3 differs from inferred count 2/,
    );
    const badSpec = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { template: { spec: { containers: 'no' } } },
    };
    assert.match(
      await rejected(appWrapper('badspec', { components: [{ template: badSpec }] })),
      /error inferring PodSets/,
    );
    // Declared pod sets make an unknown kind acceptable.
    await env.client.create(
      AW,
      appWrapper('declared', {
        components: [{ template: thing, podSets: [{ replicas: 2, path: 'template.spec.a.template' }] }],
      }),
    );
  });

  test('components and the creator labels are immutable; Kueue may still set podSetInfos and suspend', async () => {
    await env.client.create(AW, appWrapper('fixed'));
    await waitFor(
      'fixed handled',
      () => (getAw(env, 'fixed')?.status as { phase?: string } | undefined)?.phase,
    );
    await assert.rejects(
      env.client.mutate(AW, 'default', 'fixed', (cur) => {
        const c = (cur.spec as { components: { template: Record<string, unknown> }[] }).components[0]!;
        (c.template.spec as Record<string, unknown>).restartPolicy = 'Always';
      }),
      /spec\.components\[0\]\.template\.raw: Forbidden: attempt to change immutable field/,
    );
    await assert.rejects(
      env.client.mutate(AW, 'default', 'fixed', (cur) => {
        cur.metadata.labels = { ...cur.metadata.labels, 'workload.codeflare.dev/user': 'mallory' };
      }),
      /metadata\.labels\[workload\.codeflare\.dev\/user\]: Forbidden/,
    );
    await env.client.mutate(AW, 'default', 'fixed', (cur) => {
      const c = (cur.spec as { components: Record<string, unknown>[] }).components[0]!;
      c.podSetInfos = [{ labels: { a: 'b' } }];
    });
  });

  test('the creator must be allowed to create every wrapped kind (SubjectAccessReview)', async () => {
    const token = env.server.mintServiceAccountToken('default', 'nobody');
    const asNobody = Client.fromKubeConfig(kubeConfigFromString(env.server.kubeconfigFor(token)));
    try {
      await assert.rejects(
        asNobody.create(appWrapper('sneaky')),
        /User system:serviceaccount:default:nobody is not authorized to create pods in default/,
      );
      // With RBAC to create pods, the same user may wrap them.
      const rbac = (resource: string) => ({ group: 'rbac.authorization.k8s.io', version: 'v1', resource });
      await env.client.create(rbac('roles'), {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'pod-maker', namespace: 'default' },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['create'] }],
      });
      await env.client.create(rbac('rolebindings'), {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'nobody-makes-pods', namespace: 'default' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-maker' },
        subjects: [{ kind: 'ServiceAccount', name: 'nobody', namespace: 'default' }],
      });
      const created = await asNobody.create(appWrapper('permitted'));
      assert.equal(
        created.metadata.labels?.['workload.codeflare.dev/user'],
        'system_serviceaccount_default_nobody',
      );
    } finally {
      await asNobody.rest.close();
    }
  });
});

describe('samples', () => {
  test('every AppWrapper sample passes the webhooks (server-side dry run); the queue setup applies', async () => {
    for (const file of [
      'appwrapper',
      'wrapped-job',
      'wrapped-deployment',
      'wrapped-failing-pod',
      'wrapped-pytorch-job',
    ]) {
      const r = await env.kubectl(['apply', '--dry-run=server', '-f', `samples/${file}.yaml`]);
      assert.equal(r.code, 0, `${file}: ${r.stderr}`);
      assert.match(r.stdout, /appwrapper\.workload\.codeflare\.dev\/sample.* created \(server dry run\)/);
    }
    const queues = await env.kubectl(['apply', '-f', 'samples/kueue-default-queues.yaml']);
    assert.equal(queues.code, 0, queues.stderr);
  });
});
