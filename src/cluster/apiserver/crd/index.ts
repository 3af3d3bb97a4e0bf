/** CustomResourceDefinition support of the embedded API server, as pure code. */

export { formatFieldError } from '../field-errors.ts';
export {
  type CompiledSchema,
  type CompileOptions,
  compileSchema,
  hasBlockingError,
} from './compile-schema.ts';
export { crdStrategy } from './crd-strategy.ts';
export { applyCRDDefaults, storedVersionsAfterWrite, validateCRD } from './crd-validation.ts';
export { type CustomResourceStrategy, customResourceStrategy } from './custom-resource-strategy.ts';
export { DEFAULT_COLUMNS, findFirst, tableForColumns, toJSONPathPlus } from './printer.ts';
export { CUSTOM_RESOURCE_VERBS, type CustomResourceType, resourceTypesFromCRD } from './resource-types.ts';
export type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
  CustomResourceDefinitionNames,
  CustomResourceDefinitionSpec,
  CustomResourceDefinitionStatus,
  CustomResourceDefinitionVersion,
  CustomResourceSubresourceScale,
  CustomResourceSubresources,
  JSONSchemaProps,
  ValidationRule,
} from './types.ts';
