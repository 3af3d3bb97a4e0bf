/**
 * The built-in kinds (Pod, Node and their scheduling fields) the PodSequence controller
 * reads: Kubernetes' own shapes, loose as the cache holds them (src/kube/builtin.ts).
 */
export type {
  Node,
  NodeSelectorRequirement,
  NodeSelectorTerm,
  Pod,
  Taint,
  Toleration,
} from '../../kube/builtin.ts';
