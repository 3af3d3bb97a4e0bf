/**
 * Test support: an embedded API server on an ephemeral port, with a kubeconfig file for
 * kubectl and a KubeConfig for @kubernetes/client-node.
 */
import { execFile } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import {
  type ApiServerHandle,
  type ApiServerOptions,
  startApiServer,
} from '../../src/cluster/apiserver/server.ts';
import { type KubectlResult, kubectlFor } from './kubectl.ts';

const run = promisify(execFile);

export interface TestServer {
  server: ApiServerHandle;
  kubeconfigPath: string;
  kc: KubeConfig;
  /** Runs kubectl against the server; rejects with stderr on a non-zero exit. */
  kubectl(args: string[], input?: string): Promise<KubectlResult>;
  /** Runs kubectl and returns its exit code and output without rejecting. */
  kubectlResult(args: string[], input?: string): Promise<KubectlResult>;
  /** A raw HTTPS request to the server (trusting its CA), for status-code level checks. */
  request(
    method: string,
    path: string,
    opts?: { body?: string; contentType?: string; token?: string | null },
  ): Promise<{
    status: number;
    text: string;
    json: () => Record<string, unknown>;
    headers: Record<string, string | string[] | undefined>;
  }>;
  close(): Promise<void>;
}

export async function startTestServer(opts: ApiServerOptions = {}): Promise<TestServer> {
  const server = await startApiServer({ port: 0, ...opts });
  const kubectl = await kubectlFor(server.kubeconfig);
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeconfig);
  return {
    server,
    kubeconfigPath: kubectl.kubeconfigPath,
    kc,
    kubectlResult: kubectl.result,
    kubectl: kubectl.run,
    request: (method, path, o = {}) =>
      new Promise((resolve, reject) => {
        const url = new URL(path, server.url);
        const headers: Record<string, string> = { 'Content-Type': o.contentType ?? 'application/json' };
        const token = o.token === undefined ? server.token : o.token;
        if (token) headers.Authorization = `Bearer ${token}`;
        const r = httpsRequest(url, { method, headers, ca: server.ca }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({
              status: res.statusCode ?? 0,
              text,
              json: () => JSON.parse(text),
              headers: res.headers,
            });
          });
        });
        r.on('error', reject);
        r.end(o.body);
      }),
    close: async () => {
      await server.close();
      await kubectl.cleanup();
    },
  };
}

export { run as execFileAsync };
