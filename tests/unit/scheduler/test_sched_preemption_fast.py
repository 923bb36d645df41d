"""The vectorised dry run picks the same node and victims as the per-node code."""
from __future__ import annotations

import random

import numpy as np
import pytest
from sched_builders import make_node, make_pod, make_scheduler

from cluster.clock import rfc3339
from cluster.scheduler import preemption
from cluster.scheduler.preemption_fast import fast_candidate


def random_cluster(seed: int):
    rng = random.Random(seed)
    nodes = [make_node(f"n{i}", cpu=str(rng.choice([2, 4, 8])), memory=f"{rng.choice([4, 8])}Gi",
                       pods=str(rng.choice([3, 5, 110]))) for i in range(rng.randint(3, 12))]
    pods = []
    for i in range(rng.randint(5, 40)):
        p = make_pod(f"p{i}").prio(rng.choice([1, 5, 5, 10, 50])).req(
            cpu=f"{rng.choice([100, 500, 900, 1500])}m", memory=f"{rng.choice([128, 512, 1024])}Mi")
        p.node(rng.choice(nodes)["metadata"]["name"])
        if rng.random() < 0.8:
            p["status"]["startTime"] = rfc3339(rng.choice([0.0, 10.0, 20.0]))
        pods.append(p)
    s = make_scheduler(nodes, pods)
    for i in range(rng.randint(0, 3)):  # nominated pods, some outranking the preemptor
        nom = make_pod(f"nom{i}").prio(rng.choice([50, 100, 200])).req(cpu="500m").nominated(
            rng.choice(nodes)["metadata"]["name"])
        s.queue.nominator.add(s.cache.new_pod_info(nom))
    preemptor = make_pod("x").prio(100).req(cpu=f"{rng.choice([500, 1000, 2000, 3000])}m",
                                            memory=f"{rng.choice([256, 1024, 3072])}Mi")
    return s, s.cache.new_pod_info(preemptor), rng


@pytest.mark.parametrize("seed", range(60))
def test_fast_dry_run_agrees_with_the_per_node_code(seed):
    s, pod, rng = random_cluster(seed)
    fwk = s.frameworks["default-scheduler"]
    s.host.set_cycle(fwk, 30.0)
    snap = s.cache.snapshot()
    assert s.host.resources_decide(pod)
    potential = np.arange(snap.num_nodes)
    offset = rng.randrange(snap.num_nodes)
    wanted = rng.choice([1, 2, 3, 100])
    budgets = preemption.PdbBudgets([])
    candidates, _, errors = preemption.dry_run(s.host, None, pod, snap, potential, offset, wanted, budgets, 30.0)
    cols = [col for col, _ in pod.req_cols]
    nominated = s.queue.nominator.load.totals(cols, at_least=pod.priority, exclude_uid=pod.uid)
    lower = s.cache.placed_load.totals(cols, below=pod.priority)
    fast = fast_candidate(s.cache.table, snap, pod, nominated, lower, potential, offset, wanted, 30.0)
    if not candidates or errors:
        assert fast is None
        return
    best = candidates[0] if len(candidates) == 1 else preemption.pick_one_node(candidates, 30.0)
    assert fast is not None
    node, victims = fast
    assert (snap.node_name(node), [v.name for v in victims]) == (best.name, [v.name for v in best.victims])
