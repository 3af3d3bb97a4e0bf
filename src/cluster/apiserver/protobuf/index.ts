export {
  type DecodedObject,
  type DecodeResult,
  decodeKubernetesProtobuf,
  decodeKubernetesProtobufDetailed,
  isKubernetesProtobuf,
  KUBERNETES_PROTOBUF,
  ProtobufDecodeError,
} from './decode.ts';
export { messageForKind, supportedKinds } from './registry.ts';
