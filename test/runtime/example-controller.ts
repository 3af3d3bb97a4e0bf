/**
 * A small example controller (tests only, not shipped) that exercises the runtime
 * through its public API: a custom resource `Greeting` owns one ConfigMap per replica,
 * picks up a suffix from Secrets that point at it by label, keeps a finalizer, reports
 * status, records events, requeues itself and refuses bad specs with a TerminalError.
 */

import {
  type AdmissionHandler,
  allowed,
  type Client,
  type ControllerDefinition,
  denied,
  enqueueByLabel,
  hasFinalizer,
  indexByOwnerUid,
  isBeingDeleted,
  type KubeObject,
  OWNER_UID_INDEX,
  patched,
  type ReconcileContext,
  setControllerReference,
  TerminalError,
} from '../../src/runtime/index.ts';
import { waitFor } from '../support/wait.ts';

export const GREETING = { apiVersion: 'example.troupe.dev/v1', kind: 'Greeting' };
export const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' };
export const SECRET = { apiVersion: 'v1', kind: 'Secret' };
export const FINALIZER = 'example.troupe.dev/cleanup';
export const GREETING_LABEL = 'example.troupe.dev/greeting';

export interface Greeting extends KubeObject {
  spec: { replicas: number; message: string; recheckSeconds?: number };
  status?: { observedGeneration?: number; replicas?: number; message?: string };
}

export const greetingCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'greetings.example.troupe.dev' },
  spec: {
    group: 'example.troupe.dev',
    scope: 'Namespaced',
    names: { plural: 'greetings', singular: 'greeting', kind: 'Greeting', listKind: 'GreetingList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  replicas: { type: 'integer' },
                  message: { type: 'string' },
                  recheckSeconds: { type: 'integer' },
                },
              },
              status: {
                type: 'object',
                properties: {
                  observedGeneration: { type: 'integer' },
                  replicas: { type: 'integer' },
                  message: { type: 'string' },
                },
              },
            },
          },
        },
      },
    ],
  },
};

/** Installs the CRD and waits until the API serves it. */
export async function installGreetingCrd(client: Client): Promise<void> {
  await client.create(greetingCrd);
  await waitFor('the Greeting CRD to be served', async () => {
    await client.mapper.resourceFor(GREETING);
    await client.list(GREETING, { limit: 1 });
    return true;
  });
}

export function greeting(namespace: string, name: string, replicas: number, message = 'hello'): Greeting {
  return { ...GREETING, metadata: { name, namespace }, spec: { replicas, message } };
}

export interface GreetingHooks {
  /** Called at the start of every reconcile. */
  onReconcile?(key: string, ctx: ReconcileContext): void | Promise<void>;
}

export function greetingController(hooks: GreetingHooks = {}, name = 'greeting'): ControllerDefinition {
  return {
    name,
    for: GREETING,
    owns: [CONFIGMAP],
    watches: [{ ...SECRET, map: enqueueByLabel(GREETING_LABEL) }],
    indexes: [{ kind: CONFIGMAP, name: OWNER_UID_INDEX, fn: indexByOwnerUid }],
    maxConcurrentReconciles: 2,
    async reconcile(key, ctx) {
      await hooks.onReconcile?.(key, ctx);
      const { cache, client, recorder } = ctx;
      const g = await cache.get<Greeting>(GREETING, ctx.name, ctx.namespace);
      if (!g) return;
      const children = await cache.list<KubeObject>(CONFIGMAP, {
        namespace: ctx.namespace,
        index: { name: OWNER_UID_INDEX, value: g.metadata.uid ?? '' },
      });

      if (isBeingDeleted(g)) {
        for (const child of children) await client.delete(child);
        if (hasFinalizer(g, FINALIZER)) {
          await client.removeFinalizer(g, FINALIZER);
          recorder.normal(g, 'CleanedUp', 'Delete', `deleted ${children.length} greetings`);
        }
        return;
      }
      if (!hasFinalizer(g, FINALIZER)) await client.addFinalizer(g, FINALIZER);

      if (g.spec.replicas < 0) {
        recorder.warning(g, 'InvalidSpec', 'Validate', 'spec.replicas must not be negative');
        throw new TerminalError('spec.replicas must not be negative');
      }

      const secrets = await cache.list<KubeObject & { data?: Record<string, string> }>(SECRET, {
        namespace: ctx.namespace,
        labelSelector: `${GREETING_LABEL}=${ctx.name}`,
      });
      const suffix = secrets
        .map((s) => Buffer.from(s.data?.suffix ?? '', 'base64').toString())
        .sort()
        .join('');
      const message = g.spec.message + suffix;

      const wanted = new Set<string>();
      for (let i = 0; i < g.spec.replicas; i++) {
        const childName = `${ctx.name}-${i}`;
        wanted.add(childName);
        const existing = children.find((c) => c.metadata.name === childName);
        if ((existing?.data as Record<string, string> | undefined)?.message === message) continue;
        const desired: KubeObject = {
          ...CONFIGMAP,
          metadata: { name: childName, namespace: ctx.namespace, labels: { [GREETING_LABEL]: ctx.name } },
          data: { message },
        };
        setControllerReference(g, desired);
        await client.apply(desired, { force: true });
      }
      for (const child of children) {
        if (!wanted.has(child.metadata.name ?? '')) await client.delete(child);
      }

      const status = { observedGeneration: g.metadata.generation, replicas: g.spec.replicas, message };
      if (JSON.stringify(g.status ?? {}) !== JSON.stringify(status)) {
        await client.patchStatus(g, { status });
        recorder.normal(g, 'Reconciled', 'Reconcile', `${g.spec.replicas} greetings say "${message}"`);
      }
      if (g.spec.recheckSeconds) return { requeueAfter: g.spec.recheckSeconds * 1000 };
      return undefined;
    },
  };
}

/** Mutating webhook: a Greeting without a message says "hello". */
export const defaultGreeting: AdmissionHandler = (req) => {
  const g = req.object as Greeting;
  if (g.spec?.message) return allowed();
  const copy = structuredClone(g);
  copy.spec = { ...copy.spec, message: 'hello' };
  return patched(g, copy);
};

/** Validating webhook: messages are short. */
export const validateGreeting: AdmissionHandler = (req) => {
  const g = req.object as Greeting;
  return (g.spec?.message ?? '').length > 40
    ? denied('spec.message must be at most 40 characters', 422, 'Invalid')
    : allowed();
};

/** Registers both webhooks with the API server, pointing at `url` and trusting `caBundle`. */
export function greetingWebhookConfigurations(url: string, caBundle: string): KubeObject[] {
  const common = {
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    rules: [
      {
        apiGroups: ['example.troupe.dev'],
        apiVersions: ['v1'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['greetings'],
      },
    ],
  };
  const ca = Buffer.from(caBundle).toString('base64');
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'greetings.example.troupe.dev' },
      webhooks: [
        {
          ...common,
          name: 'default.greetings.example.troupe.dev',
          clientConfig: { url: `${url}/default-greeting`, caBundle: ca },
        },
      ],
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'greetings.example.troupe.dev' },
      webhooks: [
        {
          ...common,
          name: 'validate.greetings.example.troupe.dev',
          clientConfig: { url: `${url}/validate-greeting`, caBundle: ca },
        },
      ],
    },
  ];
}
