"""The garbage collector and ownership cycles: objects that own each other (two, three, one
owning itself) stay while they live, and go once one of them is deleted, whatever the
propagation policy, as upstream's collector (its foreground cycle guard included)."""

import pytest
from gc_builders import ControlPlane, feed, obj, ref, writes

from cluster.api.patches import FOREGROUND_FINALIZER, RemoveOwnerReferences
from cluster.api.requests import Update
from cluster.controllers.garbagecollector import GarbageCollector

FG = FOREGROUND_FINALIZER


def _plane() -> ControlPlane:
    return ControlPlane([GarbageCollector()])


def _pod(name: str) -> dict:
    spec = {"containers": [{"name": "c", "image": "pause"}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _cycle(c: ControlPlane, names: list[str]) -> None:
    """Running pods, each owned (blocking) by the next, the last by the first: upstream's
    "should not be blocked by dependency circle" set-up, patched in as it does."""
    uids = {n: c.api.create(_pod(n), c.now)["metadata"]["uid"] for n in names}
    c.run_pods()
    for i, name in enumerate(names):
        owner = names[(i + 1) % len(names)]
        current = c.get("Pod", name)
        current["metadata"]["ownerReferences"] = [ref("Pod", owner, uids[owner])]
        assert c.api.write([Update(current)], c.now) == [None]
    c.at(c.now)


def _names(c: ControlPlane) -> list[str]:
    return [p["metadata"]["name"] for p in c.pods()]


def _until_gone(c: ControlPlane, start: float) -> float:
    """Let the kubelet confirm every graceful delete and the collector act, round after round."""
    now = start
    for _ in range(10):
        if not c.pods():
            return now
        now += 1.0
        c.now = now
        c.confirm()
        c.at(now)
    raise AssertionError(f"still there: {[(p['metadata']['name'], p['metadata'].get('finalizers')) for p in c.pods()]}")


@pytest.mark.parametrize("names", [["a", "b"], ["pod1", "pod2", "pod3"], ["self"]])
def test_a_live_cycle_is_never_collected(names):
    c = _plane()
    _cycle(c, names)
    c.run(until=60.0, step=5.0)
    assert _names(c) == sorted(names) and not any(p["metadata"].get("deletionTimestamp") for p in c.pods())


@pytest.mark.parametrize("policy", ["Background", "Foreground"])
@pytest.mark.parametrize("names", [["a", "b"], ["pod1", "pod2", "pod3"], ["self"]])
def test_deleting_one_member_collects_the_whole_cycle(names, policy):
    c = _plane()
    _cycle(c, names)
    first = c.get("Pod", names[0])["metadata"]["uid"]
    c.api.delete("Pod", "default", names[0], first, None, 10.0, propagation=policy)
    c.at(10.0)
    gone_at = _until_gone(c, 10.0)
    refused = [(type(r).__name__, e) for r, e in c.results if e is not None and e.code != 404]
    assert c.pods() == [] and refused == []
    assert gone_at <= 10.0 + 2 * len(names) + 1  # a round or two per member, not a timeout


def test_orphan_breaks_the_cycle_and_the_others_stay():
    c = _plane()
    _cycle(c, ["pod1", "pod2", "pod3"])
    c.api.delete("Pod", "default", "pod1", None, None, 10.0, propagation="Orphan")
    c.at(10.0)
    _until_gone_but(c, ["pod2", "pod3"])
    assert "ownerReferences" not in c.get("Pod", "pod3")["metadata"]  # it was owned by pod1
    assert c.get("Pod", "pod2")["metadata"]["ownerReferences"][0]["name"] == "pod3"


def _until_gone_but(c: ControlPlane, left: list[str]) -> None:
    for now in range(11, 16):
        c.now = float(now)
        c.confirm()
        c.at(float(now))
    assert _names(c) == left


def test_foreground_in_a_cycle_unblocks_the_next_member_before_deleting_it():
    """Upstream's order: the dependent whose own dependent already waits in the foreground
    has its references made non-blocking, then is deleted in the foreground."""
    c = _plane()
    _cycle(c, ["a", "b"])
    c.api.delete("Pod", "default", "a", None, None, 10.0, propagation="Foreground")
    lines = c.at(10.0)
    sent = [(type(r).__name__, r.name, getattr(r, "patch", None), getattr(r, "propagation", "")) for r, _ in c.results]
    unblock = ("Patch", "b", RemoveOwnerReferences((), True), "")
    assert unblock in sent and sent.index(unblock) < sent.index(("Delete", "b", None, "Foreground")), lines
    b = c.get("Pod", "b")["metadata"]
    assert b["ownerReferences"][0]["blockOwnerDeletion"] is False and FG in b["finalizers"]
    # a's only blocking dependent no longer blocks: its foregroundDeletion finalizer is gone.
    assert FG not in (c.get("Pod", "a")["metadata"].get("finalizers") or [])


def test_the_guard_only_fires_when_a_dependent_of_the_dependent_deletes_in_the_foreground():
    gc = GarbageCollector()
    owner = obj("ReplicaSet", "web", finalizers=[FG], deleting=True)
    # p is owned by the deleting ReplicaSet and owns q, which is not being deleted: no cycle.
    feed(gc, ("ADDED", owner), ("ADDED", obj("Pod", "p", owners=[ref("ReplicaSet", "web")])))
    feed(gc, ("ADDED", obj("Pod", "q", owners=[ref("Pod", "p", block=False)])))
    assert writes(gc.sync(0.0)) == [("delete", "Pod/default/p", "Foreground")]  # no unblocking patch


def test_unblocking_patch_keeps_the_references_and_only_clears_the_blocking_flag():
    pod = obj("Pod", "p", owners=[ref("Pod", "a"), ref("Pod", "b", block=False)])
    assert RemoveOwnerReferences((), True).apply(pod)
    assert [(r["name"], r["blockOwnerDeletion"]) for r in pod["metadata"]["ownerReferences"]] == [
        ("a", False),
        ("b", False),
    ]
    assert not RemoveOwnerReferences((), True).apply(pod)  # nothing left to unblock: no write
    assert not RemoveOwnerReferences(("u-zzz",)).apply(pod)
