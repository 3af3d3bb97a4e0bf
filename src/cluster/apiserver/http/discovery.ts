/**
 * Discovery documents: legacy (/api, /apis, /apis/<g>/<v>) and aggregated v2, which
 * kubectl 1.32 asks for first. Documents are cached and rebuilt when the registry
 * changes (a CRD was added or removed).
 */
import type { ResourceRegistry } from '../registry.ts';
import { groupVersion, type ResourceType } from '../types.ts';

export const AGGREGATED_V2_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
export const AGGREGATED_V2BETA1_TYPE =
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

interface SubresourceInfo {
  name: string;
  kind: string;
  group?: string;
  version?: string;
  verbs: string[];
}

/** The extra resources that hang off a resource, as kube-apiserver lists them. */
const STREAM_KINDS: Record<string, string> = {
  exec: 'PodExecOptions',
  attach: 'PodAttachOptions',
  portforward: 'PodPortForwardOptions',
};
const PROXY_VERBS = ['create', 'delete', 'get', 'patch', 'update'];

function subresources(rt: ResourceType): SubresourceInfo[] {
  const out: SubresourceInfo[] = [];
  for (const s of rt.subresources) {
    switch (s) {
      case 'status':
        out.push({ name: 'status', kind: rt.kind, verbs: ['get', 'patch', 'update'] });
        break;
      case 'scale':
        out.push({
          name: 'scale',
          kind: 'Scale',
          group: 'autoscaling',
          version: 'v1',
          verbs: ['get', 'patch', 'update'],
        });
        break;
      case 'binding':
        out.push({ name: 'binding', kind: 'Binding', verbs: ['create'] });
        break;
      case 'eviction':
        out.push({ name: 'eviction', kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] });
        break;
      case 'token':
        out.push({
          name: 'token',
          kind: 'TokenRequest',
          group: 'authentication.k8s.io',
          version: 'v1',
          verbs: ['create'],
        });
        break;
      case 'finalize':
        out.push({ name: 'finalize', kind: rt.kind, verbs: ['update'] });
        break;
      case 'approval':
        out.push({ name: 'approval', kind: rt.kind, verbs: ['get', 'patch', 'update'] });
        break;
      case 'exec':
      case 'attach':
      case 'portforward':
        out.push({ name: s, kind: STREAM_KINDS[s]!, verbs: ['create', 'get'] });
        break;
      case 'proxy':
        out.push({ name: s, kind: `${rt.kind}ProxyOptions`, verbs: PROXY_VERBS });
        break;
      case 'ephemeralcontainers':
        out.push({ name: s, kind: rt.kind, verbs: ['get', 'patch', 'update'] });
        break;
      default:
        out.push({ name: s, kind: rt.kind, verbs: ['get'] });
    }
  }
  return out;
}

export class Discovery {
  private readonly registry: ResourceRegistry;
  private cache = new Map<string, string>();

  constructor(registry: ResourceRegistry) {
    this.registry = registry;
    registry.on('changed', () => {
      this.cache = new Map();
    });
  }

  private cached(key: string, build: () => unknown): string {
    let v = this.cache.get(key);
    if (v === undefined) {
      v = JSON.stringify(build());
      this.cache.set(key, v);
    }
    return v;
  }

  apiVersions(serverAddress: string): string {
    return this.cached(`api:${serverAddress}`, () => ({
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    }));
  }

  private group(name: string) {
    const versions = this.registry.versions(name).map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { name, versions, preferredVersion: versions[0] };
  }

  apiGroupList(): string {
    return this.cached('apis', () => ({
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: this.registry
        .groups()
        .filter((g) => g !== '')
        .map((g) => this.group(g)),
    }));
  }

  apiGroup(name: string): string | undefined {
    if (name === '' || !this.registry.groups().includes(name)) return undefined;
    return this.cached(`group:${name}`, () => ({ kind: 'APIGroup', apiVersion: 'v1', ...this.group(name) }));
  }

  resourceList(group: string, version: string): string | undefined {
    const rts = this.registry.inGroupVersion(group, version);
    if (rts.length === 0) return undefined;
    return this.cached(`rl:${group}/${version}`, () => {
      const resources: Record<string, unknown>[] = [];
      for (const rt of rts) {
        const entry: Record<string, unknown> = {
          name: rt.resource,
          singularName: rt.singular,
          namespaced: rt.namespaced,
          kind: rt.kind,
          verbs: rt.verbs,
        };
        if (rt.shortNames.length) entry.shortNames = rt.shortNames;
        if (rt.categories.length) entry.categories = rt.categories;
        resources.push(entry);
        for (const s of subresources(rt)) {
          const sub: Record<string, unknown> = {
            name: `${rt.resource}/${s.name}`,
            singularName: '',
            namespaced: rt.namespaced,
            kind: s.kind,
            verbs: s.verbs,
          };
          if (s.group !== undefined) sub.group = s.group;
          if (s.version !== undefined) sub.version = s.version;
          resources.push(sub);
        }
      }
      return {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: groupVersion({ group, version }),
        resources,
      };
    });
  }

  /** Aggregated discovery for /api (core only) or /apis (every named group). */
  aggregated(core: boolean, apiVersion: 'v2' | 'v2beta1'): string {
    return this.cached(`agg:${core}:${apiVersion}`, () => ({
      kind: 'APIGroupDiscoveryList',
      apiVersion: `apidiscovery.k8s.io/${apiVersion}`,
      metadata: {},
      items: this.registry
        .groups()
        .filter((g) => (core ? g === '' : g !== ''))
        .map((g) => ({
          metadata: { name: g },
          versions: this.registry.versions(g).map((v) => ({
            version: v,
            freshness: 'Current',
            resources: this.registry.inGroupVersion(g, v).map((rt) => {
              const r: Record<string, unknown> = {
                resource: rt.resource,
                responseKind: { group: rt.group, version: rt.version, kind: rt.kind },
                scope: rt.namespaced ? 'Namespaced' : 'Cluster',
                singularResource: rt.singular,
                verbs: rt.verbs,
              };
              if (rt.shortNames.length) r.shortNames = rt.shortNames;
              if (rt.categories.length) r.categories = rt.categories;
              const subs = subresources(rt);
              if (subs.length) {
                r.subresources = subs.map((s) => ({
                  subresource: s.name,
                  responseKind: {
                    group: s.group ?? rt.group,
                    version: s.version ?? rt.version,
                    kind: s.kind,
                  },
                  verbs: s.verbs,
                }));
              }
              return r;
            }),
          })),
        })),
    }));
  }
}
