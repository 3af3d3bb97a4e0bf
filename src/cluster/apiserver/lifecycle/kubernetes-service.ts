/**
 * The `default/kubernetes` Service kube-apiserver keeps for in-cluster clients, on the first
 * address of the service range and pointing at the port the server listens on. Its reconciler
 * puts it back when it is deleted; here that starts as the deletion is written rather than on
 * the reconciler's next pass, so the first address does not go to another Service meanwhile.
 */
import type { Api } from '../api.ts';
import { errors } from '../errors.ts';
import type { KubeObject, ResourceType } from '../types.ts';

/** How long a failed recreation waits before the next try. */
const RETRY_MS = 1000;

export class KubernetesService {
  private readonly api: Api;
  private readonly rt: ResourceType;
  private readonly clusterIP: string;
  private readonly port: number;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(api: Api, clusterIP: string, port: number) {
    const rt = api.registry.get('', 'v1', 'services');
    if (!rt) throw errors.internal('services are not served');
    this.api = api;
    this.rt = rt;
    this.clusterIP = clusterIP;
    this.port = port;
  }

  /** Creates the Service unless it exists. */
  async ensure(): Promise<void> {
    if (this.api.tryGet(this.rt, 'default', 'kubernetes')) return;
    await this.api.create(this.rt, 'default', this.manifest(), { user: 'system:apiserver' });
  }

  onWrite(rt: ResourceType, type: string, obj: KubeObject): void {
    if (rt.group !== '' || rt.resource !== 'services' || type !== 'DELETED' || this.stopped) return;
    if (obj.metadata.namespace === 'default' && obj.metadata.name === 'kubernetes') this.recreate();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /**
   * Started before the deletion returns: unless a webhook makes it wait, the Service is back
   * before any other request runs.
   */
  private recreate(): void {
    this.ensure().catch(() => {
      // A webhook refused it, say; the real reconciler keeps trying too.
      if (!this.stopped) this.timer = setTimeout(() => this.recreate(), RETRY_MS);
    });
  }

  private manifest(): KubeObject {
    return {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
      spec: {
        clusterIP: this.clusterIP,
        ipFamilyPolicy: 'SingleStack',
        ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: this.port }],
        sessionAffinity: 'None',
        type: 'ClusterIP',
      },
    };
  }
}
