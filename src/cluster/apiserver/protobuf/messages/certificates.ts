/** certificates.k8s.io/v1 messages (kubectl certificate approve/deny send them), as ../schema.ts reads them. */
export const CERTIFICATES: Record<string, string> = {
  CertificateSigningRequest: `1:metadata:@meta.ObjectMeta 2:spec:@CertificateSigningRequestSpec
    3:status:@CertificateSigningRequestStatus`,
  CertificateSigningRequestSpec: `1:request:bytes! 7:signerName:s! 8:expirationSeconds:i32! 5:usages:s[]
    2:username:s 3:uid:s 4:groups:s[] 6:extra:{StringList}`,
  CertificateSigningRequestStatus: '1:conditions:@CertificateSigningRequestCondition[] 2:certificate:bytes',
  CertificateSigningRequestCondition: `1:type:s! 6:status:s! 2:reason:s 3:message:s 4:lastUpdateTime:Time
    5:lastTransitionTime:Time`,
};
