/** The appwrapper capability (docs/architecture.md, "Adding a capability"). */

import { type AppWrapper, AW_KIND, QUEUE_NAME_LABEL } from '../../apis/workload.codeflare.dev/v1beta2.ts';
import { type Capability, EVENTS_RULE } from '../capability.ts';
import type { AppWrapperConfigInput } from './config.ts';
import { APPWRAPPER_CRD_FILE, appWrapperCrdManifests } from './crd.ts';
import {
  appWrapperControllers,
  appWrapperWebhookConfigurations,
  registerAppWrapperWebhooks,
} from './index.ts';

/**
 * `webhooks`: serve the defaulting/validating webhooks (embedded mode registers them);
 * `config`: upstream's operator configuration (`--appwrapper-config`).
 */
export function appWrapperCapability(
  opts: { webhooks?: boolean; config?: AppWrapperConfigInput } = {},
): Capability {
  const verbs = ['get', 'create', 'delete'];
  return {
    name: 'appwrapper',
    summary: 'bundles of resources admitted as one unit through Kueue',
    controllers: appWrapperControllers(opts.config),
    crdFiles: [APPWRAPPER_CRD_FILE],
    crds: appWrapperCrdManifests(),
    status: [
      {
        key: 'appWrappers',
        title: 'AppWrappers',
        kind: AW_KIND,
        row: (obj) => {
          const w = obj as AppWrapper;
          return {
            phase: w.status?.phase || (w.spec?.suspend ? 'Suspended' : 'Pending'),
            queue: w.metadata.labels?.[QUEUE_NAME_LABEL] ?? '',
          };
        },
        columns: [
          { header: 'PHASE', cell: (r) => String(r.phase), phase: true },
          { header: 'QUEUE', cell: (r) => String(r.queue || '-') },
        ],
      },
    ],
    rbac: {
      file: 'config/rbac/role.yaml',
      rules: [
        EVENTS_RULE,
        // patch: defaulting without a webhook (suspend, labels, finalizer) and finalizer removal.
        {
          apiGroups: ['workload.codeflare.dev'],
          resources: ['appwrappers'],
          verbs: ['get', 'list', 'watch', 'patch'],
        },
        { apiGroups: ['workload.codeflare.dev'], resources: ['appwrappers/status'], verbs: ['patch'] },
        // Components carry a controller reference with blockOwnerDeletion.
        { apiGroups: ['workload.codeflare.dev'], resources: ['appwrappers/finalizers'], verbs: ['update'] },
        // Wrapped pods are created, and deleted when the wrapper resets or finishes.
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
        // Wrapped kinds it watches, and those it only reads one by one.
        { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
        {
          apiGroups: ['apps'],
          resources: ['deployments', 'statefulsets'],
          verbs: ['get', 'list', 'watch', 'create', 'delete'],
        },
        { apiGroups: [''], resources: ['services'], verbs },
        { apiGroups: ['jobset.x-k8s.io'], resources: ['jobsets'], verbs },
        { apiGroups: ['kubeflow.org'], resources: ['pytorchjobs'], verbs },
        { apiGroups: ['ray.io'], resources: ['rayclusters', 'rayjobs'], verbs },
        // manageJobsWithoutQueueName: the namespace's labels decide whether it is managed.
        { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
        // Autopilot node health (autopilot.monitorNodes): which nodes are labelled NoExecute.
        { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] },
      ],
    },
    ...(opts.webhooks
      ? {
          webhooks: {
            register: (m) => registerAppWrapperWebhooks(m.webhooks!, m.client, opts.config),
            configurations: (url, caBundle) => appWrapperWebhookConfigurations({ url, caBundle }),
          },
        }
      : {}),
  };
}
