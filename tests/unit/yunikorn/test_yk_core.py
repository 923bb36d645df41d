"""The YuniKorn-mode scheduler component driven by hand-made batches (no apiserver, no
Ray): placement in queues, the node order, queue max, reservations, configuration reloads,
refused binds, rejected applications and the writes of a preemption."""

from __future__ import annotations

import pytest

from cluster.api.codec import encode
from cluster.api.errors import Conflict
from cluster.api.requests import Bind, Delete, ListResult, RecordEvent, UpdateStatus
from cluster.clock import rfc3339
from cluster.runtime.component import START, Batch, Failure, WatchEvent
from cluster.runtime.reflector import Reflector
from cluster.yunikorn.component import YuniKornComponent

QUEUES = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        properties: {preemption.delay: 3s}
        queues:
          - name: a
            resources: {guaranteed: {vcore: 1}, max: {vcore: 2}}
          - name: b
            resources: {guaranteed: {vcore: 2}}
"""


def node(name: str, cpu: str = "4", **spec) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": spec,
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }


def pod(
    name: str, cpu: str = "1", queue: str | None = "root.a", app: str = "app", created: float = 0.0, **spec
) -> dict:
    labels = {"applicationId": app}
    if queue:
        labels["queue"] = queue
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "labels": labels,
            "creationTimestamp": rfc3339(created),
        },
        "spec": {
            "schedulerName": spec.pop("schedulerName", "yunikorn"),
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
        "status": {"phase": "Pending"},
    }


def configmap(text: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "yunikorn-configs", "namespace": "yunikorn", "uid": "cm"},
        "data": {"queues.yaml": text},
    }


def ev(obj: dict, etype: str = "ADDED") -> WatchEvent:
    return WatchEvent(obj["kind"], etype, obj)


def run(c: YuniKornComponent, now: float, *events: WatchEvent, boot: str = "", failures=()):
    return c.reconcile(Batch(now, list(events), list(failures), boot))


def binds(result) -> dict[str, str]:
    return {w.name: w.node for w in result.writes if isinstance(w, Bind)}


def events(result, reason: str) -> list[dict]:
    return [w.event for w in result.writes if isinstance(w, RecordEvent) and w.event["reason"] == reason]


def started(*objs: dict, text: str = QUEUES) -> YuniKornComponent:
    c = YuniKornComponent()
    run(c, 0.0, ev(configmap(text)), *(ev(o) for o in objs), boot=START)
    return c


def test_pods_of_other_schedulers_take_room_but_are_never_scheduled():
    c = started(node("n1", "2"), node("n2", "2"))
    other = dict(pod("other", "2", queue=None, schedulerName="default-scheduler"))
    other["spec"]["nodeName"] = "n1"
    r = run(c, 1.0, ev(other), ev(pod("p", "1")))
    assert binds(r) == {"p": "n2"}


@pytest.mark.parametrize(
    ("policy", "expected"),
    [("fair", "n2"), ("binpacking", "n1")],
)
def test_the_node_sort_policy_picks_the_least_or_most_used_node(policy, expected):
    text = QUEUES.replace("  - name: default\n", f"  - name: default\n    nodesortpolicy: {{type: {policy}}}\n")
    c = started(node("n1"), node("n2"), text=text)
    run(c, 1.0, ev(pod("first", "1")))
    r = run(c, 2.0, ev(pod("second", "1")))
    assert binds(r) == {"second": expected}


def test_queue_max_limits_admission_until_a_reload_raises_it():
    c = started(node("n1", "8"))
    r = run(c, 1.0, *(ev(pod(f"p{i}", "1", created=1.0)) for i in range(3)))
    assert sorted(binds(r)) == ["p0", "p1"]
    assert c.yk.allocs["uid-p2"].log[-1] == "Not enough queue quota"
    r = run(c, 5.0, ev(configmap(QUEUES.replace("max: {vcore: 2}", "max: {vcore: 3}")), "MODIFIED"))
    assert binds(r) == {"p2": "n1"}
    assert c.inspect(5.0)["configReloads"] == 2


def test_an_invalid_configuration_is_refused_with_a_warning_and_the_old_one_stays():
    c = started(node("n1", "8"))
    bad = QUEUES.replace("guaranteed: {vcore: 1}, max: {vcore: 2}", "guaranteed: {vcore: 3}, max: {vcore: 2}")
    r = run(c, 1.0, ev(configmap(bad), "MODIFIED"))
    (warning,) = events(r, "ConfigRejected")
    assert warning["type"] == "Warning" and "root.a" in warning["message"]
    r = run(c, 2.0, *(ev(pod(f"p{i}", "1")) for i in range(3)))
    assert len(binds(r)) == 2  # max 2 CPU still holds


def test_without_a_configmap_pods_go_to_a_queue_named_after_their_namespace():
    c = YuniKornComponent()
    run(c, 0.0, ev(node("n1")), boot=START)
    r = run(c, 1.0, ev(pod("p", "1", queue=None)))
    assert binds(r) == {"p": "n1"}
    assert c.yk.allocs["uid-p"].queue.path == "root.default"


def test_an_application_no_rule_places_is_rejected_and_its_pods_fail():
    c = started(node("n1"))
    r = run(c, 1.0, ev(pod("p", "1", queue="root.nowhere")))
    assert binds(r) == {}
    (status,) = [w for w in r.writes if isinstance(w, UpdateStatus)]
    assert (status.status["phase"], status.status["reason"]) == ("Failed", "ApplicationRejected")
    (failed,) = events(r, "ApplicationFailed")
    assert failed["message"].startswith("Application app scheduling failed, reason: ApplicationRejected: ")


def test_a_refused_bind_puts_the_pod_back_among_the_asks():
    c = started(node("n1", "1"))
    r = run(c, 1.0, ev(pod("p", "1")))
    (bind,) = [w for w in r.writes if isinstance(w, Bind)]
    assert c.yk.tree.by_path["root.a"].allocated.get("vcore") == 1000
    r = run(c, 1.5, failures=[Failure(bind, Conflict("Pod", "p", "conflict"))])
    assert binds(r) == {"p": "n1"}  # tried again at once: the room is free again


def test_an_ask_no_node_fits_reserves_the_best_node_once_two_seconds_old():
    c = started(node("n1", "2"), node("n2", "2"))
    run(c, 1.0, ev(pod("a1", "1", created=1.0)), ev(pod("a2", "1", created=1.0)))
    r = run(c, 2.0, ev(pod("big", "2", queue="root.b", app="app-b", created=2.0)))
    assert binds(r) == {} and c.yk.allocs["uid-big"].reserved_node == ""
    assert r.wake_at is not None and 4.0 < r.wake_at <= 4.01
    run(c, r.wake_at)
    assert c.yk.allocs["uid-big"].reserved_node == "n1"


def test_a_preemption_deletes_one_victim_with_one_preempted_event():
    c = started(node("n1", "2"))
    run(c, 1.0, ev(pod("a1", "1", created=1.0, app="app-a")), ev(pod("a2", "1", created=2.0, app="app-a")))
    r = run(c, 5.0, ev(pod("b1", "1", queue="root.b", created=5.0, app="app-b")))
    assert binds(r) == {}
    t = 5.0
    while not [w for w in r.writes if isinstance(w, Delete)] and r.wake_at is not None and t < 60:
        t = r.wake_at
        r = run(c, t)
    deletes = [w.name for w in r.writes if isinstance(w, Delete)]
    assert deletes == ["a2"]  # the newer; a1 is all root.a's guarantee has left
    preempted = events(r, "Preempted")
    assert [e["involvedObject"]["name"] for e in preempted] == deletes
    assert preempted[0]["message"] == "Preempted by uid-b1 from application app-b in root.b"


def test_a_restarted_instance_rebuilds_its_queues_from_the_first_list():
    bound = pod("bound", "1", created=1.0)
    bound["spec"]["nodeName"] = "n1"
    c = YuniKornComponent()
    r = run(
        c,
        9.0,
        ev(node("n1", "2")),
        ev(bound),
        ev(pod("waiting", "1", created=2.0)),
        ev(configmap(QUEUES)),
        boot="restart",
    )
    assert binds(r) == {"waiting": "n1"}  # the configuration and the node are read before the pods
    assert c.yk.tree.by_path["root.a"].allocated == {"vcore": 2000, "pods": 2}
    assert c.yk.apps["app"].originator_uid == "uid-bound"


def test_a_deleted_node_drops_the_reservations_on_it():
    c = started(node("n1", "2"), node("n2", "2"))
    run(c, 1.0, ev(pod("a1", "1", created=1.0)), ev(pod("a2", "1", created=1.0)))
    run(c, 2.0, ev(pod("big", "2", queue="root.b", app="app-b", created=2.0)))
    run(c, 5.0)
    assert c.yk.allocs["uid-big"].reserved_node == "n1"
    run(c, 6.0, ev(node("n1", "2"), "DELETED"))
    assert c.yk.allocs["uid-big"].reserved_node == "" and not c.yk.reserved


def _placed(name: str, node_name: str, cpu: str, **kw) -> dict:
    p = pod(name, cpu, **kw)
    p["spec"]["nodeName"] = node_name
    p["status"]["phase"] = "Running"
    return p


@pytest.mark.parametrize("scheduler", ["yunikorn", "default-scheduler"])
def test_a_pod_a_relist_reports_gone_or_recreated_frees_its_node(scheduler):
    """Through the component's reflector: a pod deleted while nobody watched, and one
    deleted and created again under its name (a new uid), both free the old one's room."""
    queue = "root.a" if scheduler == "yunikorn" else None
    c = started(node("n1", "2"))
    r = Reflector(c.watches())

    def listed(*pods):
        return r.on_list("Pod", ListResult(1, [encode(p) for p in pods]))

    a = _placed("a", "n1", "2", queue=queue, schedulerName=scheduler)
    run(c, 0.5, *listed(a))
    assert not binds(run(c, 1.0, *listed(a, pod("b", "2"))))  # no room while a holds n1
    assert binds(run(c, 2.0, *listed(pod("b", "2")))) == {"b": "n1"}  # a went meanwhile
    # b again, deleted and re-created (a new uid, pending) while nobody watched.
    again = dict(pod("b", "2"), metadata={**pod("b", "2")["metadata"], "uid": "uid-b-again"})
    r3 = run(c, 3.0, *listed(again))
    assert "uid-b" not in c.yk.allocs and binds(r3) == {"b": "n1"}
