/**
 * Wires the published OpenAPI (openapi/) to the server: the provider behind
 * /openapi/v3 and the unknown-field check behind fieldValidation, for built-in kinds and
 * for CRDs (whose schemas are read from the stored CRD objects, cached until one changes).
 */
import type { Api, UnknownFieldsFn } from './api.ts';
import type { OpenApiProvider } from './http/handler.ts';
import {
  builtinSchemaName,
  type CrdSchemas,
  crdSchemaKey,
  crdSchemasFromCRDs,
  openApiProvider,
  unknownFields,
  unknownFieldsForCRD,
} from './openapi/index.ts';
import type { ResourceType } from './types.ts';

export class SchemaService {
  private readonly api: Api;
  private crdCache: CrdSchemas | undefined;
  readonly provider: OpenApiProvider;

  constructor(api: Api) {
    this.api = api;
    const p = openApiProvider({ resources: () => api.registry.all(), crdSchemas: () => this.crdSchemas() });
    this.provider = {
      v3Paths: () => p.v3Paths(),
      v3GroupVersionRendered: (path) => p.v3GroupVersionRendered(path),
      v2Rendered: () => p.v2Rendered(),
    };
  }

  /** Call on every CRD write. */
  invalidate(): void {
    this.crdCache = undefined;
  }

  crdSchemas(): CrdSchemas {
    if (!this.crdCache) {
      const rt = this.api.registry.get('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
      const crds = rt ? this.api.list(rt, undefined).records.map((r) => this.api.decode(rt, r)) : [];
      this.crdCache = crdSchemasFromCRDs(crds);
    }
    return this.crdCache;
  }

  readonly unknownFields: UnknownFieldsFn = (rt: ResourceType, obj) => {
    const gvk = { group: rt.group, version: rt.version, kind: rt.kind };
    if (builtinSchemaName(gvk)) return unknownFields(gvk, obj);
    return unknownFieldsForCRD(gvk, this.crdSchemas().get(crdSchemaKey(rt.group, rt.version, rt.kind)), obj);
  };
}
