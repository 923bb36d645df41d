"""The resource quota controller (a Reconciler keyed by namespace): exact status writes
from what stands, guarded by the quota's resourceVersion; scopes; refusals coming back;
the resync; and pods parked until the first quota."""

from cluster.api.codec import decode
from cluster.api.errors import Conflict
from cluster.api.patches import QuotaStatus
from cluster.api.requests import Create, Patch
from cluster.apiserver.apiserver import APIServer
from cluster.controllers.manager import ControllerManager
from cluster.controllers.resourcequota import RESYNC_SECONDS, ResourceQuotaStep
from cluster.runtime.component import WatchEvent


def quota(name="q", ns="default", rv="5", hard=None, scopes=None, status=None):
    spec = {"hard": hard or {"pods": "10", "requests.cpu": "2"}}
    if scopes:
        spec["scopes"] = scopes
    obj = {
        "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": ns, "uid": f"u-{name}", "resourceVersion": rv},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def pod(name, ns="default", cpu="500m", phase="Running"):
    res = {"requests": {"cpu": cpu}} if cpu else {}
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": res}]},
        "status": {"phase": phase},
    }


def step(*events):
    s = ResourceQuotaStep()
    for kind, obj in events:
        s.on_event(kind, "ADDED", obj, 0.0)
    return s


def patches(w):
    return [(r.kind, r.namespace, r.name, r.patch) for r in w.requests]


def test_status_is_hard_and_the_usage_of_what_stands():
    s = step(("Pod", pod("a")), ("Pod", pod("b")), ("Pod", pod("done", phase="Succeeded")), ("ResourceQuota", quota()))
    s.on_event("Pod", "ADDED", pod("other", ns="kube-system"), 0.0)
    assert patches(s.sync(1.0)) == [
        (
            "ResourceQuota",
            "default",
            "q",
            QuotaStatus("5", {"hard": {"pods": "10", "requests.cpu": "2"}, "used": {"pods": "2", "requests.cpu": "1"}}),
        )
    ]


def test_an_unchanged_status_is_not_written_and_the_namespace_is_resynced():
    status = {"hard": {"pods": "10", "requests.cpu": "2"}, "used": {"pods": "0", "requests.cpu": "0"}}
    s = step(("ResourceQuota", quota(status=status)))
    assert s.sync(1.0).requests == []
    assert s.next_wakeup() == 1.0 + RESYNC_SECONDS


def test_a_scoped_quota_counts_only_its_pods():
    s = step(
        ("Pod", pod("be", cpu=None)),
        ("Pod", pod("burst")),
        ("ResourceQuota", quota(hard={"pods": "5"}, scopes=["BestEffort"])),
    )
    assert patches(s.sync(1.0))[0][3].status["used"] == {"pods": "1"}


def test_a_pod_event_recounts_its_namespace_only():
    s = step(("ResourceQuota", quota()), ("ResourceQuota", quota("other", ns="kube-system")))
    s.sync(1.0)
    s.on_event("Pod", "ADDED", pod("a"), 2.0)
    assert [(ns, name) for _, ns, name, _ in patches(s.sync(2.0))] == [("default", "q")]


def test_a_conflict_comes_back_as_the_keys_next_reconcile():
    s = step(("ResourceQuota", quota()))
    w = s.sync(1.0)
    s.on_failed(w.requests[0], Conflict("modified"), 1.0)
    assert s.next_wakeup() is not None and s.next_wakeup() < 2.0
    assert len(s.sync(s.next_wakeup()).requests) == 1


def test_pods_are_parked_until_the_first_quota():
    s = ResourceQuotaStep()
    s.on_event("Pod", "ADDED", pod("a"), 0.0)
    assert s.parking.on and s.cache.list("Pod") == []
    s.on_event("ResourceQuota", "ADDED", quota(), 0.0)
    assert not s.parking.on and [p["metadata"]["name"] for p in s.cache.list("Pod")] == ["a"]
    assert patches(s.sync(1.0))[0][3].status["used"]["pods"] == "1"


def test_the_stale_guard_refuses_a_status_computed_from_an_older_quota():
    api = APIServer(seed=1)
    api.create(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "q", "namespace": "default"},
            "spec": {"hard": {"pods": "1"}},
        },
        0,
    )
    rv = api.get("ResourceQuota", "default", "q")["metadata"]["resourceVersion"]
    status = {"hard": {"pods": "1"}, "used": {"pods": "0"}}
    assert api.write([Patch("ResourceQuota", "default", "q", "", QuotaStatus(rv, status))], 1) == [None]
    got = api.write([Patch("ResourceQuota", "default", "q", "", QuotaStatus(rv, status))], 1)[0]
    assert isinstance(got, Conflict) and 'resourcequotas "q"' in got.message


def test_in_the_manager_the_quota_fills_then_admission_refuses_the_extra_pod():
    api, cm = APIServer(seed=1), ControllerManager()
    api.create(
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "q", "namespace": "default"},
            "spec": {"hard": {"pods": "1"}},
        },
        0,
    )
    chunk = api.watch({k: 0 for k in cm.kinds})  # what the component feeds, by hand
    cm.on_events([WatchEvent(k, t, decode(d), d) for k, c in chunk.items() for t, d in c.events], 1.0)
    assert all(out is None for out in api.write(cm.sync(1.0).requests, 1.0))
    assert api.get("ResourceQuota", "default", "q")["status"] == {"hard": {"pods": "1"}, "used": {"pods": "0"}}
    p = pod("a")
    p["apiVersion"] = "v1"
    del p["status"]
    assert api.write([Create(p), Create({**p, "metadata": {"name": "b", "namespace": "default"}})], 2)[1].code == 403
