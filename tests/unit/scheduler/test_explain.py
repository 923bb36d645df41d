"""The scheduler's explanation recorder (``explain.py``, ``explain_cycle.py``): what each
attempt keeps per plugin, its bounds, the modes, and that its figures are the plain cycle's."""

from __future__ import annotations

import numpy as np
import pytest
from sched_builders import make_node, make_pod, make_scheduler

from cluster.api.patches import Apply
from cluster.api.requests import Delete, Patch
from cluster.scheduler import SchedulerConfig
from cluster.scheduler.accel import Accelerate
from cluster.scheduler.cache import PodInfo
from cluster.scheduler.config import ConfigError, build_config
from cluster.scheduler.explain import Explainer
from cluster.scheduler.explain_cycle import Limits, reason_counts
from cluster.scheduler.explain_text import from_object, render
from cluster.scheduler.framework import CycleState
from cluster.scheduler.status import Code, Diagnosis, Rejection, Status


def nodes(*cpus: str):
    return [make_node(f"n{i}", cpu=c) for i, c in enumerate(cpus)]


def written(s) -> dict[str, dict]:
    """name -> the object of each SchedulingResult write of the last schedule call."""
    out = {}
    for w in s.explain.writes():
        assert isinstance(w, Patch) and w.kind == "SchedulingResult" and isinstance(w.patch, Apply)
        out[w.name] = w.patch.obj
    return out


def test_a_failed_attempt_counts_per_plugin_what_the_event_message_says():
    taint = make_node("tainted", cpu="8")
    taint["spec"]["taints"] = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
    s = make_scheduler([*nodes("1", "1", "1"), taint], [make_pod("big").req(cpu="2")])
    out = s.schedule(0.0)
    message = out.events[0]["message"]
    assert message.startswith("0/4 nodes are available: 1 node(s) had untolerated taint {k: v}, 3 Insufficient cpu.")
    obj = written(s)["big"]
    attempt = obj["status"]["history"][0]
    assert attempt["message"] == message and attempt["result"] == "Unschedulable"
    assert [(f["plugin"], f["rejected"]) for f in attempt["filters"]] == [
        ("TaintToleration", 1),
        ("NodeResourcesFit", 3),
    ]
    assert reason_counts(attempt["filters"]) == {"node(s) had untolerated taint {k: v}": 1, "Insufficient cpu": 3}
    assert attempt["filters"][1]["reasons"][0]["nodes"] == ["n0", "n1", "n2"]
    assert attempt["preemption"]["message"].startswith("preemption: 0/4 nodes are available:")
    assert obj["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "big", "uid": "uid-default-big"}
    ]


def test_rejected_node_names_are_capped_but_counted():
    s = make_scheduler(nodes(*["1"] * 5), [make_pod("big").req(cpu="2")])
    s.explain.limits = Limits(names=2)
    s.schedule(0.0)
    reason = written(s)["big"]["status"]["history"][0]["filters"][0]["reasons"][0]
    assert reason == {"reason": "Insufficient cpu", "count": 5, "nodes": ["n0", "n1"]}
    assert "n0, n1 and 3 more" in render(from_object(written_again(s)))


def written_again(s) -> dict:
    return s.explain.result("uid-default-big")


def test_failed_mode_skips_pods_placed_at_once_and_records_the_final_placement_of_failed_ones():
    s = make_scheduler(nodes("1"), [make_pod("fits").req(cpu="500m"), make_pod("big").req(cpu="2")])
    s.schedule(0.0)
    assert set(written(s)) == {"big"}
    s.on_node("ADDED", make_node("large", cpu="8"), 5.0)
    s.schedule(5.0)
    obj = written(s)["big"]
    assert obj["status"]["attempts"] == 2 and obj["status"]["result"] == "Scheduled"
    assert obj["status"]["node"] == "large"
    assert obj["status"]["history"][-1] == {
        "attempt": 2,
        "time": obj["status"]["lastAttemptTime"],
        "result": "Scheduled",
        "node": "large",
    }


def test_none_records_nothing_and_a_bad_mode_is_refused_naming_the_field():
    s = make_scheduler(nodes("1"), [make_pod("big").req(cpu="2")], explain="none")
    s.schedule(0.0)
    assert s.explain is None
    with pytest.raises(ValueError, match='spec.scheduler.explain: "some" must be one of failed, all, none'):
        SchedulerConfig(explain="some")
    with pytest.raises(ConfigError, match='spec.scheduler.explain: "most" must be one of failed, all, none'):
        build_config({"explain": "most"})
    assert build_config({"explain": "all"}).explain == "all"
    assert build_config(None).explain == "failed"


def test_all_mode_scores_are_the_frameworks_own_totals():
    pod = make_pod("a").req(cpu="1", memory="1Gi")
    s = make_scheduler(nodes("2", "4", "8", "16"), [pod], explain="all")
    s.schedule(0.0)
    attempt = written(s)["a"]["status"]["history"][0]
    assert attempt["result"] == "Scheduled" and attempt["feasible"] == 4 and attempt["evaluated"] == 4
    # The framework's own totals, over the same nodes with the pod not placed.
    ref = make_scheduler(nodes("2", "4", "8", "16"))
    fwk, snap = ref.frameworks["default-scheduler"], ref.cache.snapshot()
    info, state = PodInfo(pod, ref.cache.columns), CycleState()
    assert fwk.run_pre_filter(state, info, snap)[0].is_success()
    candidates = np.arange(snap.num_nodes)
    total, status = fwk.run_score(state, info, snap, candidates)
    assert status.is_success()
    expected = {snap.node_name(i): int(total[i]) for i in candidates}
    assert {r["node"]: r["total"] for r in attempt["ranking"]} == expected
    assert attempt["ranking"][0]["node"] == attempt["node"] == "n3"  # the emptiest node scores best
    assert attempt["chosenTotal"] == expected["n3"]
    for r in attempt["ranking"]:
        assert sum(r["byPlugin"].values()) == r["total"]


@pytest.mark.parametrize("accelerate", [True, False])
def test_the_figures_do_not_depend_on_the_accelerators(accelerate):
    pods = [make_pod(f"p{i}").req(cpu="1") for i in range(11)]  # 9 CPUs: the last two fit nowhere
    s = make_scheduler(nodes("2", "3", "4"), pods, explain="all", accelerate=Accelerate.all(accelerate))
    s.schedule(0.0)
    got = {name: obj["status"]["history"] for name, obj in written(s).items()}
    ref = make_scheduler(nodes("2", "3", "4"), pods, explain="all", accelerate=Accelerate.all(False))
    ref.schedule(0.0)
    assert got == {name: obj["status"]["history"] for name, obj in written(ref).items()}
    assert {got[f"p{i}"][0]["result"] for i in range(9)} == {"Scheduled"}
    assert got["p10"][0]["result"] == "Unschedulable" and got["p10"][0]["message"].startswith("0/3 nodes")


def test_attempts_per_pod_and_pods_in_all_are_bounded():
    s = make_scheduler(nodes("1"), [make_pod(f"big{i}").req(cpu="2") for i in range(3)])
    s.explain.limits = Limits(attempts=2, pods=2)
    s.schedule(0.0)
    writes = s.explain.writes()
    assert [type(w).__name__ for w in writes] == ["Patch", "Patch"]  # big0 dropped before it was written
    for t in (2.0, 4.0, 8.0):
        s.queue.move_all_to_active("NodeAdd", t)
        s.schedule(t)
    kept = {w.name: w.patch.obj for w in s.explain.writes() if isinstance(w, Patch)}
    for obj in kept.values():
        assert len(obj["status"]["history"]) == 2
        assert [a["attempt"] for a in obj["status"]["history"]] == [
            obj["status"]["attempts"] - 1,
            obj["status"]["attempts"],
        ]
    assert len(s.explain) == 2


def test_a_dropped_record_deletes_its_object():
    s = make_scheduler(nodes("1"), [make_pod("a").req(cpu="2")])
    s.explain.limits = Limits(pods=1)
    s.schedule(0.0)
    assert [w.name for w in s.explain.writes()] == ["a"]
    s.on_pod("ADDED", make_pod("b").req(cpu="2"), 1.0)
    s.schedule(1.0)
    writes = s.explain.writes()
    assert writes[0] == Delete("SchedulingResult", "default", "a")
    assert [w.name for w in writes[1:]] == ["b"]
    assert s.explain.writes() == []


def test_preemption_records_the_nominated_node_and_its_victims():
    low = make_pod("low").req(cpu="3").prio(1).node("n0")
    s = make_scheduler(nodes("4"), [low, make_pod("high").req(cpu="2").prio(100)])
    s.schedule(0.0)
    obj = written(s)["high"]
    attempt = obj["status"]["history"][0]
    assert attempt["result"] == "Preempting" and obj["status"]["node"] == "n0"
    assert attempt["preemption"]["nominatedNode"] == "n0" and attempt["preemption"]["victimCount"] == 1
    assert attempt["preemption"]["victims"] == [
        {"namespace": "default", "name": "low", "priority": 1, "why": "priority 1 is below the preemptor's 100"}
    ]
    assert "Preemption: nominated n0, 1 victim(s)" in render(from_object(obj))


def test_a_reserve_rejection_after_the_choice_is_the_same_attempt():
    s = make_scheduler(nodes("4"), [make_pod("a").req(cpu="1")], explain="all")
    ex = s.explain
    assert isinstance(ex, Explainer)

    class FakePod:
        uid, namespace, name, priority, nominated_node_name = "u", "default", "x", 0, ""

    fwk = s.frameworks["default-scheduler"]
    ex.begin(0)
    one = np.ones(1, dtype=bool)
    diag = Diagnosis(1, rejections=[Rejection("Permit", Code.UNSCHEDULABLE, "denied", one)])
    # A cycle that chose node n0, then failed at Permit: one attempt, naming the node.
    ex._push(fwk, FakePod(), attempt := {"attempt": 0, "time": "t", "result": "Scheduled", "node": "n0"})
    ex._current = ("u", attempt)
    ex.failed(
        fwk,
        FakePod(),
        Status(Code.UNSCHEDULABLE, ("denied",), "Permit"),
        diag,
        "0/1 nodes are available: 1 denied.",
        1.0,
    )
    obj = ex.result("u")
    assert obj is not None and obj["status"]["attempts"] == 1
    assert obj["status"]["history"][0]["filters"] == [
        {"plugin": "Permit", "rejected": 1, "reasons": [{"reason": "denied", "count": 1, "nodes": ["n0"]}]}
    ]


def test_every_object_the_scheduler_writes_passes_strict_field_validation():
    # The hand-written schema (cluster/api/schema_kubemu.py) knows every field the recorder writes:
    # a failed attempt with preemption, then placed pods with scores and rankings.
    from cluster.frontend.fieldvalidation import STRICT, check

    lows = [make_pod(f"low{i}").req(cpu="3").prio(1).node(f"n{i}") for i in range(3)]
    pods = [*lows, make_pod("high").req(cpu="2").prio(100), *(make_pod(f"p{i}").req(cpu="500m") for i in range(2))]
    s = make_scheduler(nodes("4", "4", "4"), pods, explain="all")
    s.schedule(0.0)
    objs = written(s)
    assert {o["status"]["history"][-1]["result"] for o in objs.values()} == {"Scheduled", "Preempting"}
    assert any(a.get("ranking") for o in objs.values() for a in o["status"]["history"])
    for obj in objs.values():
        assert check("SchedulingResult", obj, STRICT) == (obj, [])
    bad = {**objs["high"], "status": {**objs["high"]["status"], "extra": 1}}
    with pytest.raises(Exception, match='unknown field "status.extra"'):
        check("SchedulingResult", bad, STRICT)
