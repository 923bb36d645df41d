"""The row memo (``cluster/scheduler/accel/rowmemo.py``) and the nominated-load veto memo
(``accel.veto.VetoMemo``): the same decisions as running every plugin on every cycle,
through pods coming and going and nodes changing under them; and what the row memo
recomputes, and when it stands aside."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sched_builders import bound, cycle_trail, feed_back, make_node, make_pod, make_scheduler

from cluster.scheduler import Scheduler, SchedulerConfig
from cluster.scheduler.accel import Accelerate
from cluster.scheduler.accel.fastfilter import FastFilters
from cluster.scheduler.accel.lazyfilter import LazyFilterRun
from cluster.scheduler.accel.rowmemo import RowMemo, RowMemos
from cluster.scheduler.accel.signature import sign_pod
from cluster.scheduler.accel.veto import VetoMemo
from cluster.scheduler.filtering import run_filters
from cluster.scheduler.framework import CycleState
from cluster.scheduler.nominator import MODE_OVERRIDE, NominatingInfo
from cluster.scheduler.search import rotated_take

KINDS = (  # (cpu, memory) of the pod kinds: many pods per kind, so the memo is used
    ("100m", "500Mi"),
    ("500m", "1Gi"),
    ("1", "2Gi"),
    ("2", "256Mi"),
)


def _node(i: int, rng: random.Random):
    node = make_node(f"n{i:04d}", cpu=rng.choice(["1", "2", "4"]), pods=rng.choice(["4", "110"]))
    return node.label("zone", f"z{i % 3}")


def _pod(i: int, rng: random.Random):
    cpu, mem = rng.choice(KINDS)
    p = make_pod(f"p{i:04d}").req(cpu=cpu, memory=mem).label("app", rng.choice(["a", "b"]))
    p.prio(rng.choice([0, 0, 0, 100]))  # full nodes make the 100s preempt: nominated pods
    roll = rng.random()
    if roll < 0.1:
        p.node_selector(zone="z1")  # a row-local filter that runs
    elif roll < 0.15:
        p.toleration("dedicated", operator="Exists")
    elif roll < 0.2:
        p.spread("zone", selector={"matchLabels": {"app": "a"}})  # not row-local: no memo
    elif roll < 0.35:  # a Score plugin that normalizes runs beside the kept part
        p.spread("zone", when="ScheduleAnyway", selector={"matchLabels": {"app": "a"}})
    elif roll < 0.45:
        p.preferred_node_affinity(5, {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z2"]}]})
    return p


def _churn(s: Scheduler, rng: random.Random, nodes: dict, pods: dict, now: float, next_node: list) -> None:
    """One change of the cluster under the memo: a pod deleted, a node tainted, cordoned,
    resized, removed or added."""
    roll = rng.random()
    placed = [uid for uid, p in pods.items() if p["spec"].get("nodeName")]
    name = rng.choice(sorted(nodes))
    if roll < 0.35 and placed:
        s.on_pod("DELETED", pods.pop(rng.choice(placed)), now)
    elif roll < 0.5:
        nodes[name] = nodes[name].copy_().taint("dedicated")
        s.on_node("MODIFIED", nodes[name], now)
    elif roll < 0.6:
        nodes[name] = nodes[name].copy_().unschedulable()
        s.on_node("MODIFIED", nodes[name], now)
    elif roll < 0.75:
        nodes[name] = nodes[name].copy_().alloc(cpu=rng.choice(["1", "8"]))
        s.on_node("MODIFIED", nodes[name], now)
    elif roll < 0.85 and len(nodes) > 5:
        s.on_node("DELETED", nodes.pop(name), now)
    else:
        node = _node(next_node[0], rng)
        next_node[0] += 1
        nodes[node["metadata"]["name"]] = node
        s.on_node("ADDED", node, now)


def _drive(memo: bool, seed: int, n: int, pct: int, rounds: int, vetoes: bool | None = None) -> tuple[list, Scheduler]:
    rng = random.Random(seed)
    accel = Accelerate(row_memo=memo, kind_runs=memo, veto_memo=memo if vetoes is None else vetoes)
    s = Scheduler(SchedulerConfig(percentage_of_nodes_to_score=pct, accelerate=accel), seed=seed)
    nodes = {}
    for i in range(n):
        node = _node(i, rng)
        nodes[node["metadata"]["name"]] = node
        s.on_node("ADDED", node, 0.0)
    pods: dict[str, dict] = {}
    trail, now, next_node = [], 1.0, [n]
    for i in range(rounds):
        for j in range(4):
            p = _pod(4 * i + j, rng)
            pods[p["metadata"]["uid"]] = p
            s.on_pod("ADDED", p, now)
        if rng.random() < 0.3:
            _churn(s, rng, nodes, pods, now, next_node)
        out = s.schedule(now, max_pods=4)
        trail.append(cycle_trail(s, out))
        feed_back(s, out, pods, now)
        now += 0.5
    return trail, s


@pytest.mark.parametrize(
    "seed,n,pct",
    [(1, 30, 0), (2, 120, 0), (3, 200, 0), (4, 150, 10), (5, 200, 5), (6, 100, 100), (7, 180, 0), (8, 60, 50)],
)
def test_the_memo_decides_as_running_every_plugin_each_cycle(seed, n, pct):
    # Sizes the pods outgrow (about 600 pods of 0.9 CPU on average), so they preempt.
    got, s = _drive(True, seed, n, pct, rounds=150)
    want, _ = _drive(False, seed, n, pct, rounds=150)
    assert got == want
    assert sum(len(binds) for binds, *_ in got) > 100  # the runs did place pods
    assert len(s.row_memos) >= 2  # and the memo served several kinds of pods
    assert s.stats["preemptions"] > 0  # with nominated pods about


@pytest.mark.parametrize("seed,n,pct", [(11, 40, 0), (12, 120, 0), (13, 90, 100), (14, 200, 10)])
def test_a_kept_veto_decides_as_summing_the_nominated_load_each_cycle(seed, n, pct):
    got, s = _drive(True, seed, n, pct, rounds=150, vetoes=True)
    want, _ = _drive(True, seed, n, pct, rounds=150, vetoes=False)
    assert got == want
    assert s.stats["preemptions"] > 0
    # Kept vetoes served cycles (keyed by signature and priority: pods of one kind only).
    assert s.vetoes is not None and s.vetoes.hits > 0


def _memo_scheduler(n: int = 40) -> Scheduler:
    return make_scheduler([make_node(f"n{i:02d}", cpu="4") for i in range(n)])


def _counting(memo: RowMemo, rows: slice, s: Scheduler, pod) -> tuple[np.ndarray, list]:
    """Judge ``rows`` through the memo with a verdict function that records what it is asked."""
    asked: list[np.ndarray] = []
    fit = s.frameworks["default-scheduler"].plugins["NodeResourcesFit"]

    def verdicts(stale: np.ndarray) -> np.ndarray:
        asked.append(stale.copy())
        return fit.fit(pod, s.cache.snapshot(), rows=stale).feasible

    return memo.judge(rows, verdicts), asked


def test_a_memo_recomputes_only_the_rows_whose_node_changed():
    s = _memo_scheduler()
    pod = s.cache.new_pod_info(make_pod("x").req(cpu="3"))
    memo = RowMemo(s.cache)
    ok, asked = _counting(memo, slice(0, 40), s, pod)
    assert ok.all() and [len(a) for a in asked] == [40]  # first use: every row
    ok, asked = _counting(memo, slice(0, 40), s, pod)
    assert asked == []  # nothing changed: nothing recomputed
    s.on_pod("ADDED", bound(make_pod("big").req(cpu="2"), "n07"), 1.0)
    ok, asked = _counting(memo, slice(10, 20), s, pod)
    assert asked == []  # n07 changed, but it is not among the rows asked for
    ok, asked = _counting(memo, slice(0, 10), s, pod)
    assert [list(a) for a in asked] == [[7]] and not ok[7] and ok.sum() == 9


def test_a_memo_is_dropped_when_a_node_is_added_or_relabelled():
    s = _memo_scheduler()
    fwk = s.frameworks["default-scheduler"]
    memos = RowMemos(s.cache)
    pod = s.cache.new_pod_info(make_pod("x").req(cpu="1"))
    state = _pre_filtered(s, pod)
    first = memos.for_signature(sign_pod(fwk, state, pod))
    assert memos.for_signature(sign_pod(fwk, state, pod)) is first  # the same kind: the same memo
    s.on_node("ADDED", make_node("n99"), 1.0)
    assert memos.for_signature(sign_pod(fwk, state, pod)) is not first  # rows may have moved


def test_no_memo_when_a_plugin_cannot_sign_the_pod():
    s = _memo_scheduler()
    fwk = s.frameworks["default-scheduler"]
    memos = RowMemos(s.cache)
    spread = s.cache.new_pod_info(
        make_pod("x").req(cpu="1").label("app", "a").spread("zone", selector={"matchLabels": {"app": "a"}})
    )
    assert memos.for_signature(sign_pod(fwk, _pre_filtered(s, spread), spread)) is None
    assert len(memos) == 0


def test_the_memos_keep_at_most_their_limit_of_kinds():
    s = _memo_scheduler()
    fwk = s.frameworks["default-scheduler"]
    memos = RowMemos(s.cache, limit=3)
    for cpu in ("100m", "200m", "300m", "400m", "500m"):
        pod = s.cache.new_pod_info(make_pod("x").req(cpu=cpu))
        assert memos.for_signature(sign_pod(fwk, _pre_filtered(s, pod), pod)) is not None
    assert len(memos) == 3


def _pre_filtered(s: Scheduler, pod) -> CycleState:
    state = CycleState()
    status, _ = s.frameworks["default-scheduler"].run_pre_filter(state, pod, s.cache.snapshot())
    assert status.is_success()
    return state


def test_a_row_version_moves_with_what_the_row_holds_and_with_its_row():
    s = _memo_scheduler(3)
    c = s.cache

    def version(name: str) -> int:
        return int(c.row_versions()[c.snapshot().index_of(name)])

    before = version("n01")
    pod = bound(make_pod("a").req(cpu="1"), "n01")
    s.on_pod("ADDED", pod, 1.0)
    placed = version("n01")
    assert placed != before  # a pod placed
    started = dict(pod, status={"phase": "Running", "startTime": "2026-01-01T00:00:05Z"})
    s.on_pod("MODIFIED", started, 1.0)
    assert version("n01") == placed  # a start time: preemption's concern, not the row's
    s.on_node("MODIFIED", make_node("n01", cpu="8"), 1.0)
    resized = version("n01")
    assert resized != placed  # allocatable
    s.on_pod("ADDED", bound(make_pod("b").req(cpu="1"), "n02"), 1.0)
    last = version("n02")
    s.on_node("DELETED", make_node("n00"), 1.0)  # n02 takes row 0, its version with it
    assert c.snapshot().index_of("n02") == 0 and version("n02") == last
    assert version("n01") == resized
    s.on_pod("DELETED", started, 1.0)
    assert version("n01") != resized  # a pod removed


def test_a_kept_veto_is_judged_again_when_the_nominations_or_its_rows_change():
    s = make_scheduler(nodes=[make_node(f"n{i}", cpu="1") for i in range(1, 4)])
    nominator, vetoes, fwk = s.queue.nominator, VetoMemo(), s.frameworks["default-scheduler"]
    s.host.set_cycle(fwk, 1.0)

    def vetoed(pod) -> list[str]:
        pinfo = s.cache.new_pod_info(pod)
        run = run_filters(fwk, s.cache, nominator, pinfo, None, FastFilters(s.host.resources_decide, True, vetoes))
        assert isinstance(run, LazyFilterRun)
        return [] if run.veto is None else [s.cache.snapshot().node_name(i) for i in np.flatnonzero(run.veto)]

    def nominate(name: str, node: str) -> None:
        big = s.cache.new_pod_info(make_pod(name).req(cpu="800m").prio(100))
        nominator.add(big, NominatingInfo(node, MODE_OVERRIDE))

    small = make_pod("small").req(cpu="500m")
    nominate("big1", "n1")
    assert vetoed(small) == ["n1"]
    assert vetoed(small.copy_()) == ["n1"] and vetoes.hits == 1  # the same kind: kept
    nominate("big2", "n2")  # a new nomination elsewhere
    assert vetoed(small) == ["n1", "n2"]
    s.on_node("MODIFIED", make_node("n1", cpu="2"), 1.0)  # room for both on n1 now
    assert vetoed(small) == ["n2"]
    assert vetoed(make_pod("tiny").req(cpu="100m")) == []  # another kind, judged afresh


class _Rows:
    """A cache as a memo reads it: node count, epoch and row versions."""

    def __init__(self, n: int) -> None:
        self.num_nodes, self.node_epoch = n, 0
        self.versions = np.zeros(n, dtype=np.int64)

    def row_versions(self) -> np.ndarray:
        return self.versions


def _stale_memo(rng: np.random.Generator, n: int, feasible: float) -> tuple[RowMemo, np.ndarray, np.ndarray]:
    """A memo over ``n`` rows holding the true verdicts (a ``feasible`` share), a fifth of
    its rows gone stale since: (memo, the true verdicts, the stale rows)."""
    rows = _Rows(n)
    memo = RowMemo(rows)  # type: ignore[arg-type]
    truth = rng.random(n) < feasible
    memo.ok[:] = truth
    memo.ok_seen[:] = 0
    stale = rng.random(n) < 0.2
    rows.versions[stale] = 1
    return memo, truth, stale


@pytest.mark.parametrize("seed", range(6))
def test_a_take_finds_what_the_search_over_current_verdicts_finds(seed):
    # Every start and width, with kept verdicts gone stale on random rows (the wrap
    # included): the answer is the search's over the true verdicts, and the rows judged
    # again are the stale ones, only when the search reached one.
    rng = np.random.default_rng(seed)
    n = 12
    for _ in range(60):
        memo, truth, stale = _stale_memo(rng, n, 0.6)
        memo.ok[stale] = rng.random(int(stale.sum())) < 0.5  # what the memo kept: maybe wrong
        kept_ok, kept_seen = memo.ok.copy(), memo.ok_seen.copy()
        for start in range(n):
            for k in (1, 2, 5, n):
                memo.ok[:], memo.ok_seen[:], memo._idx = kept_ok, kept_seen, None
                asked: list[np.ndarray] = []
                got = memo.take(start, k, lambda r, asked=asked, truth=truth: asked.append(r.copy()) or truth[r])
                want = rotated_take(truth, start, k)
                assert got is not None
                assert got[0].tolist() == want[0].tolist() and got[1] == want[1]
                reached = {(start + i) % n for i in range(want[1])}
                if reached & set(np.flatnonzero(stale)):
                    assert len(asked) == 1 and asked[0].tolist() == np.flatnonzero(stale).tolist()


def test_a_take_passes_on_a_filter_error():
    rows = _Rows(8)
    memo = RowMemo(rows)  # type: ignore[arg-type]
    rows.versions[3] = 1  # stale, and within the search
    assert memo.take(0, 2, lambda r: None) is None


@pytest.mark.parametrize("seed", range(4))
def test_windows_are_the_searches_one_after_another_within_one_turn(seed):
    # Every start, width and limit, stale rows anywhere: the windows are the takes over
    # the true verdicts, each starting where the last stopped, as long as each stop comes
    # before the turn is back at the first start; none when fewer than two fit.
    rng = np.random.default_rng(seed)
    n = 13
    for _ in range(40):
        memo, truth, stale = _stale_memo(rng, n, 0.7)
        memo.ok[stale] = ~truth[stale]  # what the memo kept: wrong
        kept_ok, kept_seen = memo.ok.copy(), memo.ok_seen.copy()
        for start in range(n):
            for k in (1, 2, 3, 5):
                for most in (2, 3, 16):
                    memo.ok[:], memo.ok_seen[:], memo._idx = kept_ok, kept_seen, None
                    got = memo.windows(start, k, most, lambda r, truth=truth: truth[r])
                    want, at, span = [], start, 0
                    while len(want) < most and truth.sum() > k:
                        positions, p = rotated_take(truth, at, k)
                        if span + p >= n:
                            break
                        want.append((positions.tolist(), p))
                        span, at = span + p, (at + p) % n
                    if len(want) < 2:
                        assert got is None
                        continue
                    assert got is not None
                    assert [(w.tolist(), p) for w, p in zip(got[0], got[1])] == want
                    assert memo.ok.tolist() == truth.tolist()  # every stale row judged


def test_windows_pass_on_a_filter_error():
    rows = _Rows(8)
    memo = RowMemo(rows)  # type: ignore[arg-type]
    memo.ok[:] = True
    memo.ok_seen[:] = 0
    rows.versions[6] = 1  # stale anywhere: windows judge every stale row first
    assert memo.windows(0, 2, 4, lambda r: None) is None
