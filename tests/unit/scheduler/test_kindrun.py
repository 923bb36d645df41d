"""Runs of one kind (``cluster/scheduler/accel/kindrun.py``): the next pod of a full cycle's kind
skips PreFilter and PreScore, and every decision stays that of the full cycle, through
host ports, selectors, images, spreading, inter-pod terms, preemption and a cluster
changing between calls; and which plugins let a run start."""

from __future__ import annotations

import random

import pytest
from sched_builders import cycle_trail, feed_back, make_node, make_pod, make_scheduler

from cluster.scheduler import Scheduler, SchedulerConfig
from cluster.scheduler.accel import Accelerate, kindrun
from cluster.scheduler.accel.kindrun import KindRun, start_run
from cluster.scheduler.accel.signature import sign_pod
from cluster.scheduler.framework import CycleState, PluginSpec, PreFilterPlugin, ProfileConfig, Registry
from cluster.scheduler.plugins import DEFAULT_PLUGINS
from cluster.scheduler.status import SUCCESS


def _node(i: int, rng: random.Random):
    node = make_node(f"n{i:04d}", cpu=rng.choice(["1", "2", "4"]), pods=rng.choice(["5", "110"]))
    node.label("zone", f"z{i % 3}")
    if rng.random() < 0.3:
        node.image(300 * 1024 * 1024, "web:1")
    return node


def _kind(rng: random.Random) -> tuple:
    """A kind: what every pod of one burst shares."""
    return (
        rng.choice(["100m", "500m", "1"]),
        rng.choice([0, 0, 0, 100]),  # full nodes make the 100s preempt: nominated pods
        rng.choice(["plain", "plain", "port", "selector", "toleration", "image", "spread", "anti", "label"]),
    )


def _pod(i: int, kind: tuple, rng: random.Random):
    cpu, prio, extra = kind
    p = make_pod(f"p{i:04d}").req(cpu=cpu, memory="256Mi").label("app", "a").prio(prio)
    if extra == "port":
        p.host_port(8080)  # placing one takes the port: the row's verdict changes
    elif extra == "selector":
        p.node_selector(zone="z1")
    elif extra == "toleration":
        p.toleration("dedicated", operator="Exists")
    elif extra == "image":
        p.image("web:1")
    elif extra == "spread":  # counts move with every placement: never a run
        p.spread("zone", when="ScheduleAnyway", selector={"matchLabels": {"app": "a"}})
    elif extra == "anti":  # terms: never a run
        p.pod_anti_affinity("kubernetes.io/hostname", {"matchLabels": {"app": "b"}}).label("app", "b")
    elif extra == "label":  # the same spec with other labels: another kind
        p.label("tier", rng.choice(["x", "y"]))
    return p


def _churn(s: Scheduler, rng: random.Random, nodes: dict, pods: dict, now: float) -> None:
    placed = [uid for uid, p in pods.items() if p["spec"].get("nodeName")]
    name = rng.choice(sorted(nodes))
    roll = rng.random()
    if roll < 0.5 and placed:
        s.on_pod("DELETED", pods.pop(rng.choice(placed)), now)
    elif roll < 0.7:
        nodes[name] = nodes[name].copy_().taint("dedicated")
        s.on_node("MODIFIED", nodes[name], now)
    else:
        nodes[name] = nodes[name].copy_().alloc(cpu=rng.choice(["2", "8"]))
        s.on_node("MODIFIED", nodes[name], now)


def _drive(runs: bool, seed: int, n: int, pct: int, rounds: int) -> tuple[list, Scheduler]:
    rng = random.Random(seed)
    s = Scheduler(SchedulerConfig(percentage_of_nodes_to_score=pct, accelerate=Accelerate(kind_runs=runs)), seed=seed)
    nodes = {}
    for i in range(n):
        node = _node(i, rng)
        nodes[node["metadata"]["name"]] = node
        s.on_node("ADDED", node, 0.0)
    pods: dict[str, dict] = {}
    trail, now, count = [], 1.0, 0
    for _ in range(rounds):
        kind = _kind(rng)
        for _ in range(rng.randint(1, 8)):
            p = _pod(count, kind if rng.random() < 0.9 else _kind(rng), rng)
            count += 1
            pods[p["metadata"]["uid"]] = p
            s.on_pod("ADDED", p, now)
        if rng.random() < 0.3:
            _churn(s, rng, nodes, pods, now)
        out = s.schedule(now, max_pods=rng.randint(3, 12))
        trail.append(cycle_trail(s, out))
        feed_back(s, out, pods, now)
        now += 0.5
    return trail, s


@pytest.mark.parametrize("seed,n,pct", [(1, 30, 0), (2, 50, 0), (3, 60, 10), (4, 40, 100), (7, 70, 0)])
def test_a_run_decides_as_the_full_cycle(seed, n, pct):
    got, s = _drive(True, seed, n, pct, rounds=100)
    want, full = _drive(False, seed, n, pct, rounds=100)
    assert got == want
    assert sum(len(binds) for binds, *_ in got) > 150  # the runs did place pods
    assert s.kind_run_pods > 30  # many of them through a run
    assert full.kind_run_pods == 0
    assert s.stats["preemptions"] > 0  # with nominated pods about
    assert s.stats["attempts"] == full.stats["attempts"]


def _plain(n: int = 20) -> Scheduler:
    return make_scheduler([make_node(f"n{i:02d}", cpu="8") for i in range(n)])


def _add(s: Scheduler, pods) -> None:
    for p in pods:
        s.on_pod("ADDED", p, 1.0)


def test_pods_of_one_kind_after_the_first_go_through_the_run():
    s = _plain()
    _add(s, [make_pod(f"p{i}").req(cpu="100m") for i in range(6)])
    out = s.schedule(1.0)
    assert len(out.binds) == 6
    assert s.kind_run_pods == 5  # the first ran the full cycle


def test_a_run_ends_with_the_call_and_at_another_kind():
    s = _plain()
    _add(s, [make_pod("a0").req(cpu="100m"), make_pod("a1").req(cpu="100m"), make_pod("b0").req(cpu="200m")])
    _add(s, [make_pod("a2").req(cpu="100m")])
    out = s.schedule(1.0, max_pods=3)
    assert len(out.binds) == 3 and s.kind_run_pods == 1  # a1; b0 is another kind
    s.schedule(1.0)
    assert s.kind_run_pods == 1  # a2 came in the next call: its own full cycle


def test_a_pod_carrying_a_nominated_node_name_takes_the_full_cycle():
    s = _plain()
    _add(s, [make_pod("a0").req(cpu="100m"), make_pod("a1").req(cpu="100m").nominated("n05")])
    out = s.schedule(1.0)
    assert [b[3] for b in out.binds][1] == "n05"  # the full cycle tried its node first
    assert s.kind_run_pods == 0


def test_a_pod_that_fits_nowhere_is_explained_by_the_full_cycle():
    s = _plain(3)
    _add(s, [make_pod(f"p{i}").req(cpu="5") for i in range(5)])
    out = s.schedule(1.0)
    assert len(out.binds) == 3 and s.kind_run_pods == 2
    failed = [e for e in out.events if e["reason"] == "FailedScheduling"]
    assert len(failed) == 2
    assert failed[0]["message"].startswith("0/3 nodes are available: 3 Insufficient cpu")


@pytest.mark.parametrize(
    "build,starts",
    [
        (lambda: make_pod("p").req(cpu="1"), True),
        (lambda: make_pod("p").req(cpu="1").host_port(80).node_selector(zone="z0"), True),
        (lambda: make_pod("p").req(cpu="1").spread("zone", when="ScheduleAnyway"), False),
        (lambda: make_pod("p").req(cpu="1").pod_anti_affinity("zone", {"matchLabels": {"x": "y"}}), False),
    ],
)
def test_which_pods_start_a_run(build, starts):
    s = make_scheduler([make_node(f"n{i}", cpu="8").label("zone", f"z{i % 2}") for i in range(4)])
    s.on_pod("ADDED", build(), 1.0)
    qp = s.queue.pop()
    assert qp is not None
    pinfo = qp.pinfo
    pinfo.expand()
    fwk = s.frameworks["default-scheduler"]
    state = CycleState()
    index, status, _ = s._schedule_pod(fwk, state, pinfo, 1.0)
    assert index is not None
    memo = s._memo_used
    got = memo is not None and start_run(fwk, state, pinfo, memo, s._signature, s.cache.node_epoch) is not None
    assert got is starts


class _Unsaid(PreFilterPlugin):
    """An out-of-tree PreFilter plugin that says nothing of kinds."""

    NAME = "Unsaid"

    def __init__(self, args=None, handle=None):
        pass

    def pre_filter(self, state, pod, snap):
        return SUCCESS, None


def test_a_plugin_that_does_not_say_keeps_every_pod_in_the_full_cycle():
    registry = Registry()
    registry.register(_Unsaid.NAME, _Unsaid)
    profile = ProfileConfig(plugins=DEFAULT_PLUGINS + (PluginSpec(_Unsaid.NAME),))
    s = make_scheduler([make_node(f"n{i}", cpu="8") for i in range(4)], profiles=(profile,), registry=registry)
    _add(s, [make_pod(f"p{i}").req(cpu="100m") for i in range(4)])
    assert len(s.schedule(1.0).binds) == 4
    assert s.kind_run_pods == 0


def test_the_kind_is_profile_namespace_spec_labels_and_owners():
    s = _plain()
    fwk = s.frameworks["default-scheduler"]

    def key(p):
        s.on_pod("ADDED", p, 1.0)
        qp = s.queue.pop()
        qp.pinfo.expand()
        state = CycleState()
        fwk.run_pre_filter(state, qp.pinfo, s.cache.snapshot())
        return None if qp.pinfo.nominated_node_name else sign_pod(fwk, state, qp.pinfo)

    base = key(make_pod("a").req(cpu="1"))
    assert key(make_pod("b").req(cpu="1")) == base  # the name is not part of it
    assert key(make_pod("c", namespace="other").req(cpu="1")) != base
    assert key(make_pod("d").req(cpu="1").label("x", "y")) != base
    owned = make_pod("e").req(cpu="1")
    owned["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}]
    assert key(owned) != base
    assert key(make_pod("f").req(cpu="2")) != base
    assert key(make_pod("g").req(cpu="1").nominated("n01")) is None  # never served by a run


def test_spreading_and_inter_pod_terms_say_no_for_pods_they_judge():
    s = make_scheduler([make_node(f"n{i}", cpu="8").label("zone", f"z{i % 2}") for i in range(4)])
    fwk = s.frameworks["default-scheduler"]
    spread, affinity = fwk.plugins["PodTopologySpread"], fwk.plugins["InterPodAffinity"]
    for build, pts, ipa in (
        (lambda: make_pod("a").req(cpu="1"), True, True),
        (lambda: make_pod("b").req(cpu="1").spread("zone"), False, True),
        (lambda: make_pod("c").req(cpu="1").pod_anti_affinity("zone", {"matchLabels": {"x": "y"}}), True, False),
    ):
        s.on_pod("ADDED", build(), 1.0)
        qp = s.queue.pop()
        qp.pinfo.expand()
        state = CycleState()
        s._schedule_pod(fwk, state, qp.pinfo, 1.0)
        assert (spread.sign(qp.pinfo, state) is not None) is pts
        assert (affinity.sign(qp.pinfo, state) is not None) is ipa
        assert (sign_pod(fwk, state, qp.pinfo) is not None) is (pts and ipa)


@pytest.mark.parametrize("seed,n,pct", [(11, 500, 10), (12, 420, 25), (13, 900, 5)])
def test_searches_planned_ahead_decide_as_the_full_cycle(monkeypatch, seed, n, pct):
    # Clusters large enough that a search collects only some of the nodes: a run then
    # plans the searches of its next pods at once (KindRun.choose), window after window.
    planned = []
    plan = KindRun._plan

    def counting(self, *args):
        ok = plan(self, *args)
        planned.append(ok and len(self.ahead))
        return ok

    monkeypatch.setattr(KindRun, "_plan", counting)
    got, s = _drive(True, seed, n, pct, rounds=60)
    want, _ = _drive(False, seed, n, pct, rounds=60)
    assert got == want
    assert sum(planned) > 40  # pods whose search was planned ahead
    monkeypatch.setattr(kindrun, "PLAN_AHEAD", 1)  # no plans: each run pod searches alone
    unplanned, _ = _drive(True, seed, n, pct, rounds=60)
    assert unplanned == want
