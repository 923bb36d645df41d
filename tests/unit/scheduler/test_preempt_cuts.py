"""The cheaper paths a preemption wave takes, each against the general path it stands in for:
the cache's log of touched nodes (what the veto memo recomputes), the nominated load summed
for a few rows from the held pods, NodeResourcesFit on one row in Python ints, the veto
memo's row-by-row recompute, the dry run's walk window, the explanation's counts of
rejected nodes, and a move request with nothing parked."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sched_builders import make_node, make_pod

from cluster.scheduler import Scheduler, SchedulerConfig, noderows, priorityload
from cluster.scheduler.accel import preemption_fast, rowmemo
from cluster.scheduler.accel import veto as veto_module
from cluster.scheduler.accel.preemption_fast import _window
from cluster.scheduler.accel.signature import sign_pod
from cluster.scheduler.accel.veto import VetoMemo
from cluster.scheduler.explain_cycle import _counted
from cluster.scheduler.framework import CycleState
from cluster.scheduler.interfaces import ClusterEvent
from cluster.scheduler.search import chunked_take


def _scheduler(nodes: int = 6, fill: int = 4, pods_cap: str = "110") -> tuple[Scheduler, dict]:
    s = Scheduler(SchedulerConfig(), seed=0)
    lows = {}
    for i in range(nodes):
        s.on_node("ADDED", make_node(f"n{i}", cpu="4", pods=pods_cap), 0.0)
        for j in range(fill):
            low = make_pod(f"low-{i}-{j}").req(cpu="900m", memory="100Mi").prio(j % 2).node(f"n{i}").phase("Running")
            lows[low["metadata"]["name"]] = low
            s.on_pod("ADDED", low, 0.0)
    return s, lows


# ---- the touch log -----------------------------------------------------------------------


def test_the_touch_log_names_each_node_touched_since_a_mark_and_its_rows():
    s, lows = _scheduler(4)
    cache = s.cache
    mark = cache.touch_position()
    assert cache.touched_since(mark) == []
    s.on_pod("DELETED", lows["low-2-0"], 1.0)
    s.on_pod("DELETED", lows["low-0-1"], 1.0)
    s.on_pod("DELETED", lows["low-2-1"], 1.0)
    ids = cache.touched_since(mark)
    assert [cache.id_name(i) for i in ids] == ["n2", "n0", "n2"]
    rows = cache.rows_of_ids(set(ids))
    assert rows.tolist() == sorted(cache.snapshot().index_of(n) for n in ("n0", "n2"))
    assert cache.touched_since(cache.touch_position()) == []


def test_a_node_id_the_cache_does_not_hold_is_left_out_of_the_rows():
    s, _ = _scheduler(2)
    ghost = s.cache.node_id("not-a-node")  # a nomination may name a node not (yet) known
    assert s.cache.rows_of_ids({ghost, s.cache.node_id("n1")}).tolist() == [s.cache.snapshot().index_of("n1")]


def test_a_mark_older_than_the_cut_log_reads_as_unknown(monkeypatch):
    monkeypatch.setattr(noderows, "TOUCH_LOG", 3)
    s, lows = _scheduler(2)
    mark = s.cache.touch_position()
    for name in ("low-0-0", "low-0-1", "low-1-0", "low-1-1"):
        s.on_pod("DELETED", lows[name], 1.0)
    assert s.cache.touched_since(mark) is None
    assert s.cache.touched_since(s.cache.touch_position()) == []


# ---- the nominated load of a few rows ------------------------------------------------------


def _random_load(seed: int) -> tuple[Scheduler, priorityload.PriorityLoad, list[str]]:
    rng = random.Random(seed)
    s, _ = _scheduler(6, fill=0)
    load = priorityload.PriorityLoad(s.cache)
    uids = []
    for k in range(rng.randrange(0, 25)):
        pod = make_pod(f"p{k}").req(cpu=f"{rng.choice([100, 900, 3000])}m", memory=f"{rng.randrange(1, 9)}00Mi")
        pinfo = s.cache.new_pod_info(pod.prio(rng.choice([0, 5, 10, 20])))
        load.add(pinfo, rng.choice(["n0", "n1", "n2", "n3", "n4", "n5", "elsewhere"]))
        uids.append(pinfo.uid)
        if rng.random() < 0.3:
            load.remove(rng.choice(uids))
    return s, load, uids


@pytest.mark.parametrize("seed", range(40))
def test_the_load_of_a_few_rows_is_what_the_arrays_sum(seed, monkeypatch):
    rng = random.Random(seed)
    s, load, uids = _random_load(seed)
    cols = [s.cache.columns.index(name) for name in rng.sample(["cpu", "memory", "pods", "nvidia.com/gpu"], 2)]
    for _ in range(6):
        rows = np.array(rng.sample(range(6), rng.randrange(1, 5)), dtype=np.intp)
        bound = rng.choice([0, 5, 10, 11, 21])
        ask = {"at_least": bound} if rng.random() < 0.5 else {"below": bound}
        exclude = rng.choice(uids) if uids and rng.random() < 0.5 else ""
        few = load.totals(cols, exclude_uid=exclude, rows=rows, **ask)
        monkeypatch.setattr(priorityload, "FEW_ROWS", 0)
        arrays = load.totals(cols, exclude_uid=exclude, rows=rows, **ask)
        monkeypatch.setattr(priorityload, "FEW_ROWS", 4)
        if arrays is None:
            assert few is None
        else:
            assert few is not None
            assert few[0].tolist() == arrays[0].tolist() and few[1].tolist() == arrays[1].tolist()


# ---- NodeResourcesFit on one row ---------------------------------------------------------


@pytest.mark.parametrize("seed", range(30))
def test_the_fit_of_one_row_gives_the_reasons_of_the_fit_over_rows(seed):
    rng = random.Random(seed)
    s, _ = _scheduler(5, fill=rng.randrange(0, 5), pods_cap=rng.choice(["3", "5", "110"]))
    fwk = s.frameworks["default-scheduler"]
    fit = fwk.plugins["NodeResourcesFit"]
    pod = s.cache.new_pod_info(make_pod("p").req(cpu=rng.choice(["500m", "1", "3", "5"]), memory="1Gi").prio(10))
    snap = s.cache.snapshot()
    for row in range(snap.num_nodes):
        extra = [rng.choice([0, 500, 3000]) for _ in pod.req_cols]
        count = rng.randrange(0, 3)
        rows = np.array([row], dtype=np.intp)
        whole = fit.fit(pod, snap, np.array([extra], dtype=np.int64), np.array([count], dtype=np.int64), rows=rows)
        reasons = [reason for _, reason, mask in whole.failures if mask[0]]
        assert fit.fit_row(pod, snap, row, extra, count) == reasons
        assert bool(whole.feasible[0]) == (not reasons)


# ---- the veto memo's row-by-row recompute ------------------------------------------------


def _veto(s: Scheduler, memo: VetoMemo, pod: dict):
    pinfo = s.cache.new_pod_info(pod)
    fwk = s.frameworks["default-scheduler"]
    state = CycleState()
    fwk.run_pre_filter(state, pinfo, s.cache.snapshot())
    load = s.queue.nominator.load
    cols = [col for col, _ in pinfo.req_cols]

    def totals(rows):
        return load.totals(cols, at_least=pinfo.priority, rows=rows)

    key = (sign_pod(fwk, state, pinfo), pinfo.priority)
    found = memo.judge(key, pinfo, s.cache, fwk.plugins["NodeResourcesFit"], totals, s.queue.nominator.version)
    if found is None:
        return None
    (rows, first), veto = found
    return rows.tolist(), first.feasible.tolist(), [(r, m.tolist()) for _, r, m in first.failures], veto.tolist()


@pytest.mark.parametrize("seed", range(12))
def test_the_veto_recomputed_row_by_row_agrees_with_the_arrays_and_a_fresh_memo(seed, monkeypatch):
    """A random sequence of nominations, victims going and pods placed: the memo that
    recomputes a few rows one by one, the one that always uses arrays, and a memo met for
    the first time each step all give the same veto."""
    rng = random.Random(seed)
    s, lows = _scheduler(8, pods_cap="5")
    few, arrays = VetoMemo(), VetoMemo()
    preemptor = make_pod("high-x").req(cpu="3", memory="100Mi").prio(10)
    nominated = 0
    for step in range(25):
        roll = rng.random()
        if roll < 0.4:  # a preemptor nominated somewhere
            high = make_pod(f"high-{step}").req(cpu=rng.choice(["1", "3"])).prio(rng.choice([5, 10, 20]))
            high["status"]["nominatedNodeName"] = f"n{rng.randrange(8)}"
            s.on_pod("ADDED", high, float(step))
            nominated += 1
        elif roll < 0.8 and lows:  # a victim goes
            s.on_pod("DELETED", lows.pop(rng.choice(sorted(lows))), float(step))
        else:  # a pod placed
            extra = make_pod(f"x-{step}").req(cpu="100m").prio(0).node(f"n{rng.randrange(8)}").phase("Running")
            s.on_pod("ADDED", extra, float(step))
        got = _veto(s, few, preemptor)
        monkeypatch.setattr(veto_module, "FEW_ROWS", 0)
        want = _veto(s, arrays, preemptor)
        fresh = _veto(s, VetoMemo(), preemptor)
        monkeypatch.setattr(veto_module, "FEW_ROWS", 4)
        assert got == want == fresh
    assert nominated and few.hits > 0


# ---- the dry run's walk, the explanation's counts, a move request --------------------------


@pytest.mark.parametrize("n,offset,chunk", [(10, 0, 4), (10, 7, 4), (10, 9, 3), (7, 3, 10), (1, 0, 1), (12, 5, 5)])
def test_the_walk_window_reads_the_rotated_nodes(n, offset, chunk):
    potential = np.arange(100, 100 + n)
    walk = np.roll(potential, -offset)
    for start in range(0, n, chunk):
        assert _window(potential, offset, start, chunk).tolist() == walk[start : start + chunk].tolist()


@pytest.mark.parametrize("seed", range(20))
def test_the_rejected_count_and_first_names_are_those_of_every_rejected_node(seed):
    rng = random.Random(seed)
    n = rng.choice([1, 5, 79, 80, 81, 700, 5000])
    mask = np.array([rng.random() < rng.choice([0.0, 0.001, 0.3, 1.0]) for _ in range(n)])
    cap = rng.choice([1, 3, 10])
    count, first = _counted(mask, cap)
    every = np.flatnonzero(mask)
    assert count == len(every) and first.tolist() == every[:cap].tolist()


def test_a_move_request_with_nothing_parked_still_marks_the_cycle():
    s, _ = _scheduler(1, fill=0)
    q = s.queue
    q.scheduling_cycle = 7
    assert q.move_all_to_active(ClusterEvent.ASSIGNED_POD_DELETE, 1.0) == 0
    assert q.move_request_cycle == 7  # a pod failing in an older cycle then goes to backoff


# ---- the dry run's pick ------------------------------------------------------------------


def _pick_by_steps(top, total, number, earliest) -> int:
    """pickOneNodeForPreemption's criteria one after another over every candidate."""
    remaining = list(range(len(top)))
    for score in ([-t for t in top], [-t for t in total], [-n for n in number], earliest):
        best = max(score[i] for i in remaining)
        remaining = [i for i in remaining if score[i] == best]
    return remaining[0]


@pytest.mark.parametrize("seed", range(60))
def test_the_pick_takes_the_node_each_criterion_in_turn_picks(seed):
    rng = random.Random(seed)
    k = rng.randrange(1, 9)
    memo = preemption_fast._Verdicts(k)
    for key in range(k):
        memo.top[key] = rng.choice([0, 1])
        memo.number[key] = rng.choice([1, 2])
        memo.total[key] = float(rng.choice([2, 3]) * 2**31 + rng.choice([0, 1]))
        memo.earliest[key] = rng.choice([5.0, 7.0, np.nan])
        memo.undated[key] = bool(np.isnan(memo.earliest[key])) or rng.random() < 0.2
        memo.victims[key] = [f"victim-{key}"]
    ids = np.arange(k)
    cand = np.array(rng.sample(range(k), k))  # the walk order
    now = 6.0
    earliest = [float(np.fmin(memo.earliest[c], now)) if memo.undated[c] else memo.earliest[c] for c in cand]
    want = _pick_by_steps(memo.top[cand].tolist(), memo.total[cand].tolist(), memo.number[cand].tolist(), earliest)
    assert preemption_fast._pick(memo, None, ids, cand, -1, now) == (int(cand[want]), [f"victim-{cand[want]}"])


# ---- the search on kept verdicts with a veto ---------------------------------------------


@pytest.mark.parametrize("seed", range(30))
def test_a_take_on_kept_verdicts_less_the_veto_is_the_chunked_search(seed):
    rng = random.Random(seed)
    n = rng.choice([5, 40, 300])
    s, _ = _scheduler(n, fill=0)
    ok = np.array([rng.random() < rng.choice([0.02, 0.5, 1.0]) for _ in range(n)])
    veto = np.array([rng.random() < 0.3 for _ in range(n)])
    memo = rowmemo.RowMemo(s.cache)
    asked: list[int] = []

    def verdicts(rows):
        asked.append(len(rows))
        return ok[rows]

    for _ in range(3):
        start, k = rng.randrange(n), rng.choice([1, 3, 50])
        want = chunked_take(lambda sl: ok[sl] & ~veto[sl], n, start, k)
        got = memo.take(start, k, verdicts, veto)
        assert want is not None and got is not None
        assert got[0].tolist() == want[0].tolist() and got[1] == want[1]
    assert asked == [n]  # every row judged once, then kept
