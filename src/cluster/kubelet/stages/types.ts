/**
 * kwok.x-k8s.io/v1alpha1 Stage, as users write it. Both the classic `expressionFrom` /
 * `key` forms and the newer nested `jq: {expression}` / `jq: {key, operator}` forms appear in
 * the wild, so both are typed here.
 */

export interface ExpressionFrom {
  expressionFrom?: string;
  jq?: { expression?: string };
  cel?: { expression?: string };
}

export interface StageSelectorRequirement {
  key?: string;
  operator?: string;
  values?: string[];
  jq?: { key?: string; operator?: string; values?: string[] };
  /** KWOK's CEL form, which troupe refuses. */
  expression?: string;
}

export interface StageSelector {
  matchLabels?: Record<string, string>;
  matchAnnotations?: Record<string, string>;
  matchExpressions?: StageSelectorRequirement[];
}

export interface StageDelay {
  durationMilliseconds?: number;
  durationFrom?: ExpressionFrom;
  jitterDurationMilliseconds?: number;
  jitterDurationFrom?: ExpressionFrom;
}

export interface StageEventSpec {
  type?: string;
  reason?: string;
  message?: string;
}

export interface StageFinalizers {
  add?: { value?: string }[];
  remove?: { value?: string }[];
  empty?: boolean;
}

export interface StagePatchSpec {
  subresource?: string;
  root?: string;
  template?: string;
  type?: 'json' | 'merge' | 'strategic';
  impersonation?: { username: string };
}

export interface StageNext {
  event?: StageEventSpec;
  finalizers?: StageFinalizers;
  delete?: boolean;
  patches?: StagePatchSpec[];
  statusTemplate?: string;
  statusSubresource?: string;
  statusPatchAs?: { username: string };
}

export interface StageSpec {
  resourceRef: { apiGroup?: string; kind: string };
  selector?: StageSelector | null;
  weight?: number;
  weightFrom?: ExpressionFrom;
  delay?: StageDelay;
  next: StageNext;
  immediateNextStage?: boolean;
}

export interface Stage {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; [k: string]: unknown };
  spec: StageSpec;
}
