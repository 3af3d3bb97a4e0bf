/**
 * The `stages.kwok.x-k8s.io` CustomResourceDefinition, so users can `kubectl apply` KWOK
 * Stage files (strict validation included). The schema follows KWOK's own CRD; where KWOK's
 * format has grown over releases (expression objects that may carry `jq`/`cel` forms,
 * selector requirements that may be `key`/`operator` or CEL `expression`), the schema keeps
 * unknown fields so files written for any KWOK release apply. Stage semantics are checked by
 * the kubelet, which reports problems in `status.conditions` and Events.
 */

import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, isConflict } from '../client.ts';

export const STAGE_GROUP = 'kwok.x-k8s.io';
export const STAGE_VERSION = 'v1alpha1';
export const STAGE_GVR = { group: STAGE_GROUP, version: STAGE_VERSION, resource: 'stages' } as const;
export const STAGE_CRD_NAME = 'stages.kwok.x-k8s.io';
const CRD_GVR = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
} as const;

type Schema = Record<string, unknown>;

const str = (description: string): Schema => ({ type: 'string', description });
const open = (description: string, properties: Record<string, Schema>): Schema => ({
  type: 'object',
  description,
  properties,
  'x-kubernetes-preserve-unknown-fields': true,
});
const expressionFrom = (description: string): Schema =>
  open(description, { expressionFrom: str('ExpressionFrom is the JQ expression used to get the value.') });
const impersonation: Schema = {
  type: 'object',
  description: 'Impersonation indicates the impersonating configuration for client when patching.',
  required: ['username'],
  properties: { username: str('Username the target username for the client to impersonate.') },
};
const finalizerItems: Schema = {
  type: 'array',
  items: { type: 'object', properties: { value: str('Value is the value of the finalizer.') } },
};

const specSchema: Schema = {
  type: 'object',
  description: 'Spec holds information about the request being evaluated.',
  required: ['resourceRef', 'next'],
  properties: {
    resourceRef: {
      type: 'object',
      description: 'ResourceRef specifies the Kind and version of the resource.',
      required: ['kind'],
      properties: {
        apiGroup: { type: 'string', default: 'v1', description: 'APIGroup of the referent.' },
        kind: str('Kind of the referent.'),
      },
    },
    selector: {
      type: 'object',
      description: 'Selector specifies the stags will be applied to the selected resource.',
      properties: {
        matchLabels: { type: 'object', additionalProperties: { type: 'string' } },
        matchAnnotations: { type: 'object', additionalProperties: { type: 'string' } },
        matchExpressions: {
          type: 'array',
          items: open('A requirement on a JQ key (or a CEL expression, which troupe rejects).', {
            key: str('Key represents the expression which will be evaluated by JQ.'),
            operator: str('Represents a relationship to a set of values: In, NotIn, Exists, DoesNotExist.'),
            values: { type: 'array', items: { type: 'string' } },
            expression: str('Expression represents the expression which will be evaluated by CEL.'),
          }),
        },
      },
    },
    weight: {
      type: 'integer',
      minimum: 0,
      default: 0,
      description: 'Weight among stages matching the same object.',
    },
    weightFrom: expressionFrom('WeightFrom is the expression used to get the weight.'),
    delay: {
      type: 'object',
      description: 'Delay means there is a delay in this stage.',
      properties: {
        durationMilliseconds: { type: 'integer', format: 'int64', minimum: 0 },
        durationFrom: expressionFrom('A Go duration, or an RFC 3339 time to wait until.'),
        jitterDurationMilliseconds: { type: 'integer', format: 'int64', minimum: 0 },
        jitterDurationFrom: expressionFrom('A Go duration, or an RFC 3339 time to wait until.'),
      },
    },
    next: {
      type: 'object',
      description: 'Next indicates that this stage will be moved to.',
      properties: {
        statusTemplate: str('StatusTemplate is a Go template rendering the status to patch.'),
        statusSubresource: { type: 'string', default: 'status' },
        statusPatchAs: impersonation,
        delete: { type: 'boolean' },
        event: {
          type: 'object',
          properties: { type: str('Normal or Warning.'), reason: str('Reason.'), message: str('Message.') },
        },
        finalizers: {
          type: 'object',
          properties: { add: finalizerItems, remove: finalizerItems, empty: { type: 'boolean' } },
        },
        patches: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              subresource: str('Subresource indicates the name of the subresource that will be patched.'),
              root: str('Root indicates the root of the template calculated by the patch.'),
              template: str('Template indicates the template for modifying the resource in the next.'),
              type: { type: 'string', enum: ['json', 'merge', 'strategic'] },
              impersonation,
            },
          },
        },
      },
    },
    immediateNextStage: { type: 'boolean' },
  },
};

const statusSchema: Schema = {
  type: 'object',
  description: 'Status holds status for the Stage.',
  properties: {
    conditions: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      items: {
        type: 'object',
        required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
        properties: {
          type: { type: 'string', maxLength: 316 },
          status: { type: 'string' },
          lastTransitionTime: { type: 'string', format: 'date-time' },
          reason: { type: 'string', maxLength: 1024, minLength: 1 },
          message: { type: 'string', maxLength: 32768 },
          observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
        },
      },
    },
  },
};

export function stageCRD(): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: STAGE_CRD_NAME, labels: { 'app.kubernetes.io/managed-by': 'troupe' } },
    spec: {
      group: STAGE_GROUP,
      scope: 'Cluster',
      names: { plural: 'stages', singular: 'stage', kind: 'Stage', listKind: 'StageList' },
      versions: [
        {
          name: STAGE_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Kind', type: 'string', jsonPath: '.spec.resourceRef.kind' },
            {
              name: 'Accepted',
              type: 'string',
              jsonPath: '.status.conditions[?(@.type=="Accepted")].status',
            },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'Stage is an API that describes the staged change of a resource.',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: specSchema,
                status: statusSchema,
              },
            },
          },
        },
      ],
    },
  };
}

/** Creates the Stage CRD unless it exists (an existing one, e.g. KWOK's own, is kept). */
export async function ensureStageCRD(client: ClusterClient): Promise<void> {
  if (client.get(CRD_GVR, '', STAGE_CRD_NAME)) return;
  try {
    await client.create(CRD_GVR, stageCRD());
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
}
