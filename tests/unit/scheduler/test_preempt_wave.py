"""A wave of preemptors (upstream's PreemptionBasic shape): every node full of low-priority
pods, every measured pod preempting three of them. The accelerators (the pod signature
signed once per cycle, the veto memo kept node by node, the fast dry run) must decide
exactly as the plain reference cycle: the same bindings, victims, nominations and
messages, batch by batch, whatever the order the victims' deletes come back in."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sched_builders import cycle_trail, feed_back, make_node, make_pod

from cluster.scheduler import Scheduler, SchedulerConfig
from cluster.scheduler.accel import ACCELERATORS, Accelerate
from cluster.scheduler.accel.signature import sign_pod
from cluster.scheduler.accel.veto import VetoMemo
from cluster.scheduler.framework import CycleState

FILL = 4  # low-priority 900m pods per 4-CPU node


def _wave(accel: Accelerate, nodes: int, pods: int, batch: int, seed: int, pods_cap: str = "110") -> tuple[list, dict]:
    """Run the wave to its end; (the trail of every schedule call, the scheduler's stats)."""
    rng = random.Random(seed)
    s = Scheduler(SchedulerConfig(accelerate=accel), seed=seed)
    for i in range(nodes):
        s.on_node("ADDED", make_node(f"n{i:03d}", cpu="4", pods=pods_cap), 0.0)
    known: dict[str, dict] = {}
    for i in range(nodes * FILL):
        low = make_pod(f"low-{i}").req(cpu="900m", memory="500Mi").prio(0).node(f"n{i // FILL:03d}").phase("Running")
        low["status"]["startTime"] = f"2026-01-01T00:00:{i % 60:02d}Z"  # ties broken by start time too
        known[low["metadata"]["uid"]] = low
        s.on_pod("ADDED", low, 0.0)
    for i in range(pods):
        high = make_pod(f"high-{i}").req(cpu="3", memory="500Mi").prio(10)
        known[high["metadata"]["uid"]] = high
        s.on_pod("ADDED", high, 0.0)
    trail, now = [], 1.0
    for _ in range(200):
        out = s.schedule(now, batch)
        trail.append(cycle_trail(s, out))
        deletes = list(out.deletes)
        rng.shuffle(deletes)  # the victims' deletes come back in any order
        out.deletes = deletes
        feed_back(s, out, known, now)
        now += 0.5
        if not s.pending_count():
            break
    return trail, dict(s.stats)


@pytest.mark.parametrize(
    "nodes,pods,batch,seed,cap",
    [(12, 12, 5, 1, "110"), (30, 20, 7, 2, "110"), (40, 40, 50, 3, "110"), (25, 30, 3, 4, "110"), (16, 10, 4, 5, "5")],
)
def test_a_preemption_wave_decides_as_the_reference_cycle(nodes, pods, batch, seed, cap):
    got, stats = _wave(Accelerate.all(True), nodes, pods, batch, seed, cap)
    want, _ = _wave(Accelerate.all(False), nodes, pods, batch, seed, cap)
    assert got == want
    placed = min(pods, nodes)  # one 3-CPU pod per 4-CPU node
    assert sum(len(binds) for binds, *_ in got) == placed
    assert stats["preemptions"] >= placed and stats["victims"] >= 3 * placed


@pytest.mark.parametrize("on", [True, False], ids=["alone", "all-but"])
@pytest.mark.parametrize("name", sorted(ACCELERATORS))
def test_each_accelerator_alone_or_left_out_decides_the_wave_as_the_reference_cycle(name, on):
    got, _ = _wave(Accelerate.only(name, on), 20, 20, 6, 7)
    want, _ = _wave(Accelerate.all(False), 20, 20, 6, 7)
    assert got == want


def _nominated_scheduler(nodes: int = 6) -> tuple[Scheduler, list, dict]:
    """Full nodes, and two preemptors nominated (victims still there): the scheduler, the
    preemptors and the low-priority pods by name."""
    pods, lows = [], {}
    s = Scheduler(SchedulerConfig(), seed=0)
    for i in range(nodes):
        s.on_node("ADDED", make_node(f"n{i}", cpu="4", pods="5"), 0.0)
        for j in range(FILL):
            low = make_pod(f"low-{i}-{j}").req(cpu="900m").prio(0).node(f"n{i}").phase("Running")
            lows[low["metadata"]["name"]] = low
            s.on_pod("ADDED", low, 0.0)
    for i in range(2):
        high = make_pod(f"high-{i}").req(cpu="3").prio(10)
        pods.append(high)
        s.on_pod("ADDED", high, 0.0)
    out = s.schedule(1.0, 2)
    assert len(out.nominations) == 2 and not out.binds
    return s, pods, lows


def _judge(s: Scheduler, memo: VetoMemo, pod: dict, asked: list | None = None):
    """The veto memo's pass 1 for ``pod``, with the rows its load was summed for."""
    pinfo = s.cache.new_pod_info(pod)
    fwk = s.frameworks["default-scheduler"]
    state = CycleState()
    fwk.run_pre_filter(state, pinfo, s.cache.snapshot())
    load = s.queue.nominator.load
    cols = [col for col, _ in pinfo.req_cols]

    def totals(rows):
        if asked is not None:
            asked.append(rows.tolist())
        return load.totals(cols, at_least=pinfo.priority, rows=rows)

    fit = fwk.plugins["NodeResourcesFit"]
    signature = sign_pod(fwk, state, pinfo)
    found = memo.judge((signature, pinfo.priority), pinfo, s.cache, fit, totals, s.queue.nominator.version)
    assert found is not None
    (rows, first), veto = found
    assert veto.tolist() == [i in rows[~first.feasible] for i in range(s.cache.num_nodes)]
    return (rows, first), pinfo, fit, totals


def test_the_veto_memo_recomputes_only_the_nodes_that_changed_and_agrees_with_a_fresh_fit():
    s, highs, lows = _nominated_scheduler()
    memo = VetoMemo()
    third = make_pod("high-x").req(cpu="3").prio(10)
    asked: list = []
    (rows, first), pinfo, fit, totals = _judge(s, memo, third, asked)
    assert asked == [list(range(6))]  # the first time: every row
    fresh = fit.fit(pinfo, s.cache.snapshot(), *[a[rows] for a in totals(np.arange(6))], rows=rows)
    nominated = [s.queue.nominator.node_of(p["metadata"]["uid"]) for p in highs]
    assert rows.tolist() == sorted(s.cache.snapshot().index_of(n) for n in nominated)
    assert first.feasible.tolist() == fresh.feasible.tolist() == [False, False]
    # Pods 4 + nominated 1 = 5: the pod count is full too, listed first as the fit lists it.
    assert [(r, m.tolist()) for _, r, m in first.failures] == [(r, m.tolist()) for _, r, m in fresh.failures]
    assert [r for _, r, _ in first.failures] == ["Too many pods", "Insufficient cpu"]
    # Nothing changed: nothing is summed again.
    asked.clear()
    (rows2, again), *_ = _judge(s, memo, third, asked)
    assert asked == [] and rows2.tolist() == rows.tolist()
    assert again.feasible.tolist() == first.feasible.tolist()
    # One node changes (a victim there goes): only that row is recomputed.
    victim = next(p for p in s.cache.snapshot().node_info(int(rows[0])).pods.values() if p.priority == 0)
    s.on_pod("DELETED", lows[victim.name], 2.0)
    (rows3, after), *_ = _judge(s, memo, third, asked)
    assert asked == [[int(rows[0])]]
    fresh = fit.fit(pinfo, s.cache.snapshot(), *[a[rows3] for a in totals(np.arange(6))], rows=rows3)
    assert after.feasible.tolist() == fresh.feasible.tolist()
    assert [(r, m.tolist()) for _, r, m in after.failures] == [(r, m.tolist()) for _, r, m in fresh.failures]


def test_a_pod_is_signed_once_per_cycle_and_a_state_reused_for_another_pod_signs_afresh():
    s, *_ = _nominated_scheduler(2)
    fwk = s.frameworks["default-scheduler"]
    calls: list[str] = []
    plugin = fwk.plugins["NodeResourcesFit"]
    original = plugin.sign

    def counting(pod, state):
        calls.append(pod.name)
        return original(pod, state)

    plugin.sign = counting  # type: ignore[method-assign]
    a = s.cache.new_pod_info(make_pod("a").req(cpu="1"))
    b = s.cache.new_pod_info(make_pod("b").req(cpu="2"))
    state = CycleState()
    fwk.run_pre_filter(state, a, s.cache.snapshot())
    first = sign_pod(fwk, state, a)
    assert sign_pod(fwk, state, a) == first and calls == ["a"]
    other = sign_pod(fwk, state, b)  # a kind run asks with its first pod's state
    assert other != first and calls == ["a", "b"]
    assert sign_pod(fwk, state.clone(), b) == other and calls == ["a", "b"]


def test_pods_of_one_template_share_one_signing_and_the_skipped_plugins_count():
    s = Scheduler(SchedulerConfig(), seed=0)
    s.on_node("ADDED", make_node("n0"), 0.0)
    for name, cpu in (("a", "1"), ("b", "1"), ("c", "2")):
        s.on_pod("ADDED", make_pod(name).req(cpu=cpu).label("app", "x"), 0.0)
    fwk = s.frameworks["default-scheduler"]
    calls: list[str] = []
    plugin = fwk.plugins["NodeResourcesFit"]
    original = plugin.sign

    def counting(pod, state):
        calls.append(pod.name)
        return original(pod, state)

    plugin.sign = counting  # type: ignore[method-assign]
    a, b, c = (s.queue.get(f"uid-default-{name}").pinfo for name in "abc")  # type: ignore[union-attr]
    assert a.template is not None and a.template is b.template and c.template is not a.template

    def sign(pinfo, skip=()):
        state = CycleState()
        fwk.run_pre_filter(state, pinfo, s.cache.snapshot())
        state.skip_filter.update(skip)
        return sign_pod(fwk, state, pinfo)

    first = sign(a)
    assert sign(b) == first and calls == ["a"]  # b came from a's bytes: not signed again
    assert sign(c) != first and calls == ["a", "c"]
    assert sign(b, skip=("Extra",)) != first and calls == ["a", "c", "b"]  # another skip set, another kind
