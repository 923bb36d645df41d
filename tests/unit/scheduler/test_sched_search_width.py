"""Upstream's search width: how many feasible nodes a cycle collects, the round-robin
start it leaves, and the early-stopping chunked filter giving the exhaustive answer."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sched_builders import bound, cycle_trail, feed_back, make_node, make_pod

from cluster.scheduler import Scheduler, SchedulerConfig
from cluster.scheduler.accel.lazyfilter import LazyFilterRun
from cluster.scheduler.search import chunked_take, num_feasible_nodes_to_find, rotated_take

# Expected values worked out by hand from upstream's numFeasibleNodesToFind:
# nodes < 100 -> all; pct 0 -> max(50 - nodes/125, 5); then max(nodes * pct / 100, 100).
WIDTHS = [
    # nodes, {percentage: feasible nodes to find}
    (1, {0: 1, 10: 1, 50: 1, 100: 1}),
    (50, {0: 50, 10: 50, 50: 50, 100: 50}),
    (99, {0: 99, 10: 99, 50: 99, 100: 99}),
    (100, {0: 100, 10: 100, 50: 100, 100: 100}),  # 50% of 100 = 50, raised to 100
    (101, {0: 100, 10: 100, 50: 100, 100: 101}),
    (500, {0: 230, 10: 100, 50: 250, 100: 500}),  # adaptive 50 - 4 = 46%
    (1000, {0: 420, 10: 100, 50: 500, 100: 1000}),  # adaptive 50 - 8 = 42%
    (5000, {0: 500, 10: 500, 50: 2500, 100: 5000}),  # adaptive 50 - 40 = 10%
    (6000, {0: 300, 10: 600, 50: 3000, 100: 6000}),  # adaptive 50 - 48 = 2%, raised to 5%
    (20000, {0: 1000, 10: 2000, 50: 10000, 100: 20000}),  # adaptive 5%
    (100000, {0: 5000, 10: 10000, 50: 50000, 100: 100000}),
]


@pytest.mark.parametrize(
    "nodes,pct,expected", [(nodes, pct, want) for nodes, table in WIDTHS for pct, want in table.items()]
)
def test_num_feasible_nodes_to_find_matches_upstream(nodes, pct, expected):
    assert num_feasible_nodes_to_find(pct, nodes) == expected


def judge_counting(feasible: np.ndarray, judged: list[int]):
    def judge(rows: slice) -> np.ndarray:
        judged.append(rows.stop - rows.start)
        return feasible[rows]

    return judge


@pytest.mark.parametrize(
    "m,infeasible,start,k,positions_head,processed,chunks",
    [
        # 1000 positions, all feasible, k=100: the 101st is at offset 100; one 256-row chunk.
        (1000, (), 0, 100, [0, 1, 2], 100, [256]),
        # 50..399 infeasible: 0..49 then 400..449 are the 100; the 101st is 450.
        (1000, range(50, 400), 0, 100, [0, 1, 2], 450, [256, 512]),
        # From 950: chunks stop at the wrap (950..999), then 0..; the 101st is 400.
        (1000, range(50, 400), 950, 100, [950, 951, 952], 450, [50, 512]),
        # Only 60 feasible: every position judged, all of them processed.
        (1000, range(60, 1000), 10, 100, [10, 11, 12], 1000, [256, 512, 222, 10]),
        # Nothing feasible.
        (300, range(300), 299, 100, [], 300, [1, 299]),
    ],
)
def test_chunked_take_stops_where_upstream_stops(m, infeasible, start, k, positions_head, processed, chunks):
    feasible = np.ones(m, dtype=bool)
    feasible[list(infeasible)] = False
    judged: list[int] = []
    taken = chunked_take(judge_counting(feasible, judged), m, start, k)
    assert taken is not None
    positions, got_processed = taken
    want_positions, want_processed = rotated_take(feasible, start, k)
    assert positions.tolist()[:3] == positions_head
    assert (positions.tolist(), got_processed) == (want_positions.tolist(), want_processed)
    assert got_processed == processed
    assert judged == chunks


def test_chunked_take_passes_on_an_error():
    assert chunked_take(lambda rows: None, 500, 3, 100) is None


@pytest.mark.parametrize(
    "start,next_start,candidates",
    [
        # 1000 nodes, 10% -> 100 to find; n050..n399 have no cpu.
        (0, 450, [*range(0, 50), *range(400, 450)]),
        (450, 550, list(range(450, 550))),
        (950, 400, [*range(950, 1000), *range(0, 50)]),  # wraps; the 101st feasible is n400
        (30, 480, [*range(30, 50), *range(400, 480)]),
    ],
)
def test_next_start_node_index_after_a_pod(start, next_start, candidates):
    ns = [make_node(f"n{i:04d}", cpu="0" if 50 <= i < 400 else "4") for i in range(1000)]
    s = make_scheduler_of(Scheduler, ns, percentage_of_nodes_to_score=10)
    s.next_start_node_index = start
    s.on_pod("ADDED", make_pod("p").req(cpu="100m"), 0.0)
    out = s.schedule(1.0)
    assert s.next_start_node_index == next_start
    assert out.binds[0][3] in {f"n{i:04d}" for i in candidates}


def test_successive_pods_rotate_the_start():
    # 250 nodes, adaptive 48% -> 120 to find; n120..n129 have no cpu.
    ns = [make_node(f"n{i:03d}", cpu="0" if 120 <= i < 130 else "8") for i in range(250)]
    s = make_scheduler_of(Scheduler, ns)
    starts = []
    for i in range(4):
        p = make_pod(f"p{i}").req(cpu="100m")
        s.on_pod("ADDED", p, 0.0)
        out = s.schedule(1.0)
        s.on_pod("MODIFIED", bound(p, out.binds[0][3]), 1.0)
        starts.append(s.next_start_node_index)
    # From 0: the 121st feasible is n130. From 130: n130..n249 are 120, the 121st is n000.
    assert starts == [130, 0, 130, 0]


# ---- equivalence with the exhaustive filter ---------------------------------------------


class ExhaustiveScheduler(Scheduler):
    """The reference: every node filtered, then upstream's search emulated by rotated_take."""

    def _search(self, fwk, run, search, n):
        assert not isinstance(run, LazyFilterRun) or run.complete()
        feasible = run.feasible if search is None else run.feasible[search]
        m = len(feasible)
        if m == 0:
            return np.empty(0, dtype=np.intp)
        k = self._nodes_to_find(fwk, m)
        start = self.next_start_node_index % m
        positions, processed = rotated_take(feasible, start, k)
        self.next_start_node_index = (start + processed) % m
        return positions


def make_scheduler_of(cls, nodes, seed: int = 0, **config):
    s = cls(SchedulerConfig(**config), seed=seed)
    for n in nodes:
        s.on_node("ADDED", n, 0.0)
    return s


def random_cluster(rng: random.Random, n: int) -> list:
    out = []
    for i in range(n):
        node = make_node(f"n{i:04d}", cpu=rng.choice(["0", "1", "2", "4"]), pods=rng.choice(["3", "110"]))
        node.label("zone", f"z{i % 3}").label("kubernetes.io/hostname", f"n{i:04d}")
        if rng.random() < 0.1:
            node.taint("dedicated")
        if rng.random() < 0.05:
            node.unschedulable()
        out.append(node)
    return out


def random_pod(rng: random.Random, i: int, n: int):
    p = make_pod(f"p{i:03d}").req(cpu=rng.choice(["100m", "500m", "1", "3"])).prio(rng.choice([0, 0, 10, 100]))
    p.label("app", rng.choice(["a", "b"]))
    roll = rng.random()
    if roll < 0.15:
        p.node_selector(zone=rng.choice(["z0", "z1"]))
    elif roll < 0.25:  # a PreFilterResult: only some nodes are searched
        names = sorted({f"n{rng.randrange(n):04d}" for _ in range(rng.randrange(1, 200))})
        p.node_affinity({"matchFields": [{"key": "metadata.name", "operator": "In", "values": names}]})
    elif roll < 0.35:
        p.spread("zone", selector={"matchLabels": {"app": p["metadata"]["labels"]["app"]}})
    elif roll < 0.4:
        p.pod_anti_affinity("kubernetes.io/hostname", {"matchLabels": {"app": "a"}})
    if rng.random() < 0.2:
        p.toleration("dedicated", operator="Exists")
    return p


def drive(cls, seed: int, n: int, pct: int, rounds: int, crowded: float = 0.0) -> list:
    """Feed the same random pods to a scheduler; the trail of every cycle's outcome.
    ``crowded``: the share of nodes that hold one low-priority pod and room for no other,
    so pods preempt, and nominated pods take part in later cycles' filtering."""
    rng = random.Random(seed)
    nodes = random_cluster(rng, n)
    s = make_scheduler_of(cls, nodes, seed=seed, percentage_of_nodes_to_score=pct)
    pods: dict[str, dict] = {}
    if crowded:
        for node in nodes:
            if rng.random() < crowded:
                name = node["metadata"]["name"]
                s.on_node("MODIFIED", node.copy_().alloc(cpu="4", pods="1"), 0.0)
                filler = bound(make_pod(f"filler-{name}").req(cpu="100m"), name)
                pods[filler["metadata"]["uid"]] = filler
                s.on_pod("ADDED", filler, 0.0)
    trail = []
    now = 1.0
    for i in range(rounds):
        p = random_pod(rng, i, n)
        pods[p["metadata"]["uid"]] = p
        s.on_pod("ADDED", p, now)
        for _ in range(2):
            out = s.schedule(now, max_pods=1)
            trail.append(cycle_trail(s, out))
            feed_back(s, out, pods, now)
            now += 0.5
    return trail


@pytest.mark.parametrize("seed", range(12))
def test_chunked_search_decides_as_the_exhaustive_one(seed):
    rng = random.Random(1000 + seed)
    n, pct = rng.choice([40, 150, 400, 900, 2000]), rng.choice([0, 5, 10, 30, 100])
    got = drive(Scheduler, seed, n, pct, rounds=60)
    assert got == drive(ExhaustiveScheduler, seed, n, pct, rounds=60)
    assert sum(len(binds) for binds, *_ in got) > 40  # the runs did place pods


@pytest.mark.parametrize(
    "seed,n,pct,crowded",
    [(1, 40, 0, 0.95), (2, 150, 0, 0.95), (3, 400, 5, 0.95), (4, 900, 5, 0.9), (5, 2000, 5, 0.95), (6, 2000, 0, 0.97)],
)
def test_chunked_search_decides_as_the_exhaustive_one_when_pods_preempt(seed, n, pct, crowded):
    got = drive(Scheduler, seed, n, pct, rounds=80, crowded=crowded)
    assert got == drive(ExhaustiveScheduler, seed, n, pct, rounds=80, crowded=crowded)
    assert sum(len(deletes) for _, deletes, *_ in got) > 0  # pods preempted
