#!/usr/bin/env bash
# Generates the webhook's serving certificate for full mode and stores it in the Secret
# the controller mounts (pod-sequence-system/podsequence-webhook-certs), then prints the
# CA bundle and the command that puts it into the MutatingWebhookConfiguration (and, for
# troupe's Service in troupe-system, into the AppWrapper webhook configurations too).
#
#   ./config/webhook/generate-certs.sh
#
# Needs openssl and kubectl (pointing at the cluster). Settings, from the environment:
#   NAMESPACE (pod-sequence-system)  SERVICE (pod-sequence-webhook-service)
#   SECRET (podsequence-webhook-certs)  CERT_DIR (a new temporary directory)  DAYS (365)
set -euo pipefail

NAMESPACE="${NAMESPACE:-pod-sequence-system}"
SERVICE="${SERVICE:-pod-sequence-webhook-service}"
SECRET="${SECRET:-podsequence-webhook-certs}"
DAYS="${DAYS:-365}"
CERT_DIR="${CERT_DIR:-$(mktemp -d -t podsequence-webhook-certs.XXXXXX)}"

for tool in openssl kubectl; do
  command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool is required" >&2; exit 1; }
done
mkdir -p "$CERT_DIR"
cd "$CERT_DIR"

# A CA of our own, and a serving certificate for the Service's DNS names signed by it.
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days "$DAYS" \
  -subj "/CN=podsequence-webhook-ca" >/dev/null 2>&1
cat > server.cnf <<CNF
[req]
distinguished_name = dn
prompt = no
req_extensions = ext
[dn]
CN = ${SERVICE}.${NAMESPACE}.svc
[ext]
basicConstraints = CA:FALSE
keyUsage = digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:${SERVICE},DNS:${SERVICE}.${NAMESPACE},DNS:${SERVICE}.${NAMESPACE}.svc,DNS:${SERVICE}.${NAMESPACE}.svc.cluster.local
CNF
openssl req -newkey rsa:2048 -nodes -keyout tls.key -out server.csr -config server.cnf >/dev/null 2>&1
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out tls.crt -days "$DAYS" \
  -extensions ext -extfile server.cnf >/dev/null 2>&1

# The namespace may not exist yet (rbac.yaml creates it too; applying both is harmless).
kubectl create namespace "$NAMESPACE" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl create secret generic "$SECRET" --namespace "$NAMESPACE" --type kubernetes.io/tls \
  --from-file=tls.crt=tls.crt --from-file=tls.key=tls.key --from-file=ca.crt=ca.crt \
  --dry-run=client -o yaml | kubectl apply -f - >/dev/null

CA_BUNDLE="$(base64 < ca.crt | tr -d '\n')"
echo "Certificates written to $CERT_DIR; Secret $NAMESPACE/$SECRET created."
echo
echo "CA_BUNDLE=$CA_BUNDLE"
echo
echo "After 'kubectl apply -f config/webhook/webhook.yaml', run:"
echo "kubectl patch mutatingwebhookconfiguration podsequence-mutating-webhook --type='json' -p='[{\"op\": \"replace\", \"path\": \"/webhooks/0/clientConfig/caBundle\", \"value\":\"$CA_BUNDLE\"}]'"

# troupe's manager (config/webhook-server) serves the AppWrapper webhooks behind the same
# Service when config/appwrapper-webhook is installed. Their configurations carry no
# caBundle, so it is added rather than replaced.
if [ "$NAMESPACE/$SERVICE" = "troupe-system/troupe-webhook-service" ]; then
  echo
  echo "For the AppWrapper webhooks (config/overlays/appwrapper-webhooks), after applying the overlay, run:"
  for config in mutatingwebhookconfiguration/appwrapper-mutating-webhook-configuration \
    validatingwebhookconfiguration/appwrapper-validating-webhook-configuration; do
    echo "kubectl patch $config --type='json' -p='[{\"op\": \"add\", \"path\": \"/webhooks/0/clientConfig/caBundle\", \"value\":\"$CA_BUNDLE\"}]'"
  done
fi
