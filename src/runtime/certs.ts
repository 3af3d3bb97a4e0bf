/**
 * Serving certificates for the webhook server: read from a directory (the layout
 * cert-manager and kubelet-mounted Secrets produce: tls.crt, tls.key, optional ca.crt)
 * and watched for rotation, or generated (a CA plus a leaf it signs) for the embedded
 * cluster, whose caller registers the CA as the webhook's caBundle.
 */

import { type FSWatcher, watch as fsWatch, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { generate } from 'selfsigned';
// Real time on purpose: HTTP latencies, credential lifetimes and certificates are about the wire.
import { realClock } from '../lib/clock.ts';

export interface ServingCert {
  cert: string;
  key: string;
  /** PEM of the CA that signed `cert`, when known. */
  ca?: string;
}

export interface CertDirNames {
  certName?: string;
  keyName?: string;
  caName?: string;
}

export function readCertDir(dir: string, names: CertDirNames = {}): ServingCert {
  const cert = readFileSync(join(dir, names.certName ?? 'tls.crt'), 'utf8');
  const key = readFileSync(join(dir, names.keyName ?? 'tls.key'), 'utf8');
  let ca: string | undefined;
  try {
    ca = readFileSync(join(dir, names.caName ?? 'ca.crt'), 'utf8');
  } catch {
    ca = undefined; // ca.crt is optional
  }
  return { cert, key, ca };
}

/**
 * Calls `onChange` (debounced) whenever the directory changes. Watching the directory,
 * not the files, catches the atomic symlink swaps Kubernetes uses for mounted Secrets.
 */
export function watchCertDir(dir: string, onChange: () => void, debounceMs = 100): { close(): void } {
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = fsWatch(dir, { persistent: false }, () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(onChange, debounceMs);
      timer.unref();
    });
  } catch {
    watcher = undefined;
  }
  return {
    close() {
      if (timer) clearTimeout(timer);
      watcher?.close();
    },
  };
}

/** A fresh CA and a serving certificate for `hosts` (DNS names or IPs) signed by it. */
export async function generateServingCert(
  hosts: string[] = ['localhost', '127.0.0.1'],
  validityDays = 365,
): Promise<ServingCert & { caKey: string }> {
  const notBeforeDate = new Date(realClock.now() - 60_000);
  const notAfterDate = new Date(notBeforeDate.getTime() + validityDays * 86_400_000);
  const ca = await generate([{ name: 'commonName', value: 'troupe-webhook-ca' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const leaf = await generate([{ name: 'commonName', value: hosts[0] ?? 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: hosts.map((h) => (isIP(h) ? { type: 7 as const, ip: h } : { type: 2 as const, value: h })),
      },
    ],
  });
  return { cert: leaf.cert, key: leaf.private, ca: ca.cert, caKey: ca.private };
}
