"""Nodes created and deleted through the API (``cluster/runtime/nodeclaim.py``): which Nodes
the claimer takes over under each policy, whose kubelet it stops, the one line for a Node
it cannot run, and the whole path on the local runtime (a kubelet adopts the Node, pods run
on it; a deleted Node's kubelet stops and pod GC deletes its pods)."""

import asyncio

import pytest

from cluster.api.codec import decode, encode
from cluster.api.requests import Create, Delete
from cluster.kubelet.adopt import adopting_host
from cluster.runtime.cluster import Fleet
from cluster.runtime.component import ComponentSpec, WatchEvent
from cluster.runtime.local import LocalCluster
from cluster.runtime.nodeclaim import NodeClaimer, wanted
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import NodePool


def node(name, annotations=None, capacity=None, allocatable=None):
    meta = {"name": name, **({"annotations": annotations} if annotations is not None else {})}
    status = {"capacity": capacity or {"cpu": "4", "memory": "4Gi"}}
    if allocatable is not None:
        status["allocatable"] = allocatable
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": status}


def event(etype, obj, raw=True):
    return WatchEvent("Node", etype, None if raw else obj, encode(obj) if raw else None)


def fleet(*names, removed=()):
    f = Fleet()
    if names:
        f.add_host(ComponentSpec("host-0", object, nodes=tuple(names)))
    f.removed_nodes.update(removed)
    return f


def build(obj, index):
    return ComponentSpec(f"host-{obj['metadata']['name']}", object, {"index": index}, nodes=(obj["metadata"]["name"],))


@pytest.mark.parametrize(
    "policy, annotation, taken",
    [
        ("all", None, True),
        ("all", "true", True),
        ("all", "false", False),  # opted out
        ("all", "yes", True),
        ("annotated", None, False),
        ("annotated", "true", True),
        ("annotated", "false", False),
        ("none", "true", False),
        ("none", None, False),
    ],
)
def test_which_nodes_a_policy_takes_over(policy, annotation, taken):
    annotations = None if annotation is None else {"kubemu.io/managed": annotation}
    assert wanted(policy, annotations) is taken
    adopt, release = NodeClaimer(policy, build).decide([event("ADDED", node("api-0", annotations))], fleet(), print)
    assert ([s.nodes for s in adopt], release) == ([("api-0",)] if taken else [], [])


@pytest.mark.parametrize(
    "events, known, removed, adopted, released",
    [
        # A Node a kubelet of this cluster runs (a pool's, or one taken over before) is left be.
        ([("ADDED", "n-0")], ["n-0"], [], [], []),
        ([("MODIFIED", "n-0")], ["n-0"], [], [], []),
        # A name whose kubelet was stopped (its Node deleted) is taken over again.
        ([("ADDED", "n-0")], ["n-0"], ["n-0"], ["n-0"], []),
        # Deleted: its kubelet stops; a Node nobody ran, or one already removed, stops nothing.
        ([("DELETED", "n-0")], ["n-0"], [], [], ["n-0"]),
        ([("DELETED", "api-0")], ["n-0"], [], [], []),
        ([("DELETED", "n-0")], ["n-0"], ["n-0"], [], []),
        # Only a Node's latest event counts; each new one gets its own address index.
        ([("ADDED", "api-0"), ("DELETED", "api-0")], [], [], [], []),
        ([("ADDED", "api-0"), ("MODIFIED", "api-0"), ("ADDED", "api-1")], ["n-0"], [], ["api-0", "api-1"], []),
    ],
)
def test_which_kubelets_start_and_stop(events, known, removed, adopted, released):
    claims = NodeClaimer("all", build)
    adopt, release = claims.decide([event(t, node(n)) for t, n in events], fleet(*known, removed=removed), print)
    assert [s.nodes[0] for s in adopt] == adopted and release == released
    assert [s.kwargs["index"] for s in adopt] == list(range(len(known), len(known) + len(adopted)))


def test_an_event_without_bytes_is_read_from_its_object():
    adopt, _ = NodeClaimer("annotated", build).decide(
        [event("ADDED", node("api-0", {"kubemu.io/managed": "true"}), raw=False)], fleet(), print
    )
    assert [s.nodes for s in adopt] == [("api-0",)]


def test_a_node_it_cannot_run_is_left_alone_with_one_line_until_it_changes():
    lines = []
    claims = NodeClaimer("all", adopting_host)
    bad = node("api-0", capacity={"cpu": "2"}, allocatable={"cpu": "3"})
    for _ in range(3):  # every status write of it comes back: told once
        assert claims.decide([event("MODIFIED", bad)], fleet(), lines.append) == ([], [])
    assert lines == [
        'kubemu: node api-0: status.allocatable.cpu: "3" is more than the capacity "2"; no kubelet runs it'
    ]
    fixed = node("api-0", capacity={"cpu": "2"}, allocatable={"cpu": "2"})
    adopt, _ = claims.decide([event("MODIFIED", fixed)], fleet(), lines.append)
    assert [s.nodes for s in adopt] == [("api-0",)] and len(lines) == 1 and claims.refused == {}


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="manageNodes: 'some' is not one of all, annotated, none"):
        NodeClaimer("some", build)


# ---- on the local runtime -------------------------------------------------------------------


def run(coro):
    return asyncio.run(coro)


def local(policy="all"):
    pools = [NodePool(namePrefix="n", count=1, capacity={"cpu": "1", "memory": "2Gi"})]
    c = LocalCluster(layout(expand_pools(pools)))
    c.manage_nodes(NodeClaimer(policy, adopting_host))
    lines: list[str] = []
    c.log = lines.append
    run(c.start())
    return c, lines


def pod(name, node_selector, cpu="3"):
    spec = {
        "nodeSelector": node_selector,
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def ready(c, name):
    conds = c.api.get("Node", "", name).get("status", {}).get("conditions") or []
    return any(x["type"] == "Ready" and x["status"] == "True" for x in conds)


def test_a_node_created_through_the_api_gets_a_kubelet_and_runs_pods():
    c, lines = local()
    big = node("api-0", capacity={"cpu": "8", "memory": "16Gi"}, allocatable={"cpu": "7", "memory": "15Gi"})
    big["metadata"]["labels"] = {"pool": "api"}
    assert run(c.write([Create(big), Create(pod("p", {"pool": "api"}))])) == [None, None]
    run(c.settle())
    assert ready(c, "api-0") and c.fleet.host_index["api-0"] == 1
    stored = c.api.get("Node", "", "api-0")
    assert stored["status"]["allocatable"]["cpu"] == "7" and stored["status"]["allocatable"]["memory"] == "15Gi"
    assert stored["metadata"]["labels"]["pool"] == "api"  # the object's, untouched
    assert c.api.get("Lease", "kube-node-lease", "api-0")["spec"]["holderIdentity"] == "api-0"
    got = c.api.get("Pod", "default", "p")
    assert (got["spec"]["nodeName"], got["status"]["phase"]) == ("api-0", "Running")
    assert lines == ["kubemu: node api-0 was created through the API; a kubelet runs it"]


def test_a_deleted_node_stops_its_kubelet_and_pod_gc_deletes_its_pods():
    c, lines = local()
    api_node = node("api-0")
    api_node["metadata"]["labels"] = {"pool": "api"}  # as given: no kubernetes.io/hostname is added (kwok's way)
    on_api = pod("q", {"pool": "api"})
    run(c.write([Create(pod("p", {"kubernetes.io/hostname": "n-0"}, "500m")), Create(api_node), Create(on_api)]))
    run(c.settle())
    assert c.api.get("Pod", "default", "q")["status"]["phase"] == "Running"
    run(c.write([Delete("Node", "", "api-0")]))
    run(c.settle())
    assert "api-0" in c.fleet.dead_nodes and "api-0" in c.fleet.removed_nodes
    assert lines[-1] == "kubemu: node api-0 was deleted through the API; its kubelet stopped"
    while c.now() < 39.0:
        run(c.advance(39.0))
        run(c.settle())
    assert c.api.get("Pod", "default", "q")["spec"]["nodeName"] == "api-0"  # pod GC's quarantine
    while c.now() < 41.0:
        run(c.advance(41.0))
        run(c.settle())
    names = sorted(decode(b)["metadata"]["name"] for b in c.api.list("Pod").items)
    assert names == ["p"]  # q is gone; the pod on the pool's node stays
    # The same name created again gets a new kubelet.
    run(c.write([Create(node("api-0"))]))
    run(c.settle())
    assert ready(c, "api-0") and "api-0" not in c.fleet.removed_nodes and "api-0" not in c.fleet.dead_nodes


def test_annotated_policy_takes_over_only_annotated_nodes_and_a_bad_one_keeps_the_server_up():
    c, lines = local("annotated")
    plain = node("plain")
    marked = node("marked", {"kubemu.io/managed": "true"})
    bad = node("bad", {"kubemu.io/managed": "true"}, capacity={"cpu": "2"}, allocatable={"cpu": "3"})
    assert run(c.write([Create(plain), Create(marked), Create(bad)])) == [None, None, None]
    run(c.settle())
    assert (ready(c, "plain"), ready(c, "marked"), ready(c, "bad")) == (False, True, False)
    assert lines == [
        'kubemu: node bad: status.allocatable.cpu: "3" is more than the capacity "2"; no kubelet runs it',
        "kubemu: node marked was created through the API; a kubelet runs it",
    ]
    run(c.advance(20.0))
    run(c.settle())  # the cluster goes on
    assert ready(c, "marked") and c.now() == 10.0
