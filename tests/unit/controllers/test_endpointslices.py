"""The EndpointSlice and Endpoints controllers: upstream's packing vectors, conditions,
named ports, publishNotReadyAddresses, the batch period, and pods kept only when selected."""

from __future__ import annotations

import pytest

from cluster.api.requests import Create, Delete, Update
from cluster.controllers.endpoints import service_endpoint_steps, subsets
from cluster.controllers.endpointslice import plan
from cluster.controllers.podrecord import PodRecords


def _ep(name: str) -> dict:
    return {"addresses": [f"10.0.0.{name}"], "targetRef": {"name": name}}


def _eps(*names) -> list[dict]:
    return [_ep(str(n)) for n in names]


P = (("http", 80, "TCP", ""),)


@pytest.mark.parametrize(
    "existing,desired,limit,updates,creates,deletes",
    [
        # nothing yet: chunks of the limit, in order
        ([], _eps(*range(1, 251)), 100, {}, [100, 100, 50], []),
        # unchanged slice kept; new endpoints fill the fullest unchanged slice that fits them
        ([("a", P, _eps(1, 2))], _eps(1, 2, 3), 100, {"a": 3}, [], []),
        # a full unchanged slice is not touched: the rest goes to a new slice
        ([("a", P, _eps(*range(1, 101)))], _eps(*range(1, 102)), 100, {}, [1], []),
        # a removed endpoint makes an update, which new ones fill first
        ([("a", P, _eps(1, 2)), ("b", P, _eps(3))], _eps(1, 3, 4), 100, {"a": 2}, [], []),
        # every endpoint gone: the slice turns into the empty placeholder (a delete + create = update)
        ([("a", P, _eps(1))], [], 100, {"a": 0}, [], []),
        # the placeholder stays as it is
        ([("p", (), [])], [], 100, {}, [], []),
        # two slices emptied, one placeholder: one update, one delete
        ([("a", P, _eps(1)), ("b", P, _eps(2))], [], 100, {"a": 0}, [], ["b"]),
    ],
)
def test_packing_as_upstream(existing, desired, limit, updates, creates, deletes):
    p = plan(existing, {P: desired} if desired else {}, limit)
    assert {n: len(e) for n, (_, e) in p.updates.items()} == updates
    assert [len(e) for _, e in p.creates] == creates
    assert p.deletes == deletes


def _svc(**spec) -> dict:
    return {
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "d", "uid": "s1", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {
            "selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
            **spec,
        },
    }


def _pod(
    name: str, ip: str, ready: bool = True, deleting: bool = False, app: str = "web", phase: str = "Running"
) -> dict:
    m = {"name": name, "namespace": "d", "uid": f"u-{name}", "labels": {"app": app}}
    if deleting:
        m["deletionTimestamp"] = "2026-01-01T00:01:00Z"
    return {
        "kind": "Pod",
        "metadata": m,
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "ports": [{"name": "http", "containerPort": 8080}]}]},
        "status": {
            "phase": phase,
            "podIP": ip,
            "conditions": [
                {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": "2026-01-01T00:00:05Z"}
            ],
        },
    }


def _run(pods, svc=None, now=0.0, steps=None):
    steps = steps or service_endpoint_steps(batch_seconds=1.0)
    for s in steps:
        s.on_event("Node", "ADDED", {"metadata": {"name": "n1", "labels": {"topology.kubernetes.io/zone": "z1"}}}, now)
        s.on_event("Service", "ADDED", svc or _svc(), now)
    for s in steps:
        for p in pods:
            s.on_event("Pod", "ADDED", p, now)
    return steps


def test_slice_and_endpoints_conditions_and_named_ports():
    pods = [
        _pod("a", "10.1.0.2"),
        _pod("b", "10.1.0.3", ready=False),
        _pod("c", "10.1.0.4", deleting=True),
        _pod("done", "10.1.0.5", phase="Succeeded"),
        _pod("noip", ""),
    ]
    slices, endpoints = _run(pods)
    reqs = slices.sync(0.0).requests
    (create,) = [r for r in reqs if isinstance(r, Create)]
    sl = create.obj
    assert sl["metadata"]["generateName"] == "web-"
    assert sl["metadata"]["labels"] == {
        "kubernetes.io/service-name": "web",
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
    }
    assert sl["metadata"]["ownerReferences"][0] == {
        "apiVersion": "v1",
        "kind": "Service",
        "name": "web",
        "uid": "s1",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert sl["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    assert [(e["addresses"][0], e["conditions"]) for e in sl["endpoints"]] == [
        ("10.1.0.2", {"ready": True, "serving": True, "terminating": False}),
        ("10.1.0.3", {"ready": False, "serving": False, "terminating": False}),
        ("10.1.0.4", {"ready": False, "serving": True, "terminating": True}),
    ]
    assert sl["endpoints"][0]["zone"] == "z1" and sl["endpoints"][0]["nodeName"] == "n1"
    (ep,) = endpoints.sync(0.0).requests
    assert isinstance(ep, Create) and ep.obj["metadata"]["name"] == "web"
    assert [a["ip"] for a in ep.obj["subsets"][0]["addresses"]] == ["10.1.0.2"]
    assert [a["ip"] for a in ep.obj["subsets"][0]["notReadyAddresses"]] == ["10.1.0.3"]  # terminating left out
    assert ep.obj["subsets"][0]["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    assert (
        ep.obj["metadata"]["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"] == "2026-01-01T00:00:05Z"
    )


def test_publish_not_ready_addresses_lists_every_pod_ready():
    svc = _svc(publishNotReadyAddresses=True)
    subs, cut = subsets(svc, [_pod("a", "10.1.0.2", ready=False), _pod("b", "10.1.0.3", deleting=True)])
    assert [a["ip"] for a in subs[0]["addresses"]] == ["10.1.0.2", "10.1.0.3"] and "notReadyAddresses" not in subs[0]
    assert not cut


def test_endpoints_cut_at_1000_addresses():
    pods = [_pod(f"p{i}", f"10.1.{i // 250}.{i % 250 + 1}") for i in range(1001)]
    subs, cut = subsets(_svc(), pods)
    assert cut and len(subs[0]["addresses"]) == 1000


def test_pod_changes_wait_for_the_batch_period():
    steps = _run([])
    for s in steps:
        s.sync(0.0)
    for s in steps:
        s.on_event("Pod", "ADDED", _pod("a", "10.1.0.2"), 5.0)
    assert [s.next_wakeup() for s in steps] == [6.0, 6.0]
    assert steps[0].sync(5.5).requests == []
    assert steps[0].sync(6.0).requests  # the batch went out a second after the first change


def test_unselected_pods_are_kept_as_records_until_a_service_selects_them():
    steps = service_endpoint_steps()
    recs = PodRecords()
    for i in range(3):
        rec = recs.make(_pod(f"o{i}", f"10.1.0.{i + 2}", app="other"), None)
        for s in steps:
            s.on_pod_record("ADDED", rec, 0.0)
    assert steps[0].pods.kept() == (0, 3)
    for s in steps:
        s.on_event("Service", "ADDED", _svc(selector={"app": "other"}), 0.0)
    assert steps[0].pods.kept() == (3, 0)


def test_service_gone_deletes_endpoints_and_selectorless_is_left_alone():
    slices, endpoints = _run([_pod("a", "10.1.0.2")])
    endpoints.sync(1.0)
    endpoints.on_event(
        "Endpoints", "ADDED", {"kind": "Endpoints", "metadata": {"name": "web", "namespace": "d", "uid": "e1"}}, 1.0
    )
    endpoints.on_event("Service", "DELETED", _svc(), 1.0)
    assert endpoints.sync(2.0).requests == [Delete("Endpoints", "d", "web", "e1")]
    plain = _svc()
    plain["spec"].pop("selector")
    s2, e2 = _run([_pod("a", "10.1.0.2")], svc=plain)
    assert s2.sync(2.0).requests == [] and e2.sync(2.0).requests == []


def test_update_keeps_the_slice_name_and_resource_version():
    slices, _ = _run([_pod("a", "10.1.0.2")])
    create = slices.sync(0.0).requests[0].obj
    stored = {**create, "metadata": {**create["metadata"], "name": "web-abcde", "uid": "x", "resourceVersion": "7"}}
    stored["metadata"].pop("generateName")
    slices.on_event("EndpointSlice", "ADDED", stored, 0.0)
    slices.on_event("Pod", "ADDED", _pod("b", "10.1.0.3"), 0.0)
    (upd,) = slices.sync(1.0).requests
    assert isinstance(upd, Update) and upd.obj["metadata"]["name"] == "web-abcde"
    assert upd.obj["metadata"]["resourceVersion"] == "7" and len(upd.obj["endpoints"]) == 2


def test_the_controllers_share_the_managers_pod_records_not_a_copy_of_their_bytes():
    from cluster.api import codec
    from cluster.controllers.manager import ControllerManager
    from cluster.runtime.component import WatchEvent

    steps = service_endpoint_steps()
    manager = ControllerManager(steps)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "u1", "labels": {"app": "x"}},
        "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Running", "podIP": "10.244.0.2"},
    }
    raw = codec.encode(pod)
    manager.on_events([WatchEvent("Pod", "ADDED", raw=raw)], 1.0)
    assert all(s.takes_records for s in steps)
    parked = steps[0].pods._parked["default"]["p"]  # no Service selects it: kept as the record
    assert parked.raw is raw  # the watch's bytes, shared: nothing encoded again per pod
    assert steps[0].pods.kept() == (0, 1)


def test_a_users_endpoints_without_a_service_stays():
    # Upstream's controller hears its Endpoints only when one is deleted: an Endpoints
    # created before (or without) its Service is the user's until the Service exists.
    _, endpoints = service_endpoint_steps(batch_seconds=1.0)
    lonely = {"kind": "Endpoints", "metadata": {"name": "lonely", "namespace": "d", "uid": "u1"}}
    endpoints.on_event("Endpoints", "ADDED", lonely, 0.0)
    assert endpoints.sync(1.0).requests == [] and endpoints.sync(5.0).requests == []
