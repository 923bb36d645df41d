"""Scheduler-level queue behaviour: backoff in cycles, event-driven moves, gates, wakeups."""

from __future__ import annotations

from sched_builders import bound, make_node, make_pod, make_scheduler

from cluster.scheduler import PluginSpec, ProfileConfig, Registry
from cluster.scheduler.framework import PreBindPlugin
from cluster.scheduler.plugins import DEFAULT_PLUGINS
from cluster.scheduler.status import SUCCESS, Status


def test_pod_that_fits_nowhere_is_scheduled_when_a_fitting_node_is_added():
    s = make_scheduler([make_node("small", cpu="1")], [make_pod("big").req(cpu="2")])
    out = s.schedule(0.0)
    assert out.binds == [] and s.queue.unschedulable_count() == 1
    assert out.events[0]["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu."
        " preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    s.on_node("ADDED", make_node("large", cpu="4"), 5.0)  # after the pod's 1 s backoff
    assert s.queue.active_count() == 1
    assert s.schedule(5.0).binds == [("default", "big", "uid-default-big", "large")]


def test_node_added_during_backoff_schedules_when_the_backoff_ends_without_pop_from_backoff():
    s = make_scheduler([make_node("small", cpu="1")], [make_pod("big").req(cpu="2")], pop_from_backoff=False)
    s.schedule(0.0)
    s.on_node("ADDED", make_node("large", cpu="4"), 0.4)
    assert s.queue.backoff_count() == 1
    assert s.next_wakeup() == 1.0
    assert not s.has_ready()
    assert s.schedule(0.9).binds == []
    assert [b[3] for b in s.schedule(1.0).binds] == ["large"]


def test_node_added_during_backoff_schedules_at_once_when_activeq_is_empty():
    s = make_scheduler([make_node("small", cpu="1")], [make_pod("big").req(cpu="2")])
    s.schedule(0.0)
    s.on_node("ADDED", make_node("large", cpu="4"), 0.4)
    assert s.queue.backoff_count() == 1 and s.has_ready()
    assert [b[3] for b in s.schedule(0.4).binds] == ["large"]


def test_a_busy_activeq_keeps_backoff_pods_waiting():
    s = make_scheduler([make_node("small", cpu="1")], [make_pod("big").req(cpu="2")])
    s.schedule(0.0)
    s.on_node("ADDED", make_node("large", cpu="4"), 0.4)
    s.on_pod("ADDED", make_pod("tiny").req(cpu="100m"), 0.5)
    out = s.schedule(0.5, max_pods=1)
    assert [b[1] for b in out.binds] == ["tiny"]
    assert s.queue.backoff_count() == 1


def test_heartbeat_only_node_update_does_not_wake_pods():
    node = make_node("small", cpu="1")
    s = make_scheduler([node], [make_pod("big").req(cpu="2")])
    s.schedule(0.0)
    s.on_node("MODIFIED", node.copy_().heartbeat("2026-01-01T00:00:10Z"), 10.0)
    assert s.queue.unschedulable_count() == 1


def test_unschedulable_pod_retried_by_the_leftover_flush():
    s = make_scheduler([make_node("small", cpu="1")], [make_pod("big").req(cpu="2")])
    s.schedule(0.0)
    assert s.schedule(300.0).events == []  # exactly 5 minutes: not yet
    # It asks to wake at the first instant past the limit, when the flush does move the pod
    # (waking at the limit itself found nothing due and asked for the same instant again:
    # the local runtime's livelock guard then stopped `kubemu serve`).
    wake = s.next_wakeup()
    assert 300.0 < wake < 300.000001
    out = s.schedule(wake)
    assert out.events and out.events[0]["reason"] == "FailedScheduling"
    assert 600.0 < s.next_wakeup() < 600.000001  # parked again, for the next five minutes


def test_next_wakeup_includes_assumed_pod_expiry():
    s = make_scheduler([make_node("n1")], [make_pod("a")])
    s.schedule(2.0)
    assert s.next_wakeup() == 32.0


# ---- assigned-pod events ---------------------------------------------------------------


def affinity_pod():
    return make_pod("follower").pod_affinity("kubernetes.io/hostname", {"matchLabels": {"app": "db"}})


def test_assigned_pod_add_wakes_pods_whose_affinity_it_matches():
    s = make_scheduler([make_node("n1")])
    s.on_pod("ADDED", affinity_pod(), 0.0)
    s.on_pod("ADDED", make_pod("other").node_selector(disk="ssd"), 0.0)
    parked = {qp.pinfo.name for qp in _fail_all(s, 0.0)}
    assert parked == {"follower", "other"}
    s.on_pod("ADDED", make_pod("db-0").label("app", "db").node("n1"), 5.0)
    assert s.queue.in_active("uid-default-follower")
    assert s.queue.in_unschedulable("uid-default-other")


def test_assigned_pod_add_that_does_not_match_moves_nothing():
    s = make_scheduler([make_node("n1")])
    s.on_pod("ADDED", affinity_pod(), 0.0)
    _fail_all(s, 0.0)
    s.on_pod("ADDED", make_pod("web-0").label("app", "web").node("n1"), 5.0)
    assert s.queue.in_unschedulable("uid-default-follower")


def test_confirming_our_own_bind_counts_as_an_assigned_pod_add():
    s = make_scheduler([make_node("n1")])
    s.on_pod("ADDED", affinity_pod(), 0.0)
    _fail_all(s, 0.0)
    db = make_pod("db-0").label("app", "db")
    s.on_pod("ADDED", db, 5.0)
    out = s.schedule(5.0)
    assert [b[1] for b in out.binds] == ["db-0"]
    s.on_pod("MODIFIED", bound(db, "n1"), 6.0)
    assert s.queue.in_active("uid-default-follower")


def _fail_all(s, now):
    s.schedule(now)
    return s.queue.unschedulable_pods()


# ---- namespaces ------------------------------------------------------------------------


def test_namespace_labels_are_kept_for_namespace_selectors():
    s = make_scheduler()
    ns = {"kind": "Namespace", "metadata": {"name": "team-a", "labels": {"team": "a"}}}
    s.on_namespace("ADDED", ns, 0.0)
    assert s.cache.snapshot().namespace_labels("team-a") == {"team": "a"}
    s.on_namespace("DELETED", ns, 1.0)
    assert s.cache.snapshot().namespace_labels("team-a") is None


# ---- scheduling gates ------------------------------------------------------------------


def gated(name="g"):
    p = make_pod(name)
    p["spec"]["schedulingGates"] = [{"name": "example.com/quota"}]
    return p


def test_gated_pod_waits_until_its_gates_are_removed():
    s = make_scheduler([make_node("n1")], [gated()])
    assert s.queue.is_gated("uid-default-g")
    assert s.schedule(0.0).binds == []
    s.on_node("ADDED", make_node("n2"), 1.0)
    assert s.queue.is_gated("uid-default-g")  # cluster events do not move gated pods
    assert s.schedule(400.0).binds == []  # nor does the leftover flush
    s.on_pod("MODIFIED", make_pod("g"), 401.0)
    assert [b[1] for b in s.schedule(401.0).binds] == ["g"]


def test_gate_plugin_disabled_lets_gated_pods_through():
    specs = tuple(p for p in DEFAULT_PLUGINS if p.name != "SchedulingGates")
    s = make_scheduler([make_node("n1")], [gated()], profiles=(ProfileConfig(plugins=specs),))
    assert [b[1] for b in s.schedule(0.0).binds] == ["g"]


# ---- PreBind and Bind ------------------------------------------------------------------


class FailingPreBind(PreBindPlugin):
    NAME = "FailingPreBind"

    def __init__(self, args=None, handle=None):
        self.fail = (args or {}).get("fail", True)

    def pre_bind(self, state, pod, node_name):
        return Status.error("volume not ready") if self.fail else SUCCESS


def _with_prebind(fail):
    specs = DEFAULT_PLUGINS + (PluginSpec("FailingPreBind", args={"fail": fail}),)
    return make_scheduler(
        [make_node("n1")],
        [make_pod("a")],
        profiles=(ProfileConfig(plugins=specs),),
        registry=Registry({"FailingPreBind": FailingPreBind}),
    )


def test_prebind_failure_forgets_the_pod_and_backs_off():
    s = _with_prebind(True)
    out = s.schedule(0.0)
    assert out.binds == [] and out.events[0]["message"] == "volume not ready"
    assert out.pod_conditions[0][3]["reason"] == "SchedulerError"
    assert not s.cache.is_assumed("uid-default-a") and s.queue.backoff_count() == 1


def test_prebind_success_binds():
    assert _with_prebind(False).schedule(0.0).binds == [("default", "a", "uid-default-a", "n1")]


def test_assigned_pod_relabelled_to_match_wakes_the_affinity_pod():
    web = make_pod("x").label("app", "web").node("n1")
    s = make_scheduler([make_node("n1")], [web])
    s.on_pod("ADDED", affinity_pod(), 0.0)
    _fail_all(s, 0.0)
    s.on_pod("MODIFIED", make_pod("x").label("app", "db").node("n1"), 5.0)
    assert s.queue.in_active("uid-default-follower")


def test_assigned_pod_leaving_a_spread_selector_wakes_the_spread_pod():
    """The old version matched the constraint's selector: relabelling it changes the counts."""
    zone = "topology.kubernetes.io/zone"
    nodes = [make_node("a").label(zone, "a"), make_node("b", cpu="1").label(zone, "b")]
    crowd = [make_pod(f"w{i}").label("app", "web").node("a") for i in range(2)]
    s = make_scheduler(nodes, crowd)
    # Zone b is too small for it; in zone a it would make the skew 3 > 2.
    s.on_pod("ADDED", make_pod("p").label("app", "web").req(cpu="2").spread(zone, max_skew=2), 0.0)
    out = s.schedule(0.0)
    assert "didn't match pod topology spread constraints" in out.events[0]["message"]
    assert s.queue.in_unschedulable("uid-default-p")
    s.on_pod("MODIFIED", make_pod("w0").label("app", "other").node("a"), 5.0)
    assert s.queue.in_active("uid-default-p")
    assert [b[1] for b in s.schedule(5.0).binds] == ["p"]


def test_assigned_pod_status_update_moves_nothing():
    web = make_pod("x").label("app", "web").node("n1")
    s = make_scheduler([make_node("n1")], [web])
    s.on_pod("ADDED", affinity_pod(), 0.0)
    _fail_all(s, 0.0)
    s.on_pod("MODIFIED", web.copy_().phase("Running"), 5.0)
    assert s.queue.in_unschedulable("uid-default-follower")


def test_relabel_while_the_bind_is_in_flight_is_indexed():
    from cluster.api.selectors import LabelSelector

    s = make_scheduler([make_node("n1")], [make_pod("a").label("app", "old")])
    assert [b[1] for b in s.schedule(0.0).binds] == ["a"]
    s.on_pod("MODIFIED", make_pod("a").label("app", "new"), 0.5)  # still pending in the API
    index = s.cache.snapshot().pods
    assert [p.name for p in index.select(["default"], LabelSelector.parse("app=new"))] == ["a"]
    assert index.select(["default"], LabelSelector.parse("app=old")) == []
    s.on_pod("MODIFIED", make_pod("a").label("app", "new").node("n1"), 1.0)  # the bind confirmed
    assert [p.name for p in index.select(["default"], LabelSelector.parse("app=new"))] == ["a"]


def _spread_blocked(extra_nodes=()):
    zone = "topology.kubernetes.io/zone"
    nodes = [make_node("a").label(zone, "a"), make_node("b", cpu="1").label(zone, "b"), *extra_nodes]
    crowd = [make_pod(f"w{i}").label("app", "web").node("a") for i in range(2)]
    s = make_scheduler(nodes, crowd)
    s.on_pod("ADDED", make_pod("p").label("app", "web").req(cpu="2").spread(zone, max_skew=2), 0.0)
    s.schedule(0.0)
    assert s.queue.in_unschedulable("uid-default-p")
    return s, crowd


def test_matching_pod_starting_to_terminate_wakes_the_spread_pod():
    s, crowd = _spread_blocked()
    s.on_pod("MODIFIED", crowd[0].copy_().terminating(), 5.0)
    assert s.queue.in_active("uid-default-p")


def test_node_delete_wakes_the_spread_pod():
    s, _ = _spread_blocked()
    s.on_node("DELETED", make_node("b"), 5.0)  # zone b, the emptiest domain, is gone
    assert s.queue.in_active("uid-default-p")
    assert [b[3] for b in s.schedule(5.0).binds] == ["a"]


def test_pod_narrowed_to_a_missing_node_waits_for_a_node_event():
    """NodeAffinity's PreFilterResult names n2, which does not exist: the pod is parked
    with NodeAffinity as a rejector (not retried on every backoff), and adding n2 wakes it."""
    pod = make_pod("p").node_affinity({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]})
    s = make_scheduler([make_node("n1")], [pod])
    out = s.schedule(0.0)
    assert out.events[0]["message"] == (
        "0/1 nodes are available: 1 node is filtered out by the prefilter result."
        " preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert s.queue.in_unschedulable("uid-default-p")
    assert s.queue.get("uid-default-p").unschedulable_plugins == {"NodeAffinity"}
    s.on_node("ADDED", make_node("n2"), 5.0)
    assert [b[3] for b in s.schedule(5.0).binds] == ["n2"]


def test_relabel_that_satisfies_the_node_selector_moves_the_pod():
    node = make_node("n1")
    s = make_scheduler([node], [make_pod("p").node_selector(disk="ssd")])
    s.schedule(0.0)
    s.on_node("MODIFIED", node.copy_().label("disk", "hdd"), 5.0)
    assert s.queue.in_unschedulable("uid-default-p")
    s.on_node("MODIFIED", node.copy_().label("disk", "ssd"), 6.0)
    assert [b[1] for b in s.schedule(6.0).binds] == ["p"]
