/**
 * Test support: the manifests several kubectl tests apply. The `web` app is a Deployment of
 * nginx pods labelled `app: web` whose container names port 8080 `http`, and a Service `web`
 * selecting them. YAML is written with JSON flow values (JSON is YAML), so options drop in as is.
 */

export interface WebDeploymentOptions {
  /** Default 2. */
  replicas?: number;
  /** Default `nginx`. */
  image?: string;
  /** A readiness probe on `http` with this initial delay; none when unset. */
  readinessDelaySeconds?: number;
}

/** The `web` Deployment in the default namespace. */
export function webDeployment(o: WebDeploymentOptions = {}): string {
  const probe =
    o.readinessDelaySeconds === undefined
      ? ''
      : `\n        readinessProbe: {httpGet: {path: /, port: http}, initialDelaySeconds: ${o.readinessDelaySeconds}}`;
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: ${o.replicas ?? 2}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: ${o.image ?? 'nginx'}
        ports: [{name: http, containerPort: 8080}]${probe}
`;
}

export interface WebServiceOptions {
  labels?: Record<string, string>;
  /** Default: `http`, port 80 to the pods' port named `http`. */
  ports?: { name: string; port: number; targetPort: number | string }[];
}

/** The `web` Service in the default namespace, selecting the `web` app's pods. */
export function webService(o: WebServiceOptions = {}): string {
  const ports = o.ports ?? [{ name: 'http', port: 80, targetPort: 'http' }];
  return `apiVersion: v1
kind: Service
metadata: {name: web, namespace: default${o.labels ? `, labels: ${JSON.stringify(o.labels)}` : ''}}
spec:
  selector: {app: web}
  ports: ${JSON.stringify(ports)}
`;
}
