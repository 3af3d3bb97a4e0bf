/**
 * rbac.authorization.k8s.io/v1, authorization.k8s.io/v1 and authentication.k8s.io/v1
 * messages, in the table format of ../schema.ts.
 */
export const RBAC: Record<string, string> = {
  PolicyRule: '1:verbs:s[] 2:apiGroups:s[] 3:resources:s[] 4:resourceNames:s[] 5:nonResourceURLs:s[]',
  Subject: '1:kind:s! 2:apiGroup:s 3:name:s! 4:namespace:s',
  RoleRef: '1:apiGroup:s! 2:kind:s! 3:name:s!',
  Role: '1:metadata:@meta.ObjectMeta 2:rules:@PolicyRule[]',
  ClusterRole: '1:metadata:@meta.ObjectMeta 2:rules:@PolicyRule[] 3:aggregationRule:@AggregationRule',
  AggregationRule: '1:clusterRoleSelectors:@meta.LabelSelector[]',
  RoleBinding: '1:metadata:@meta.ObjectMeta 2:subjects:@Subject[] 3:roleRef:@RoleRef',
  ClusterRoleBinding: '1:metadata:@meta.ObjectMeta 2:subjects:@Subject[] 3:roleRef:@RoleRef',
};

export const AUTHORIZATION: Record<string, string> = {
  SubjectAccessReview: `1:metadata:@meta.ObjectMeta 2:spec:@SubjectAccessReviewSpec
    3:status:@SubjectAccessReviewStatus`,
  LocalSubjectAccessReview: `1:metadata:@meta.ObjectMeta 2:spec:@SubjectAccessReviewSpec
    3:status:@SubjectAccessReviewStatus`,
  SelfSubjectAccessReview: `1:metadata:@meta.ObjectMeta 2:spec:@SelfSubjectAccessReviewSpec
    3:status:@SubjectAccessReviewStatus`,
  SubjectAccessReviewSpec: `1:resourceAttributes:@ResourceAttributes 2:nonResourceAttributes:@NonResourceAttributes
    3:user:s 4:groups:s[] 5:extra:{StringList} 6:uid:s`,
  SelfSubjectAccessReviewSpec:
    '1:resourceAttributes:@ResourceAttributes 2:nonResourceAttributes:@NonResourceAttributes',
  ResourceAttributes: `1:namespace:s 2:verb:s 3:group:s 4:version:s 5:resource:s 6:subresource:s 7:name:s
    8:fieldSelector:@FieldSelectorAttributes 9:labelSelector:@LabelSelectorAttributes`,
  FieldSelectorAttributes: '1:rawSelector:s 2:requirements:@meta.FieldSelectorRequirement[]',
  LabelSelectorAttributes: '1:rawSelector:s 2:requirements:@meta.LabelSelectorRequirement[]',
  NonResourceAttributes: '1:path:s 2:verb:s',
  SubjectAccessReviewStatus: '1:allowed:b! 4:denied:b 2:reason:s 3:evaluationError:s',
  SelfSubjectRulesReview: `1:metadata:@meta.ObjectMeta 2:spec:@SelfSubjectRulesReviewSpec
    3:status:@SubjectRulesReviewStatus`,
  SelfSubjectRulesReviewSpec: '1:namespace:s',
  SubjectRulesReviewStatus: `1:resourceRules:@ResourceRule[] 2:nonResourceRules:@NonResourceRule[]
    3:incomplete:b! 4:evaluationError:s`,
  ResourceRule: '1:verbs:s[] 2:apiGroups:s[] 3:resources:s[] 4:resourceNames:s[]',
  NonResourceRule: '1:verbs:s[] 2:nonResourceURLs:s[]',
};

export const AUTHENTICATION: Record<string, string> = {
  TokenRequest: '1:metadata:@meta.ObjectMeta 2:spec:@TokenRequestSpec 3:status:@TokenRequestStatus',
  TokenRequestSpec: '1:audiences:s[] 4:expirationSeconds:i64! 3:boundObjectRef:@BoundObjectReference',
  TokenRequestStatus: '1:token:s! 2:expirationTimestamp:Time',
  BoundObjectReference: '1:kind:s 2:apiVersion:s 3:name:s 4:uid:s',
  TokenReview: '1:metadata:@meta.ObjectMeta 2:spec:@TokenReviewSpec 3:status:@TokenReviewStatus',
  TokenReviewSpec: '1:token:s 2:audiences:s[]',
  TokenReviewStatus: '1:authenticated:b 2:user:@UserInfo 4:audiences:s[] 3:error:s',
  UserInfo: '1:username:s 2:uid:s 3:groups:s[] 4:extra:{StringList}',
  SelfSubjectReview: '1:metadata:@meta.ObjectMeta 2:status:@SelfSubjectReviewStatus',
  SelfSubjectReviewStatus: '1:userInfo:@UserInfo',
};
