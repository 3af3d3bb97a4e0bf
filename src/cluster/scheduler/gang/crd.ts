/**
 * scheduler-plugins' `podgroups.scheduling.x-k8s.io` CustomResourceDefinition (v1alpha1),
 * served by the embedded cluster when it runs with coscheduling, so gangs written for the
 * coscheduling plugin apply unchanged. The schema has the fields of scheduler-plugins'
 * apis/scheduling/v1alpha1 PodGroupSpec/PodGroupStatus and the printer columns of its
 * manifests/coscheduling/crd.yaml. No short names: `pg` is troupe's own PodGroup's.
 */

import type { KubeObject } from '../../apiserver/types.ts';
import { type ClusterClient, isConflict } from '../../client.ts';

export const X_PODGROUP_CRD_NAME = 'podgroups.scheduling.x-k8s.io';
const CRD_GVR = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
} as const;

const int32 = (description: string, minimum?: number) => ({
  type: 'integer',
  format: 'int32',
  description,
  ...(minimum === undefined ? {} : { minimum }),
});

function podGroupCRD(): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: X_PODGROUP_CRD_NAME },
    spec: {
      group: 'scheduling.x-k8s.io',
      names: { kind: 'PodGroup', listKind: 'PodGroupList', plural: 'podgroups', singular: 'podgroup' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'MinMember', type: 'integer', jsonPath: '.spec.minMember' },
            { name: 'Running', type: 'integer', jsonPath: '.status.running' },
            { name: 'Succeeded', type: 'integer', jsonPath: '.status.succeeded' },
            { name: 'Failed', type: 'integer', jsonPath: '.status.failed' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'A collection of pods scheduled all or none (coscheduling).',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: {
                  type: 'object',
                  properties: {
                    minMember: int32('How many pods must be placed together before any binds.', 1),
                    minResources: {
                      type: 'object',
                      description:
                        'Resources the whole group needs; checked against the free room of the nodes.',
                      additionalProperties: {
                        anyOf: [{ type: 'integer' }, { type: 'string' }],
                        'x-kubernetes-int-or-string': true,
                      },
                    },
                    scheduleTimeoutSeconds: int32('How long placed members wait for the rest of the group.'),
                  },
                },
                status: {
                  type: 'object',
                  properties: {
                    phase: { type: 'string' },
                    occupiedBy: { type: 'string' },
                    running: int32('Running pods.'),
                    succeeded: int32('Succeeded pods.'),
                    failed: int32('Failed pods.'),
                    scheduleStartTime: { type: 'string', format: 'date-time' },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}

/** Creates the CRD unless it is there (a user may have installed scheduler-plugins' own). */
export async function ensureXPodGroupCRD(client: ClusterClient): Promise<void> {
  if (client.get(CRD_GVR, '', X_PODGROUP_CRD_NAME)) return;
  try {
    await client.create(CRD_GVR, podGroupCRD());
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
}
