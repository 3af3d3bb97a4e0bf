/** apps/v1, batch/v1 and autoscaling/v1 messages, in the table format of ../schema.ts. */
export const APPS: Record<string, string> = {
  Deployment: '1:metadata:@meta.ObjectMeta 2:spec:@DeploymentSpec 3:status:@DeploymentStatus',
  DeploymentSpec: `1:replicas:i32! 2:selector:@meta.LabelSelector 3:template:@core.PodTemplateSpec
    4:strategy:@DeploymentStrategy 5:minReadySeconds:i32 6:revisionHistoryLimit:i32! 7:paused:b
    9:progressDeadlineSeconds:i32! 10:podReplacementPolicy:s!`,
  DeploymentStrategy: '1:type:s 2:rollingUpdate:@RollingUpdateDeployment',
  RollingUpdateDeployment: '1:maxUnavailable:IntOrString 2:maxSurge:IntOrString',
  DeploymentStatus: `1:observedGeneration:i64 2:replicas:i32 3:updatedReplicas:i32 7:readyReplicas:i32
    4:availableReplicas:i32 5:unavailableReplicas:i32 9:terminatingReplicas:i32!
    6:conditions:@DeploymentCondition[] 8:collisionCount:i32!`,
  DeploymentCondition: `1:type:s! 2:status:s! 6:lastUpdateTime:Time 7:lastTransitionTime:Time 4:reason:s
    5:message:s`,
  ReplicaSet: '1:metadata:@meta.ObjectMeta 2:spec:@ReplicaSetSpec 3:status:@ReplicaSetStatus',
  ReplicaSetSpec: `1:replicas:i32! 4:minReadySeconds:i32 2:selector:@meta.LabelSelector
    3:template:@core.PodTemplateSpec`,
  ReplicaSetStatus: `1:replicas:i32! 2:fullyLabeledReplicas:i32 4:readyReplicas:i32 5:availableReplicas:i32
    7:terminatingReplicas:i32! 3:observedGeneration:i64 6:conditions:@ReplicaSetCondition[]`,
  ReplicaSetCondition: '1:type:s! 2:status:s! 3:lastTransitionTime:Time 4:reason:s 5:message:s',
  DaemonSet: '1:metadata:@meta.ObjectMeta 2:spec:@DaemonSetSpec 3:status:@DaemonSetStatus',
  DaemonSetSpec: `1:selector:@meta.LabelSelector 2:template:@core.PodTemplateSpec
    3:updateStrategy:@DaemonSetUpdateStrategy 4:minReadySeconds:i32 6:revisionHistoryLimit:i32!`,
  DaemonSetUpdateStrategy: '1:type:s 2:rollingUpdate:@RollingUpdateDaemonSet',
  RollingUpdateDaemonSet: '1:maxUnavailable:IntOrString 2:maxSurge:IntOrString',
  DaemonSetStatus: `1:currentNumberScheduled:i32! 2:numberMisscheduled:i32! 3:desiredNumberScheduled:i32!
    4:numberReady:i32! 5:observedGeneration:i64 6:updatedNumberScheduled:i32 7:numberAvailable:i32
    8:numberUnavailable:i32 9:collisionCount:i32! 10:conditions:@DaemonSetCondition[]`,
  DaemonSetCondition: '1:type:s! 2:status:s! 3:lastTransitionTime:Time 4:reason:s 5:message:s',
};

export const BATCH: Record<string, string> = {
  Job: '1:metadata:@meta.ObjectMeta 2:spec:@JobSpec 3:status:@JobStatus',
  JobSpec: `1:parallelism:i32! 2:completions:i32! 3:activeDeadlineSeconds:i64!
    11:podFailurePolicy:@PodFailurePolicy 16:successPolicy:@SuccessPolicy 7:backoffLimit:i32!
    12:backoffLimitPerIndex:i32! 13:maxFailedIndexes:i32! 4:selector:@meta.LabelSelector
    5:manualSelector:b! 6:template:@core.PodTemplateSpec 8:ttlSecondsAfterFinished:i32!
    9:completionMode:s! 10:suspend:b! 14:podReplacementPolicy:s! 15:managedBy:s!`,
  PodFailurePolicy: '1:rules:@PodFailurePolicyRule[]',
  PodFailurePolicyRule: `1:action:s! 2:onExitCodes:@PodFailurePolicyOnExitCodesRequirement
    3:onPodConditions:@PodFailurePolicyOnPodConditionsPattern[]`,
  PodFailurePolicyOnExitCodesRequirement: '1:containerName:s! 2:operator:s! 3:values:i32[]',
  PodFailurePolicyOnPodConditionsPattern: '1:type:s! 2:status:s!',
  SuccessPolicy: '1:rules:@SuccessPolicyRule[]',
  SuccessPolicyRule: '1:succeededIndexes:s! 2:succeededCount:i32!',
  JobStatus: `1:conditions:@JobCondition[] 2:startTime:Time 3:completionTime:Time 4:active:i32
    5:succeeded:i32 6:failed:i32 11:terminating:i32! 7:completedIndexes:s 10:failedIndexes:s!
    8:uncountedTerminatedPods:@UncountedTerminatedPods 9:ready:i32!`,
  UncountedTerminatedPods: '1:succeeded:s[] 2:failed:s[]',
  JobCondition: `1:type:s! 2:status:s! 3:lastProbeTime:Time 4:lastTransitionTime:Time 5:reason:s
    6:message:s`,
  JobTemplateSpec: '1:metadata:@meta.ObjectMeta 2:spec:@JobSpec',
  CronJob: '1:metadata:@meta.ObjectMeta 2:spec:@CronJobSpec 3:status:@CronJobStatus',
  CronJobSpec: `1:schedule:s! 8:timeZone:s! 2:startingDeadlineSeconds:i64! 3:concurrencyPolicy:s
    4:suspend:b! 5:jobTemplate:@JobTemplateSpec 6:successfulJobsHistoryLimit:i32!
    7:failedJobsHistoryLimit:i32!`,
  CronJobStatus: '1:active:@core.ObjectReference[] 4:lastScheduleTime:Time 5:lastSuccessfulTime:Time',
};

export const AUTOSCALING: Record<string, string> = {
  HorizontalPodAutoscaler: `1:metadata:@meta.ObjectMeta 2:spec:@HorizontalPodAutoscalerSpec
    3:status:@HorizontalPodAutoscalerStatus`,
  HorizontalPodAutoscalerSpec: `1:scaleTargetRef:@CrossVersionObjectReference 2:minReplicas:i32!
    3:maxReplicas:i32! 4:targetCPUUtilizationPercentage:i32!`,
  CrossVersionObjectReference: '1:kind:s! 2:name:s! 3:apiVersion:s',
  HorizontalPodAutoscalerStatus: `1:observedGeneration:i64! 2:lastScaleTime:Time 3:currentReplicas:i32!
    4:desiredReplicas:i32! 5:currentCPUUtilizationPercentage:i32!`,
};
