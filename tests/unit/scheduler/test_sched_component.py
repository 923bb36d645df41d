"""The scheduler as a component: batches in, typed writes out, refused binds back in."""

from sched_builders import make_node, make_pod

from cluster.api.codec import encode
from cluster.api.errors import AlreadyAssigned, Conflict, InternalError, NotFound
from cluster.api.patches import PodConditions
from cluster.api.requests import Bind, Delete, ListResult, Patch, RecordEvent
from cluster.runtime.component import START, Batch, Failure, WatchEvent
from cluster.runtime.reflector import Reflector
from cluster.scheduler.component import SchedulerComponent


def added(*objs):
    return [WatchEvent(o["kind"], "ADDED", o) for o in objs]


def kinds(writes):
    return [type(w).__name__ for w in writes]


def test_a_batch_schedules_and_writes_bind_then_event():
    c = SchedulerComponent(seed=1)
    result = c.reconcile(Batch(1.0, added(make_node("n1"), make_pod("a").req(cpu="1")), boot=START))
    assert kinds(result.writes) == ["Bind", "RecordEvent"]
    assert result.writes[0] == Bind("default", "a", "uid-default-a", "n1")
    assert result.writes[1].event["reason"] == "Scheduled"
    assert result.wake_at is not None and result.next_change == result.wake_at  # the bind's assumption expiry


def test_an_unschedulable_pod_gets_its_condition_and_event_and_the_component_goes_quiet():
    c = SchedulerComponent(seed=1)
    result = c.reconcile(Batch(1.0, added(make_node("n1", cpu="1"), make_pod("big").req(cpu="4"))))
    assert kinds(result.writes) == ["Patch", "RecordEvent", "Patch"]  # the last: its SchedulingResult (explain.py)
    assert result.writes[2].kind == "SchedulingResult"
    patch = result.writes[0]
    assert isinstance(patch, Patch) and isinstance(patch.patch, PodConditions)
    assert patch.patch.conditions[0]["reason"] == "Unschedulable" and patch.patch.nominated_node is None
    assert result.writes[1].event["reason"] == "FailedScheduling"
    assert result.next_change is None or result.next_change >= 1.0 + 60  # only the 5-minute flush is left


def test_more_ready_pods_than_a_batch_asks_to_run_again_at_once():
    c = SchedulerComponent(seed=1)
    pods = [make_pod(f"p{i}").req(cpu="10m") for i in range(600)]
    result = c.reconcile(Batch(2.0, added(make_node("n1", cpu="64", pods="1000"), *pods)))
    assert kinds(result.writes).count("Bind") == 500
    assert result.wake_at == 2.0 and result.next_change == 2.0


def test_a_refused_bind_is_forgotten_and_retried_unless_the_pod_is_bound_or_gone():
    c = SchedulerComponent(seed=1)
    first = c.reconcile(Batch(1.0, added(make_node("n1"), make_pod("a").req(cpu="1"))))
    (bind,) = [w for w in first.writes if isinstance(w, Bind)]
    again = c.reconcile(Batch(1.5, failures=[Failure(bind, InternalError("etcd timeout"))]))
    events = [w.event for w in again.writes if isinstance(w, RecordEvent)]
    assert [e["reason"] for e in events] == ["FailedScheduling"]
    assert c.scheduler.stats["bindFailures"] == 1
    retried = c.reconcile(Batch(20.0))  # past the backoff
    assert [w for w in retried.writes if isinstance(w, Bind)] == [bind]
    gone = c.reconcile(Batch(21.0, failures=[Failure(bind, NotFound('pods "a" not found'))]))
    assert not [w for w in gone.writes if isinstance(w, Bind)] and c.scheduler.stats["bindConflicts"] == 1


def test_a_conflict_naming_the_chosen_node_is_our_own_bind_landing_twice():
    c = SchedulerComponent(seed=1)
    first = c.reconcile(Batch(1.0, added(make_node("n1"), make_node("n2"), make_pod("a").req(cpu="1"))))
    (bind,) = [w for w in first.writes if isinstance(w, Bind)]
    mine = AlreadyAssigned(f'pod a is already assigned to node "{bind.node}"', node=bind.node)
    c.reconcile(Batch(1.1, failures=[Failure(bind, mine)]))
    assert c.scheduler.stats["bindConflicts"] == 0 and c.scheduler.cache.is_assumed("uid-default-a")
    other = "n2" if bind.node == "n1" else "n1"
    theirs = AlreadyAssigned(f'pod a is already assigned to node "{other}"', node=other)
    c.reconcile(Batch(1.2, failures=[Failure(bind, theirs)]))
    assert c.scheduler.stats["bindConflicts"] == 1 and not c.scheduler.cache.is_assumed("uid-default-a")
    deleting = Conflict("pod a is being deleted, cannot be assigned to a host")
    c.reconcile(Batch(1.3, failures=[Failure(bind, deleting)]))
    assert c.scheduler.stats["bindConflicts"] == 2


def test_preemption_writes_the_victims_condition_before_their_delete():
    c = SchedulerComponent(seed=1)
    low = make_pod("low").req(cpu="3").prio(1).node("n1").phase("Running")
    high = make_pod("high").req(cpu="3").prio(100)
    result = c.reconcile(Batch(1.0, added(make_node("n1", cpu="4"), low, high)))
    order = kinds(result.writes)
    assert order.index("Patch") < order.index("Delete") < order.index("RecordEvent")
    (delete,) = [w for w in result.writes if isinstance(w, Delete)]
    assert (delete.name, delete.uid, delete.grace) == ("low", "uid-default-low", None)
    nominations = [
        w.patch.nominated_node for w in result.writes if isinstance(w, Patch) and w.kind == "Pod" and w.name == "high"
    ]
    assert nominations == ["n1"]


def test_a_fresh_scheduler_takes_nominations_an_earlier_one_made_from_the_pods_status():
    c = SchedulerComponent(seed=1)
    nodes = [make_node(f"n-{i}") for i in range(3)]
    a = make_pod("a").req(cpu="1").nominated("n-2")
    b = make_pod("b").req(cpu="1").nominated("a-node-gone-meanwhile")
    result = c.reconcile(Batch(1.0, added(*nodes, a, b)))
    assert sorted((w.name, w.node) for w in result.writes if isinstance(w, Bind)) == [("a", "n-2"), ("b", "n-0")]


def test_inspect_reports_the_counters_and_what_is_pending():
    c = SchedulerComponent(seed=1)
    c.reconcile(Batch(1.0, added(make_node("n1", cpu="1"), make_pod("big").req(cpu="4"))))
    view = c.inspect(1.0)
    assert (view["attempts"], view["unschedulable"], view["pending"]) == (1, 1, 1)


def listed(r: Reflector, *pods) -> list[WatchEvent]:
    """The pod events a (re)list of ``pods`` gives the component through its reflector."""
    return r.on_list("Pod", ListResult(1, [encode(p) for p in pods]))


def test_a_placed_pod_a_relist_reports_deleted_frees_its_node():
    c = SchedulerComponent(seed=1)
    r = Reflector(c.watches())
    node, a, b = make_node("n1", cpu="2"), make_pod("a").req(cpu="2").node("n1"), make_pod("b").req(cpu="2")
    c.reconcile(Batch(1.0, added(node) + listed(r, a)))
    waiting = c.reconcile(Batch(2.0, listed(r, a, b)))
    assert "Bind" not in kinds(waiting.writes)  # no room while a holds the node
    freed = c.reconcile(Batch(3.0, listed(r, b)))  # a was deleted while nobody watched
    assert c.scheduler.cache.pod_info("uid-default-a") is None
    assert [w for w in freed.writes if isinstance(w, Bind)] == [Bind("default", "b", "uid-default-b", "n1")]


def test_a_pending_pod_a_relist_reports_deleted_leaves_the_queue():
    c = SchedulerComponent(seed=1)
    r = Reflector(c.watches())
    c.reconcile(Batch(1.0, added(make_node("n1", cpu="1")) + listed(r, make_pod("big").req(cpu="4"))))
    assert c.scheduler.pending_count() == 1
    c.reconcile(Batch(2.0, listed(r)))
    assert c.scheduler.pending_count() == 0


def test_a_placed_pod_a_relist_shows_recreated_under_its_name_is_replaced():
    c = SchedulerComponent(seed=1)
    r = Reflector(c.watches())
    node, a = make_node("n1", cpu="2"), make_pod("a").req(cpu="2").node("n1")
    c.reconcile(Batch(1.0, added(node) + listed(r, a)))
    # Deleted and created again (a new uid, not placed yet) while the scheduler was not
    # watching: the list shows the same name with a new uid.
    again = make_pod("a", uid="uid-a-again").req(cpu="2")
    out = c.reconcile(Batch(2.0, listed(r, again)))
    assert c.scheduler.cache.pod_info("uid-default-a") is None  # its 2 CPUs are free again
    assert [w for w in out.writes if isinstance(w, Bind)] == [Bind("default", "a", "uid-a-again", "n1")]


def test_a_relist_that_shows_the_same_pods_changes_nothing():
    c = SchedulerComponent(seed=1)
    r = Reflector(c.watches())
    node, a = make_node("n1", cpu="2"), make_pod("a").req(cpu="2").node("n1")
    c.reconcile(Batch(1.0, added(node) + listed(r, a)))
    out = c.reconcile(Batch(2.0, listed(r, a)))
    assert c.scheduler.cache.pod_info("uid-default-a") is not None and not out.writes
