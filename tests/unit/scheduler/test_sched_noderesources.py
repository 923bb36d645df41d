"""NodeResourcesFit: filter reasons, extended resources, LeastAllocated/MostAllocated/RequestedToCapacityRatio
scores, the trivial PreFilter and args validation."""

from __future__ import annotations

import numpy as np
import pytest
from sched_builders import cache_with, make_node, make_pod

from cluster.scheduler.framework import CycleState
from cluster.scheduler.plugins.noderesources import NodeResourcesFit
from cluster.scheduler.status import Code, Diagnosis, Rejection, fit_error_message

MI = 1024 * 1024


def run_filter(nodes, pod, bound_pods=(), **args):
    c = cache_with(nodes, bound_pods)
    pinfo = c.new_pod_info(pod)
    snap = c.snapshot()
    return NodeResourcesFit(args).filter(CycleState(), pinfo, snap), snap


def reasons_per_node(result, n):
    return [sorted(reason for _, reason, mask in result.failures if mask[i]) for i in range(n)]


def run_score(nodes, pod, bound_pods=(), **args):
    c = cache_with(nodes, bound_pods)
    pinfo = c.new_pod_info(pod)
    snap = c.snapshot()
    cand = np.arange(snap.num_nodes)
    return NodeResourcesFit(args).score(CycleState(), pinfo, snap, cand).tolist()


# ---- Filter --------------------------------------------------------------------------

FIT_CASES = [
    # (id, node alloc, already bound requests, pod requests, expected reasons)
    ("fits", dict(cpu="4", memory="8Gi"), [], dict(cpu="2", memory="4Gi"), []),
    ("exact fit", dict(cpu="4", memory="8Gi"), [dict(cpu="2", memory="4Gi")], dict(cpu="2", memory="4Gi"), []),
    ("cpu short", dict(cpu="4", memory="8Gi"), [dict(cpu="3")], dict(cpu="2"), ["Insufficient cpu"]),
    ("memory short", dict(cpu="4", memory="1Gi"), [], dict(cpu="1", memory="2Gi"), ["Insufficient memory"]),
    (
        "both short",
        dict(cpu="1", memory="1Gi"),
        [],
        dict(cpu="2", memory="2Gi"),
        ["Insufficient cpu", "Insufficient memory"],
    ),
    (
        "ephemeral short",
        dict(cpu="4", memory="8Gi", ephemeral_storage="1Gi"),
        [],
        dict(ephemeral_storage="2Gi"),
        ["Insufficient ephemeral-storage"],
    ),
    (
        "ephemeral absent on node",
        dict(cpu="4", memory="8Gi"),
        [],
        dict(ephemeral_storage="1"),
        ["Insufficient ephemeral-storage"],
    ),
    ("too many pods", dict(cpu="4", memory="8Gi", pods="1"), [dict(cpu="1")], dict(cpu="1"), ["Too many pods"]),
    (
        "too many pods and cpu",
        dict(cpu="1", memory="8Gi", pods="1"),
        [dict(cpu="1")],
        dict(cpu="1"),
        ["Insufficient cpu", "Too many pods"],
    ),
    ("no requests only checks pod count", dict(cpu="0", memory="0"), [], dict(), []),
    ("explicit zero request never fails", dict(cpu="0", memory="0"), [], dict(cpu="0", memory="0"), []),
    ("pending defaults do not count for fit", dict(cpu="1", memory="8Gi"), [dict(), dict()], dict(cpu="1"), []),
    ("overcommitted node", dict(cpu="1", memory="8Gi"), [dict(cpu="2")], dict(cpu="1m"), ["Insufficient cpu"]),
]


@pytest.mark.parametrize("alloc,existing,reqs,expected", [c[1:] for c in FIT_CASES], ids=[c[0] for c in FIT_CASES])
def test_fit_reasons(alloc, existing, reqs, expected):
    node = make_node("n1").alloc(**alloc)
    bound_pods = [make_pod(f"b{i}").req(**r).node("n1") for i, r in enumerate(existing)]
    result, _ = run_filter([node], make_pod("p").req(**reqs), bound_pods)
    assert reasons_per_node(result, 1) == [expected]
    assert bool(result.feasible[0]) == (not expected)
    assert all(code == Code.UNSCHEDULABLE for code, _, _ in result.failures)


EXT_CASES = [
    # (id, node gpus (None = not advertised), gpus used, gpus requested, fits)
    ("absent on node counts as zero", None, 0, "1", False),
    ("enough", "2", 1, "1", True),
    ("not enough", "2", 1, "2", False),
    ("not requested", None, 0, None, True),
]


@pytest.mark.parametrize("node_gpus,used,want,fits", [c[1:] for c in EXT_CASES], ids=[c[0] for c in EXT_CASES])
def test_extended_resource_fit(node_gpus, used, want, fits):
    node = make_node("n1")
    if node_gpus is not None:
        node.ext("nvidia.com/gpu", node_gpus)
    bound_pods = [make_pod(f"b{i}").ext("nvidia.com/gpu", "1").node("n1") for i in range(used)]
    pod = make_pod("p").req(cpu="1")
    if want is not None:
        pod.ext("nvidia.com/gpu", want)
    result, _ = run_filter([node], pod, bound_pods)
    assert bool(result.feasible[0]) == fits
    assert reasons_per_node(result, 1) == [[] if fits else ["Insufficient nvidia.com/gpu"]]


def test_extended_resource_seen_first_on_a_pod_widens_the_cache():
    c = cache_with([make_node("n1"), make_node("n2").ext("example.com/foo", "3")])
    pinfo = c.new_pod_info(make_pod("p").ext("example.com/bar", "1"))
    snap = c.snapshot()
    assert snap.column_names[:3] == ["cpu", "memory", "ephemeral-storage"]
    assert set(snap.column_names[3:]) == {"example.com/foo", "example.com/bar"}
    result = NodeResourcesFit().filter(CycleState(), pinfo, snap)
    assert result.feasible.tolist() == [False, False]
    assert reasons_per_node(result, 2) == [["Insufficient example.com/bar"]] * 2


@pytest.mark.parametrize("args", [{"ignoredResources": ["nvidia.com/gpu"]}, {"ignoredResourceGroups": ["nvidia.com"]}])
def test_ignored_extended_resources(args):
    result, _ = run_filter([make_node("n1")], make_pod("p").ext("nvidia.com/gpu", "1"), **args)
    assert result.feasible.tolist() == [True]


def test_ignored_resources_never_skip_cpu():
    result, _ = run_filter([make_node("n1", cpu="1")], make_pod("p").req(cpu="2"), ignoredResources=["cpu"])
    assert result.feasible.tolist() == [False]


def test_filter_is_vectorised_over_all_nodes():
    nodes = [make_node("a", cpu="1"), make_node("b", cpu="4", memory="1Gi"), make_node("c"), make_node("d", pods="0")]
    result, _ = run_filter(nodes, make_pod("p").req(cpu="2", memory="2Gi"))
    assert result.feasible.tolist() == [False, False, True, False]
    assert reasons_per_node(result, 4) == [["Insufficient cpu"], ["Insufficient memory"], [], ["Too many pods"]]


# ---- FitError message ----------------------------------------------------------------


def diagnosis_from(result, n):
    rej = [
        Rejection("NodeResourcesFit", code, reason, mask & ~result.feasible) for code, reason, mask in result.failures
    ]
    return Diagnosis(n, rejections=rej)


@pytest.mark.parametrize(
    "nodes,reqs,expected",
    [
        (
            [make_node("a", cpu="1"), make_node("b", cpu="1"), make_node("c", memory="1Gi")],
            dict(cpu="2", memory="2Gi"),
            "0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.",
        ),
        (
            [make_node("a", cpu="1", memory="1Gi")],
            dict(cpu="2", memory="2Gi"),
            "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.",
        ),
        (
            [make_node(f"n{i}", cpu="1") for i in range(10)] + [make_node(f"m{i}", memory="1Gi") for i in range(2)],
            dict(cpu="2", memory="2Gi"),
            "0/12 nodes are available: 10 Insufficient cpu, 2 Insufficient memory.",
        ),
    ],
    ids=["upstream example", "one node lacking both counts twice", "sorted as strings"],
)
def test_fit_error_message(nodes, reqs, expected):
    result, snap = run_filter(nodes, make_pod("p").req(**reqs))
    assert fit_error_message(diagnosis_from(result, snap.num_nodes)) == expected


def test_fit_error_message_with_prefilter_and_postfilter_messages():
    d = Diagnosis(2, pre_filter_msg="pod affinity terms conflict", post_filter_msg="preemption: not eligible")
    assert fit_error_message(d) == "0/2 nodes are available: pod affinity terms conflict. preemption: not eligible."


# ---- Score ---------------------------------------------------------------------------

SCORE_CASES = [
    # (id, node alloc, bound pod requests, pod requests, expected score)
    ("half cpu half memory", dict(cpu="6", memory="10000"), [], dict(cpu="3", memory="5000"), 50),
    ("truncates the average", dict(cpu="4", memory="10000"), [], dict(cpu="3", memory="5000"), 37),
    ("truncates each resource", dict(cpu="3", memory="3000"), [], dict(cpu="1", memory="2000"), 49),
    (
        "counts bound pods",
        dict(cpu="10", memory="20000"),
        [dict(cpu="3", memory="0")],
        dict(cpu="3", memory="5000"),
        57,
    ),
    ("request above allocatable scores 0", dict(cpu="4", memory="10000"), [], dict(cpu="5", memory="5000"), 25),
    ("node without memory allocatable drops its weight", dict(cpu="4", memory="0"), [], dict(cpu="2", memory="1"), 50),
    ("missing requests count as 100m/200Mi", dict(cpu="1", memory="1000Mi"), [], dict(), 85),
    ("explicit zero stays zero", dict(cpu="1", memory="1000Mi"), [], dict(cpu="0", memory="0"), 100),
    (
        "bound pod without requests counts non-zero",
        dict(cpu="1", memory="1000Mi"),
        [dict()],
        dict(cpu="0", memory="0"),
        85,
    ),
]


@pytest.mark.parametrize("alloc,existing,reqs,expected", [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES])
def test_least_allocated(alloc, existing, reqs, expected):
    node = make_node("n1").alloc(**alloc)
    bound_pods = [make_pod(f"b{i}").req(**r).node("n1") for i, r in enumerate(existing)]
    assert run_score([node], make_pod("p").req(**reqs), bound_pods) == [expected]


def test_least_allocated_vectorised_matches_scalar_formula():
    rng = np.random.default_rng(7)
    nodes, bound_pods = [], []
    for i in range(300):
        nodes.append(make_node(f"n{i}", cpu=f"{rng.integers(0, 9000)}m", memory=str(int(rng.integers(0, 10**9)))))
        bound_pods.append(
            make_pod(f"b{i}")
            .req(cpu=f"{rng.integers(0, 5000)}m", memory=str(int(rng.integers(0, 10**9))))
            .node(f"n{i}")
        )
    pod = make_pod("p").req(cpu="250m", memory="300Mi")
    got = run_score(nodes, pod, bound_pods)

    def least(req, cap):
        return 0 if cap == 0 or req > cap else (cap - req) * 100 // cap

    for i, n in enumerate(nodes):
        c = cache_with([n], [bound_pods[i]])
        alloc = c.node_info(n["metadata"]["name"]).allocatable
        nonzero = c.snapshot().nonzero_requested[0]
        parts = []
        if alloc.get("cpu"):
            parts.append(least(int(nonzero[0]) + 250, alloc["cpu"]))
        if alloc.get("memory"):
            parts.append(least(int(nonzero[1]) + 300 * MI, alloc["memory"]))
        want = sum(parts) // len(parts) if parts else 0
        assert got[i] == want, i


def test_weights_and_extended_resources_in_scoring_strategy():
    strategy = {
        "type": "LeastAllocated",
        "resources": [
            {"name": "cpu", "weight": 1},
            {"name": "memory", "weight": 0},
            {"name": "nvidia.com/gpu", "weight": 2},
        ],
    }
    node = make_node("n1", cpu="4", memory="8Gi").ext("nvidia.com/gpu", "4")
    # cpu (4000-1000)*100/4000 = 75, memory 100 (weight 0 defaults to 1), gpu (4-1)*100/4 = 75 (x2)
    pod = make_pod("p").req(cpu="1", memory="0", **{"nvidia.com/gpu": "1"})
    assert run_score([node], pod, scoringStrategy=strategy) == [(75 + 100 + 150) // 4]
    # A pod not asking for the gpu leaves it out of the average.
    assert run_score([node], make_pod("q").req(cpu="1", memory="0"), scoringStrategy=strategy) == [(75 + 100) // 2]
    # A container without cpu/memory requests adds the non-zero defaults (100m, 200Mi).
    pod = make_pod("r").req(cpu="1", memory="0").ext("nvidia.com/gpu", "1")
    cpu, mem = (4000 - 1100) * 100 // 4000, (8192 - 200) * 100 // 8192
    assert run_score([node], pod, scoringStrategy=strategy) == [(cpu + mem + 150) // 4]


def test_most_allocated():
    strategy = {"type": "MostAllocated"}
    node = make_node("n1", cpu="4", memory="10000")
    assert run_score([node], make_pod("p").req(cpu="1", memory="5000"), scoringStrategy=strategy) == [(25 + 50) // 2]
    assert run_score([node], make_pod("p").req(cpu="8", memory="5000"), scoringStrategy=strategy) == [(100 + 50) // 2]


# ---- RequestedToCapacityRatio ----------------------------------------------------------


def rtcr(*points, resources=None):
    strategy = {
        "type": "RequestedToCapacityRatio",
        "requestedToCapacityRatio": {"shape": [{"utilization": u, "score": s} for u, s in points]},
    }
    if resources is not None:
        strategy["resources"] = resources
    return strategy


BIN_PACKING = ((0, 0), (100, 10))
SPREADING = ((0, 10), (100, 0))
PEAK_AT_HALF = ((0, 0), (50, 10), (80, 0))

RTCR_CASES = [
    # (id, strategy, node alloc, bound pod requests, pod requests, expected score)
    # cpu 25% -> 25, memory 50% -> 50; Go's math.Round(75 / 2) rounds the half up
    (
        "bin packing rounds half up",
        rtcr(*BIN_PACKING),
        dict(cpu="4", memory="10000"),
        [],
        dict(cpu="1", memory="5000"),
        38,
    ),
    # 75 and 50
    ("spreading", rtcr(*SPREADING), dict(cpu="4", memory="10000"), [], dict(cpu="1", memory="5000"), 63),
    # cpu 51% on the falling segment: 100 + (0 - 100) * 1 / 30 truncates toward zero to 97 (floor would be 96);
    # memory 20% on the rising one: 0 + 100 * 20 / 50 = 40; round(137 / 2) = 69
    (
        "falling segment truncates toward zero",
        rtcr(*PEAK_AT_HALF),
        dict(cpu="100", memory="100"),
        [],
        dict(cpu="51", memory="20"),
        69,
    ),
    # cpu 90% is past the last point (score 0): left out of the average, so only memory's 40 remains
    (
        "a zero resource score drops its weight",
        rtcr(*PEAK_AT_HALF),
        dict(cpu="100", memory="100"),
        [],
        dict(cpu="90", memory="20"),
        40,
    ),
    # explicit zero cpu request -> utilization 0 -> score 0 -> left out; memory 50
    (
        "zero utilization under bin packing",
        rtcr(*BIN_PACKING),
        dict(cpu="4", memory="10000"),
        [],
        dict(cpu="0", memory="5000"),
        50,
    ),
    # over capacity reads as 100%
    ("over capacity", rtcr(*BIN_PACKING), dict(cpu="1", memory="10000"), [], dict(cpu="2", memory="5000"), 75),
    # utilization truncates: 1/3 of cpu is 33%; bound pods count with their non-zero requests (100m)
    (
        "utilization truncates and counts bound pods",
        rtcr(*BIN_PACKING),
        dict(cpu="3", memory="10000"),
        [dict(memory="0")],
        dict(cpu="900m", memory="0"),
        33,
    ),
    # weights: (25 * 3 + 50) / 4 = 31.25
    (
        "weighted",
        rtcr(*BIN_PACKING, resources=[{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}]),
        dict(cpu="4", memory="10000"),
        [],
        dict(cpu="1", memory="5000"),
        31,
    ),
    # a single point is a constant function
    ("single point", rtcr((30, 7)), dict(cpu="4", memory="10000"), [], dict(cpu="1", memory="5000"), 70),
    # node without memory: only cpu counts
    ("node without memory", rtcr(*BIN_PACKING), dict(cpu="4", memory="0"), [], dict(cpu="1", memory="5000"), 25),
    # the pod's missing requests default to 100m / 200Mi: 100m of 1 cpu is 10%, 200Mi of 1000Mi 20%
    ("non-zero defaults", rtcr(*BIN_PACKING), dict(cpu="1", memory="1000Mi"), [], dict(), 15),
]


@pytest.mark.parametrize(
    "strategy,alloc,existing,reqs,expected", [c[1:] for c in RTCR_CASES], ids=[c[0] for c in RTCR_CASES]
)
def test_requested_to_capacity_ratio(strategy, alloc, existing, reqs, expected):
    node = make_node("n1").alloc(**alloc)
    bound_pods = [make_pod(f"b{i}").req(**r).node("n1") for i, r in enumerate(existing)]
    assert run_score([node], make_pod("p").req(**reqs), bound_pods, scoringStrategy=strategy) == [expected]


def test_requested_to_capacity_ratio_extended_resource_and_vector():
    strategy = rtcr(*BIN_PACKING, resources=[{"name": "cpu", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 2}])
    nodes = [
        make_node("a", cpu="4").ext("nvidia.com/gpu", "4"),
        make_node("b", cpu="4"),
        make_node("c", cpu="0").ext("nvidia.com/gpu", "2"),
    ]
    pod = make_pod("p").req(cpu="1").ext("nvidia.com/gpu", "1")
    # a: cpu 1100m/4 -> 27, gpu 25 (x2) -> round(77 / 3) = 26; b: no gpu -> 27; c: gpu 50 only
    assert run_score(nodes, pod, scoringStrategy=strategy) == [26, 27, 50]
    # a pod not asking for the gpu leaves it out
    assert run_score(nodes[:1], make_pod("q").req(cpu="1"), scoringStrategy=strategy) == [25]


def test_pre_filter_is_trivial():
    c = cache_with([make_node("n1")])
    pod = make_pod("p").req(cpu="1")
    pod["spec"]["initContainers"] = [{"name": "side", "image": "x", "restartPolicy": "Always"}]
    status, result = NodeResourcesFit().pre_filter(CycleState(), c.new_pod_info(pod), c.snapshot())
    assert status.is_success() and result is None


def shape(*points):
    return {"scoringStrategy": rtcr(*points)}


@pytest.mark.parametrize(
    "args,match",
    [
        ({"bogus": 1}, "unknown arguments"),
        ({"scoringStrategy": {"type": "Balanced"}}, "scoringStrategy.type 'Balanced' is not supported"),
        (
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
            "scoringStrategy.requestedToCapacityRatio is required",
        ),
        ({"scoringStrategy": {"type": "MostAllocated", "shape": []}}, r"unknown scoringStrategy fields \['shape'\]"),
        (shape(), "shape: at least one point must be specified"),
        (shape((50, 1), (50, 2)), r"shape\[1\]\.utilization: utilization values must be sorted"),
        (shape((60, 1), (50, 2)), r"shape\[1\]\.utilization: utilization values must be sorted"),
        (shape((101, 1)), r"shape\[0\]\.utilization 101 not in valid range \[0, 100\]"),
        (shape((-1, 1)), r"shape\[0\]\.utilization -1 not in valid range"),
        (shape((0, 11)), r"shape\[0\]\.score 11 not in valid range \[0, 10\]"),
        (shape((0, -1)), r"shape\[0\]\.score -1 not in valid range"),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": [{"utilisation": 1, "score": 1}]},
                }
            },
            r"shape\[0\] must be \{utilization, score\}",
        ),
        (
            {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 101}]}},
            r"resources\[0\]\.weight: resource weight of cpu not in valid range \(0, 100\]",
        ),
        ({"scoringStrategy": {"resources": [{"name": "cpu", "weight": -1}]}}, r"resources\[0\]\.weight"),
        ({"scoringStrategy": {"resources": [{"weight": 1}]}}, r"resources\[0\]\.name is required"),
    ],
)
def test_bad_arguments_are_rejected(args, match):
    with pytest.raises(ValueError, match=match):
        NodeResourcesFit(args)
