/** The appwrapper capability (docs/architecture.md, "Adding a capability"). */

import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { type AppWrapper, AW_KIND, QUEUE_NAME_LABEL } from '../../apis/workload.codeflare.dev/v1beta2.ts';
import { type CapabilityDeclaration, type CapabilityValues, EVENTS_RULE } from '../capability.ts';
import { type AppWrapperConfigInput, configFromOperatorFile } from './config.ts';
import { APPWRAPPER_CRD_FILE } from './crd.ts';
import { appWrapperExplain } from './explain.ts';
import {
  appWrapperControllers,
  appWrapperWebhookConfigurations,
  registerAppWrapperWebhooks,
} from './index.ts';

/** Reads and checks `--appwrapper-config`; the error names the file and the field. */
export function readAppWrapperConfig(file: string): AppWrapperConfigInput {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return configFromOperatorFile(parseYaml(text));
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`);
  }
}

/**
 * `values.appwrapperWebhooks`: serve the defaulting/validating webhooks (embedded mode
 * registers them); `values.appwrapperConfig`: upstream's operator configuration.
 */
export function appWrapperCapability(values: CapabilityValues = {}): CapabilityDeclaration {
  const opts = {
    webhooks: values.appwrapperWebhooks === true,
    config: values.appwrapperConfig as AppWrapperConfigInput | undefined,
  };
  const verbs = ['get', 'create', 'delete'];
  return {
    name: 'appwrapper',
    summary: 'bundles of resources admitted as one unit through Kueue',
    flags: [
      {
        flag: '--appwrapper-webhooks',
        description:
          'serve the AppWrapper defaulting and validating webhooks (needs the appwrapper capability; `up` serves them whenever it runs)',
        default: false,
        needsSelection: "serves the appwrapper capability's webhooks",
      },
      {
        flag: '--appwrapper-config <file>',
        description:
          "upstream AppWrapper's operator configuration (its config.yaml, or the appwrapper-operator-config ConfigMap)",
        value: readAppWrapperConfig,
      },
    ],
    explain: appWrapperExplain,
    controllers: appWrapperControllers(opts.config),
    crdFiles: [APPWRAPPER_CRD_FILE],
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
