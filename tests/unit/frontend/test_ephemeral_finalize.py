"""The write subresources of pods and namespaces: ``pods/ephemeralcontainers`` (what
``kubectl debug`` patches), ``namespaces/status`` and ``namespaces/finalize``. Through a
``Handler`` over the local runtime, so the kubelet runs what is added."""

import pytest
from test_handler import AUTH, PODS, TOKEN, call, run

from cluster.frontend.backend import LocalBackend
from cluster.frontend.handler import Handler
from cluster.runtime.local import LocalCluster
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import NodePool

SMP = {**AUTH, "content-type": "application/strategic-merge-patch+json"}
MERGE = {**AUTH, "content-type": "application/merge-patch+json"}
NS = "/api/v1/namespaces"


@pytest.fixture
def api():
    pools = [NodePool(namePrefix="n", count=2, capacity={"cpu": "4", "memory": "8Gi"})]
    cluster = LocalCluster(layout(expand_pools(pools), seed=1), seed=1)
    run(cluster.start())
    return Handler(LocalBackend(lambda: cluster.api, cluster.now), token=TOKEN), cluster


@pytest.fixture
def web(api):
    h, cluster = api
    spec = {"containers": [{"name": "c", "image": "nginx"}], "initContainers": [{"name": "setup", "image": "x"}]}
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": spec}
    assert call(h, "POST", PODS, body)[0] == 201
    run(cluster.settle())
    return h, cluster


def debug(name="dbg", **fields):
    return {"spec": {"ephemeralContainers": [{"name": name, "image": "busybox", **fields}]}}


EPHEMERAL = f"{PODS}/web/ephemeralcontainers"


def test_kubectl_debugs_patch_adds_a_container_the_kubelet_runs(web):
    h, cluster = web
    code, pod = call(h, "PATCH", EPHEMERAL, debug(stdin=True, tty=True), headers=SMP)
    assert code == 200 and pod["kind"] == "Pod"
    added = pod["spec"]["ephemeralContainers"]
    assert [(c["name"], c["stdin"], c["terminationMessagePolicy"]) for c in added] == [("dbg", True, "File")]
    run(cluster.settle())
    code, got = call(h, "GET", EPHEMERAL)
    assert code == 200 and got["spec"]["ephemeralContainers"] == added
    (status,) = got["status"]["ephemeralContainerStatuses"]
    assert (status["name"], list(status["state"]), status["ready"]) == ("dbg", ["running"], False)
    assert got["status"]["containerStatuses"][0]["restartCount"] == 0  # the pod's own containers go on


def test_put_writes_only_the_ephemeral_containers(web):
    h, _ = web
    _, pod = call(h, "GET", f"{PODS}/web")
    pod["metadata"]["labels"] = {"changed": "yes"}
    pod["spec"]["containers"][0]["image"] = "nginx:2"
    pod["spec"]["ephemeralContainers"] = [{"name": "dbg", "image": "busybox"}]
    code, out = call(h, "PUT", EPHEMERAL, pod)
    assert code == 200 and [c["name"] for c in out["spec"]["ephemeralContainers"]] == ["dbg"]
    assert "labels" not in out["metadata"] and out["spec"]["containers"][0]["image"] == "nginx"
    pod["spec"]["ephemeralContainers"].append({"name": "two", "image": "busybox"})
    code, stale = call(h, "PUT", EPHEMERAL, pod)  # its resourceVersion is the one before the first PUT
    assert (code, stale["reason"]) == (409, "Conflict")


@pytest.mark.parametrize(
    "patch, message",
    [
        (
            debug(ports=[{"containerPort": 80}]),
            "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
        ),
        (
            debug(resources={"limits": {"cpu": "1"}}),
            "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container",
        ),
        (
            debug(livenessProbe={"exec": {"command": ["true"]}}),
            "spec.ephemeralContainers[0].livenessProbe: Forbidden: cannot be set for an Ephemeral Container",
        ),
        (
            debug(lifecycle={"preStop": {"exec": {"command": ["x"]}}}),
            "spec.ephemeralContainers[0].lifecycle: Forbidden: cannot be set for an Ephemeral Container",
        ),
        (
            debug(restartPolicy="Always"),
            "spec.ephemeralContainers[0].restartPolicy: Forbidden: cannot be set for an Ephemeral Container",
        ),
        (
            debug(volumeMounts=[{"name": "v", "mountPath": "/v", "subPath": "x"}]),
            "spec.ephemeralContainers[0].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container",
        ),
        (debug(name="c"), 'spec.ephemeralContainers[0].name: Duplicate value: "c"'),
        (debug(name="setup"), 'spec.ephemeralContainers[0].name: Duplicate value: "setup"'),
        (
            debug(name="Bad_Name"),
            'spec.ephemeralContainers[0].name: Invalid value: "Bad_Name": must be a lowercase RFC 1123 label',
        ),
        (debug(image=""), "spec.ephemeralContainers[0].image: Required value"),
        (debug(targetContainerName="nope"), 'spec.ephemeralContainers[0].targetContainerName: Not found: "nope"'),
        ({"spec": {"ephemeralContainers": [{"image": "busybox"}]}}, "spec.ephemeralContainers[0].name: Required value"),
    ],
)
def test_what_an_ephemeral_container_may_not_have(web, api, patch, message):
    h, cluster = web
    before = cluster.api.store.rv
    code, body = call(h, "PATCH", EPHEMERAL, patch, headers=SMP)
    assert (code, body["reason"], body["details"]["kind"]) == (422, "Invalid", "Pod")
    assert body["message"].startswith(f'Pod "web" is invalid: {message}')
    assert cluster.api.store.rv == before  # nothing written


def test_existing_ephemeral_containers_may_not_be_removed_or_changed(web):
    h, _ = web
    assert call(h, "PATCH", EPHEMERAL, debug(), headers=SMP)[0] == 200
    code, body = call(h, "PATCH", EPHEMERAL, {"spec": {"ephemeralContainers": []}}, headers=MERGE)
    assert code == 422 and 'existing ephemeral containers "dbg" may not be removed' in body["message"]
    code, body = call(h, "PATCH", EPHEMERAL, debug(image="alpine"), headers=SMP)
    assert code == 422 and 'existing ephemeral containers "dbg" may not be changed' in body["message"]
    added = debug("two")  # as kubectl debug sends it: merged by name, in the order given
    added["spec"]["$setElementOrder/ephemeralContainers"] = [{"name": "dbg"}, {"name": "two"}]
    code, pod = call(h, "PATCH", EPHEMERAL, added, headers=SMP)
    assert code == 200 and [c["name"] for c in pod["spec"]["ephemeralContainers"]] == ["dbg", "two"]


def test_a_dry_run_stores_nothing_and_other_verbs_are_refused(web):
    h, cluster = web
    code, pod = call(h, "PATCH", EPHEMERAL, debug(), headers=SMP, dryRun="All")
    assert code == 200 and pod["spec"]["ephemeralContainers"][0]["name"] == "dbg"
    assert "ephemeralContainers" not in call(h, "GET", f"{PODS}/web")[1]["spec"]
    code, body = call(h, "POST", EPHEMERAL, debug())
    assert (code, body["reason"]) == (405, "MethodNotAllowed")
    code, body = call(h, "GET", f"{PODS}/nope/ephemeralcontainers")
    assert (code, body["message"]) == (404, 'pods "nope" not found')


def test_a_static_pod_takes_no_ephemeral_container(api):
    h, cluster = api
    meta = {"name": "static", "annotations": {"kubernetes.io/config.mirror": "abc"}}
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    assert call(h, "POST", PODS, body)[0] == 201
    code, out = call(h, "PATCH", f"{PODS}/static/ephemeralcontainers", debug(), headers=SMP)
    assert code == 422 and "static pods do not support ephemeral containers" in out["message"]


# ---- namespaces ---------------------------------------------------------------------------


def namespace(name, *finalizers):
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name},
        "spec": {"finalizers": list(finalizers)},
    }


def test_namespace_status_reads_and_writes_with_the_phase_checked(api):
    h, _ = api
    assert call(h, "POST", NS, namespace("team"))[0] == 201
    code, got = call(h, "GET", f"{NS}/team/status")
    assert code == 200 and got["status"] == {"phase": "Active"}
    code, body = call(h, "PUT", f"{NS}/team/status", {**got, "status": {"phase": "Terminating"}})
    assert code == 422 and body["message"] == (
        'Namespace "team" is invalid: status.Phase: Invalid value: "Terminating": may only be \'Active\' if '
        "`deletionTimestamp` is empty"
    )
    code, out = call(h, "PATCH", f"{NS}/team/status", {"status": {"conditions": []}}, headers=MERGE)
    assert code == 200 and out["status"]["phase"] == "Active"
    code, out = call(h, "PUT", f"{NS}/team/status", {**got, "status": {}})  # the phase defaults to Active
    assert code == 200 and out["status"] == {"phase": "Active"}


def test_finalize_writes_the_finalizers_and_lets_a_terminating_namespace_go(api):
    h, cluster = api
    assert call(h, "POST", NS, namespace("team", "example.com/hold"))[0] == 201
    assert call(h, "DELETE", f"{NS}/team")[0] == 200
    run(cluster.settle())  # the namespace controller empties it and drops its own finalizer
    code, got = call(h, "GET", f"{NS}/team")
    assert code == 200 and got["spec"]["finalizers"] == ["example.com/hold"]
    assert got["status"]["phase"] == "Terminating"
    code, out = call(h, "PUT", f"{NS}/team/finalize", {**got, "spec": {"finalizers": []}})
    assert code == 200 and out["metadata"]["name"] == "team" and not out["spec"].get("finalizers")
    assert call(h, "GET", f"{NS}/team")[0] == 404


@pytest.mark.parametrize(
    "finalizers, code, message",
    [
        (
            ["foo"],
            422,
            'spec.finalizers[0]: Invalid value: "foo": name is neither a standard finalizer name nor is it fully qualified',
        ),
        (["kubernetes", "a/b/c"], 422, 'spec.finalizers[1]: Invalid value: "a/b/c": not a valid key'),
        ("kubernetes", 400, 'spec.finalizers: "kubernetes" must be a list'),
    ],
)
def test_finalize_refuses_bad_names(api, finalizers, code, message):
    h, cluster = api
    assert call(h, "POST", NS, namespace("team"))[0] == 201
    before = cluster.api.store.rv
    got, body = call(h, "PUT", f"{NS}/team/finalize", {**namespace("team"), "spec": {"finalizers": finalizers}})
    assert got == code and message in body["message"]
    assert cluster.api.store.rv == before


def test_finalize_of_an_active_namespace_keeps_it_and_other_verbs_are_refused(api):
    h, _ = api
    assert call(h, "POST", NS, namespace("team"))[0] == 201
    code, out = call(h, "PUT", f"{NS}/team/finalize", {**namespace("team"), "spec": {"finalizers": ["orphan"]}})
    assert code == 200 and out["spec"]["finalizers"] == ["orphan"] and out["status"]["phase"] == "Active"
    code, body = call(h, "GET", f"{NS}/team/finalize")
    assert (code, body["reason"]) == (405, "MethodNotAllowed")
    assert call(h, "GET", f"{NS}/team/pods")[0] == 200  # still the namespace's pods, not a subresource
