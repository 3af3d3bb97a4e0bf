/**
 * meta.k8s.io/v1 messages (k8s.io/apimachinery/pkg/apis/meta/v1), in the table format of
 * ../schema.ts. Field 15 of ObjectMeta (clusterName) and 5 of ManagedFieldsEntry (fields)
 * are tombstoned upstream and left out on purpose.
 */
export const META: Record<string, string> = {
  ObjectMeta: `1:name:s 2:generateName:s 3:namespace:s 4:selfLink:s 5:uid:s 6:resourceVersion:s
    7:generation:i64 8:creationTimestamp:Time 9:deletionTimestamp:Time 10:deletionGracePeriodSeconds:i64!
    11:labels:{s} 12:annotations:{s} 13:ownerReferences:@OwnerReference[] 14:finalizers:s[]
    17:managedFields:@ManagedFieldsEntry[]`,
  OwnerReference: '5:apiVersion:s! 1:kind:s! 3:name:s! 4:uid:s! 6:controller:b! 7:blockOwnerDeletion:b!',
  ManagedFieldsEntry: `1:manager:s 2:operation:s 3:apiVersion:s 4:time:Time 6:fieldsType:s 7:fieldsV1:FieldsV1
    8:subresource:s`,
  LabelSelector: '1:matchLabels:{s} 2:matchExpressions:@LabelSelectorRequirement[]',
  LabelSelectorRequirement: '1:key:s! 2:operator:s! 3:values:s[]',
  FieldSelectorRequirement: '1:key:s! 2:operator:s! 3:values:s[]',
  Condition: `1:type:s! 2:status:s! 3:observedGeneration:i64 4:lastTransitionTime:Time 5:reason:s!
    6:message:s!`,
  DeleteOptions: `1:gracePeriodSeconds:i64! 2:preconditions:@Preconditions 3:orphanDependents:b!
    4:propagationPolicy:s! 5:dryRun:s[]`,
  Preconditions: '1:uid:s! 2:resourceVersion:s!',
};
