"""Scenarios of the official Python client (Debian's python3-kubernetes) for the behaviours of
the default 1.32 API: Priority admission, ResourceQuota, ServiceAccount tokens with
TokenReview and SelfSubjectReview, CertificateSigningRequest approval, HorizontalPodAutoscalers at v1 and v2,
ValidatingAdmissionPolicy, and (on a whole cluster, from
test/cluster/workloads/volumes.integration.test.ts) the scheduler's volume binding and (from
test/cluster/apiserver/pod-streams.integration.test.ts) pods/exec, pods/portforward and ephemeral containers, and
(from test/cluster/workloads/endpoints.integration.test.ts) the Endpoints controller.
Driven by test/cluster/apiserver/python-behaviours.integration.test.ts;
each prints one JSON object of what it observed.

Run: /usr/bin/python3 behaviours.py <scenario> <kubeconfig> <namespace>
"""

import json
import sys
import time

from kubernetes import client, config, dynamic
from kubernetes.client.rest import ApiException


def out(**observed):
    print(json.dumps(observed), flush=True)


def pod(name, **spec):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")], **spec),
    )


def refused(fn):
    try:
        fn()
    except ApiException as e:
        return {"status": e.status, "message": json.loads(e.body)["message"]}
    return None


def scenario_priority(ns):
    sched = client.SchedulingV1Api()
    sched.create_priority_class(
        client.V1PriorityClass(metadata=client.V1ObjectMeta(name=f"{ns}-high"), value=500)
    )
    v1 = client.CoreV1Api()
    made = v1.create_namespaced_pod(ns, pod("p", priority_class_name=f"{ns}-high"))
    system = v1.create_namespaced_pod(ns, pod("s", priority_class_name="system-cluster-critical"))
    unknown = refused(lambda: v1.create_namespaced_pod(ns, pod("x", priority_class_name="nope")))
    names = [pc.metadata.name for pc in sched.list_priority_class().items]
    out(priority=made.spec.priority, system=system.spec.priority, unknown=unknown, classes=names)


def scenario_quota(ns):
    v1 = client.CoreV1Api()
    v1.create_namespaced_resource_quota(
        ns,
        client.V1ResourceQuota(
            metadata=client.V1ObjectMeta(name="q"), spec=client.V1ResourceQuotaSpec(hard={"pods": "1"})
        ),
    )
    v1.create_namespaced_pod(ns, pod("one"))
    second = refused(lambda: v1.create_namespaced_pod(ns, pod("two")))
    out(second=second)


def scenario_token(ns):
    v1 = client.CoreV1Api()
    v1.create_namespaced_service_account(ns, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="bot")))
    tr = v1.create_namespaced_service_account_token(
        "bot", ns, client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=600))
    )
    auth = client.AuthenticationV1Api()
    review = auth.create_token_review(client.V1TokenReview(spec=client.V1TokenReviewSpec(token=tr.status.token)))
    # python3-kubernetes 22.6 predates SelfSubjectReview (1.28): its dynamic client reads discovery.
    reviews = dyn().resources.get(api_version="authentication.k8s.io/v1", kind="SelfSubjectReview")
    me = reviews.create(body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    out(
        authenticated=review.status.authenticated,
        username=review.status.user.username,
        expires=tr.status.expiration_timestamp is not None,
        me=me.status.userInfo.username,
    )


CSR_REQUEST = (
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIWk1JR0FBZ0VBTUI0eERqQU1CZ05WQkFNTUJXRnNhV05sTVF3d0NnWURWUVFLREFOa1pYWXdXVEFUQmdjcQpoa2pPUFFJQkJnZ3Foa2pPUFFNQkJ3TkNBQVRrb1VxSmprajIrcjkwN1l4TnMxdlE4MDN5NFVLSlNZRXN4anJsCjl5eDArVURGcUlYQXVMZUNGRmFEcHl1WTBBVTByWko2aUlIa3RVTFVvSTBTZkpYdm9BQXdDZ1lJS29aSXpqMEUKQXdJRFNBQXdSUUlnTzh0NHNEVlVNSW5ucjQzaGhlaTVVNUMzTWw3V200NmFpRkR4TERrQktrQUNJUURRTGcyWQpwbE1QQ2RJWXp4R1hobmpJZHFLdEhjY0d6K01yd2J4R3JrV3NOdz09Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo="
)


def scenario_csr(ns):
    """A CSR approved through /approval, which takes the conditions only."""
    certs = client.CertificatesV1Api()
    name = f"{ns}-csr"
    csr = certs.create_certificate_signing_request(
        client.V1CertificateSigningRequest(
            metadata=client.V1ObjectMeta(name=name),
            spec=client.V1CertificateSigningRequestSpec(
                request=CSR_REQUEST, signer_name="kubernetes.io/kube-apiserver-client", usages=["client auth"]
            ),
        )
    )
    csr.spec.usages = ["server auth"]
    csr.status = client.V1CertificateSigningRequestStatus(
        conditions=[client.V1CertificateSigningRequestCondition(type="Approved", status="True", reason="Py")]
    )
    approved = certs.replace_certificate_signing_request_approval(name, csr)
    both = refused(
        lambda: certs.patch_certificate_signing_request_approval(
            name, [{"op": "add", "path": "/status/conditions/-", "value": {"type": "Denied", "status": "True"}}]
        )
    )
    out(
        usages=approved.spec.usages,
        conditions=[c.type for c in approved.status.conditions],
        stamped=approved.status.conditions[0].last_update_time is not None,
        denied=both["status"] if both else None,
    )


def scenario_hpa(ns):
    v1 = client.AutoscalingV1Api()
    v1.create_namespaced_horizontal_pod_autoscaler(
        ns,
        client.V1HorizontalPodAutoscaler(
            metadata=client.V1ObjectMeta(name="h"),
            spec=client.V1HorizontalPodAutoscalerSpec(
                max_replicas=4,
                scale_target_ref=client.V1CrossVersionObjectReference(api_version="apps/v1", kind="Deployment", name="d"),
                target_cpu_utilization_percentage=70,
            ),
        ),
    )
    # autoscaling/v2 (GA in 1.23) through the dynamic client, which 22.6 has no typed API for.
    hpas = dyn().resources.get(api_version="autoscaling/v2", kind="HorizontalPodAutoscaler")
    m = hpas.get(name="h", namespace=ns).spec.metrics[0]
    out(type=m.type, name=m.resource.name, utilization=m.resource.target.averageUtilization)


def scenario_policy(ns):
    # admissionregistration.k8s.io/v1 policies (GA in 1.30) through the dynamic client.
    d = dyn()
    policies = d.resources.get(api_version="admissionregistration.k8s.io/v1", kind="ValidatingAdmissionPolicy")
    bindings = d.resources.get(api_version="admissionregistration.k8s.io/v1", kind="ValidatingAdmissionPolicyBinding")
    policies.create(
        body={
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": f"{ns}-cm"},
            "spec": {
                "matchConstraints": {
                    "resourceRules": [
                        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
                    ]
                },
                "validations": [{"expression": "has(object.data) && 'owner' in object.data"}],
            },
        }
    )
    bindings.create(
        body={
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": f"{ns}-cm"},
            "spec": {
                "policyName": f"{ns}-cm",
                "validationActions": ["Deny"],
                "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}},
            },
        }
    )
    v1 = client.CoreV1Api()
    bad = refused(
        lambda: v1.create_namespaced_config_map(
            ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="bad"), data={"a": "1"})
        )
    )
    v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="ok"), data={"owner": "me"}))
    out(bad=bad)


def wait_for(what, fn, timeout=60):
    """Polls fn until it returns something truthy (the cluster acts asynchronously)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = fn()
        if got:
            return got
        time.sleep(0.1)
    raise TimeoutError(what)


def scenario_volumes(ns):
    """A WaitForFirstConsumer claim whose class allows zone-a only, and a missing claim."""
    storage = client.StorageV1Api()
    storage.create_storage_class(
        client.V1StorageClass(
            metadata=client.V1ObjectMeta(name=f"{ns}-zonal"),
            provisioner="ebs.csi.aws.com",
            volume_binding_mode="WaitForFirstConsumer",
            allowed_topologies=[
                client.V1TopologySelectorTerm(
                    match_label_expressions=[
                        client.V1TopologySelectorLabelRequirement(
                            key="topology.kubernetes.io/zone", values=["zone-a"]
                        )
                    ]
                )
            ],
        )
    )
    v1 = client.CoreV1Api()
    v1.create_namespaced_persistent_volume_claim(
        ns,
        client.V1PersistentVolumeClaim(
            metadata=client.V1ObjectMeta(name="data"),
            spec=client.V1PersistentVolumeClaimSpec(
                storage_class_name=f"{ns}-zonal",
                access_modes=["ReadWriteOnce"],
                resources=client.V1ResourceRequirements(requests={"storage": "1Gi"}),
            ),
        ),
    )

    def claim_volume(name, claim):
        return client.V1Volume(
            name=name,
            persistent_volume_claim=client.V1PersistentVolumeClaimVolumeSource(claim_name=claim),
        )

    v1.create_namespaced_pod(ns, pod("uses", volumes=[claim_volume("data", "data")]))
    v1.create_namespaced_pod(ns, pod("orphan", volumes=[claim_volume("data", "absent")]))
    node = wait_for("pod scheduled", lambda: v1.read_namespaced_pod("uses", ns).spec.node_name)
    claim = wait_for(
        "claim bound",
        lambda: (c := v1.read_namespaced_persistent_volume_claim("data", ns)).status.phase == "Bound" and c,
    )

    def unschedulable():
        for c in v1.read_namespaced_pod("orphan", ns).status.conditions or []:
            if c.type == "PodScheduled" and c.reason == "Unschedulable":
                return c.message
        return None

    out(
        node=node,
        selected=claim.metadata.annotations.get("volume.kubernetes.io/selected-node"),
        orphan=wait_for("orphan unschedulable", unschedulable),
    )


def scenario_exec(ns):
    """exec over the WebSocket channel protocol (v4.channel.k8s.io) and an ephemeral container."""
    from kubernetes.stream import stream

    v1 = client.CoreV1Api()
    v1.create_namespaced_pod(ns, pod("shell"))
    wait_for("shell running", lambda: v1.read_namespaced_pod("shell", ns).status.phase == "Running")
    resp = stream(
        v1.connect_get_namespaced_pod_exec,
        "shell",
        ns,
        command=["sh", "-c", "echo from python; exit 4"],
        stderr=True,
        stdin=False,
        stdout=True,
        tty=False,
        _preload_content=False,
    )
    resp.run_forever(timeout=30)
    stdout = resp.read_stdout()
    code = resp.returncode
    resp.close()
    v1.patch_namespaced_pod_ephemeralcontainers(
        "shell",
        ns,
        {"spec": {"ephemeralContainers": [{"name": "dbg", "image": "busybox", "command": ["sleep", "3600"]}]}},
    )
    state = wait_for(
        "dbg running",
        lambda: next(
            (s.state.running is not None for s in v1.read_namespaced_pod("shell", ns).status.ephemeral_container_statuses or []),
            None,
        ),
    )
    # A command that ends: the container terminates with its exit code, its output is its log.
    v1.patch_namespaced_pod_ephemeralcontainers(
        "shell",
        ns,
        {"spec": {"ephemeralContainers": [{"name": "done", "image": "busybox", "command": ["sh", "-c", "echo bye; exit 6"]}]}},
    )
    done = wait_for(
        "done terminated",
        lambda: next(
            (
                s.state.terminated
                for s in v1.read_namespaced_pod("shell", ns).status.ephemeral_container_statuses or []
                if s.name == "done" and s.state.terminated
            ),
            None,
        ),
    )
    done_log = v1.read_namespaced_pod_log("shell", ns, container="done")
    node = v1.read_namespaced_pod("shell", ns).spec.node_name
    healthz = v1.connect_get_node_proxy_with_path(node, "healthz")
    refused_pod = refused(lambda: v1.connect_get_namespaced_pod_proxy_with_path("shell", ns, "/"))
    out(
        stdout=stdout,
        code=code,
        ephemeralRunning=state,
        ephemeralExit=[done.exit_code, done.reason, done_log],
        healthz=healthz,
        podProxy=refused_pod["status"] if refused_pod else None,
    )


def scenario_portforward(ns):
    """port-forward over the WebSocket channel protocol to pod web: 8080 has a KWOK PortForward
    target (an HTTP server), 8081 canned httpRoutes, 9090 none."""
    from kubernetes.stream import portforward

    v1 = client.CoreV1Api()
    pf = portforward(v1.connect_get_namespaced_pod_portforward, "web", ns, ports="8080,8081,9090")

    # A forwarded port's socket ends only when the whole WebSocket closes (the v4 protocol has no
    # per-channel close), which is once every port is done: send both requests, then read.
    socks = {}
    for port, path in ((8080, "/"), (8081, "/healthz")):
        socks[port] = pf.socket(port)
        socks[port].setblocking(True)
        socks[port].sendall(f"GET {path} HTTP/1.0\r\n\r\n".encode())

    def read(port):
        chunks = []
        while True:
            got = socks[port].recv(4096)
            if not got:
                break
            chunks.append(got)
        return b"".join(chunks).decode()

    body = read(8080).split("\r\n\r\n", 1)[-1]
    routed = read(8081)
    error = wait_for("the error of port 9090", lambda: pf.error(9090))
    pf.close()
    out(
        body=body,
        routed=routed.split("\r\n", 1)[0] + " " + routed.split("\r\n\r\n", 1)[-1],
        header="x-from: kwok" in routed.lower(),
        error=error,
    )


def scenario_endpoints(ns):
    """The Endpoints controller's object for a Service with one ready pod."""
    v1 = client.CoreV1Api()
    p = pod("one")
    p.metadata.labels = {"app": "one"}
    p.spec.containers[0].ports = [client.V1ContainerPort(name="web", container_port=8080)]
    v1.create_namespaced_pod(ns, p)
    v1.create_namespaced_service(
        ns,
        client.V1Service(
            metadata=client.V1ObjectMeta(name="one"),
            spec=client.V1ServiceSpec(
                selector={"app": "one"}, ports=[client.V1ServicePort(name="web", port=80, target_port="web")]
            ),
        ),
    )

    def ready():
        try:
            ep = v1.read_namespaced_endpoints("one", ns)
        except ApiException:
            return None
        return ep if ep.subsets and ep.subsets[0].addresses else None

    ep = wait_for("endpoints", ready)
    out(ports=[[q.name, q.port] for q in ep.subsets[0].ports], ready=len(ep.subsets[0].addresses))


def dyn():
    return dynamic.DynamicClient(client.ApiClient())


if __name__ == "__main__":
    scenario, kubeconfig, namespace = sys.argv[1:4]
    config.load_kube_config(kubeconfig)
    globals()[f"scenario_{scenario}"](namespace)
