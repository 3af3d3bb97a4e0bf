/** networking.k8s.io/v1 messages, in the table format of ../schema.ts. */
export const NETWORKING: Record<string, string> = {
  Ingress: '1:metadata:@meta.ObjectMeta 2:spec:@IngressSpec 3:status:@IngressStatus',
  IngressSpec: `4:ingressClassName:s! 1:defaultBackend:@IngressBackend 2:tls:@IngressTLS[]
    3:rules:@IngressRule[]`,
  IngressBackend: '4:service:@IngressServiceBackend 3:resource:@core.TypedLocalObjectReference',
  IngressServiceBackend: '1:name:s! 2:port:@ServiceBackendPort',
  ServiceBackendPort: '1:name:s 2:number:i32',
  IngressTLS: '1:hosts:s[] 2:secretName:s',
  IngressRule: '1:host:s 2:ingressRuleValue:@IngressRuleValue^',
  IngressRuleValue: '1:http:@HTTPIngressRuleValue',
  HTTPIngressRuleValue: '1:paths:@HTTPIngressPath[]',
  HTTPIngressPath: '1:path:s 3:pathType:s! 2:backend:@IngressBackend',
  IngressStatus: '1:loadBalancer:@IngressLoadBalancerStatus',
  IngressLoadBalancerStatus: '1:ingress:@IngressLoadBalancerIngress[]',
  IngressLoadBalancerIngress: '1:ip:s 2:hostname:s 4:ports:@IngressPortStatus[]',
  IngressPortStatus: '1:port:i32! 2:protocol:s! 3:error:s!',
};
