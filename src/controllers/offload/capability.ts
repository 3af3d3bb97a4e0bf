/** The offload capability (docs/architecture.md, "Adding a capability"). */

import type { Clock } from '../../lib/clock.ts';
import { type CapabilityDeclaration, type CapabilityValues, EVENTS_RULE } from '../capability.ts';

import { offloadExplain } from './explain.ts';
import { OFFLOAD_FLAGS, offloadOptionsFrom } from './flags.ts';
import { createOffload } from './index.ts';
import * as OFFLOAD from './keys.ts';

/** `clock`: the manager's, for the provider and pending timers outside reconciles (a simulation's). */
export function offloadCapability(values: CapabilityValues = {}, clock?: Clock): CapabilityDeclaration {
  const offload = createOffload(offloadOptionsFrom(values), { clock });
  return {
    name: 'offload',
    summary: 'burst offloading of GPU Jobs to RunPod',
    flags: OFFLOAD_FLAGS,
    explain: offloadExplain,
    controllers: offload.controllers,
    crdFiles: [],
    // A role of its own, so that the default install never holds these rights; the virtual
    // node's heartbeat Lease is a Role in kube-node-lease beside it (node_lease_role.yaml).
    status: [
      {
        key: 'offloads',
        title: 'Offloads',
        kind: { apiVersion: 'batch/v1', kind: 'Job' },
        select: (j) => j.metadata.annotations?.[OFFLOAD.MANAGED]?.toLowerCase() === 'true',
        row: (j) => {
          const a = j.metadata.annotations ?? {};
          return {
            state: a[OFFLOAD.STATE] ?? 'Watching',
            remotePod: a[OFFLOAD.POD_ID] ?? '',
            provider: a[OFFLOAD.PROVIDER] ?? '',
            costPerHr: a[OFFLOAD.COST_PER_HR] ?? '',
          };
        },
        columns: [
          { header: 'STATE', cell: (r) => String(r.state), phase: true },
          { header: 'REMOTE POD', cell: (r) => String(r.remotePod || '-') },
          { header: 'PROVIDER', cell: (r) => String(r.provider || '-') },
          { header: 'COST', cell: (r) => (r.costPerHr ? `$${r.costPerHr}/h` : '-') },
        ],
      },
    ],
    rbac: {
      file: 'config/overlays/offloader/offload_role.yaml',
      rules: [
        // Managed Jobs: watched, annotated, finalized while a remote pod runs.
        { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch', 'patch', 'update'] },
        { apiGroups: ['batch'], resources: ['jobs/finalizers'], verbs: ['update'] },
        // Virtual pods created, deleted and given the remote pod's status; local pods deleted.
        {
          apiGroups: [''],
          resources: ['pods'],
          verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'],
        },
        { apiGroups: [''], resources: ['pods/status'], verbs: ['patch', 'update'] },
        // The virtual node: registered if missing, reported Ready while the provider answers.
        { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'create'] },
        { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch', 'update'] },
        { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] },
        // Env values from Secrets and ConfigMaps: one by one, never listed.
        { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get'] },
        EVENTS_RULE,
      ],
    },
    readyChecks: offload.readyChecks,
    unconfigured: () =>
      offload.provider.configured()
        ? undefined
        : 'no provider credentials are configured (set RUNPOD_KEY, or --remote-cluster-secret)',
    stop: () => offload.stop(),
  };
}
