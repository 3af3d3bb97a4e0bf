/**
 * The patch engines of the embedded API server, as pure functions: RFC 6902 JSON patch,
 * RFC 7396 merge patch, strategic merge patch for built-in kinds, and server-side apply with
 * managedFields tracking.
 */
export {
  acceptedPatchTypes,
  checkPatchContentType,
  type PatchContentType,
  unsupportedPatchType,
} from './content-types.ts';
export { PatchError } from './errors.ts';
export { FieldSet, pathToString } from './fieldset.ts';
export { applyJsonPatch } from './json-patch.ts';
export {
  builtinListSemantics,
  type ListSemantics,
  type ListSemanticsLookup,
  listSemanticsFromSchema,
} from './list-semantics.ts';
export { applyMergePatch } from './merge-patch.ts';
export {
  type FieldRule,
  type GroupVersionKind,
  gvkKey,
  type KindRules,
  objectGvkKey,
  SMP_TABLE,
  supportsStrategicMerge,
} from './smp-table.ts';
export {
  BEFORE_FIRST_APPLY,
  type ServerSideApplyOptions,
  type ServerSideApplyResult,
  serverSideApply,
  type TrackUpdateOptions,
  trackUpdate,
} from './ssa.ts';
export { applyStrategicMergePatch } from './strategic-merge.ts';
