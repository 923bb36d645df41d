"""Framework: registry, profiles, extension points, statuses, diagnosis attribution."""

from __future__ import annotations

import numpy as np
import pytest
from sched_builders import make_node, make_pod, make_scheduler

from cluster.scheduler import PluginSpec, ProfileConfig, Registry, Scheduler, SchedulerConfig
from cluster.scheduler.framework import (
    BindPlugin,
    ClusterEvent,
    FilterPlugin,
    FilterResult,
    PermitPlugin,
    PluginError,
    PreFilterPlugin,
    PreFilterResult,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from cluster.scheduler.plugins import DEFAULT_PLUGINS, default_registry
from cluster.scheduler.status import SKIP, SUCCESS, Code, Diagnosis, Rejection, Status


class LabelFilter(FilterPlugin):
    NAME = "LabelFilter"
    EVENTS = frozenset({ClusterEvent.NODE_LABEL})
    REASON = "node(s) didn't have the label"

    def __init__(self, args=None, handle=None):
        self.key = (args or {}).get("key", "ok")

    def filter(self, state, pod, snap):
        ok = np.array([self.key in snap.node_info(i).labels for i in range(snap.num_nodes)], dtype=bool)
        return FilterResult(ok, [(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, self.REASON, ~ok)])


class PreferNode(ScorePlugin):
    NAME = "PreferNode"

    def __init__(self, args=None, handle=None):
        self.node = (args or {}).get("node", "")
        self.raw = (args or {}).get("raw", False)
        self.points = (args or {}).get("points", 100)

    def score(self, state, pod, snap, candidates):
        hits = np.array([snap.node_name(i) == self.node for i in candidates], dtype=np.int64)
        return hits * (7 if self.raw else self.points)

    def normalize(self, state, pod, scores):
        if self.raw and scores.max() > 0:
            scores *= 100
            scores //= 7


class Scripted(PreFilterPlugin, ReservePlugin, PermitPlugin, BindPlugin):
    """Returns whatever the test configured at each point, and records what ran."""

    NAME = "Scripted"

    def __init__(self, args=None, handle=None):
        self.args = args or {}
        self.calls = []

    def pre_filter(self, state, pod, snap):
        if self.args.get("prefilter_error"):
            raise PluginError("kaput")
        names = self.args.get("nodes")
        return self.args.get("prefilter", SUCCESS), PreFilterResult(frozenset(names) if names else None)

    def reserve(self, state, pod, node_name):
        self.calls.append(("reserve", node_name))
        return self.args.get("reserve", SUCCESS)

    def unreserve(self, state, pod, node_name):
        self.calls.append(("unreserve", node_name))

    def permit(self, state, pod, node_name):
        return self.args.get("permit", SUCCESS)

    def bind(self, state, pod, node_name):
        self.calls.append(("bind", node_name))
        return self.args.get("bind", SKIP)


class OtherSort(QueueSortPlugin):
    NAME = "OtherSort"

    def __init__(self, args=None, handle=None):
        pass

    def sort_key(self, qp):
        return (qp.timestamp,)


BINDER = PluginSpec("DefaultBinder")
EXTRA = Registry({c.NAME: c for c in (LabelFilter, PreferNode, Scripted, OtherSort)})


def scheduler(*extra_specs, nodes=(), pods=(), profiles=None, **kw):
    # Extra plugins go before DefaultBinder so that a scripted Bind runs first.
    specs = DEFAULT_PLUGINS[:-1] + tuple(extra_specs) + DEFAULT_PLUGINS[-1:]
    profiles = profiles or (ProfileConfig(plugins=specs),)
    return make_scheduler(nodes, pods, profiles=profiles, registry=EXTRA, **kw)


def scripted(s: Scheduler) -> Scripted:
    return s.frameworks["default-scheduler"].plugins["Scripted"]


def failure(out):
    return out.events[0]["message"], out.pod_conditions[0][3]["reason"]


# ---- registry and profiles -----------------------------------------------------------


def test_registry_rejects_duplicates_and_unknown_names():
    r = default_registry()
    with pytest.raises(ValueError, match="already registered"):
        r.register("PrioritySort", OtherSort)
    with pytest.raises(ValueError, match="already registered"):
        r.merge(default_registry())
    with pytest.raises(ValueError, match="not registered"):
        r.get("Nope")
    assert {"DefaultBinder", "NodeResourcesFit", "PrioritySort", "SchedulingGates"} <= set(r.names())


@pytest.mark.parametrize(
    "profiles,match",
    [
        ((ProfileConfig(plugins=(PluginSpec("NodeResourcesFit"),)),), "no QueueSort"),
        ((ProfileConfig(plugins=(PluginSpec("PrioritySort"), PluginSpec("OtherSort"))),), "only one QueueSort"),
        ((ProfileConfig(plugins=DEFAULT_PLUGINS + (PluginSpec("NodeResourcesFit"),)),), "enabled twice"),
        ((ProfileConfig(plugins=(PluginSpec("PrioritySort"), PluginSpec("Missing"))),), "not registered"),
        ((ProfileConfig(), ProfileConfig()), "used twice"),
        ((ProfileConfig(), ProfileConfig("b", plugins=(PluginSpec("OtherSort"), BINDER))), "same QueueSort"),
        ((ProfileConfig(plugins=(PluginSpec("PrioritySort"),)),), "no Bind plugin"),
    ],
)
def test_bad_profiles(profiles, match):
    with pytest.raises(ValueError, match=match):
        Scheduler(SchedulerConfig(profiles=profiles, registry=EXTRA))


@pytest.mark.parametrize(
    "kw",
    [
        dict(percentage_of_nodes_to_score=101),
        dict(profiles=(ProfileConfig(percentage_of_nodes_to_score=-1),)),
        dict(profiles=()),
    ],
)
def test_bad_config(kw):
    with pytest.raises(ValueError):
        SchedulerConfig(**kw)


def test_second_profile_without_score_plugins_takes_the_first_feasible_node():
    other = ProfileConfig("other-scheduler", plugins=(PluginSpec("PrioritySort"), PluginSpec("LabelFilter"), BINDER))
    ns = [make_node("a"), make_node("b").label("ok", ""), make_node("c").label("ok", "")]
    s = make_scheduler(
        ns, [make_pod("p").scheduler("other-scheduler")], profiles=(ProfileConfig(), other), registry=EXTRA
    )
    out = s.schedule(1.0)
    assert out.binds[0][3] == "b"
    assert out.events[0]["source"]["component"] == "other-scheduler"
    assert s.next_start_node_index == 2  # found b, stopped on c (the 2nd feasible)


# ---- filters and diagnosis -----------------------------------------------------------


@pytest.mark.parametrize(
    "order,message",
    [
        (
            ("LabelFilter", "NodeResourcesFit"),
            "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't have the label.",
        ),
        (("NodeResourcesFit", "LabelFilter"), "0/2 nodes are available: 2 Insufficient cpu."),
    ],
)
def test_a_node_counts_under_the_first_filter_that_rejects_it(order, message):
    profile = ProfileConfig(plugins=(PluginSpec("PrioritySort"),) + tuple(PluginSpec(n) for n in order) + (BINDER,))
    ns = [make_node("a", cpu="1"), make_node("b", cpu="1").label("ok", "")]
    s = make_scheduler(ns, [make_pod("p").req(cpu="2")], profiles=(profile,), registry=EXTRA)
    assert failure(s.schedule(1.0)) == (message, "Unschedulable")


def test_pod_waits_for_the_events_its_rejectors_registered():
    node = make_node("a")
    s = scheduler(PluginSpec("LabelFilter"), nodes=[node], pods=[make_pod("p")])
    s.schedule(1.0)
    assert s.queue.get("uid-default-p").unschedulable_plugins == {"LabelFilter"}
    s.on_node("MODIFIED", node.copy_().alloc(cpu="8"), 2.0)  # LabelFilter does not care
    assert s.queue.active_count() == 0
    s.on_node("MODIFIED", node.copy_().label("ok", ""), 3.0)
    assert s.schedule(4.0).binds[0][3] == "a"


def test_diagnosis_node_status_and_unresolvable_mask():
    d = Diagnosis(
        3,
        rejections=[
            Rejection("Fit", Code.UNSCHEDULABLE, "Insufficient cpu", np.array([True, True, False])),
            Rejection("Fit", Code.UNSCHEDULABLE, "Insufficient memory", np.array([True, False, False])),
            Rejection("Label", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no label", np.array([False, False, True])),
        ],
    )
    assert d.node_status(0) == Status(Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory"), "Fit")
    assert d.node_status(2).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert d.unresolvable_mask(3).tolist() == [False, False, True]


def test_prefilter_narrows_the_nodes():
    ns = [make_node("n1", cpu="1"), make_node("n2"), make_node("n3")]
    s = scheduler(
        PluginSpec("Scripted", args={"nodes": ["n1", "nowhere"]}), nodes=ns, pods=[make_pod("p").req(cpu="2")]
    )
    assert failure(s.schedule(1.0)) == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node is filtered out by the prefilter result."
        " preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod,"
        " 2 Preemption is not helpful for scheduling.",
        "Unschedulable",
    )
    s.on_pod("ADDED", make_pod("q").req(cpu="1"), 2.0)
    assert s.schedule(2.0).binds[0][3] == "n1"


def test_prefilter_rejection_replaces_the_histogram():
    reject = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("pod affinity terms conflict",))
    s = scheduler(
        PluginSpec("Scripted", args={"prefilter": reject}),
        nodes=[make_node("n1"), make_node("n2")],
        pods=[make_pod("p")],
    )
    assert failure(s.schedule(1.0)) == (
        "0/2 nodes are available: pod affinity terms conflict."
        " preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
        "Unschedulable",
    )
    assert s.queue.get("uid-default-p").unschedulable_plugins == {"Scripted"}


def test_prefilter_skip_skips_filter():
    class SkipLabel(LabelFilter, PreFilterPlugin):
        def pre_filter(self, state, pod, snap):
            return SKIP, None

    reg = Registry({"LabelFilter": SkipLabel})
    profile = ProfileConfig(plugins=DEFAULT_PLUGINS + (PluginSpec("LabelFilter"),))
    s = make_scheduler([make_node("n1")], [make_pod("p")], profiles=(profile,), registry=reg)
    assert s.schedule(1.0).binds[0][3] == "n1"


def test_plugin_error_is_a_scheduler_error_and_the_pod_is_retried():
    s = scheduler(PluginSpec("Scripted", args={"prefilter_error": True}), nodes=[make_node("n1")], pods=[make_pod("p")])
    out = s.schedule(1.0)
    assert failure(out) == ('running PreFilter plugin "Scripted": kaput', "SchedulerError")
    assert s.stats["errors"] == 1 and s.queue.unschedulable_count() == 0
    assert s.schedule(2.0).events[0]["reason"] == "FailedScheduling"  # retried on the next call


# ---- scoring -------------------------------------------------------------------------


@pytest.mark.parametrize("weight,winner", [(1, "empty"), (2, "preferred")])
def test_score_weights(weight, winner):
    # LeastAllocated for a 100m/100Mi pod: empty (97 + 99) // 2 = 98; preferred, half full,
    # (47 + 49) // 2 = 48. PreferNode gives preferred 40 x weight: 88 loses, 128 wins.
    ns = [make_node("empty", cpu="4"), make_node("preferred", cpu="4")]
    bound_pod = make_pod("b").req(cpu="2", memory="8Gi").node("preferred")
    s = scheduler(
        PluginSpec("PreferNode", weight=weight, args={"node": "preferred", "points": 40}),
        nodes=ns,
        pods=[bound_pod, make_pod("p").req(cpu="100m", memory="100Mi")],
    )
    assert s.schedule(1.0).binds[0][3] == winner


def test_normalize_score_runs_before_the_range_check():
    ns = [make_node("a"), make_node("b")]
    s = scheduler(PluginSpec("PreferNode", weight=2, args={"node": "b", "raw": True}), nodes=ns, pods=[make_pod("p")])
    assert s.schedule(1.0).binds[0][3] == "b"


def test_out_of_range_score_is_an_error():
    class Wild(PreferNode):
        def score(self, state, pod, snap, candidates):
            return np.full(len(candidates), 101, dtype=np.int64)

    reg = Registry({"PreferNode": Wild})
    profile = ProfileConfig(plugins=DEFAULT_PLUGINS + (PluginSpec("PreferNode"),))
    s = make_scheduler([make_node("a"), make_node("b")], [make_pod("p")], profiles=(profile,), registry=reg)
    message, reason = failure(s.schedule(1.0))
    assert reason == "SchedulerError" and "invalid score 101" in message


# ---- reserve, permit, bind -----------------------------------------------------------


@pytest.mark.parametrize("point", ["reserve", "permit"])
def test_reserve_or_permit_rejection_is_a_one_node_fit_error(point):
    reject = Status(Code.UNSCHEDULABLE, (f"{point} says no",))
    s = scheduler(
        PluginSpec("Scripted", args={point: reject}), nodes=[make_node("n1")], pods=[make_pod("p").req(cpu="1")]
    )
    out = s.schedule(1.0)
    assert out.binds == []
    assert failure(out) == (f"0/1 nodes are available: 1 {point} says no.", "Unschedulable")
    assert int(s.cache.snapshot().pod_count[0]) == 0  # the assumption was undone
    assert scripted(s).calls == [("reserve", "n1"), ("unreserve", "n1")]


def test_bind_plugin_that_binds_replaces_the_batched_bind():
    s = scheduler(PluginSpec("Scripted", args={"bind": SUCCESS}), nodes=[make_node("n1")], pods=[make_pod("p")])
    out = s.schedule(1.0)
    assert out.binds == [] and out.events[0]["reason"] == "Scheduled"
    assert scripted(s).calls == [("reserve", "n1"), ("bind", "n1")]
    assert s.cache.is_assumed("uid-default-p")


def test_bind_plugin_error_forgets_and_retries():
    s = scheduler(
        PluginSpec("Scripted", args={"bind": Status.error("no route")}), nodes=[make_node("n1")], pods=[make_pod("p")]
    )
    assert failure(s.schedule(1.0)) == ("no route", "SchedulerError")
    assert not s.cache.is_assumed("uid-default-p") and s.pending_count() == 1


# ---- status --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "status,success,rejected,error,skip",
    [
        (SUCCESS, True, False, False, False),
        (Status.unschedulable("x"), False, True, False, False),
        (Status.unschedulable("x", resolvable=False), False, True, False, False),
        (Status.error("boom"), False, False, True, False),
        (SKIP, False, False, False, True),
    ],
)
def test_status_predicates(status, success, rejected, error, skip):
    assert (status.is_success(), status.is_rejected(), status.is_error(), status.is_skip()) == (
        success,
        rejected,
        error,
        skip,
    )


def test_status_message_and_plugin():
    s = Status.unschedulable("a", "b").with_plugin("P")
    assert (s.message(), s.plugin, s.code) == ("a, b", "P", Code.UNSCHEDULABLE)
