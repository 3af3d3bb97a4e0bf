/** OpenAPI documents and server-side field validation of the embedded API server. */
export { type CrdSchemas, crdSchemaKey, crdSchemaName, crdSchemasFromCRDs } from './crd-schema.ts';
export { openApiProvider } from './provider.ts';
export {
  builtinSchema,
  builtinSchemaName,
  builtinSchemaSource,
  type GroupVersionKind,
  type JSONSchema,
} from './schemas.ts';
export {
  strictDecodingError,
  unknownFields,
  unknownFieldsForCRD,
  unknownFieldWarning,
} from './unknown-fields.ts';
export { type RenderedSwagger, renderSwagger, type SwaggerDocument, swaggerFromV3 } from './v2.ts';
export { OPENAPI_V2_PROTOBUF, swaggerToProtobuf } from './v2-protobuf.ts';
export {
  type OpenAPIV3Discovery,
  type OpenAPIV3Document,
  openapiV3GroupVersion,
  openapiV3PathKey,
  openapiV3Paths,
  renderOpenAPIV3GroupVersion,
} from './v3.ts';
