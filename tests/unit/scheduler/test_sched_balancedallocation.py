"""NodeResourcesBalancedAllocation: fractions of actual requests, std, best-effort Skip, args."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sched_builders import make_node, make_pod

from cluster.scheduler.cache import Cache
from cluster.scheduler.framework import CycleState
from cluster.scheduler.plugins.balancedallocation import NodeResourcesBalancedAllocation
from cluster.scheduler.status import Code

GPU = "nvidia.com/gpu"


def run(nodes, pod, bound_pods=(), **args):
    """(PreScore status, scores or None when skipped) over every node."""
    c = Cache()
    for n in nodes:
        c.add_node(n)
    for p in bound_pods:
        c.add_pod(p)
    pinfo, snap = c.new_pod_info(pod), c.snapshot()
    cand = np.arange(snap.num_nodes)
    plugin, state = NodeResourcesBalancedAllocation(args), CycleState()
    status = plugin.pre_score(state, pinfo, snap, cand)
    if status.is_skip():
        return status, None
    return status, plugin.score(state, pinfo, snap, cand).tolist()


CPU_MEM_GPU = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": GPU, "weight": 1}]
CPU_MEM_EPH = [{"name": "cpu"}, {"name": "memory"}, {"name": "ephemeral-storage"}]

CASES = [
    # (id, node, bound pod requests, pod requests, args, expected score)
    # fractions 0.25, 0.2: std 0.025, (1 - 0.025) * 100 = 97.5
    ("two fractions", make_node("n", cpu="4", memory="10000"), [], dict(cpu="1", memory="2000"), {}, 97),
    # 0.75, 0.2 with the bound pod's actual requests
    (
        "counts bound pods",
        make_node("n", cpu="4", memory="10000"),
        [dict(cpu="2", memory="1000")],
        dict(cpu="1", memory="1000"),
        {},
        72,
    ),
    # cpu capped at 1, memory 0.5
    ("fraction capped at 1", make_node("n", cpu="1", memory="10000"), [], dict(cpu="2", memory="5000"), {}, 75),
    # memory 0 requested still counts as a fraction 0: std (0.25 - 0) / 2
    ("a zero request still a fraction", make_node("n", cpu="4", memory="10000"), [], dict(cpu="1"), {}, 87),
    # actual requests: a bound pod without requests adds nothing (no 100m/200Mi defaults)
    (
        "no non-zero defaults",
        make_node("n", cpu="4", memory="10000"),
        [dict(), dict()],
        dict(cpu="1", memory="2500"),
        {},
        100,
    ),
    # only cpu allocatable: one fraction, std 0
    ("node without memory", make_node("n", cpu="4", memory="0"), [], dict(cpu="1", memory="100"), {}, 100),
    # the two-fraction shortcut truncates differently from the generic std here (55 vs 54)
    ("two-fraction shortcut", make_node("n", cpu="100m", memory="100"), [], dict(cpu="3m", memory="93"), {}, 55),
    # 0.5, 0.25, 0.5: mean 5/12, std sqrt(((1/12)^2 * 2 + (1/6)^2) / 3) = 0.1179
    (
        "three resources",
        make_node("n", cpu="4", memory="10000").ext(GPU, "4"),
        [],
        dict(cpu="2", memory="2500", **{GPU: "2"}),
        {"resources": CPU_MEM_GPU},
        88,
    ),
    # an extended resource the pod does not request is left out: 0.5, 0.25
    (
        "unrequested extended resource left out",
        make_node("n", cpu="4", memory="10000").ext(GPU, "4"),
        [],
        dict(cpu="2", memory="2500"),
        {"resources": CPU_MEM_GPU},
        87,
    ),
    # ephemeral-storage is not scalar: counted with fraction 0 though not requested; 0.25, 0.5, 0
    (
        "ephemeral-storage counted unrequested",
        make_node("n", cpu="4", memory="10000").alloc(ephemeral_storage="10Gi"),
        [],
        dict(cpu="1", memory="5000"),
        {"resources": CPU_MEM_EPH},
        79,
    ),
]


@pytest.mark.parametrize("node,existing,reqs,args,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_scores(node, existing, reqs, args, expected):
    bound = [make_pod(f"b{i}").req(**r).node("n") for i, r in enumerate(existing)]
    status, scores = run([node], make_pod("p").req(**reqs), bound, **args)
    assert status.is_success()
    assert scores == [expected]


@pytest.mark.parametrize(
    "reqs,args",
    [
        (dict(), {}),
        (dict(cpu="0", memory="0"), {}),
        (dict(ephemeral_storage="1Gi"), {}),  # requests nothing among cpu and memory
    ],
    ids=["no requests", "explicit zeros", "only other resources"],
)
def test_best_effort_pods_skip(reqs, args):
    status, _ = run([make_node("n")], make_pod("p").req(**reqs), **args)
    assert status.code == Code.SKIP


def test_pod_requesting_only_a_configured_extended_resource_is_scored():
    status, scores = run(
        [make_node("n", cpu="4", memory="10000").ext(GPU, "4")], make_pod("p").ext(GPU, "2"), resources=CPU_MEM_GPU
    )
    # fractions 0, 0, 0.5
    assert status.is_success() and scores == [int((1 - math.sqrt((2 * (1 / 6) ** 2 + (1 / 3) ** 2) / 3)) * 100)]


def test_nodes_with_different_resource_sets_in_one_vector():
    nodes = [
        make_node("a", cpu="100m", memory="100").ext(GPU, "4"),  # three fractions
        make_node("b", cpu="100m", memory="100"),  # two: the shortcut must still apply
        make_node("c", cpu="100m", memory="0"),  # one
        make_node("d", cpu="0", memory="0"),
    ]  # none
    status, scores = run(nodes, make_pod("p").req(cpu="3m", memory="93", **{GPU: "1"}), resources=CPU_MEM_GPU)
    assert status.is_success()
    assert scores == [reference([0.03, 0.93, 0.25]), 55, 100, 100]


def reference(fractions):
    """Upstream's balancedResourceScorer on a list of fractions, scalar."""
    fractions = [min(f, 1.0) for f in fractions]
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    else:
        std = 0.0
    return int((1 - std) * 100)


@pytest.mark.parametrize("every_node_has_all", [False, True], ids=["some lack resources", "uniform"])
def test_vectorised_matches_scalar_formula(every_node_has_all):
    rng = np.random.default_rng(11)
    nodes, bound, expect_inputs = [], [], []
    for i in range(200):
        low = 1 if every_node_has_all else 0
        cpu, mem, gpu = (int(rng.integers(low, 3)) * int(rng.integers(1, 9000)) for _ in range(3))
        n = make_node(f"n{i}", cpu=f"{cpu}m", memory=str(mem))
        if gpu:
            n.ext(GPU, str(gpu % 16 + 1))
        nodes.append(n)
        used = (int(rng.integers(0, 5000)), int(rng.integers(0, 5000)))
        bound.append(make_pod(f"b{i}").req(cpu=f"{used[0]}m", memory=str(used[1])).node(f"n{i}"))
        expect_inputs.append(((used[0] + 250, cpu), (used[1] + 700, mem), (1, gpu % 16 + 1 if gpu else 0)))
    _, scores = run(nodes, make_pod("p").req(cpu="250m", memory="700", **{GPU: "1"}), bound, resources=CPU_MEM_GPU)
    for i, inputs in enumerate(expect_inputs):
        assert scores[i] == reference([req / alloc for req, alloc in inputs if alloc]), i


def test_score_without_pre_score():
    c = Cache()
    c.add_node(make_node("n", cpu="4", memory="10000"))
    snap, plugin = c.snapshot(), NodeResourcesBalancedAllocation()
    assert plugin.score(
        CycleState(), c.new_pod_info(make_pod("p").req(cpu="1", memory="2000")), snap, np.arange(1)
    ).tolist() == [97]
    assert plugin.score(CycleState(), c.new_pod_info(make_pod("q")), snap, np.arange(1)).tolist() == [0]


@pytest.mark.parametrize(
    "args,match",
    [
        ({"bogus": 1}, "unknown arguments"),
        ({"resources": [{"name": "cpu", "weight": 2}]}, r"resources\[0\]\.weight: must be 1"),
        ({"resources": [{"name": "cpu"}, {"name": "cpu"}]}, r"resources\[1\]\.name: duplicate"),
        ({"resources": [{"weight": 1}]}, r"resources\[0\]\.name is required"),
        ({"resources": [{"name": "cpu", "wieght": 1}]}, r"resources\[0\] has unknown fields"),
    ],
)
def test_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        NodeResourcesBalancedAllocation(args)


def test_defaults_and_identity():
    assert NodeResourcesBalancedAllocation().resources == ("cpu", "memory")
    # A weight of 0 is defaulted to 1 before validation, as upstream.
    assert NodeResourcesBalancedAllocation({"resources": [{"name": "memory", "weight": 0}]}).resources == ("memory",)
    assert NodeResourcesBalancedAllocation.NAME == "NodeResourcesBalancedAllocation"
    assert NodeResourcesBalancedAllocation.EVENTS == frozenset()
