"""Scenarios of the official Python client (Debian's python3-kubernetes) against the
embedded API server, driven by test/cluster/apiserver/python-client.integration.test.ts.

Each scenario talks to the server only through the client library, as a user's tool would,
and prints what it observed as one JSON object per line; the Node test asserts on them. A
client-side failure (an exception, a refused deserialization) ends the scenario with a
non-zero exit and the traceback on stderr.

Run: /usr/bin/python3 client_conformance.py <scenario> <kubeconfig> <namespace> [args]
"""

import json
import sys
import threading
import time

from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException


def out(**observed):
    print(json.dumps(observed), flush=True)


def apply_client():
    # python3-kubernetes 22.6 sends PATCH as JSON patch, or strategic merge for an object body;
    # server-side apply takes a default Content-Type header and a body already serialized.
    api = client.ApiClient()
    api.set_default_header("Content-Type", "application/apply-patch+yaml")
    return client.CoreV1Api(api)


def cm(name, data=None):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data=data or {"a": "1"})


def scenario_watch(ns):
    """Watch with allowWatchBookmarks (sent as `True`), then resume from the last version seen."""
    v1 = client.CoreV1Api()
    v1.create_namespaced_config_map(ns, cm("w1"))
    rv = v1.list_namespaced_config_map(ns).metadata.resource_version
    seen = []

    def writes():
        time.sleep(0.5)
        v1.create_namespaced_config_map(ns, cm("w2"))
        v1.patch_namespaced_config_map("w1", ns, [{"op": "replace", "path": "/data/a", "value": "2"}])

    threading.Thread(target=writes).start()
    w = watch.Watch()
    for event in w.stream(
        v1.list_namespaced_config_map, ns, resource_version=rv, allow_watch_bookmarks=True, timeout_seconds=15
    ):
        obj = event["object"] if event["type"] != "BOOKMARK" else event["raw_object"]
        name = obj.metadata.name if hasattr(obj, "metadata") else None
        seen.append([event["type"], name])
        if event["type"] == "BOOKMARK":
            w.stop()
    out(events=seen, last_rv=w.resource_version)
    # Resume from the last version the watch saw: only what happened after it arrives.
    v1.create_namespaced_config_map(ns, cm("w3"))
    resumed = []
    w2 = watch.Watch()
    for event in w2.stream(v1.list_namespaced_config_map, ns, resource_version=w.resource_version, timeout_seconds=5):
        resumed.append([event["type"], event["object"].metadata.name])
        w2.stop()
    out(resumed=resumed)


def scenario_expired(ns):
    """A continue token and a watch version that left the history: 410 for both."""
    v1 = client.CoreV1Api()
    for i in range(3):
        v1.create_namespaced_config_map(ns, cm("e%d" % i))
    first = v1.list_namespaced_config_map(ns, limit=1)
    old_rv = first.metadata.resource_version
    v1.create_namespaced_config_map(ns, cm("e9"))
    out(ready=True)
    sys.stdin.readline()  # the test expires the server's history here
    try:
        v1.list_namespaced_config_map(ns, limit=1, _continue=first.metadata._continue)
        out(continued="no error")
    except ApiException as e:
        body = json.loads(e.body)
        token = body["metadata"].get("continue")
        rest = v1.list_namespaced_config_map(ns, limit=10, _continue=token)
        out(
            status=e.status,
            reason=body["reason"],
            message=body["message"],
            rest=[i.metadata.name for i in rest.items],
        )
    resp = v1.list_namespaced_config_map(ns, watch=True, resource_version=old_rv, _preload_content=False)
    line = resp.readline().decode()
    resp.close()
    out(watch_event=json.loads(line))
    try:
        for _ in watch.Watch().stream(v1.list_namespaced_config_map, ns, resource_version=old_rv, timeout_seconds=3):
            pass
        out(stream="no error")
    except ApiException as e:
        out(stream_status=e.status)


def scenario_paging(ns):
    """Later pages are the snapshot of the first page, whatever changed in between."""
    v1 = client.CoreV1Api()
    for i in range(5):
        v1.create_namespaced_secret(ns, client.V1Secret(metadata=client.V1ObjectMeta(name="p%d" % i)))
    first = v1.list_namespaced_secret(ns, limit=2)
    v1.delete_namespaced_secret("p2", ns)
    v1.create_namespaced_secret(ns, client.V1Secret(metadata=client.V1ObjectMeta(name="p21")))
    rest = v1.list_namespaced_secret(ns, limit=10, _continue=first.metadata._continue)
    out(
        first=[s.metadata.name for s in first.items],
        remaining=first.metadata.remaining_item_count,
        rest=[s.metadata.name for s in rest.items],
        same_rv=rest.metadata.resource_version == first.metadata.resource_version,
        now=[s.metadata.name for s in v1.list_namespaced_secret(ns).items],
    )


def scenario_apply(ns):
    """Server-side apply: a second manager conflicts, then takes the field with force=True."""
    v1 = apply_client()
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"k": "from-a"}}
    v1.patch_namespaced_config_map("ssa", ns, json.dumps(body), field_manager="manager-a")
    body["data"]["k"] = "from-b"
    try:
        v1.patch_namespaced_config_map("ssa", ns, json.dumps(body), field_manager="manager-b")
        out(conflict="none")
    except ApiException as e:
        status = json.loads(e.body)
        out(conflict=e.status, reason=status["reason"], causes=status["details"]["causes"])
    forced = v1.patch_namespaced_config_map("ssa", ns, json.dumps(body), field_manager="manager-b", force=True)
    out(
        value=forced.data["k"],
        managers=sorted(m.manager for m in forced.metadata.managed_fields),
    )


def scenario_dryrun(ns):
    """dryRun=All on create, patch, delete and pods/eviction stores nothing."""
    v1 = client.CoreV1Api()
    created = v1.create_namespaced_config_map(ns, cm("dry"), dry_run="All")
    try:
        v1.read_namespaced_config_map("dry", ns)
        stored = True
    except ApiException as e:
        stored = e.status != 404
    v1.create_namespaced_config_map(ns, cm("kept"))
    v1.patch_namespaced_config_map(
        "kept", ns, [{"op": "replace", "path": "/data/a", "value": "9"}], dry_run="All"
    )
    v1.delete_namespaced_config_map("kept", ns, dry_run="All")
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="evictee"),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]),
    )
    v1.create_namespaced_pod(ns, pod)
    eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name="evictee", namespace=ns))
    v1.create_namespaced_pod_eviction("evictee", ns, eviction, dry_run="All")
    # Read untyped: the simulated kubelet's status is not what this scenario checks.
    after = json.loads(v1.read_namespaced_pod("evictee", ns, _preload_content=False).data)
    out(
        created_name=created.metadata.name,
        stored=stored,
        kept=v1.read_namespaced_config_map("kept", ns).data["a"],
        pod_deleting="deletionTimestamp" in after["metadata"],
    )


def scenario_subresources(ns):
    """Strategic merge patch of deployments/scale and deployments/status."""
    apps = client.AppsV1Api()
    dep = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="scaled"),
        spec=client.V1DeploymentSpec(
            replicas=1,
            selector=client.V1LabelSelector(match_labels={"app": "scaled"}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": "scaled"}),
                spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]),
            ),
        ),
    )
    apps.create_namespaced_deployment(ns, dep)
    # An object body goes out as a strategic merge patch.
    scale = apps.patch_namespaced_deployment_scale("scaled", ns, {"spec": {"replicas": 3}})
    status = apps.patch_namespaced_deployment_status("scaled", ns, {"status": {"observedGeneration": 1}})
    out(
        scale_kind=type(scale).__name__,
        scale_replicas=scale.spec.replicas,
        deployment_replicas=apps.read_namespaced_deployment("scaled", ns).spec.replicas,
        status_generation=status.status.observed_generation,
    )


def scenario_discovery(ns):
    """The dynamic client discovers resources and drives them without typed classes."""
    dyn = dynamic.DynamicClient(client.ApiClient())
    deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    configmaps = dyn.resources.search(kind="ConfigMap")
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    cms.create(namespace=ns, body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dyn"}})
    got = cms.get(namespace=ns, name="dyn")
    out(
        deployments=[deployments.group_version, deployments.name, deployments.namespaced],
        configmap_versions=sorted(r.group_version for r in configmaps),
        got=[got.kind, got.metadata.name],
        listed=[i.metadata.name for i in cms.get(namespace=ns).items],
    )


def snake(kind):
    s = ""
    for i, ch in enumerate(kind):
        if ch.isupper() and i > 0 and (not kind[i - 1].isupper() or (i + 1 < len(kind) and kind[i + 1].islower())):
            s += "_"
        s += ch.lower()
    return s


def api_class_name(group_version):
    if "/" not in group_version:
        return "CoreV1Api"
    group, version = group_version.split("/")
    base = group.replace(".k8s.io", "").replace(".authorization", "_authorization").replace(".", "_")
    parts = [p for p in base.replace("-", "_").split("_") if p]
    name = "".join(p[:1].upper() + p[1:] for p in parts)
    return name + version[:1].upper() + version[1:] + "Api"


def scenario_typed(ns):
    """Every served built-in kind this client has a typed class for, read as a typed list."""
    core = client.CoreV1Api()
    groups = [("", "v1")]
    for g in client.ApisApi().get_api_versions().groups:
        groups.append((g.name, g.preferred_version.version))
    read, failed, untyped = [], [], []
    for group, version in groups:
        gv = version if group == "" else "%s/%s" % (group, version)
        path = "/api/v1" if group == "" else "/apis/%s" % gv
        resources = core.api_client.call_api(
            path, "GET", response_type="V1APIResourceList", auth_settings=["BearerToken"], _return_http_data_only=True
        ).resources
        api_cls = getattr(client, api_class_name(gv), None)
        for r in resources:
            if "/" in r.name or "list" not in (r.verbs or []):
                continue
            method = "list_%s%s" % (snake(r.kind), "_for_all_namespaces" if r.namespaced else "")
            fn = getattr(api_cls(), method, None) if api_cls else None
            if fn is None:
                untyped.append("%s/%s" % (gv, r.kind))
                continue
            try:
                items = fn().items
                read.append(["%s/%s" % (gv, r.kind), len(items)])
            except Exception as e:  # a refused deserialization is what this looks for
                failed.append(["%s/%s" % (gv, r.kind), "%s: %s" % (type(e).__name__, str(e)[:300])])
    out(read=read, failed=failed, untyped=untyped)


def scenario_leader(ns, identity):
    """One candidate of a leader election over a ConfigMap lock; prints when it leads."""
    from kubernetes.leaderelection import electionconfig, leaderelection
    from kubernetes.leaderelection.resourcelock.configmaplock import ConfigMapLock

    def lead():
        out(leader=identity)
        while True:
            time.sleep(60)

    cfg = electionconfig.Config(
        ConfigMapLock("python-election", ns, identity),
        lease_duration=4,
        renew_deadline=3,
        retry_period=2,
        onstarted_leading=lead,
        onstopped_leading=lambda: out(stopped=identity),
    )
    out(candidate=identity)
    leaderelection.LeaderElection(cfg).run()


def main():
    scenario, kubeconfig, ns = sys.argv[1], sys.argv[2], sys.argv[3]
    config.load_kube_config(config_file=kubeconfig)
    fn = globals()["scenario_" + scenario]
    fn(ns, *sys.argv[4:])


if __name__ == "__main__":
    main()
