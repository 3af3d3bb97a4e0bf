/**
 * The second provider: another Kubernetes cluster (the MultiKueue idea), named by a
 * kubeconfig Secret in the local cluster. A Job offloaded there runs as one pod in the
 * remote cluster, in the namespace of the same name (which must exist there), built from
 * the Job's pod template (image, command, args, the resolved env, the container's
 * resources, the template's annotations) with `restartPolicy: Never`; the Job's own
 * backoffLimit decides any retry, as for RunPod.
 *
 * Unlike RunPod, a cluster reports exit codes: the remote pod's terminated container state
 * gives it, so no command wrapping or log reading is needed. Remote pods carry labels that
 * trace them to the local cluster, namespace, Job and Job uid, so a restarted troupe finds
 * them again and the orphan sweep can collect them.
 *
 * The remote client is built from the Secret (key `kubeconfig`), read through the local
 * cluster's client that the controller attaches, and rebuilt when the Secret changes.
 */
import { type Clock, realClock } from '../../lib/clock.ts';
import {
  Client,
  isAlreadyExists,
  isApiError,
  type KubeObject,
  kubeConfigFromString,
} from '../../runtime/index.ts';
import type { LaunchHooks, LaunchLimits, LaunchOutcome, OffloadProvider } from './provider.ts';
import { ProviderError } from './provider.ts';
import type { Pod, RemotePod } from './types.ts';
import type { LaunchRequest } from './workload.ts';

const POD = { apiVersion: 'v1', kind: 'Pod' };
const SECRET = { apiVersion: 'v1', kind: 'Secret' };

/** Labels on every remote pod (values are DNS labels or uids, valid label values). */
export const REMOTE_LABELS = {
  cluster: 'troupe.dev/offload-cluster',
  namespace: 'troupe.dev/offload-namespace',
  job: 'troupe.dev/offload-job',
  jobUid: 'troupe.dev/offload-job-uid',
} as const;

/** Waiting reasons a remote pod does not recover from by itself. */
const STUCK_REASONS = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
]);

/** How long a Secret read is reused before it is read again (a rotated kubeconfig is picked up). */
const SECRET_TTL_MS = 10_000;

export interface ClusterProviderOptions {
  /** `namespace/name` of the Secret holding the remote cluster's kubeconfig. */
  secret: string;
  /** The Secret's key (default `kubeconfig`). */
  secretKey?: string;
  /** This cluster's name, on every remote pod. */
  clusterName: string;
  /** Per-request timeout towards the remote cluster (ms). */
  timeoutMs: number;
  /** Age of the cached remote client; default the real clock. */
  clock?: Clock;
}

interface ContainerStatus {
  state?: {
    running?: { startedAt?: string };
    waiting?: { reason?: string };
    terminated?: { exitCode?: number; startedAt?: string };
  };
}

/** RunPod's status vocabulary for a remote Kubernetes pod, with its exit code once it ended. */
export function remoteFromPod(p: Pod): RemotePod {
  const labels = p.metadata.labels ?? {};
  const cs = (p.status?.containerStatuses as ContainerStatus[] | undefined)?.[0];
  const phase = p.status?.phase ?? 'Pending';
  let status: RemotePod['status'];
  let exitCode: number | undefined;
  if (phase === 'Succeeded' || phase === 'Failed') {
    status = 'EXITED';
    exitCode = cs?.state?.terminated?.exitCode ?? (phase === 'Succeeded' ? 0 : 1);
  } else if (p.metadata.deletionTimestamp) status = 'TERMINATED';
  else if (phase === 'Running') status = 'RUNNING';
  else if (STUCK_REASONS.has(cs?.state?.waiting?.reason ?? '')) status = 'ERROR';
  else status = p.spec?.nodeName ? 'STARTING' : 'PROVISIONING';
  return {
    id: `${p.metadata.namespace}/${p.metadata.name}`,
    name: p.metadata.name ?? '',
    status,
    costPerHr: 0,
    startedAt: cs?.state?.running?.startedAt ?? cs?.state?.terminated?.startedAt ?? null,
    createdAt: p.metadata.creationTimestamp,
    tags: {
      cluster: labels[REMOTE_LABELS.cluster],
      namespace: labels[REMOTE_LABELS.namespace],
      job: labels[REMOTE_LABELS.job],
      jobUid: labels[REMOTE_LABELS.jobUid],
    },
    ...(exitCode !== undefined ? { exitCode } : {}),
  };
}

/** The remote pod for a launch request (pure). */
export function remotePodFor(req: LaunchRequest): KubeObject {
  const resources = req.resources ?? {
    limits: { [req.gpuVendor === 'AMD' ? 'amd.com/gpu' : 'nvidia.com/gpu']: String(req.gpuCount) },
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: req.name,
      namespace: req.tags.namespace,
      labels: {
        [REMOTE_LABELS.cluster]: req.tags.cluster,
        [REMOTE_LABELS.namespace]: req.tags.namespace,
        [REMOTE_LABELS.job]: req.tags.job,
        [REMOTE_LABELS.jobUid]: req.tags.jobUid,
      },
      ...(req.podAnnotations ? { annotations: { ...req.podAnnotations } } : {}),
    },
    spec: {
      restartPolicy: 'Never',
      containers: [
        {
          name: 'job',
          image: req.image,
          ...(req.command ? { command: req.command } : {}),
          ...(req.args ? { args: req.args } : {}),
          env: Object.entries(req.env).map(([name, value]) => ({ name, value })),
          resources,
        },
      ],
    },
  };
}

function splitId(id: string): { namespace: string; name: string } {
  const i = id.indexOf('/');
  return { namespace: id.slice(0, i), name: id.slice(i + 1) };
}

export class ClusterProvider implements OffloadProvider {
  readonly name: string;
  private readonly o: ClusterProviderOptions;
  private readonly secretNamespace: string;
  private readonly secretName: string;
  private local: Client | undefined;
  private remote: { client: Client; secretVersion: string; readAt: number } | undefined;

  constructor(opts: ClusterProviderOptions) {
    const [ns, name] = opts.secret.split('/');
    if (!ns || !name) throw new Error(`the remote cluster Secret must be namespace/name, got ${opts.secret}`);
    this.o = opts;
    this.secretNamespace = ns;
    this.secretName = name;
    this.name = `cluster/${name}`;
  }

  /** The local cluster's client, to read the kubeconfig Secret (attached by the controller). */
  attach(local: Client): void {
    this.local = local;
  }

  configured(): boolean {
    return true;
  }

  /** The remote cluster's client; throws a 401-status ProviderError when the Secret is unusable. */
  private async client(signal?: AbortSignal): Promise<Client> {
    if (this.remote && (this.o.clock ?? realClock).now() - this.remote.readAt < SECRET_TTL_MS)
      return this.remote.client;
    if (!this.local) throw new ProviderError('the local cluster is not attached yet', { status: 503 });
    const where = `${this.secretNamespace}/${this.secretName}`;
    let secret: (KubeObject & { data?: Record<string, string> }) | undefined;
    try {
      secret = await this.local.tryGet(SECRET, this.secretName, this.secretNamespace, { signal });
    } catch (err) {
      throw new ProviderError(`cannot read the Secret ${where}: ${(err as Error).message}`, { cause: err });
    }
    const key = this.o.secretKey ?? 'kubeconfig';
    const data = secret?.data?.[key];
    if (!secret || !data) {
      throw new ProviderError(
        secret ? `the Secret ${where} has no key ${key}` : `the kubeconfig Secret ${where} was not found`,
        { status: 401 },
      );
    }
    const version = secret.metadata.resourceVersion ?? '';
    if (this.remote?.secretVersion === version) {
      this.remote.readAt = (this.o.clock ?? realClock).now();
      return this.remote.client;
    }
    let client: Client;
    try {
      client = Client.fromKubeConfig(kubeConfigFromString(Buffer.from(data, 'base64').toString('utf8')), {
        timeoutMs: this.o.timeoutMs,
      });
    } catch (err) {
      throw new ProviderError(`the kubeconfig in ${where} is not usable: ${(err as Error).message}`, {
        status: 401,
        cause: err,
      });
    }
    const old = this.remote?.client;
    this.remote = { client, secretVersion: version, readAt: (this.o.clock ?? realClock).now() };
    if (old) void old.rest.close();
    return client;
  }

  /** Runs a remote call, turning failures into ProviderErrors with the API status. */
  private async call<T>(
    what: string,
    signal: AbortSignal | undefined,
    fn: (c: Client) => Promise<T>,
  ): Promise<T> {
    const c = await this.client(signal);
    try {
      return await fn(c);
    } catch (err) {
      if (err instanceof ProviderError) throw err;
      throw new ProviderError(`remote cluster ${this.secretName}: ${what}: ${(err as Error).message}`, {
        status: isApiError(err) ? err.statusCode : undefined,
        retryAfterMs:
          isApiError(err) && err.retryAfterSeconds !== undefined ? err.retryAfterSeconds * 1000 : undefined,
        cause: err,
      });
    }
  }

  async ping(signal?: AbortSignal): Promise<void> {
    await this.call('list pods', signal, (c) =>
      c.list(POD, { labelSelector: `${REMOTE_LABELS.cluster}=${this.o.clusterName}`, limit: 1, signal }),
    );
  }

  async launch(
    req: LaunchRequest,
    _limits: LaunchLimits,
    signal?: AbortSignal,
    hooks?: LaunchHooks,
  ): Promise<LaunchOutcome> {
    // Price and budget do not apply: the remote cluster is already paid for.
    const pod = remotePodFor(req);
    try {
      await hooks?.beforeCreate?.();
      const created = await this.call('create pod', signal, (c) => c.create(pod, { signal }));
      return { kind: 'launched', pod: remoteFromPod(created as Pod), costPerHr: 0 };
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      const cause = err.cause;
      const message = err.message;
      if (isAlreadyExists(cause)) {
        // A create that got no answer made it after all: it is this Job's pod if its uid says so.
        const existing = await this.get(`${req.tags.namespace}/${req.name}`, signal);
        if (existing?.tags.jobUid === req.tags.jobUid) {
          return { kind: 'launched', pod: existing, costPerHr: 0 };
        }
        return { kind: 'failed', errorClass: 'Rejected', message: `${message} (and it is not this Job's)` };
      }
      if (err.status === 401 || err.status === 403)
        return { kind: 'failed', errorClass: 'Unauthorized', message };
      if (err.status === 404)
        return {
          kind: 'failed',
          errorClass: 'Rejected',
          message: `${message} (the namespace ${req.tags.namespace} must exist in the remote cluster)`,
        };
      if (err.status === 400 || err.status === 422)
        return { kind: 'failed', errorClass: 'Rejected', message };
      if (err.status === 429) return { kind: 'rateLimited', retryAfterMs: err.retryAfterMs ?? 1000, message };
      throw err;
    }
  }

  async get(id: string, signal?: AbortSignal): Promise<RemotePod | undefined> {
    const { namespace, name } = splitId(id);
    const p = await this.call(`get pod ${id}`, signal, (c) =>
      c.tryGet<Pod>(POD, name, namespace, { signal }),
    );
    return p ? remoteFromPod(p) : undefined;
  }

  async list(signal?: AbortSignal): Promise<RemotePod[]> {
    const r = await this.call('list pods', signal, (c) =>
      c.listAll<Pod>(POD, {
        labelSelector: `${REMOTE_LABELS.cluster}=${this.o.clusterName}`,
        signal,
      }),
    );
    return r.items.map(remoteFromPod);
  }

  async terminate(id: string, signal?: AbortSignal): Promise<void> {
    const { namespace, name } = splitId(id);
    if (!namespace || !name) return;
    // A pod already gone resolves false, not an error: terminating twice is fine.
    await this.call(`delete pod ${id}`, signal, (c) =>
      c.delete({ ...POD, metadata: { name, namespace } }, { signal }),
    );
  }

  /** Closes the remote client's connections. */
  async close(): Promise<void> {
    const c = this.remote?.client;
    this.remote = undefined;
    if (c) await c.rest.close();
  }
}
