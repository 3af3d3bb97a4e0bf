/** policy/v1 and scheduling.k8s.io/v1 messages, in the table format of ../schema.ts. */
export const POLICY: Record<string, string> = {
  PodDisruptionBudget: `1:metadata:@meta.ObjectMeta 2:spec:@PodDisruptionBudgetSpec
    3:status:@PodDisruptionBudgetStatus`,
  PodDisruptionBudgetSpec: `1:minAvailable:IntOrString 2:selector:@meta.LabelSelector
    3:maxUnavailable:IntOrString 4:unhealthyPodEvictionPolicy:s!`,
  PodDisruptionBudgetStatus: `1:observedGeneration:i64 2:disruptedPods:{Time} 3:disruptionsAllowed:i32!
    4:currentHealthy:i32! 5:desiredHealthy:i32! 6:expectedPods:i32! 7:conditions:@meta.Condition[]`,
  Eviction: '1:metadata:@meta.ObjectMeta 2:deleteOptions:@meta.DeleteOptions',
};

export const SCHEDULING: Record<string, string> = {
  PriorityClass: `1:metadata:@meta.ObjectMeta 2:value:i32! 3:globalDefault:b 4:description:s
    5:preemptionPolicy:s!`,
};
