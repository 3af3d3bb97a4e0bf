import { generate } from 'selfsigned';

export interface ServingCert {
  cert: string;
  key: string;
  /** PEM of the CA that signed `cert` (the certificate itself: it is self-signed). */
  ca: string;
}

/** A self-signed serving certificate for 127.0.0.1/localhost (kubeconfig carries it as the CA). */
export async function selfSignedCert(
  commonName = 'troupe-apiserver',
  hosts: string[] = ['localhost'],
): Promise<ServingCert> {
  const altNames = [
    ...hosts.map((h) => ({ type: 2 as const, value: h })),
    { type: 7 as const, ip: '127.0.0.1' },
    { type: 7 as const, ip: '::1' },
  ];
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames },
    ],
  });
  return { cert: pems.cert, key: pems.private, ca: pems.cert };
}
