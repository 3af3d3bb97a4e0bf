/**
 * Request-body validation of the stand-in, as RunPod's REST v2 does it: a body that does
 * not match the contract is a 422 whose `errors` list each violation
 * (`$.gpu.count: must be >= 1`); a body that matches but breaks a cross-field rule is a 400.
 */
import { Ajv, type ErrorObject } from 'ajv';

const cudaVersion = { type: 'string', pattern: '^\\d+\\.\\d+$' };

const createPodSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1 },
    image: { type: 'string', minLength: 1 },
    args: { type: 'string' },
    disk: { type: 'integer', minimum: 1 },
    ports: { type: 'array', items: { type: 'string', pattern: '^\\d+/(http|tcp|udp)$' } },
    env: { type: 'object', additionalProperties: { type: 'string' } },
    registry: { type: ['string', 'null'] },
    cloud: { enum: ['SECURE', 'COMMUNITY'] },
    dataCenterIds: { type: 'array', items: { type: 'string' } },
    globalNetworking: { type: 'boolean' },
    startJupyter: { type: 'boolean' },
    startSsh: { type: 'boolean' },
    templateId: { type: 'string', minLength: 1 },
    gpu: {
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: {
        id: { type: 'string', minLength: 1 },
        count: { type: 'integer', minimum: 1 },
        allowedCudaVersions: { type: 'array', items: cudaVersion },
        minCudaVersion: cudaVersion,
        minRamPerGpu: { type: 'integer', minimum: 1 },
        minVcpuCountPerGpu: { type: 'integer', minimum: 1 },
      },
    },
    cpu: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'vcpuCount'],
      properties: { id: { type: 'string', minLength: 1 }, vcpuCount: { type: 'integer', minimum: 2 } },
    },
    mounts: {
      type: 'object',
      additionalProperties: false,
      properties: {
        persistent: {
          type: 'object',
          additionalProperties: false,
          required: ['size', 'path'],
          properties: { size: { type: 'integer', minimum: 10 }, path: { type: 'string' } },
        },
        network: {
          type: 'array',
          maxItems: 1,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['volumeId', 'path'],
            properties: { volumeId: { type: 'string' }, path: { type: 'string' } },
          },
        },
      },
    },
  },
} as const;

const actionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['action'],
  properties: { action: { enum: ['start', 'stop', 'restart', 'terminate'] } },
} as const;

const ajv = new Ajv({ allErrors: true, strict: false });
const validateCreate = ajv.compile(createPodSchema);
const validateAction = ajv.compile(actionSchema);

function describe(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const path = `$${e.instancePath.replace(/\//g, '.')}`;
    if (e.keyword === 'additionalProperties') {
      return `${path}: additional properties '${(e.params as { additionalProperty: string }).additionalProperty}' not allowed`;
    }
    if (e.keyword === 'required') {
      return `${path}: missing property '${(e.params as { missingProperty: string }).missingProperty}'`;
    }
    return `${path}: ${e.message ?? 'invalid'}`;
  });
}

/** Schema violations of a create-pod body (empty when it matches the contract). */
export function createPodViolations(body: unknown): string[] {
  return validateCreate(body) ? [] : describe(validateCreate.errors);
}

export function actionViolations(body: unknown): string[] {
  return validateAction(body) ? [] : describe(validateAction.errors);
}

/** Cross-field rules of a create-pod body that matches the schema (answered with 400). */
export function createPodRuleViolation(body: Record<string, unknown>): string | undefined {
  const hasGpu = body.gpu !== undefined;
  const hasCpu = body.cpu !== undefined;
  if (hasGpu === hasCpu) return 'exactly one of gpu or cpu must be set';
  if (body.templateId === undefined && body.image === undefined)
    return 'image is required unless templateId is set';
  const mounts = body.mounts as { persistent?: unknown; network?: unknown } | undefined;
  if (mounts?.persistent && mounts.network)
    return 'mounts.persistent and mounts.network are mutually exclusive';
  if (hasCpu && mounts?.persistent) return 'mounts.persistent is invalid for cpu pods';
  const gpu = body.gpu as { allowedCudaVersions?: string[]; minCudaVersion?: string } | undefined;
  if (gpu?.allowedCudaVersions?.length && gpu.minCudaVersion) {
    return 'gpu.allowedCudaVersions and gpu.minCudaVersion are mutually exclusive';
  }
  return undefined;
}
