"""The vectorised dry run picks the same node and victims as the per-node code."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sched_builders import last_given, make_node, make_pod, make_scheduler

from cluster.clock import rfc3339
from cluster.scheduler import preemption
from cluster.scheduler.accel import preemption_fast
from cluster.scheduler.accel.preemption_fast import DryRunMemo, fast_candidate


def random_cluster(seed: int):
    rng = random.Random(seed)
    nodes = [
        make_node(
            f"n{i}", cpu=str(rng.choice([2, 4, 8])), memory=f"{rng.choice([4, 8])}Gi", pods=str(rng.choice([3, 5, 110]))
        )
        for i in range(rng.randint(3, 12))
    ]
    pods = []
    for i in range(rng.randint(5, 40)):
        p = (
            make_pod(f"p{i}")
            .prio(rng.choice([1, 5, 5, 10, 50]))
            .req(cpu=f"{rng.choice([100, 500, 900, 1500])}m", memory=f"{rng.choice([128, 512, 1024])}Mi")
        )
        p.node(rng.choice(nodes)["metadata"]["name"])
        if rng.random() < 0.8:
            p["status"]["startTime"] = rfc3339(rng.choice([0.0, 10.0, 20.0]))
        pods.append(p)
    s = make_scheduler(nodes, pods)
    for i in range(rng.randint(0, 3)):  # nominated pods, some outranking the preemptor
        nom = (
            make_pod(f"nom{i}")
            .prio(rng.choice([50, 100, 200]))
            .req(cpu="500m")
            .nominated(rng.choice(nodes)["metadata"]["name"])
        )
        s.queue.nominator.add(s.cache.new_pod_info(nom))
    preemptor = (
        make_pod("x")
        .prio(100)
        .req(cpu=f"{rng.choice([500, 1000, 2000, 3000])}m", memory=f"{rng.choice([256, 1024, 3072])}Mi")
    )
    return s, s.cache.new_pod_info(preemptor), rng


@pytest.fixture(params=["arrays", "one-by-one"])
def compute_path(request, monkeypatch):
    """Stale verdicts are computed as arrays or, for a few nodes, one node at a time:
    both must agree with the per-node code."""
    monkeypatch.setattr(preemption_fast, "_ONE_BY_ONE", 0 if request.param == "arrays" else 10**6)
    return request.param


@pytest.mark.parametrize("seed", range(60))
def test_fast_dry_run_agrees_with_the_per_node_code(seed, compute_path):
    s, pod, rng = random_cluster(seed)
    fwk = s.frameworks["default-scheduler"]
    s.host.set_cycle(fwk, 30.0)
    snap = s.cache.snapshot()
    assert s.host.resources_decide(pod)
    potential = np.arange(snap.num_nodes)
    if rng.random() < 0.5:  # some nodes failed in a way preemption cannot help
        potential = np.array(sorted(rng.sample(range(snap.num_nodes), rng.randint(1, snap.num_nodes))))
    offset = rng.randrange(len(potential))
    wanted = rng.choice([1, 2, 3, 100])
    budgets = preemption.PdbBudgets([])
    candidates, _, errors = preemption.dry_run(s.host, None, pod, snap, potential, offset, wanted, budgets, 30.0)
    expected = None
    if candidates and not errors:
        best = candidates[0] if len(candidates) == 1 else preemption.pick_one_node(candidates, 30.0)
        expected = (best.name, [v.name for v in best.victims])
    for chunk in (0, 1, 2, 5):  # 0: one step over every node; small chunks walk in steps
        assert fast_names(s, pod, potential, offset, wanted, chunk, DryRunMemo()) == expected
    assert fast_names(s, pod, potential, offset, wanted, 0, DryRunMemo(), own=True) == fast_names(
        s, pod, potential, offset, wanted, 0, DryRunMemo(), own=True, fresh=True
    )


def fast_names(s, pod, potential, offset, wanted, chunk, memo, own=False, fresh=False):
    own_node = s.queue.nominator.node_of(pod.uid) if own else None
    fast = fast_candidate(
        s.cache, memo, pod, s.queue.nominator.load, own_node, potential, offset, wanted, 30.0, b"kind", chunk=chunk
    )
    if fast is None:
        return None
    node, victims = fast
    return s.cache.snapshot().node_name(node), [v.name for v in victims]


def per_node_names(s, pod, potential, offset, wanted):
    snap = s.cache.snapshot()
    candidates, _, errors = preemption.dry_run(
        s.host, None, pod, snap, potential, offset, wanted, preemption.PdbBudgets([]), 30.0
    )
    if not candidates or errors:
        return None
    best = candidates[0] if len(candidates) == 1 else preemption.pick_one_node(candidates, 30.0)
    return best.name, [v.name for v in best.victims]


@pytest.mark.parametrize("seed", range(20))
def test_one_memo_stays_right_while_the_cluster_changes(seed, compute_path):
    """Verdicts memoised in one call must not survive a change on their node: pods bound
    and deleted, nominations added and dropped, a start time appearing, allocatable."""
    s, pod, rng = random_cluster(seed)
    fwk = s.frameworks["default-scheduler"]
    s.host.set_cycle(fwk, 30.0)
    memo = DryRunMemo()
    names = [n["metadata"]["name"] for n in (ni.node for ni in s.cache.snapshot().node_infos)]
    for step in range(12):
        snap = s.cache.snapshot()
        potential = np.arange(snap.num_nodes)
        offset, wanted = rng.randrange(snap.num_nodes), rng.choice([1, 2, 100])
        assert fast_names(s, pod, potential, offset, wanted, rng.choice([0, 2]), memo) == per_node_names(
            s, pod, potential, offset, wanted
        ), f"step {step}"
        change = rng.choice(["bind", "delete", "nominate", "unnominate", "start", "allocatable"])
        if change == "bind":
            p = make_pod(f"new{step}").prio(rng.choice([1, 10, 50])).req(cpu="500m").node(rng.choice(names))
            p["status"]["startTime"] = rfc3339(5.0)
            s.on_pod("ADDED", p, 30.0)
        elif change == "delete":
            placed = [p for ni in s.cache.snapshot().node_infos for p in ni.pods.values()]
            if placed:
                s.on_pod("DELETED", last_given(s, rng.choice(placed).uid), 30.0)
        elif change == "nominate":
            nom = make_pod(f"nomx{step}").prio(rng.choice([50, 150])).req(cpu="500m").nominated(rng.choice(names))
            s.queue.nominator.add(s.cache.new_pod_info(nom))
        elif change == "unnominate":
            uids = sorted(p.uid for p, _ in s.queue.nominator.entries())
            if uids:
                s.queue.nominator.delete(rng.choice(uids))
        elif change == "start":
            undated = [p.uid for ni in s.cache.snapshot().node_infos for p in ni.pods.values() if not p.start_time]
            if undated:
                p = last_given(s, rng.choice(undated))
                s.on_pod("MODIFIED", dict(p, status=dict(p["status"], startTime=rfc3339(1.0))), 30.0)
        elif change == "allocatable":
            ni = rng.choice(s.cache.snapshot().node_infos)
            node = ni.node
            alloc = dict(node["status"]["allocatable"], cpu=str(rng.choice([2, 4, 8])))
            s.on_node("MODIFIED", dict(node, status=dict(node["status"], allocatable=alloc)), 30.0)
