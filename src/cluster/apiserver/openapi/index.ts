/** OpenAPI documents and server-side field validation of the embedded API server. */
export { type CrdSchemas, crdSchemaKey, crdSchemaName, crdSchemasFromCRDs } from './crd-schema.ts';
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
export {
  type OpenAPIV3Discovery,
  type OpenAPIV3Document,
  openApiProvider,
  openapiV3GroupVersion,
  openapiV3PathKey,
  openapiV3Paths,
  renderOpenAPIV3GroupVersion,
} from './v3.ts';
