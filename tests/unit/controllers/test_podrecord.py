"""Slim pod keeping: the record pod GC and the taint manager keep per pod (its fields, shared
tolerations, its bytes), the controller-manager handing one record per pod event to every
controller that keeps them and parking it, parked records decoded once when released, the
HPA controller parked until its first HPA, and writes that need the whole pod."""

import pytest
from controller_builders import NOT_READY, UNREACHABLE, node, pod, taint, toleration
from hpa_builders import hpa, target, worker
from test_hpa import hpa_step

from cluster.api.codec import decode, encode
from cluster.api.requests import Delete, UpdateStatus
from cluster.controllers import podrecord
from cluster.controllers.manager import ControllerManager
from cluster.controllers.ownedpods import ParkedPods
from cluster.controllers.podgc import PodGCReconciler
from cluster.controllers.podrecord import PodRecords
from cluster.controllers.reconciler import ReconcilerStep
from cluster.controllers.tainteviction import TaintEvictionReconciler
from cluster.controllers.writes import Writes, requests
from cluster.runtime.component import WatchEvent

DEFAULTS = [toleration(NOT_READY, 300), toleration(UNREACHABLE, 300)]
INF = float("-inf")


# ---- the record ----------------------------------------------------------------------------

FIELDS = [
    # (case, pod, (key, node, phase, evicted, terminating, created, terminal))
    (
        "unbound and pending",
        pod(node_name=None, phase="Pending"),
        (("default", "p"), "", "Pending", False, False, INF, False),
    ),
    ("bound and running", pod(ns="team", created=5), (("team", "p"), "n1", "Running", False, False, INF, False)),
    ("terminating", pod(terminating=True), (("default", "p"), "n1", "Running", False, True, INF, False)),
    (
        "succeeded: its creation read",
        pod(phase="Succeeded", created=7),
        (("default", "p"), "n1", "Succeeded", False, False, 7.0, True),
    ),
    (
        "evicted",
        pod(phase="Failed", reason="Evicted", created=3),
        (("default", "p"), "n1", "Failed", True, False, 3.0, True),
    ),
    (
        "failed otherwise",
        pod(phase="Failed", reason="OOMKilled"),
        (("default", "p"), "n1", "Failed", False, False, 0.0, True),
    ),
    ("no phase at all", {"metadata": {"name": "x"}}, (("", "x"), "", "", False, False, INF, False)),
]


@pytest.mark.parametrize("case,obj,want", FIELDS, ids=[c[0] for c in FIELDS])
def test_a_record_holds_what_pod_gc_and_the_taint_manager_read(case, obj, want):
    rec = PodRecords().make(obj, None)
    assert (rec.key, rec.node, rec.phase, rec.evicted, rec.terminating, rec.created, rec.terminal) == want
    assert rec.pod() == obj and rec.pod() is not rec.pod()  # decoded afresh each time


def test_a_terminal_pod_without_a_readable_creation_time_sorts_first():
    p = pod(phase="Succeeded")
    p["metadata"]["creationTimestamp"] = "yesterday"
    assert PodRecords().make(p, None).created == INF
    del p["metadata"]["creationTimestamp"]
    assert PodRecords().make(p, None).created == INF


def test_the_bytes_given_are_kept_as_they_are_and_missing_ones_are_encoded():
    p = pod()
    raw = encode(p)
    assert PodRecords().make(p, raw).raw is raw
    assert decode(PodRecords().make(p, None).raw) == p


def test_a_key_given_is_the_records_own():
    key = ("default", "p")
    assert PodRecords().make(pod(), None, key).key is key


def _reordered(t: dict) -> dict:
    return dict(reversed(list(t.items())))


SHARING = [
    # (case, tolerations of the first pod, of the second, shared by identity?)
    ("the same defaults", DEFAULTS, [dict(t) for t in DEFAULTS], True),
    ("the same, fields in another order", DEFAULTS, [_reordered(t) for t in DEFAULTS], True),
    ("different seconds", DEFAULTS, [toleration(NOT_READY, 300), toleration(UNREACHABLE, 60)], False),
    ("another order of the tolerations", DEFAULTS, list(reversed(DEFAULTS)), False),
    ("a nested value: kept, not shared", [{"key": "k", "x": {"a": 1}}], [{"key": "k", "x": {"a": 1}}], False),
]


@pytest.mark.parametrize("case,first,second,shared", SHARING, ids=[c[0] for c in SHARING])
def test_equal_tolerations_are_shared_between_records(case, first, second, shared):
    records = PodRecords()
    a = records.make(pod("a", tolerations=first), None)
    b = records.make(pod("b", tolerations=second), None)
    assert (a.tolerations is b.tolerations) is shared
    assert b.tolerations == second  # shared or not, the pod's own tolerations as it has them


@pytest.mark.parametrize("tolerations", [None, []])
def test_none_and_empty_tolerations_stay_as_the_pod_has_them(tolerations):
    rec = PodRecords().make(pod(tolerations=tolerations), None)
    assert rec.tolerations == tolerations and type(rec.tolerations) is type(tolerations)


def test_the_sharing_table_starts_again_when_full(monkeypatch):
    monkeypatch.setattr(podrecord, "MAX_SHARED_TOLERATIONS", 2)
    records = PodRecords()
    lists = [[toleration(f"k{i}", 10)] for i in range(3)]
    first = [records.make(pod(f"p{i}", tolerations=t), None).tolerations for i, t in enumerate(lists)]
    again = records.make(pod("q", tolerations=[toleration("k0", 10)]), None).tolerations
    assert again == first[0] and again is not first[0]  # forgotten with the full table, equal all the same


# ---- parked pods -----------------------------------------------------------------------------


def test_parked_records_are_decoded_on_release_and_shared_with_the_next_released():
    shared = {("default", "b"): PodRecords().make(pod("b"), None), ("default", "a"): pod("a")}
    first, second = ParkedPods(), ParkedPods()
    first.share(shared)
    second.share(shared)
    released = first.release()
    assert released == [pod("a"), pod("b")] and not first.on
    assert all(a is b for a, b in zip(second.release(), released))  # one decoded copy for both
    assert first.release() == [] and second.release() == []


# ---- through the manager --------------------------------------------------------------------


class _Controller:
    """The manager's ``Controller`` shape, every part declared: no records, no parking."""

    name = "probe"
    kinds: tuple[str, ...] = ("Pod",)
    takes_records = False
    parking = None

    def on_pod_record(self, etype, rec, now):
        raise AssertionError("declares no records")

    def on_lease_head(self, etype, head, now):
        return False

    def sync(self, now):
        return Writes()

    def on_failed(self, request, error, now):
        pass

    def next_wakeup(self):
        return None

    def metrics(self):
        return {}


class _Keeper(_Controller):
    """Keeps records (declares ``takes_records``): hears pods only through ``on_pod_record``."""

    takes_records = True

    def __init__(self):
        self.records = []

    def on_event(self, kind, etype, obj, now):
        raise AssertionError("a record keeper hears pods as records")

    def on_pod_record(self, etype, rec, now):
        self.records.append((etype, rec))


class _Parker(_Controller):
    """Parked until its first Owner (hears pods as dicts after that)."""

    kinds = ("Owner", "Pod")

    def __init__(self):
        self.parking, self.released = ParkedPods(), []

    def on_event(self, kind, etype, obj, now):
        assert kind == "Owner", "parked: hears no pods"
        self.released = self.parking.release()


def _ev(etype, p):
    return WatchEvent("Pod", etype, p, encode(p))


def test_one_record_per_pod_event_for_every_keeper_and_the_parked_copy_is_that_record():
    a, b, parker = _Keeper(), _Keeper(), _Parker()
    m = ControllerManager([a, parker, b])
    events = [_ev("ADDED", pod("x")), _ev("ADDED", pod("y", phase="Pending")), _ev("DELETED", pod("y"))]
    m.on_events(events, 1.0)
    assert [(e, r.key[1]) for e, r in a.records] == [("ADDED", "x"), ("ADDED", "y"), ("DELETED", "y")]
    assert all(ra is rb for (_, ra), (_, rb) in zip(a.records, b.records))  # the same record
    assert a.records[0][1].raw is events[0].raw  # the bytes as they came, not a copy
    assert m._latest == {("default", "x"): a.records[0][1]}  # parked as the record
    m.on_events([_ev("MODIFIED", pod("x", phase="Succeeded"))], 1.5)
    (_, old), (_, new) = a.records[0], a.records[-1]
    assert new.phase == "Succeeded" and new.key is old.key  # one key tuple per pod, event after event
    assert m._latest == {("default", "x"): new}
    m.on_events([WatchEvent("Owner", "ADDED", {})], 2.0)
    assert parker.released == [pod("x", phase="Succeeded")] and m._latest is None


def test_pods_before_the_first_hpa_are_parked_then_counted_as_if_seen_after_it():
    pods = [target(replicas=2), worker("web-a", "1250m"), worker("web-b", "1250m")]
    late = hpa_step()
    for o in pods:
        late.on_event(o["kind"], "ADDED", o, 0.0)
    assert late.parking.on and late.cache.list("Pod") == []
    late.on_event("HorizontalPodAutoscaler", "ADDED", hpa(), 0.0)
    early = hpa_step()
    for o in [hpa(), *pods]:
        early.on_event(o["kind"], "ADDED", o, 0.0)
    assert not late.parking.on and late.cache.list("Pod") == early.cache.list("Pod") != []
    assert requests(late.sync(100.0)) == requests(early.sync(100.0))


# ---- the whole pod, decoded from the latest bytes when a write needs it ----------------------


def test_pod_gc_writes_the_status_of_the_latest_version_it_kept():
    gc, records = ReconcilerStep(PodGCReconciler, records=PodRecords()), PodRecords()
    first = pod(node_name="ghost", podIP="10.0.0.1")
    latest = pod(node_name="ghost", podIP="10.0.0.2", conditions=[{"type": "Ready", "status": "True"}])
    gc.on_pod_record("ADDED", records.make(first, encode(first)), 0.0)
    gc.sync(0.0)  # the manager syncs at each event's time: the node missing since 0
    gc.on_pod_record("MODIFIED", records.make(latest, encode(latest)), 1.0)
    [(ns, name, uid, status)] = [
        (r.namespace, r.name, r.uid, r.status) for r in gc.sync(40.0).requests if isinstance(r, UpdateStatus)
    ]
    assert (ns, name, uid, status["podIP"], status["phase"]) == ("default", "p", "uid-p", "10.0.0.2", "Failed")
    assert [c["type"] for c in status["conditions"]] == ["Ready", "DisruptionTarget"]


def test_the_taint_manager_names_the_pod_and_its_uid_from_the_kept_bytes():
    c, records = ReconcilerStep(TaintEvictionReconciler, records=PodRecords()), PodRecords()
    c.on_event("Node", "ADDED", node(taints=[taint("dedicated")]), 0.0)
    p = pod(uid="uid-42", tolerations=[])
    c.on_pod_record("ADDED", records.make(p, encode(p)), 0.0)
    w = c.sync(0.0)
    assert [r for r in w.requests if isinstance(r, Delete)] == [Delete("Pod", "default", "p", "uid-42", None)]
    assert [(e["involvedObject"]["name"], e["involvedObject"]["uid"]) for e in w.events] == [("p", "uid-42")]
