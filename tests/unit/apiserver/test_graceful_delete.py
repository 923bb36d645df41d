"""Graceful deletion as upstream's, driven through the apiserver logic with explicit times."""

import pytest
from store_builders import make_pod

from cluster.api import codec
from cluster.api.errors import Conflict, NotFound
from cluster.api.patches import Apply
from cluster.api.requests import Patch, UpdateStatus
from cluster.clock import rfc3339


def _pod(api, name="p"):
    return api.store.get("Pod", "default", name)


def test_running_pod_with_grace_30_stays_until_kubelet_confirms(api):
    api.create(make_pod(node="n1"), now=0)
    assert api.delete("Pod", "default", "p", None, 30, now=10) is False
    pod = _pod(api)
    assert pod["metadata"]["deletionTimestamp"] == rfc3339(40)
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 30
    # The kubelet has stopped the containers: its grace-0 delete removes the object.
    assert api.delete("Pod", "default", "p", pod["metadata"]["uid"], 0, now=15) is True
    assert _pod(api) is None


def test_default_grace_comes_from_the_pod_spec(api):
    api.create(make_pod(node="n1", grace=12), now=0)
    api.delete("Pod", "default", "p", None, None, now=1)
    assert _pod(api)["metadata"]["deletionGracePeriodSeconds"] == 12


@pytest.mark.parametrize(
    "pod,grace",
    [
        (make_pod(), None),  # never scheduled: goes at once whatever the grace
        (make_pod(), 30),
        (make_pod(node="n1"), 0),  # grace 0: goes at once
    ],
)
def test_unbound_or_grace_zero_goes_at_once(api, pod, grace):
    api.create(pod, now=0)
    assert api.delete("Pod", "default", "p", None, grace, now=1) is True
    assert _pod(api) is None


def test_terminal_pod_goes_at_once(api):
    created = api.create(make_pod(node="n1"), now=0)
    api.write([UpdateStatus("Pod", "default", "p", created["metadata"]["uid"], {"phase": "Succeeded"})], 1)
    assert api.delete("Pod", "default", "p", None, 30, now=2) is True


def test_shorter_grace_replaces_longer_never_the_reverse(api):
    api.create(make_pod(node="n1"), now=0)
    api.delete("Pod", "default", "p", None, 30, now=100)  # deadline 130
    rv = _pod(api)["metadata"]["resourceVersion"]
    assert api.delete("Pod", "default", "p", None, 60, now=101) is False  # longer: no change
    assert api.delete("Pod", "default", "p", None, 30, now=101) is False  # equal: no change
    assert _pod(api)["metadata"]["resourceVersion"] == rv
    api.delete("Pod", "default", "p", None, 10, now=105)  # shorter: 130 - 30 + 10
    m = _pod(api)["metadata"]
    assert (m["deletionGracePeriodSeconds"], m["deletionTimestamp"]) == (10, rfc3339(110))
    api.delete("Pod", "default", "p", None, 20, now=106)  # longer than the new 10: ignored
    assert _pod(api)["metadata"]["deletionGracePeriodSeconds"] == 10


def test_negative_grace_is_one_second(api):
    api.create(make_pod(node="n1"), now=0)
    api.delete("Pod", "default", "p", None, -5, now=0)
    assert _pod(api)["metadata"]["deletionGracePeriodSeconds"] == 1


def test_graceful_delete_is_seen_as_modified_then_deleted(api):
    api.create(make_pod(node="n1"), now=0)
    rv = api.store.rv
    api.delete("Pod", "default", "p", None, 30, now=1)
    api.delete("Pod", "default", "p", None, 0, now=2)
    events, _ = api.store.events_since("Pod", rv)
    assert [t for t, _ in events] == ["MODIFIED", "DELETED"]


def test_finalizers_keep_the_object_until_removed(api):
    pod = make_pod(node="n1")
    pod["metadata"]["finalizers"] = ["example.com/hold"]
    api.create(pod, now=0)
    api.delete("Pod", "default", "p", None, 0, now=1)
    held = _pod(api)
    assert held["metadata"]["deletionTimestamp"] and held["metadata"]["deletionGracePeriodSeconds"] == 0
    held = dict(held, metadata=dict(held["metadata"], finalizers=[]))
    api.update(held, now=2)
    assert _pod(api) is None


def test_uid_precondition_and_missing_object(api):
    api.create(make_pod(node="n1"), now=0)
    with pytest.raises(Conflict):
        api.delete("Pod", "default", "p", "not-the-uid", 0, now=1)
    with pytest.raises(NotFound):
        api.delete("Pod", "default", "nope", None, 0, now=1)


def _final_delete(fast: bool, shape: str, monkeypatch):
    """A pod in ``shape`` deleted with grace 0 by a kubelet: (outcomes, the pod's watch
    events from before the delete, the store's objects after), with the plain-pod path
    (``plaindelete``) on or off."""
    from cluster.api.requests import Delete
    from cluster.apiserver import deletion as deletion_module
    from cluster.apiserver.apiserver import APIServer

    with monkeypatch.context() as m:
        if not fast:
            m.setattr(deletion_module, "delete_plain_pod", lambda *a: False)
        api = APIServer()
        pod = make_pod(node="n1")
        if shape == "finalizer":
            pod["metadata"]["finalizers"] = ["example.com/hold"]
        created = api.create(pod, now=0)
        if shape != "running":
            api.delete("Pod", "default", "p", None, 30, now=2)
        if shape == "annotated rv":  # the field's bytes twice (this write's rv): the patch must not guess
            same = {"metadata": {"annotations": {"resourceVersion": str(api.store.rv + 1)}}}
            api.write([Patch("Pod", "default", "p", "", Apply(same))], 2)
        patched: list = []
        real = api.store.remove_as_stored
        api.store.remove_as_stored = lambda *a: patched.append(real(*a)) or patched[-1]
        uid = "another" if shape == "uid mismatch" else created["metadata"]["uid"]
        rv = api.store.rv
        outcomes = api.write([Delete("Pod", "default", "p", uid, 0)], 3)
        events, _ = api.store.events_since("Pod", rv)
        return [type(o).__name__ for o in outcomes], events, api.store.snapshot_state(), patched


@pytest.mark.parametrize("shape", ["terminating", "running", "finalizer", "annotated rv", "uid mismatch"])
def test_a_final_delete_settled_from_the_bytes_is_the_general_one(shape, monkeypatch):
    fast, general = _final_delete(True, shape, monkeypatch), _final_delete(False, shape, monkeypatch)
    assert fast[:3] == general[:3]
    outcomes, events, _, patched = fast
    # Patched only where the pod is plain, and given up where the field's bytes repeat.
    assert patched == {"terminating": [True], "running": [True], "annotated rv": [False]}.get(shape, [])
    if shape in ("terminating", "running", "annotated rv"):
        assert outcomes == ["NoneType"] and [t for t, _ in events] == ["DELETED"]
        assert codec.decode(events[0][1])["metadata"]["resourceVersion"] == str(api_rv_of(fast))
    elif shape == "finalizer":  # kept, marked with grace 0
        assert outcomes == ["NoneType"] and [t for t, _ in events] == ["MODIFIED"]
    else:
        assert outcomes == ["Conflict"] and events == []


def api_rv_of(result) -> int:
    return result[2][0]
