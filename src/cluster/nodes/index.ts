/** Simulated nodes of the embedded cluster: pool config, the kubelet side, and the node lifecycle controller. */

export {
  DEFAULT_NODE_CAPACITY,
  DEFAULT_NODE_CIDR,
  defaultNodeConfig,
  type NodeConfig,
  NodeConfigError,
  type NodePool,
  parseNodeConfig,
  type Taint,
  validateNodeConfig,
} from './config.ts';
export { NODE_CONFIG_SCHEMA } from './config-schema.ts';
export {
  KUBELET_VERSION,
  KWOK_MANAGED_VALUE,
  KWOK_NODE_ANNOTATION,
  KWOK_STOPPED_VALUE,
  NODE_LEASE_NAMESPACE,
  TAINT_NOT_READY,
  TAINT_UNREACHABLE,
  TAINT_UNSCHEDULABLE,
} from './node-object.ts';
export {
  type AddNodeSpec,
  type NodeFailure,
  type NodesHandle,
  type NodesOptions,
  startNodes,
} from './nodes.ts';
