/**
 * apiextensions.k8s.io/v1 shapes, as they arrive in a request body (JSON), so every field is
 * optional: validation is what tells the user which ones are missing.
 */

import type { ObjectMeta } from '../types.ts';

export type FieldValueErrorReason =
  | 'FieldValueRequired'
  | 'FieldValueForbidden'
  | 'FieldValueInvalid'
  | 'FieldValueDuplicate';

export interface ValidationRule {
  rule?: string;
  message?: string;
  messageExpression?: string;
  reason?: FieldValueErrorReason | string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface ExternalDocumentation {
  description?: string;
  url?: string;
}

/** JSONSchemaProps of apiextensions.k8s.io/v1. */
export interface JSONSchemaProps {
  id?: string;
  $schema?: string;
  $ref?: string;
  description?: string;
  type?: string;
  format?: string;
  title?: string;
  default?: unknown;
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  multipleOf?: number;
  enum?: unknown[];
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  items?: JSONSchemaProps | JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  patternProperties?: Record<string, JSONSchemaProps>;
  dependencies?: Record<string, JSONSchemaProps | string[]>;
  additionalItems?: JSONSchemaProps | boolean;
  definitions?: Record<string, JSONSchemaProps>;
  externalDocs?: ExternalDocumentation;
  example?: unknown;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: ValidationRule[];
}

export interface CustomResourceColumnDefinition {
  name?: string;
  type?: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath?: string;
}

export interface CustomResourceSubresourceScale {
  specReplicasPath?: string;
  statusReplicasPath?: string;
  labelSelectorPath?: string;
}

export interface CustomResourceSubresources {
  // biome-ignore lint/complexity/noBannedTypes: the API defines status as an empty object
  status?: {};
  scale?: CustomResourceSubresourceScale;
}

export interface SelectableField {
  jsonPath?: string;
}

export interface CustomResourceDefinitionVersion {
  name?: string;
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: CustomResourceSubresources;
  additionalPrinterColumns?: CustomResourceColumnDefinition[];
  selectableFields?: SelectableField[];
}

export interface CustomResourceDefinitionNames {
  plural?: string;
  singular?: string;
  shortNames?: string[];
  kind?: string;
  listKind?: string;
  categories?: string[];
}

export interface CustomResourceConversion {
  strategy?: string;
  webhook?: {
    clientConfig?: {
      url?: string;
      service?: { namespace?: string; name?: string; path?: string; port?: number };
      caBundle?: string;
    };
    conversionReviewVersions?: string[];
  };
}

export interface CustomResourceDefinitionSpec {
  group?: string;
  names?: CustomResourceDefinitionNames;
  scope?: string;
  versions?: CustomResourceDefinitionVersion[];
  conversion?: CustomResourceConversion;
  preserveUnknownFields?: boolean;
}

export interface CustomResourceDefinitionCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CustomResourceDefinitionStatus {
  conditions?: CustomResourceDefinitionCondition[];
  acceptedNames?: CustomResourceDefinitionNames;
  storedVersions?: string[];
}

export interface CustomResourceDefinition {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: CustomResourceDefinitionSpec;
  status?: CustomResourceDefinitionStatus;
}
