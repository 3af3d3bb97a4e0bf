/**
 * Before `troupe run` starts anything: does the cluster serve every kind the selected
 * capabilities watch? A kind it does not serve is a CRD not installed; the manager would
 * otherwise die on the first informer's 404. Capabilities asked for by name must have
 * their kinds; with `*`, those whose kinds are missing are left out with a warning.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  Client,
  installCrds,
  isNoKindMatch,
  type KindRef,
  type Logger,
  RestClient,
  RestMapper,
} from '../runtime/index.ts';
import { askedByName, type Capability } from './capabilities.ts';
import { connectionProblem } from './output.ts';

/** What `make install` runs; the CRDs of every capability. */
export const INSTALL_CRDS_HINT =
  "install troupe's CRDs with `make install` (or `kubectl apply --server-side -k config/crd` from a checkout, or the CRDs in dist/install.yaml), or start with --install-crds (development clusters)";

export interface MissingKinds {
  capability: Capability;
  kinds: KindRef[];
}

/** The kinds a capability's controllers watch (primary, owned, watched), once each. */
export function watchedKinds(cap: Capability): KindRef[] {
  const seen = new Map<string, KindRef>();
  for (const def of cap.controllers) {
    for (const k of [def.for, ...(def.owns ?? []), ...(def.watches ?? [])]) {
      seen.set(`${k.apiVersion}/${k.kind}`, { apiVersion: k.apiVersion, kind: k.kind });
    }
  }
  return [...seen.values()];
}

/** The CRD in the capability's manifests that defines `kind`, if the capability brings one. */
function crdFor(cap: Capability, kind: KindRef): string | undefined {
  const group = kind.apiVersion.includes('/') ? kind.apiVersion.split('/')[0] : '';
  for (const crd of cap.crds) {
    const spec = crd.spec as { group?: string; names?: { kind?: string } } | undefined;
    if (crd.kind === 'CustomResourceDefinition' && spec?.group === group && spec?.names?.kind === kind.kind) {
      return crd.metadata.name;
    }
  }
  return undefined;
}

/** Per capability, the kinds the cluster does not serve (empty when all are there). */
export async function findMissingKinds(mapper: RestMapper, caps: Capability[]): Promise<MissingKinds[]> {
  const out: MissingKinds[] = [];
  for (const capability of caps) {
    const kinds: KindRef[] = [];
    for (const kind of watchedKinds(capability)) {
      try {
        await mapper.resourceFor(kind);
      } catch (err) {
        if (!isNoKindMatch(err)) throw err;
        kinds.push(kind);
      }
    }
    if (kinds.length > 0) out.push({ capability, kinds });
  }
  return out;
}

/** One line per capability: what is missing, and which CRD (or other install) serves it. */
export function describeMissing(missing: MissingKinds[]): string {
  return missing
    .map(({ capability, kinds }) => {
      const list = kinds.map((k) => {
        const crd = crdFor(capability, k);
        return crd
          ? `${k.kind} (${k.apiVersion}, CRD ${crd})`
          : `${k.kind} (${k.apiVersion}, not one of troupe's CRDs: install the project that defines it${k.apiVersion.startsWith('kueue.x-k8s.io/') ? ', Kueue' : ''})`;
      });
      return `  ${capability.name}: ${list.join(', ')}`;
    })
    .join('\n');
}

/**
 * Resolves which capabilities `troupe run` can start. One the user named in `--controllers`
 * (itself or one of its controllers) must have its kinds: else the error names the CRDs
 * and how to install them. One selected only by `*` is left out with a warning.
 */
export async function checkCapabilityKinds(opts: {
  kubeConfig: KubeConfig;
  /** Where the kubeconfig came from, for messages. */
  origin: string;
  capabilities: Capability[];
  /** `--controllers`: a capability it names (not only through `*`) must have its kinds. */
  selector: string;
  installCrds: boolean;
  log: Logger;
  /** How long --install-crds waits for the API server to serve the new kinds. */
  timeoutMs?: number;
}): Promise<Capability[]> {
  const server = opts.kubeConfig.getCurrentCluster()?.server ?? '(unknown server)';
  // A quick client, so that an unreachable cluster is said at once, not after the manager's retries.
  const rest = new RestClient(opts.kubeConfig, { timeoutMs: 15_000, maxRetries: 1 });
  try {
    try {
      await rest.request({ method: 'GET', path: '/version' });
    } catch (err) {
      throw new Error(
        connectionProblem(err, server, opts.origin) ?? (err instanceof Error ? err.message : String(err)),
      );
    }
    const mapper = new RestMapper(rest);
    let missing = await findMissingKinds(mapper, opts.capabilities);
    if (missing.length > 0 && opts.installCrds) {
      try {
        await installCrds(
          new Client(rest, mapper),
          missing.flatMap((m) => m.capability.crds),
          {
            timeoutMs: opts.timeoutMs,
            onApplied: (crd) => opts.log.info({ crd: crd.metadata.name }, 'installed CRD (--install-crds)'),
          },
        );
      } catch (err) {
        // Said below with the kinds still missing and how to install them.
        opts.log.warn({ err: (err as Error).message }, 'installed CRDs do not serve yet');
      }
      missing = await findMissingKinds(mapper, opts.capabilities);
    }
    if (missing.length === 0) return opts.capabilities;
    const named = missing.filter((m) => askedByName(m.capability, opts.selector));
    if (named.length > 0 || missing.length === opts.capabilities.length) {
      throw new Error(
        `the cluster at ${server} does not serve the kinds these capabilities watch:\n${describeMissing(named.length > 0 ? named : missing)}\n` +
          `To fix: ${INSTALL_CRDS_HINT}; or leave them out with --controllers.`,
      );
    }
    const left = new Set(missing.map((m) => m.capability));
    opts.log.warn(
      {
        server,
        skipped: missing.map((m) => m.capability.name),
      },
      `not starting capabilities whose kinds the cluster does not serve:\n${describeMissing(missing)}\nTo run them: ${INSTALL_CRDS_HINT}`,
    );
    return opts.capabilities.filter((c) => !left.has(c));
  } finally {
    await rest.close(1_000);
  }
}
