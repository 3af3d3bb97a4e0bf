/** KWOK-compatible Stage engine: compile stages once, match objects, plan the next step. */

export {
  type CompiledPatch,
  type CompiledRequirement,
  type CompiledStage,
  type CompileOptions,
  type CompileResult,
  compileStage,
  compileStages,
  type SelectorOperator,
} from './compile.ts';
export { DEFAULT_STAGE_NAMES, loadDefaultStages, parseStagesYAML } from './defaults.ts';
export {
  KWOK_FUNC_NAMES,
  type KwokFuncOptions,
  kwokFuncs,
  kwokQuote,
  kwokYAML,
  NODE_CONDITIONS,
  SPRIG_FUNCS,
} from './funcs.ts';
export { createIPAM, type IPAM } from './ipam.ts';
export { compileJq, type JqQuery } from './jq.ts';
export {
  matchStages,
  type QueryMemo,
  refersTo,
  requirementMatches,
  type StageObject,
  stageMatches,
  stageWeight,
} from './match.ts';
export {
  finalizerOps,
  type JsonPatchOp,
  type PlannedPatch,
  type PlanResult,
  planNext,
  type StageEnv,
  type StagePlan,
  stageDelay,
} from './plan.ts';
export { formatRFC3339Nano, parseRFC3339 } from './time.ts';
export type * from './types.ts';
