/**
 * core/v1 messages, in the table format of ../schema.ts. Volume sources cover the ones a
 * workload on the embedded cluster can use (hostPath, emptyDir, secret, nfs, PVC, downward
 * API, configMap, projected, csi, ephemeral, image); the cloud-disk sources are left out and
 * decode as unknown fields. Fields removed upstream (PodResourceClaim.source, the tombstoned
 * ServiceSpec 15/16) are left out too.
 */
export const CORE: Record<string, string> = {
  // Objects kubectl creates directly.
  Namespace: '1:metadata:@meta.ObjectMeta 2:spec:@NamespaceSpec 3:status:@NamespaceStatus',
  NamespaceSpec: '1:finalizers:s[]',
  NamespaceStatus: '1:phase:s 2:conditions:@NamespaceCondition[]',
  NamespaceCondition: '1:type:s! 2:status:s! 4:lastTransitionTime:Time 5:reason:s 6:message:s',
  ServiceAccount: `1:metadata:@meta.ObjectMeta 2:secrets:@ObjectReference[]
    3:imagePullSecrets:@LocalObjectReference[] 4:automountServiceAccountToken:b!`,
  ConfigMap: '1:metadata:@meta.ObjectMeta 4:immutable:b! 2:data:{s} 3:binaryData:{bytes}',
  Secret: '1:metadata:@meta.ObjectMeta 5:immutable:b! 2:data:{bytes} 4:stringData:{s} 3:type:s',
  Binding: '1:metadata:@meta.ObjectMeta 2:target:@ObjectReference',
  ObjectReference: '1:kind:s 2:namespace:s 3:name:s 4:uid:s 5:apiVersion:s 6:resourceVersion:s 7:fieldPath:s',
  LocalObjectReference: '1:name:s',
  TypedLocalObjectReference: '1:apiGroup:s! 2:kind:s! 3:name:s!',
  TypedObjectReference: '1:apiGroup:s! 2:kind:s! 3:name:s! 4:namespace:s!',

  Service: '1:metadata:@meta.ObjectMeta 2:spec:@ServiceSpec 3:status:@ServiceStatus',
  ServiceSpec: `1:ports:@ServicePort[] 2:selector:{s} 3:clusterIP:s 18:clusterIPs:s[] 4:type:s
    5:externalIPs:s[] 7:sessionAffinity:s 8:loadBalancerIP:s 9:loadBalancerSourceRanges:s[]
    10:externalName:s 11:externalTrafficPolicy:s 12:healthCheckNodePort:i32 13:publishNotReadyAddresses:b
    14:sessionAffinityConfig:@SessionAffinityConfig 19:ipFamilies:s[] 17:ipFamilyPolicy:s!
    20:allocateLoadBalancerNodePorts:b! 21:loadBalancerClass:s! 22:internalTrafficPolicy:s!
    23:trafficDistribution:s!`,
  ServicePort: '1:name:s 2:protocol:s 6:appProtocol:s! 3:port:i32! 4:targetPort:IntOrString 5:nodePort:i32',
  SessionAffinityConfig: '1:clientIP:@ClientIPConfig',
  ClientIPConfig: '1:timeoutSeconds:i32!',
  ServiceStatus: '1:loadBalancer:@LoadBalancerStatus 2:conditions:@meta.Condition[]',
  LoadBalancerStatus: '1:ingress:@LoadBalancerIngress[]',
  LoadBalancerIngress: '1:ip:s 2:hostname:s 3:ipMode:s! 4:ports:@PortStatus[]',
  PortStatus: '1:port:i32! 2:protocol:s! 3:error:s!',

  ResourceQuota: '1:metadata:@meta.ObjectMeta 2:spec:@ResourceQuotaSpec 3:status:@ResourceQuotaStatus',
  ResourceQuotaSpec: '1:hard:{Quantity} 2:scopes:s[] 3:scopeSelector:@ScopeSelector',
  ScopeSelector: '1:matchExpressions:@ScopedResourceSelectorRequirement[]',
  ScopedResourceSelectorRequirement: '1:scopeName:s! 2:operator:s! 3:values:s[]',
  ResourceQuotaStatus: '1:hard:{Quantity} 2:used:{Quantity}',
  LimitRange: '1:metadata:@meta.ObjectMeta 2:spec:@LimitRangeSpec',
  LimitRangeSpec: '1:limits:@LimitRangeItem[]',
  LimitRangeItem: `1:type:s! 2:max:{Quantity} 3:min:{Quantity} 4:default:{Quantity}
    5:defaultRequest:{Quantity} 6:maxLimitRequestRatio:{Quantity}`,

  PersistentVolumeClaim: `1:metadata:@meta.ObjectMeta 2:spec:@PersistentVolumeClaimSpec
    3:status:@PersistentVolumeClaimStatus`,
  PersistentVolumeClaimSpec: `1:accessModes:s[] 4:selector:@meta.LabelSelector
    2:resources:@VolumeResourceRequirements 3:volumeName:s 5:storageClassName:s! 6:volumeMode:s!
    7:dataSource:@TypedLocalObjectReference 8:dataSourceRef:@TypedObjectReference
    9:volumeAttributesClassName:s!`,
  VolumeResourceRequirements: '1:limits:{Quantity} 2:requests:{Quantity}',
  PersistentVolumeClaimStatus: `1:phase:s 2:accessModes:s[] 3:capacity:{Quantity}
    4:conditions:@PersistentVolumeClaimCondition[] 5:allocatedResources:{Quantity}
    7:allocatedResourceStatuses:{s} 8:currentVolumeAttributesClassName:s!
    9:modifyVolumeStatus:@ModifyVolumeStatus`,
  PersistentVolumeClaimCondition: `1:type:s! 2:status:s! 3:lastProbeTime:Time 4:lastTransitionTime:Time
    5:reason:s 6:message:s`,
  ModifyVolumeStatus: '1:targetVolumeAttributesClassName:s 2:status:s!',
  PersistentVolumeClaimTemplate: '1:metadata:@meta.ObjectMeta 2:spec:@PersistentVolumeClaimSpec',

  // Pods and their templates.
  Pod: '1:metadata:@meta.ObjectMeta 2:spec:@PodSpec 3:status:@PodStatus',
  PodTemplate: '1:metadata:@meta.ObjectMeta 2:template:@PodTemplateSpec',
  PodTemplateSpec: '1:metadata:@meta.ObjectMeta 2:spec:@PodSpec',
  PodSpec: `1:volumes:@Volume[] 20:initContainers:@Container[] 2:containers:@Container[]
    34:ephemeralContainers:@EphemeralContainer[] 3:restartPolicy:s 4:terminationGracePeriodSeconds:i64!
    5:activeDeadlineSeconds:i64! 6:dnsPolicy:s 7:nodeSelector:{s} 8:serviceAccountName:s
    9:serviceAccount:s 21:automountServiceAccountToken:b! 10:nodeName:s 11:hostNetwork:b 12:hostPID:b
    13:hostIPC:b 27:shareProcessNamespace:b! 14:securityContext:@PodSecurityContext
    15:imagePullSecrets:@LocalObjectReference[] 16:hostname:s 17:subdomain:s 18:affinity:@Affinity
    19:schedulerName:s 22:tolerations:@Toleration[] 23:hostAliases:@HostAlias[] 24:priorityClassName:s
    25:priority:i32! 26:dnsConfig:@PodDNSConfig 28:readinessGates:@PodReadinessGate[]
    29:runtimeClassName:s! 30:enableServiceLinks:b! 31:preemptionPolicy:s! 32:overhead:{Quantity}
    33:topologySpreadConstraints:@TopologySpreadConstraint[] 35:setHostnameAsFQDN:b! 36:os:@PodOS
    37:hostUsers:b! 38:schedulingGates:@PodSchedulingGate[] 39:resourceClaims:@PodResourceClaim[]
    40:resources:@ResourceRequirements`,
  Container: `1:name:s! 2:image:s 3:command:s[] 4:args:s[] 5:workingDir:s 6:ports:@ContainerPort[]
    19:envFrom:@EnvFromSource[] 7:env:@EnvVar[] 8:resources:@ResourceRequirements
    23:resizePolicy:@ContainerResizePolicy[] 24:restartPolicy:s! 9:volumeMounts:@VolumeMount[]
    21:volumeDevices:@VolumeDevice[] 10:livenessProbe:@Probe 11:readinessProbe:@Probe 22:startupProbe:@Probe
    12:lifecycle:@Lifecycle 13:terminationMessagePath:s 20:terminationMessagePolicy:s 14:imagePullPolicy:s
    15:securityContext:@SecurityContext 16:stdin:b 17:stdinOnce:b 18:tty:b`,
  // EphemeralContainerCommon has exactly Container's fields and numbers.
  EphemeralContainer: '1:ephemeralContainerCommon:@Container^ 2:targetContainerName:s',
  ContainerPort: '1:name:s 2:hostPort:i32 3:containerPort:i32! 4:protocol:s 5:hostIP:s',
  EnvFromSource: '1:prefix:s 2:configMapRef:@ConfigMapEnvSource 3:secretRef:@SecretEnvSource',
  ConfigMapEnvSource: '1:localObjectReference:@LocalObjectReference^ 2:optional:b!',
  SecretEnvSource: '1:localObjectReference:@LocalObjectReference^ 2:optional:b!',
  EnvVar: '1:name:s! 2:value:s 3:valueFrom:@EnvVarSource',
  EnvVarSource: `1:fieldRef:@ObjectFieldSelector 2:resourceFieldRef:@ResourceFieldSelector
    3:configMapKeyRef:@ConfigMapKeySelector 4:secretKeyRef:@SecretKeySelector`,
  ObjectFieldSelector: '1:apiVersion:s 2:fieldPath:s!',
  ResourceFieldSelector: '1:containerName:s 2:resource:s! 3:divisor:Quantity',
  ConfigMapKeySelector: '1:localObjectReference:@LocalObjectReference^ 2:key:s! 3:optional:b!',
  SecretKeySelector: '1:localObjectReference:@LocalObjectReference^ 2:key:s! 3:optional:b!',
  ResourceRequirements: '1:limits:{Quantity} 2:requests:{Quantity} 3:claims:@ResourceClaim[]',
  ResourceClaim: '1:name:s! 2:request:s',
  ContainerResizePolicy: '1:resourceName:s! 2:restartPolicy:s!',
  VolumeMount: `1:name:s! 2:readOnly:b 7:recursiveReadOnly:s! 3:mountPath:s! 4:subPath:s
    5:mountPropagation:s! 6:subPathExpr:s`,
  VolumeDevice: '1:name:s! 2:devicePath:s!',
  Probe: `1:handler:@ProbeHandler^ 2:initialDelaySeconds:i32 3:timeoutSeconds:i32 4:periodSeconds:i32
    5:successThreshold:i32 6:failureThreshold:i32 7:terminationGracePeriodSeconds:i64!`,
  ProbeHandler: '1:exec:@ExecAction 2:httpGet:@HTTPGetAction 3:tcpSocket:@TCPSocketAction 4:grpc:@GRPCAction',
  ExecAction: '1:command:s[]',
  HTTPGetAction: '1:path:s 2:port:IntOrString 3:host:s 4:scheme:s 5:httpHeaders:@HTTPHeader[]',
  HTTPHeader: '1:name:s! 2:value:s!',
  TCPSocketAction: '1:port:IntOrString 2:host:s',
  GRPCAction: '1:port:i32! 2:service:s!',
  Lifecycle: '1:postStart:@LifecycleHandler 2:preStop:@LifecycleHandler 3:stopSignal:s!',
  LifecycleHandler: `1:exec:@ExecAction 2:httpGet:@HTTPGetAction 3:tcpSocket:@TCPSocketAction
    4:sleep:@SleepAction`,
  SleepAction: '1:seconds:i64!',
  SecurityContext: `1:capabilities:@Capabilities 2:privileged:b! 3:seLinuxOptions:@SELinuxOptions
    10:windowsOptions:@WindowsSecurityContextOptions 4:runAsUser:i64! 8:runAsGroup:i64!
    5:runAsNonRoot:b! 6:readOnlyRootFilesystem:b! 7:allowPrivilegeEscalation:b! 9:procMount:s!
    11:seccompProfile:@SeccompProfile 12:appArmorProfile:@AppArmorProfile`,
  Capabilities: '1:add:s[] 2:drop:s[]',
  SELinuxOptions: '1:user:s 2:role:s 3:type:s 4:level:s',
  WindowsSecurityContextOptions: `1:gmsaCredentialSpecName:s! 2:gmsaCredentialSpec:s! 3:runAsUserName:s!
    4:hostProcess:b!`,
  SeccompProfile: '1:type:s! 2:localhostProfile:s!',
  AppArmorProfile: '1:type:s! 2:localhostProfile:s!',
  PodSecurityContext: `1:seLinuxOptions:@SELinuxOptions 8:windowsOptions:@WindowsSecurityContextOptions
    2:runAsUser:i64! 6:runAsGroup:i64! 3:runAsNonRoot:b! 4:supplementalGroups:i64[]
    12:supplementalGroupsPolicy:s! 5:fsGroup:i64! 7:sysctls:@Sysctl[] 9:fsGroupChangePolicy:s!
    10:seccompProfile:@SeccompProfile 11:appArmorProfile:@AppArmorProfile 13:seLinuxChangePolicy:s!`,
  Sysctl: '1:name:s! 2:value:s!',
  Affinity: '1:nodeAffinity:@NodeAffinity 2:podAffinity:@PodAffinity 3:podAntiAffinity:@PodAntiAffinity',
  NodeAffinity: `1:requiredDuringSchedulingIgnoredDuringExecution:@NodeSelector
    2:preferredDuringSchedulingIgnoredDuringExecution:@PreferredSchedulingTerm[]`,
  NodeSelector: '1:nodeSelectorTerms:@NodeSelectorTerm[]',
  NodeSelectorTerm: '1:matchExpressions:@NodeSelectorRequirement[] 2:matchFields:@NodeSelectorRequirement[]',
  NodeSelectorRequirement: '1:key:s! 2:operator:s! 3:values:s[]',
  PreferredSchedulingTerm: '1:weight:i32! 2:preference:@NodeSelectorTerm',
  PodAffinity: `1:requiredDuringSchedulingIgnoredDuringExecution:@PodAffinityTerm[]
    2:preferredDuringSchedulingIgnoredDuringExecution:@WeightedPodAffinityTerm[]`,
  PodAntiAffinity: `1:requiredDuringSchedulingIgnoredDuringExecution:@PodAffinityTerm[]
    2:preferredDuringSchedulingIgnoredDuringExecution:@WeightedPodAffinityTerm[]`,
  WeightedPodAffinityTerm: '1:weight:i32! 2:podAffinityTerm:@PodAffinityTerm',
  PodAffinityTerm: `1:labelSelector:@meta.LabelSelector 2:namespaces:s[] 3:topologyKey:s!
    4:namespaceSelector:@meta.LabelSelector 5:matchLabelKeys:s[] 6:mismatchLabelKeys:s[]`,
  Toleration: '1:key:s 2:operator:s 3:value:s 4:effect:s 5:tolerationSeconds:i64!',
  HostAlias: '1:ip:s 2:hostnames:s[]',
  PodDNSConfig: '1:nameservers:s[] 2:searches:s[] 3:options:@PodDNSConfigOption[]',
  PodDNSConfigOption: '1:name:s 2:value:s!',
  PodReadinessGate: '1:conditionType:s!',
  TopologySpreadConstraint: `1:maxSkew:i32! 2:topologyKey:s! 3:whenUnsatisfiable:s!
    4:labelSelector:@meta.LabelSelector 5:minDomains:i32! 6:nodeAffinityPolicy:s! 7:nodeTaintsPolicy:s!
    8:matchLabelKeys:s[]`,
  PodOS: '1:name:s!',
  PodSchedulingGate: '1:name:s!',
  PodResourceClaim: '1:name:s! 3:resourceClaimName:s! 4:resourceClaimTemplateName:s!',

  Volume: '1:name:s! 2:volumeSource:@VolumeSource^',
  VolumeSource: `1:hostPath:@HostPathVolumeSource 2:emptyDir:@EmptyDirVolumeSource 6:secret:@SecretVolumeSource
    7:nfs:@NFSVolumeSource 10:persistentVolumeClaim:@PersistentVolumeClaimVolumeSource
    16:downwardAPI:@DownwardAPIVolumeSource 19:configMap:@ConfigMapVolumeSource
    26:projected:@ProjectedVolumeSource 28:csi:@CSIVolumeSource 29:ephemeral:@EphemeralVolumeSource
    30:image:@ImageVolumeSource`,
  HostPathVolumeSource: '1:path:s! 2:type:s!',
  EmptyDirVolumeSource: '1:medium:s 2:sizeLimit:Quantity',
  SecretVolumeSource: '1:secretName:s 2:items:@KeyToPath[] 3:defaultMode:i32! 4:optional:b!',
  NFSVolumeSource: '1:server:s! 2:path:s! 3:readOnly:b',
  PersistentVolumeClaimVolumeSource: '1:claimName:s! 2:readOnly:b',
  DownwardAPIVolumeSource: '1:items:@DownwardAPIVolumeFile[] 2:defaultMode:i32!',
  DownwardAPIVolumeFile: `1:path:s! 2:fieldRef:@ObjectFieldSelector 3:resourceFieldRef:@ResourceFieldSelector
    4:mode:i32!`,
  ConfigMapVolumeSource: `1:localObjectReference:@LocalObjectReference^ 2:items:@KeyToPath[]
    3:defaultMode:i32! 4:optional:b!`,
  KeyToPath: '1:key:s! 2:path:s! 3:mode:i32!',
  ProjectedVolumeSource: '1:sources:@VolumeProjection[] 2:defaultMode:i32!',
  VolumeProjection: `1:secret:@SecretProjection 2:downwardAPI:@DownwardAPIProjection 3:configMap:@ConfigMapProjection
    4:serviceAccountToken:@ServiceAccountTokenProjection 5:clusterTrustBundle:@ClusterTrustBundleProjection`,
  SecretProjection: '1:localObjectReference:@LocalObjectReference^ 2:items:@KeyToPath[] 4:optional:b!',
  ConfigMapProjection: '1:localObjectReference:@LocalObjectReference^ 2:items:@KeyToPath[] 4:optional:b!',
  DownwardAPIProjection: '1:items:@DownwardAPIVolumeFile[]',
  ServiceAccountTokenProjection: '1:audience:s 2:expirationSeconds:i64! 3:path:s!',
  ClusterTrustBundleProjection: `1:name:s! 2:signerName:s! 3:labelSelector:@meta.LabelSelector 5:optional:b!
    4:path:s!`,
  CSIVolumeSource: `1:driver:s! 2:readOnly:b! 3:fsType:s! 4:volumeAttributes:{s}
    5:nodePublishSecretRef:@LocalObjectReference`,
  EphemeralVolumeSource: '1:volumeClaimTemplate:@PersistentVolumeClaimTemplate',
  ImageVolumeSource: '1:reference:s 2:pullPolicy:s',

  PodStatus: `1:phase:s 2:conditions:@PodCondition[] 3:message:s 4:reason:s 11:nominatedNodeName:s 5:hostIP:s
    16:hostIPs:@HostIP[] 6:podIP:s 12:podIPs:@PodIP[] 7:startTime:Time
    10:initContainerStatuses:@ContainerStatus[] 8:containerStatuses:@ContainerStatus[] 9:qosClass:s
    13:ephemeralContainerStatuses:@ContainerStatus[] 14:resize:s
    15:resourceClaimStatuses:@PodResourceClaimStatus[]`,
  PodCondition: `1:type:s! 2:status:s! 3:lastProbeTime:Time 4:lastTransitionTime:Time 5:reason:s
    6:message:s`,
  HostIP: '1:ip:s',
  PodIP: '1:ip:s',
  PodResourceClaimStatus: '1:name:s! 2:resourceClaimName:s!',
  ContainerStatus: `1:name:s! 2:state:@ContainerState 3:lastState:@ContainerState 4:ready:b!
    5:restartCount:i32! 6:image:s! 7:imageID:s! 8:containerID:s 9:started:b!
    10:allocatedResources:{Quantity} 11:resources:@ResourceRequirements`,
  ContainerState: `1:waiting:@ContainerStateWaiting 2:running:@ContainerStateRunning
    3:terminated:@ContainerStateTerminated`,
  ContainerStateWaiting: '1:reason:s 2:message:s',
  ContainerStateRunning: '1:startedAt:Time',
  ContainerStateTerminated: `1:exitCode:i32! 2:signal:i32 3:reason:s 4:message:s 5:startedAt:Time
    6:finishedAt:Time 7:containerID:s`,
};
