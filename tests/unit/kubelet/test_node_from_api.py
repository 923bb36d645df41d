"""The kubelet admits against its Node as the apiserver stores it:
labels and taints set through the API count from the next
admission on, running pods are not checked again, and the kubelet's own status writes
never undo what a user set. First a node host fed hand-made Node events (exact traces),
then the whole path through the local runtime's apiserver, scheduler and watches."""

import asyncio

from conftest import build_config, build_pod

from cluster.api.codec import encode
from cluster.api.requests import Create, Update
from cluster.kubelet.apinode import configured_node, read_node
from cluster.kubelet.node import node_object
from cluster.runtime.commands import Pressure
from cluster.runtime.component import WatchEvent
from cluster.runtime.local import LocalCluster
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import NodePool

AFFINITY = (
    "NodeAffinity",
    "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
)
TAINTED = (
    "TaintToleration",
    "Pod was rejected: Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate",
)
NO_EXECUTE = {"key": "k", "value": "v", "effect": "NoExecute"}


def stored(config, labels=(), taints=None, unschedulable=False, ready_at=0.0):
    """The Node as the apiserver stores it: as the kubelet registered it, with ``labels``
    added (a value None removes the label), ``taints`` in place of its own, and ``ready_at``
    the time of its status (a status-only change when nothing else differs)."""
    node = node_object(config, 0, ready_at, config.allocatable())
    for key, value in dict(labels).items():
        if value is None:
            node["metadata"]["labels"].pop(key, None)
        else:
            node["metadata"]["labels"][key] = value
    if taints is not None:
        node["spec"]["taints"] = taints
    if unschedulable:
        node["spec"]["unschedulable"] = True
    node["metadata"]["resourceVersion"] = "7"
    return node


def node_event(d, etype, node, now=None):
    d.host.on_watch([WatchEvent("Node", etype, raw=encode(node))], d.now if now is None else now)
    d.flush()


def selecting(name, **labels):
    p = build_pod(name)
    p["spec"]["nodeSelector"] = labels
    return p


def tolerating(name, *tolerations):
    p = build_pod(name)
    p["spec"]["tolerations"] = list(tolerations)
    return p


def rejections(d):
    return {name: (st["reason"], st["message"]) for name, st in d.statuses.items() if st["phase"] == "Failed"}


# ---- a node host fed Node events -------------------------------------------------------


def test_a_label_added_through_the_api_admits_a_pod_selecting_it(driver):
    d = driver()
    d.send("ADDED", selecting("before", x="y"))
    node_event(d, "MODIFIED", stored(build_config(), {"x": "y"}))
    d.send("ADDED", selecting("after", x="y"))
    assert d.trace("before") == [(0.0, "Failed", 0, "-")]
    assert d.trace("after") == [(0.0, "Running", 0, "running")]
    assert rejections(d) == {"before": AFFINITY}
    assert d.events == [(0.0, "before", "NodeAffinity", AFFINITY[1].removeprefix("Pod was rejected: "))]


def test_a_removed_label_rejects_a_pod_selecting_it_and_leaves_the_running_one(driver):
    d = driver(build_config(labels={"x": "y"}))
    d.send("ADDED", selecting("first", x="y"))
    node_event(d, "MODIFIED", stored(build_config(labels={"x": "y"}), {"x": None}))
    d.send("ADDED", selecting("second", x="y"))
    d.run_until(60)
    # The running pod is never checked again (IgnoredDuringExecution): one write, no event.
    assert d.trace("first") == [(0.0, "Running", 0, "running")]
    assert d.trace("second") == [(0.0, "Failed", 0, "-")]
    assert rejections(d) == {"second": AFFINITY}
    assert [(t, name, reason) for t, name, reason, _ in d.events] == [(0.0, "second", "NodeAffinity")]
    assert sorted(d.host.kubelet("node-0").pods().values()) == ["Rejected", "Running"]


def test_a_no_execute_taint_rejects_the_pods_that_do_not_tolerate_it(driver):
    d = driver()
    node_event(d, "MODIFIED", stored(build_config(), taints=[NO_EXECUTE]))
    d.send("ADDED", build_pod("plain"))
    d.send("ADDED", tolerating("exact", {"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute"}))
    d.send("ADDED", tolerating("exists", {"operator": "Exists"}))
    d.send("ADDED", tolerating("wrong-effect", {"key": "k", "operator": "Exists", "effect": "NoSchedule"}))
    assert rejections(d) == {"plain": TAINTED, "wrong-effect": TAINTED}
    assert d.trace("exact") == d.trace("exists") == [(0.0, "Running", 0, "running")]
    assert [(name, reason) for _, name, reason, _ in d.events] == [
        ("plain", "TaintToleration"),
        ("wrong-effect", "TaintToleration"),
    ]


def test_no_schedule_taints_and_a_cordon_are_the_schedulers_business(driver):
    d = driver()
    taint = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    node_event(d, "MODIFIED", stored(build_config(), taints=[taint], unschedulable=True))
    d.send("ADDED", build_pod("pinned"))  # bound by spec.nodeName: the scheduler never saw it
    assert d.trace("pinned") == [(0.0, "Running", 0, "running")]
    # The kubelet only records the cordon about its node.
    assert [(name, reason) for _, name, reason, _ in d.events] == [("node-0", "NodeNotSchedulable")]


def test_a_taint_added_later_leaves_the_running_pods_to_the_taint_manager(driver):
    d = driver()
    d.send("ADDED", build_pod("web"))
    node_event(d, "MODIFIED", stored(build_config(), taints=[NO_EXECUTE]))
    d.run_until(60)
    assert d.trace("web") == [(0.0, "Running", 0, "running")] and d.events == []


def test_a_deleted_node_leaves_the_configured_labels(driver):
    d = driver(build_config(labels={"pool": "a"}))
    node_event(d, "MODIFIED", stored(build_config(labels={"pool": "a"}), {"pool": "b"}))
    d.send("ADDED", selecting("on-b", pool="b"))
    node_event(d, "DELETED", stored(build_config(labels={"pool": "a"}), {"pool": "b"}))
    d.send("ADDED", selecting("on-a", pool="a"))
    d.send("ADDED", selecting("on-b-again", pool="b"))
    assert [name for name, st in d.statuses.items() if st["phase"] == "Running"] == ["on-b", "on-a"]
    assert rejections(d) == {"on-b-again": AFFINITY}


def relisted_gone(name):
    return {"kind": "Node", "metadata": {"namespace": "", "name": name}}


def test_a_relisted_deletion_without_bytes_and_other_hosts_nodes(driver):
    d = driver()
    node_event(d, "MODIFIED", stored(build_config(), {"x": "y"}))
    other = stored(build_config("node-9"), {"x": None, "kubernetes.io/hostname": None})
    node_event(d, "MODIFIED", other)  # not this host's node: dropped
    # A relist's made-up DELETED carries only the key (``reflector._gone``), and no bytes.
    d.host.on_watch([WatchEvent("Node", "DELETED", relisted_gone("node-9"))], 0.0)
    d.send("ADDED", selecting("still", x="y"))
    assert d.trace("still") == [(0.0, "Running", 0, "running")]
    d.host.on_watch([WatchEvent("Node", "DELETED", relisted_gone("node-0"))], 0.0)
    d.send("ADDED", selecting("gone", x="y"))
    assert rejections(d) == {"gone": AFFINITY}


def test_a_node_change_and_a_pod_in_one_batch_the_node_first(driver):
    d = driver()
    pod = WatchEvent("Pod", "ADDED", raw=encode(selecting("same-batch", x="y")))
    node = WatchEvent("Node", "MODIFIED", raw=encode(stored(build_config(), {"x": "y"})))
    d.host.on_watch([pod, node], 0.0)
    d.flush()
    assert d.trace("same-batch") == [(0.0, "Running", 0, "running")]


def test_a_status_only_change_is_read_no_further_than_its_digest(driver):
    config = build_config()
    first, later = (read_node(encode(stored(config, ready_at=t)), None) for t in (0.0, 30.0))
    labelled = read_node(encode(stored(config, {"x": "y"})), None)
    assert first.name == "node-0" and first.digest() == later.digest() != labelled.digest()
    d = driver(config)
    k = d.host.kubelet("node-0")
    node_event(d, "ADDED", stored(config))
    # Registered as configured: nothing kept, the configuration answers.
    assert k._api_node is None and k.admitted_node() == configured_node(config)
    node_event(d, "MODIFIED", stored(config, {"x": "y"}))
    kept = k._api_node
    node_event(d, "MODIFIED", stored(config, {"x": "y"}, ready_at=40.0))
    assert k._api_node is kept and kept.labels["x"] == "y"


# ---- through the apiserver: the local runtime ------------------------------------------


def run(coro):
    return asyncio.run(coro)


def local_cluster(nodes=2):
    pools = [NodePool(namePrefix="n", count=nodes, capacity={"cpu": "4", "memory": "8Gi"})]
    return LocalCluster(layout(expand_pools(pools), seed=1), seed=1)


def pod(name, node="", selector=None, tolerations=None):
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]}
    if node:
        spec["nodeName"] = node
    if selector:
        spec["nodeSelector"] = selector
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def edit_node(c, name, labels=None, taints=None):
    """As ``kubectl label`` / ``kubectl taint``: an update of the Node's metadata and spec."""
    node = c.api.get("Node", "", name)
    node["metadata"]["labels"].update(labels or {})
    node["metadata"]["labels"] = {k: v for k, v in node["metadata"]["labels"].items() if v is not None}
    if taints is not None:
        node["spec"]["taints"] = taints
    assert run(c.write([Update(node)])) == [None]
    run(c.settle())


def status(c, name):
    st = c.api.get("Pod", "default", name).get("status") or {}
    return st.get("phase"), st.get("reason"), c.api.get("Pod", "default", name)["spec"].get("nodeName")


def events_of(c):
    return sorted(
        (e["involvedObject"]["name"], e["reason"]) for e in c.api.store.objects("Event") if e["type"] == "Warning"
    )


def test_through_the_api_a_label_then_a_taint_reach_the_kubelet_within_one_delivery():
    c = local_cluster()
    run(c.start())
    edit_node(c, "n-1", labels={"x": "y"})
    run(c.write([Create(pod("selects", selector={"x": "y"})), Create(pod("pinned-selects", "n-1", {"x": "y"}))]))
    run(c.settle())  # the same instant: no time passed between the label and the admissions
    assert c.now() == 0.0
    assert status(c, "selects") == ("Running", None, "n-1")
    assert status(c, "pinned-selects") == ("Running", None, "n-1")

    edit_node(c, "n-1", labels={"x": None})
    run(c.write([Create(pod("selects-again", "n-1", {"x": "y"}))]))
    run(c.advance(30.0))
    run(c.settle())
    assert status(c, "selects-again") == ("Failed", "NodeAffinity", "n-1")
    assert status(c, "selects") == status(c, "pinned-selects") == ("Running", None, "n-1")  # not checked again

    edit_node(c, "n-0", taints=[NO_EXECUTE])
    tolerated = [{"key": "k", "operator": "Exists", "effect": "NoExecute"}]
    run(c.write([Create(pod("tolerates", "n-0", tolerations=tolerated)), Create(pod("does-not", "n-0"))]))
    run(c.settle())
    assert status(c, "tolerates") == ("Running", None, "n-0")
    # Rejected by the kubelet; the taint manager then deletes it, as upstream's would.
    assert events_of(c) == [("does-not", "TaintToleration"), ("selects-again", "NodeAffinity")]


def test_heartbeats_and_status_posts_keep_what_a_user_set():
    c = local_cluster(1)
    run(c.start())
    edit_node(c, "n-0", labels={"team": "a"}, taints=[{"key": "dedicated", "value": "a", "effect": "NoSchedule"}])
    run(c.command(Pressure("n-0", {"memory": 7 * 2**30}, 30.0)))  # the kubelet posts its status
    run(c.settle())
    for _ in range(10):  # lease renewals, the pressure lifting and its status post
        run(c.advance(100.0))
        run(c.settle())
    run(c.restart("host", "n-0"))  # registers again: a create (409) then the full status
    run(c.settle())
    node = c.api.get("Node", "", "n-0")
    assert node["metadata"]["labels"]["team"] == "a"
    assert node["spec"]["taints"] == [{"key": "dedicated", "value": "a", "effect": "NoSchedule"}]
    assert node["status"]["conditions"][0]["type"] == "MemoryPressure"
    run(c.write([Create(pod("after-restart", "n-0", {"team": "a"}))]))
    run(c.settle())
    assert status(c, "after-restart") == ("Running", None, "n-0")
