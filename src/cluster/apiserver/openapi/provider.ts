/** The OpenAPI endpoints' view of the served resources, for the HTTP layer (v2 and v3). */
import type { ResourceType } from '../types.ts';
import type { CrdSchemas } from './crd-schema.ts';
import { type RenderedSwagger, renderSwagger } from './v2.ts';
import {
  NO_CRDS,
  type OpenAPIV3Discovery,
  type OpenAPIV3Document,
  openapiV3Paths,
  renderOpenAPIV3GroupVersion,
} from './v3.ts';

/**
 * The endpoints' view for the HTTP layer: both functions read the current resources and CRD
 * schemas on every call (documents are memoized, so this is cheap). `v3GroupVersion` takes the
 * path after /openapi/v3/ (`api/v1`, `apis/apps/v1`).
 */
export function openApiProvider(source: {
  resources: () => readonly ResourceType[];
  crdSchemas?: () => CrdSchemas;
}): {
  v3Paths(): OpenAPIV3Discovery;
  v3GroupVersion(path: string): OpenAPIV3Document | undefined;
  v3GroupVersionRendered(path: string): { json: string; hash: string } | undefined;
  v2Rendered(): RenderedSwagger;
} {
  const crds = () => source.crdSchemas?.() ?? NO_CRDS;
  return {
    v3Paths: () => openapiV3Paths(source.resources(), crds()),
    v3GroupVersion: (path) => {
      const rendered = renderOpenAPIV3GroupVersion(path, source.resources(), crds());
      return rendered ? (JSON.parse(rendered.json) as OpenAPIV3Document) : undefined;
    },
    v3GroupVersionRendered: (path) => renderOpenAPIV3GroupVersion(path, source.resources(), crds()),
    v2Rendered: () => renderSwagger(source.resources(), crds()),
  };
}
