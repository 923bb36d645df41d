"""The controller-manager's routing and writes: which controller hears what, merged writes
in call order, the earliest wakeup, and the two adapted controllers."""

from controller_builders import UNREACHABLE, node, pod, summary

from cluster.api.errors import Conflict, Forbidden, NotFound
from cluster.api.patches import NodeConditions, NodeTaints, PodConditions
from cluster.api.requests import Create, Delete, Patch, RecordEvent, Update, UpdateStatus
from cluster.controllers.disruption import DisruptionReconciler
from cluster.controllers.manager import ControllerManager
from cluster.controllers.nodetaints import NodeTaintReconciler
from cluster.controllers.ownedpods import ParkedPods
from cluster.controllers.reconciler import ReconcilerStep
from cluster.controllers.writes import ORDER, Writes, requests
from cluster.runtime.component import WatchEvent as Ev


class _Probe:
    """The manager's ``Controller`` shape, every part declared."""

    name, takes_records, parking = "probe", False, None

    def __init__(self, kinds, wakeup=None, writes=None):
        self.kinds, self.wakeup, self.writes, self.seen = kinds, wakeup, writes or Writes(), []

    def on_pod_record(self, etype, rec, now):
        raise AssertionError("declares no records")

    def on_lease_head(self, etype, head, now):
        return False  # needs the decoded Lease

    def on_failed(self, request, error, now):
        pass

    def metrics(self):
        return {}

    def on_event(self, kind, etype, obj, now):
        self.seen.append((kind, etype, now))

    def sync(self, now):
        return self.writes

    def next_wakeup(self):
        return self.wakeup


def test_default_kinds_list_nodes_first():
    kinds = ControllerManager().kinds
    assert kinds[:10] == [
        "Node",
        "Lease",
        "PodDisruptionBudget",
        "Deployment",
        "ReplicaSet",
        "DaemonSet",
        "StatefulSet",
        "CronJob",
        "Job",
        "Pod",
    ]
    assert "Namespace" in kinds[10:] and "Event" not in kinds  # the rest: the GC's and namespace controller's


def test_events_reach_the_controllers_that_want_them_and_writes_merge():
    a = _Probe(("Node",), wakeup=30.0, writes=Writes(node_taints=[("n1", [], [])]))
    b = _Probe(
        ("Pod", "Node"),
        wakeup=12.5,
        writes=Writes(pod_deletes=[("d", "p", "u", None)], node_taints=[("n2", [], [])]),
    )
    c = _Probe(("Lease",))
    m = ControllerManager([a, b, c])
    m.on_events([Ev("Node", "ADDED", {}), Ev("Pod", "MODIFIED", {}), Ev("Event", "ADDED", {})], 4.0)
    assert a.seen == [("Node", "ADDED", 4.0)]
    assert b.seen == [("Node", "ADDED", 4.0), ("Pod", "MODIFIED", 4.0)] and c.seen == []
    out = m.sync(5.0)
    # Merged row by row (a's taint, then b's, then b's pod delete), whatever order b made them in.
    assert requests(out) == [
        Patch("Node", "", "n1", "", NodeTaints((), ())),
        Patch("Node", "", "n2", "", NodeTaints((), ())),
        Delete("Pod", "d", "p", "u", None),
    ]
    assert out.count() == 3 and bool(out) and not Writes()
    assert m.next_wakeup() == 12.5
    assert ControllerManager([c]).next_wakeup() is None


def test_every_writes_field_has_a_place_in_the_order():
    assert [f for f, _ in ORDER] == list(Writes().__dataclass_fields__)


def test_writes_become_typed_requests_in_the_order_they_must_land():
    cond = {"type": "DisruptionTarget", "status": "True"}
    w = Writes(
        events=[{"kind": "Event"}],
        pod_deletes=[("default", "p", "u1", None)],
        pod_conditions=[("default", "p", "u1", [cond], None)],
        pod_creates=[{"kind": "Pod"}],
        pod_updates=[{"kind": "Pod", "metadata": {"name": "q"}}],
        node_taints=[("n1", [{"key": "k"}], [])],
        node_conditions=[("n1", [cond])],
        replicaset_status=[("default", "web", "u2", {"replicas": 1})],
    )
    assert requests(w) == [
        Patch("Node", "", "n1", "", NodeConditions((cond,))),
        Patch("Node", "", "n1", "", NodeTaints(({"key": "k"},), ())),
        Create({"kind": "Pod"}),
        Update({"kind": "Pod", "metadata": {"name": "q"}}),
        Patch("Pod", "default", "p", "u1", PodConditions((cond,), None)),
        Delete("Pod", "default", "p", "u1", None),
        UpdateStatus("ReplicaSet", "default", "web", "u2", {"replicas": 1}),
        RecordEvent({"kind": "Event"}),
    ]


def test_node_taint_step_checks_the_latest_copy_once():
    step = ReconcilerStep(NodeTaintReconciler, sort_keys=True)
    stale = node(ready="True")
    latest = node(ready="Unknown", rv="2")
    step.on_event("Node", "MODIFIED", stale, 0)
    step.on_event("Node", "MODIFIED", latest, 0)
    assert summary(step.sync(0)) == [("taint+", "n1", UNREACHABLE, "NoSchedule")]
    assert summary(step.sync(1)) == []
    step.on_event("Node", "DELETED", latest, 2)
    assert summary(step.sync(2)) == [] and step.next_wakeup() is None


def _disruption_step() -> ReconcilerStep:
    return ReconcilerStep(DisruptionReconciler, sort_keys=True, parking=ParkedPods())


def test_disruption_step_writes_carry_the_pdb_uid():
    step = _disruption_step()
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b", "namespace": "default", "uid": "pdb-uid"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    step.on_event("PodDisruptionBudget", "ADDED", pdb, 0)
    p = pod()
    p["metadata"]["labels"] = {"app": "web"}
    step.on_event("Pod", "ADDED", p, 0)
    (write,) = requests(step.sync(0))
    assert (write.kind, write.namespace, write.name, write.uid) == ("PodDisruptionBudget", "default", "b", "pdb-uid")
    assert write.status["expectedPods"] == 1
    assert step.next_wakeup() is None


class _Listener(_Probe):
    def __init__(self):
        super().__init__(("Pod",))
        self.failures = []

    def on_failed(self, request, error, now):
        kind = request.obj["kind"] if isinstance(request, Create) else request.kind
        self.failures.append((type(request).__name__, kind, error.code, now))


def test_every_refusal_reaches_every_controller_in_order():
    """Each controller hears every refused request (a reconciler step keeps its own, by the
    key that asked for it); the manager looks nothing up by name."""
    first, second = _Listener(), _Listener()
    m = ControllerManager([first, second])
    m.on_failed(Create({"kind": "Pod", "metadata": {"name": "web-abcde"}}), Forbidden("no"), 3.0)
    m.on_failed(Delete("Pod", "default", "p", "u1"), NotFound("gone"), 4.0)
    m.on_failed(UpdateStatus("ReplicaSet", "default", "web", "u2", {}), Conflict("stale"), 5.0)
    m.on_failed(Patch("Node", "", "n1", "", NodeTaints()), NotFound("gone"), 6.0)
    heard = [
        ("Create", "Pod", 403, 3.0),
        ("Delete", "Pod", 404, 4.0),
        ("UpdateStatus", "ReplicaSet", 409, 5.0),
        ("Patch", "Node", 404, 6.0),
    ]
    assert first.failures == heard and second.failures == heard


def test_disruption_counts_pods_seen_before_the_first_budget():
    step = _disruption_step()
    early, late = pod(), pod()
    early["metadata"].update(name="early", labels={"app": "web"})
    late["metadata"].update(name="late", labels={"app": "web"})
    step.on_event("Pod", "ADDED", early, 0)
    step.on_event("Pod", "ADDED", late, 0)
    step.on_event("Pod", "DELETED", late, 0)
    assert not step.sync(0) and step.parking.on  # no budget: nothing to write, the pods parked
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b", "namespace": "default", "uid": "pdb-uid"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    step.on_event("PodDisruptionBudget", "ADDED", pdb, 1)
    (write,) = requests(step.sync(1))
    assert write.status["expectedPods"] == 1 and not step.parking.on  # the early pod counted, the deleted one not


def test_a_controllers_events_about_one_object_are_rationed_as_client_go_does():
    from cluster.api.events import make_event

    web = {"kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default", "uid": "u1"}}
    db = {"kind": "ReplicaSet", "metadata": {"name": "db", "namespace": "default", "uid": "u2"}}

    def created(obj, n):
        return [make_event(obj, "SuccessfulCreate", f"Created pod: {i}", 0.0, component="rs") for i in range(n)]

    probe = _Probe(("ReplicaSet",), writes=Writes(events=created(web, 30) + created(db, 3)))
    m = ControllerManager([probe])
    out = m.sync(0.0)
    assert [e["involvedObject"]["name"] for e in out.events] == ["web"] * 25 + ["db"] * 3
    # The same 33 again: web's bucket has 299/300 of a token, db's has 22.
    assert [e["involvedObject"]["name"] for e in m.sync(299.0).events] == ["db"] * 3
    assert [e["involvedObject"]["name"] for e in m.sync(899.0).events] == ["web"] * 2 + ["db"] * 3


def test_parked_controllers_hear_no_pod_events_and_get_the_latest_pods_with_their_first_owner():
    from cluster.controllers.ownedpods import ParkedPods

    class Parker(_Probe):
        def __init__(self):
            super().__init__(("Owner", "Pod"))
            self.parking, self.released = ParkedPods(), None

        def on_event(self, kind, etype, obj, now):
            super().on_event(kind, etype, obj, now)
            if kind == "Owner":
                self.released = [(p["metadata"]["name"], p["v"]) for p in self.parking.release()]

    def p(name, v=1):
        return {"metadata": {"namespace": "default", "name": name}, "v": v}

    parker, plain = Parker(), _Probe(("Pod",))
    m = ControllerManager([parker, plain])
    m.on_events(
        [Ev("Pod", "ADDED", p("b")), Ev("Pod", "ADDED", p("a")), Ev("Pod", "MODIFIED", p("a", 2))]
        + [Ev("Pod", "ADDED", p("c")), Ev("Pod", "DELETED", p("c"))],
        1.0,
    )
    assert parker.seen == [] and len(plain.seen) == 5
    m.on_events([Ev("Owner", "ADDED", {}), Ev("Pod", "ADDED", p("d"))], 2.0)
    assert parker.released == [("a", 2), ("b", 1)]  # the latest copies, in key order, c gone
    assert parker.seen == [("Owner", "ADDED", 2.0), ("Pod", "ADDED", 2.0)]
    assert len(plain.seen) == 6
