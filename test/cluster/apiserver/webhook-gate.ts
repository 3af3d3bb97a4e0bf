/**
 * A validating admission webhook that holds chosen requests until the test lets them go, so a
 * test can run another write while one waits in admission: races reproduced in order, without
 * sleeps.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type ServingCert, selfSignedCert } from '../../../src/cluster/apiserver/tls.ts';
import type { TestServer } from '../../support/apiserver.ts';

/** The part of an AdmissionReview request the tests match on. */
export interface ReviewRequest {
  operation: string;
  name: string;
  dryRun: boolean;
  object: { spec?: Record<string, unknown> } | null;
}

interface Hold {
  matches: (r: ReviewRequest) => boolean;
  arrived: (release: () => void) => void;
}

export class WebhookGate {
  private readonly server: Server;
  private readonly ca: string;
  private holds: Hold[] = [];

  private constructor(cert: ServingCert) {
    this.ca = cert.ca;
    this.server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => this.serve(req, res));
  }

  static async start(): Promise<WebhookGate> {
    const gate = new WebhookGate(await selfSignedCert('gate'));
    await new Promise<void>((resolve) => gate.server.listen(0, '127.0.0.1', resolve));
    return gate;
  }

  /** Registers the gate for Services, for these operations. */
  async register(t: TestServer, operations: string[]): Promise<void> {
    const { port } = this.server.address() as AddressInfo;
    const res = await t.request(
      'POST',
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
      {
        body: JSON.stringify({
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingWebhookConfiguration',
          metadata: { name: 'gate' },
          webhooks: [
            {
              name: 'gate.example.com',
              clientConfig: {
                url: `https://127.0.0.1:${port}/`,
                caBundle: Buffer.from(this.ca).toString('base64'),
              },
              rules: [{ operations, apiGroups: [''], apiVersions: ['v1'], resources: ['services'] }],
              sideEffects: 'None',
              admissionReviewVersions: ['v1'],
              timeoutSeconds: 30,
            },
          ],
        }),
      },
    );
    if (res.status !== 201) throw new Error(`registering the gate: ${res.status} ${res.text}`);
  }

  /**
   * Holds the next request `matches` accepts; resolves once it waits in admission, with the
   * function that lets it through.
   */
  hold(matches: (r: ReviewRequest) => boolean): Promise<() => void> {
    return new Promise((arrived) => this.holds.push({ matches, arrived }));
  }

  close(): void {
    this.server.closeAllConnections();
    this.server.close();
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { request } = JSON.parse(Buffer.concat(chunks).toString()) as {
        request: ReviewRequest & { uid: string };
      };
      const allow = () => {
        res.setHeader('Content-Type', 'application/json');
        res.end(
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: { uid: request.uid, allowed: true },
          }),
        );
      };
      const hold = this.holds.find((h) => h.matches(request));
      if (!hold) return allow();
      this.holds = this.holds.filter((h) => h !== hold);
      hold.arrived(allow);
    });
  }
}
