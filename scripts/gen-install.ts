/**
 * Generates dist/install.yaml, the one-file install of troupe on a real cluster:
 * every CRD of config/crd/, the troupe-system namespace, a ServiceAccount, a least-privilege
 * ClusterRole made of the rules of each capability the manager runs (plus the dashboard's
 * read-only rules), leader election rights in troupe-system only, the manager Deployment
 * (`troupe run --leader-elect`, two replicas) and its metrics Service.
 *
 *   node scripts/gen-install.ts           # writes dist/install.yaml
 *   node scripts/gen-install.ts --check   # exits 1 when dist/install.yaml is out of date
 *   node scripts/gen-install.ts --stdout  # prints it
 */

import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { type CapabilityOptions, capabilities } from '../src/cli/capabilities.ts';

const ROOT = resolve(import.meta.dirname, '..');
export const INSTALL_PATH = join(ROOT, 'dist', 'install.yaml');

export const NAMESPACE = 'troupe-system';
export const NAME = 'troupe-controller-manager';
export const IMAGE = 'troupe:latest';
const LABELS = { 'app.kubernetes.io/name': 'troupe', 'app.kubernetes.io/component': 'controller-manager' };

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'update', 'patch', 'delete'];

/**
 * What each capability's controllers read and write. A capability the manager runs but
 * this table does not know makes the generator fail: a new capability has to state its
 * rights here (and only those).
 */
export const CAPABILITY_RULES: Record<string, PolicyRule[]> = {
  podgroup: [
    // PodGroup objects are created for labelled gangs and carry their status.
    {
      apiGroups: ['scheduling.incubator.k8s.io'],
      resources: ['podgroups'],
      verbs: [...READ, 'create', 'update', 'patch'],
    },
    {
      apiGroups: ['scheduling.incubator.k8s.io'],
      resources: ['podgroups/status'],
      verbs: ['get', 'update', 'patch'],
    },
    // The ready label on members; a deadlock policy may restart (delete) members.
    { apiGroups: [''], resources: ['pods'], verbs: [...READ, 'update', 'patch', 'delete'] },
  ],
  podsequence: [
    {
      apiGroups: ['scheduling.example.com'],
      resources: ['podsequences'],
      verbs: [...READ, 'update', 'patch'],
    },
    {
      apiGroups: ['scheduling.example.com'],
      resources: ['podsequences/status'],
      verbs: ['get', 'update', 'patch'],
    },
    { apiGroups: ['scheduling.example.com'], resources: ['podsequences/finalizers'], verbs: ['update'] },
    // Releasing a pod removes its scheduling gate (and may narrow its node affinity).
    { apiGroups: [''], resources: ['pods'], verbs: [...READ, 'update', 'patch'] },
    // Full mode: per-node taints that hold later tiers back.
    { apiGroups: [''], resources: ['nodes'], verbs: [...READ, 'update', 'patch'] },
    { apiGroups: ['apps'], resources: ['daemonsets'], verbs: READ },
  ],
  appwrapper: [
    {
      apiGroups: ['workload.codeflare.dev'],
      resources: ['appwrappers'],
      verbs: [...READ, 'update', 'patch'],
    },
    {
      apiGroups: ['workload.codeflare.dev'],
      resources: ['appwrappers/status'],
      verbs: ['get', 'update', 'patch'],
    },
    { apiGroups: ['workload.codeflare.dev'], resources: ['appwrappers/finalizers'], verbs: ['update'] },
    // The wrapped components it creates and deletes as one unit.
    { apiGroups: [''], resources: ['pods', 'services'], verbs: [...READ, ...WRITE] },
    { apiGroups: ['batch'], resources: ['jobs'], verbs: [...READ, ...WRITE] },
    { apiGroups: ['apps'], resources: ['deployments', 'statefulsets'], verbs: [...READ, ...WRITE] },
    { apiGroups: ['jobset.x-k8s.io'], resources: ['jobsets'], verbs: [...READ, ...WRITE] },
    { apiGroups: ['kubeflow.org'], resources: ['pytorchjobs'], verbs: [...READ, ...WRITE] },
    { apiGroups: ['ray.io'], resources: ['rayclusters', 'rayjobs'], verbs: [...READ, ...WRITE] },
    { apiGroups: [''], resources: ['namespaces'], verbs: READ },
    // Kueue's Workload for each AppWrapper.
    { apiGroups: ['kueue.x-k8s.io'], resources: ['workloads'], verbs: READ },
  ],
  offload: [
    // Offloaded Jobs are annotated, kept by a finalizer until their remote pod is gone.
    { apiGroups: ['batch'], resources: ['jobs'], verbs: [...READ, 'update', 'patch'] },
    { apiGroups: ['batch'], resources: ['jobs/status'], verbs: ['get', 'update', 'patch'] },
    // The virtual pod and virtual node that stand for the remote pod.
    { apiGroups: [''], resources: ['pods'], verbs: [...READ, ...WRITE] },
    { apiGroups: [''], resources: ['pods/status'], verbs: ['get', 'update', 'patch'] },
    { apiGroups: [''], resources: ['nodes'], verbs: [...READ, 'create', 'update', 'patch'] },
    { apiGroups: [''], resources: ['nodes/status'], verbs: ['get', 'update', 'patch'] },
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      verbs: [...READ, 'create', 'update', 'patch'],
    },
    { apiGroups: [''], resources: ['namespaces', 'configmaps'], verbs: READ },
    // The RunPod API key and image pull credentials named by Jobs.
    { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
  ],
};

/** Every manager records Events. */
const MANAGER_RULES: PolicyRule[] = [
  { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'update', 'patch'] },
];

/** The dashboard (`--dashboard-address`) only reads. */
export const DASHBOARD_RULES: PolicyRule[] = [
  { apiGroups: [''], resources: ['nodes', 'pods'], verbs: READ },
  { apiGroups: ['batch'], resources: ['jobs'], verbs: READ },
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: READ },
  { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: READ },
  { apiGroups: ['scheduling.incubator.k8s.io'], resources: ['podgroups'], verbs: READ },
  { apiGroups: ['scheduling.example.com'], resources: ['podsequences'], verbs: READ },
  { apiGroups: ['workload.codeflare.dev'], resources: ['appwrappers'], verbs: READ },
  { apiGroups: ['kueue.x-k8s.io'], resources: ['clusterqueues', 'localqueues', 'workloads'], verbs: READ },
];

const VERB_ORDER = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

/** Merges rules on the same (group, resource) and orders everything, so the output is stable. */
export function mergeRules(rules: PolicyRule[]): PolicyRule[] {
  const verbs = new Map<string, Set<string>>();
  for (const r of rules) {
    for (const g of r.apiGroups) {
      for (const res of r.resources) {
        const k = `${g}\u0000${res}`;
        const set = verbs.get(k) ?? new Set();
        for (const v of r.verbs) set.add(v);
        verbs.set(k, set);
      }
    }
  }
  // Resources of one group with identical verbs share a rule.
  const grouped = new Map<string, PolicyRule>();
  // Plain code-unit order: localeCompare would ignore the separator.
  for (const [k, set] of [...verbs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const [group = '', resource = ''] = k.split('\u0000');
    const sorted = [...set].sort((a, b) => VERB_ORDER.indexOf(a) - VERB_ORDER.indexOf(b));
    const id = `${group}\u0000${sorted.join(',')}`;
    const rule = grouped.get(id);
    if (rule) rule.resources.push(resource);
    else grouped.set(id, { apiGroups: [group], resources: [resource], verbs: sorted });
  }
  return [...grouped.values()];
}

async function crds(): Promise<unknown[]> {
  const dir = join(ROOT, 'config', 'crd');
  const out: unknown[] = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of parseAllDocuments(await readFile(join(dir, file), 'utf8'))) {
      const obj = doc.toJSON() as { kind?: string } | null;
      if (obj?.kind === 'CustomResourceDefinition') out.push(obj);
    }
  }
  return out;
}

/** The names of the capabilities `troupe run` runs by default (all of them). */
export async function capabilityNames(): Promise<string[]> {
  // Every capability with its default options (each option group empty), as `troupe run` builds them.
  const defaults = new Proxy({}, { get: () => ({}) }) as CapabilityOptions;
  const caps = capabilities(defaults);
  await Promise.all(caps.map((c) => c.stop?.()));
  return caps.map((c) => c.name);
}

export async function managerRules(): Promise<PolicyRule[]> {
  const rules = [...MANAGER_RULES];
  for (const name of await capabilityNames()) {
    const own = CAPABILITY_RULES[name];
    if (!own) throw new Error(`capability ${name} has no RBAC rules in scripts/gen-install.ts`);
    rules.push(...own);
  }
  return mergeRules(rules);
}

function deployment(): unknown {
  const probe = (path: string, initialDelaySeconds: number, periodSeconds: number) => ({
    httpGet: { path, port: 'health' },
    initialDelaySeconds,
    periodSeconds,
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: NAME, namespace: NAMESPACE, labels: LABELS },
    spec: {
      // Two replicas: one leads, the other waits with warm caches to take over.
      replicas: 2,
      selector: { matchLabels: LABELS },
      template: {
        metadata: { labels: LABELS },
        spec: {
          serviceAccountName: NAME,
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'manager',
              image: IMAGE,
              imagePullPolicy: 'IfNotPresent',
              args: [
                'run',
                '--leader-elect',
                `--leader-election-namespace=${NAMESPACE}`,
                '--health-probe-bind-address=:8081',
                '--metrics-bind-address=:8080',
                '--log-format=json',
              ],
              ports: [
                { name: 'health', containerPort: 8081 },
                { name: 'metrics', containerPort: 8080 },
              ],
              livenessProbe: probe('/healthz', 15, 20),
              readinessProbe: probe('/readyz', 5, 10),
              resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '512Mi' } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: {} }],
          terminationGracePeriodSeconds: 30,
        },
      },
    },
  };
}

export async function renderInstall(): Promise<string> {
  const binding = (kind: 'ClusterRoleBinding' | 'RoleBinding', role: string, namespaced: boolean) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: { name: role, ...(namespaced ? { namespace: NAMESPACE } : {}), labels: LABELS },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: kind === 'RoleBinding' ? 'Role' : 'ClusterRole',
      name: role,
    },
    subjects: [{ kind: 'ServiceAccount', name: NAME, namespace: NAMESPACE }],
  });
  const docs: unknown[] = [
    ...(await crds()),
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE, labels: LABELS } },
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: NAME, namespace: NAMESPACE, labels: LABELS },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: NAME, labels: LABELS },
      rules: await managerRules(),
    },
    binding('ClusterRoleBinding', NAME, false),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'troupe-dashboard-viewer', labels: LABELS },
      rules: mergeRules(DASHBOARD_RULES),
    },
    binding('ClusterRoleBinding', 'troupe-dashboard-viewer', false),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'troupe-leader-election', namespace: NAMESPACE, labels: LABELS },
      rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...READ, ...WRITE] }],
    },
    binding('RoleBinding', 'troupe-leader-election', true),
    deployment(),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `${NAME}-metrics`, namespace: NAMESPACE, labels: LABELS },
      spec: { selector: LABELS, ports: [{ name: 'metrics', port: 8080, targetPort: 'metrics' }] },
    },
  ];
  const header = [
    '# troupe: CRDs, RBAC and the controller manager. Generated by scripts/gen-install.ts; do not edit.',
    '#   kubectl apply --server-side -f dist/install.yaml',
    `# Image: ${IMAGE} (make deploy IMG=<registry>/troupe:<tag> substitutes yours).`,
  ].join('\n');
  return `${header}\n${docs.map((d) => `---\n${stringify(d, { lineWidth: 0 })}`).join('')}`;
}

async function main(): Promise<void> {
  const text = await renderInstall();
  const arg = process.argv[2];
  if (arg === '--stdout') {
    process.stdout.write(text);
  } else if (arg === '--check') {
    const current = await readFile(INSTALL_PATH, 'utf8').catch(() => '');
    if (current !== text) {
      process.stderr.write('dist/install.yaml is out of date: run node scripts/gen-install.ts\n');
      process.exit(1);
    }
  } else {
    await writeFile(INSTALL_PATH, text);
    process.stdout.write(`wrote ${INSTALL_PATH}\n`);
  }
}

if (import.meta.main) await main();
