"""ImageLocality: image-name normalisation, spread scaling, thresholds, init containers, Skip."""

from __future__ import annotations

import numpy as np
import pytest
from sched_builders import make_node, make_pod

from cluster.scheduler.cache import Cache
from cluster.scheduler.framework import CycleState
from cluster.scheduler.plugins.imagelocality import ImageLocality
from cluster.scheduler.status import Code

MB = 1024 * 1024


def setup(nodes, pod):
    c = Cache()
    for n in nodes:
        c.add_node(n)
    return c.new_pod_info(pod), c.snapshot()


def run(nodes, pod, candidates=None):
    """(PreScore status, scores or None when skipped)."""
    pinfo, snap = setup(nodes, pod)
    cand = np.arange(snap.num_nodes) if candidates is None else np.asarray(candidates)
    plugin, state = ImageLocality(), CycleState()
    status = plugin.pre_score(state, pinfo, snap, cand)
    if status.is_skip():
        return status, None
    return status, plugin.score(state, pinfo, snap, cand).tolist()


def with_init(pod, *images):
    pod["spec"]["initContainers"] = [{"name": f"i{i}", "image": img} for i, img in enumerate(images)]
    return pod


SCORE_CASES = [
    # (id, nodes, pod, expected scores). Upstream: sum over the pod's containers of
    # int(size * nodesWithImage / allNodes), clamped to [23 MiB, 1000 MiB * containers],
    # score = 100 * (sum - 23 MiB) // (max - 23 MiB).
    (
        "half the nodes hold it",
        [make_node("n1").image(300 * MB, "nginx:1.25"), make_node("n2")],
        make_pod("p").image("nginx:1.25"),
        [100 * (150 - 23) // (1000 - 23), 0],
    ),
    (
        "every node holds a huge image: capped at 100",
        [make_node("n1").image(3000 * MB, "big:1"), make_node("n2").image(3000 * MB, "big:1")],
        make_pod("p").image("big:1"),
        [100, 100],
    ),
    (
        "below the 23 MiB floor scores 0",
        [make_node("n1").image(20 * MB, "small:1")],
        make_pod("p").image("small:1"),
        [0],
    ),
    (
        "untagged pod image means :latest",
        [make_node("n1").image(500 * MB, "nginx:latest")],
        make_pod("p").image("nginx"),
        [100 * (500 - 23) // 977],
    ),
    (
        "registry port is not a tag",
        [make_node("n1").image(500 * MB, "reg:5000/app:latest")],
        make_pod("p").image("reg:5000/app"),
        [100 * (500 - 23) // 977],
    ),
    (
        "digest is kept as is",
        [make_node("n1").image(500 * MB, "nginx@sha256:abc")],
        make_pod("p").image("nginx@sha256:abc"),
        [100 * (500 - 23) // 977],
    ),
    (
        "a node listing the image under another name does not count",
        [make_node("n1").image(500 * MB, "docker.io/library/nginx:1.25")],
        make_pod("p").image("nginx:1.25"),
        None,
    ),
    (
        "two containers double the ceiling",
        [make_node("n1").image(600 * MB, "a:1").image(600 * MB, "b:1")],
        make_pod("p").image("a:1", "b:1"),
        [100 * (1200 - 23) // (2000 - 23)],
    ),
    (
        "init containers count in the sum and the ceiling",
        [make_node("n1").image(600 * MB, "a:1").image(600 * MB, "init:1")],
        with_init(make_pod("p").image("a:1"), "init:1"),
        [100 * (1200 - 23) // (2000 - 23)],
    ),
    (
        "an absent container image still raises the ceiling",
        [make_node("n1").image(600 * MB, "a:1")],
        make_pod("p").image("a:1", "missing:1"),
        [100 * (600 - 23) // (2000 - 23)],
    ),
    (
        "the same image in two containers counts twice",
        [make_node("n1").image(400 * MB, "a:1")],
        make_pod("p").image("a:1", "a:1"),
        [100 * (800 - 23) // (2000 - 23)],
    ),
    (
        "spread truncates each image's share",
        [make_node("n1").image(100 * MB + 1, "a:1"), make_node("n2"), make_node("n3")],
        make_pod("p").image("a:1"),
        [100 * (int((100 * MB + 1) * (1 / 3)) - 23 * MB) // (977 * MB), 0, 0],
    ),
]


@pytest.mark.parametrize("nodes,pod,expected", [c[1:] for c in SCORE_CASES], ids=[c[0] for c in SCORE_CASES])
def test_scores(nodes, pod, expected):
    status, scores = run(nodes, pod)
    if expected is None:
        assert status.code == Code.SKIP
    else:
        assert status.is_success()
        assert scores == expected


def test_spread_counts_all_nodes_not_just_candidates():
    nodes = [
        make_node("n1").image(400 * MB, "a:1"),
        make_node("n2").image(400 * MB, "a:1"),
        make_node("n3"),
        make_node("n4"),
    ]
    _, scores = run(nodes, make_pod("p").image("a:1"), candidates=[1, 3])
    assert scores == [100 * (200 - 23) // 977, 0]


def test_pod_whose_images_no_node_holds_skips():
    status, _ = run([make_node("n1").image(400 * MB, "a:1")], make_pod("p").image("b:1", "c"))
    assert status.code == Code.SKIP


def test_score_without_pre_score_matches():
    nodes = [make_node("n1").image(300 * MB, "nginx:1.25"), make_node("n2")]
    pinfo, snap = setup(nodes, make_pod("p").image("nginx:1.25"))
    assert ImageLocality().score(CycleState(), pinfo, snap, np.arange(2)).tolist() == [100 * (150 - 23) // 977, 0]
    pinfo, snap = setup(nodes, make_pod("q").image("other"))
    assert ImageLocality().score(CycleState(), pinfo, snap, np.arange(2)).tolist() == [0, 0]


def test_vectorised_matches_scalar_formula():
    rng = np.random.default_rng(3)
    images = [f"img{i}:v1" for i in range(6)]
    nodes = []
    for i in range(60):
        n = make_node(f"n{i}")
        for img in images:
            if rng.random() < 0.4:
                n.image(int(rng.integers(1, 900)) * MB + int(rng.integers(0, MB)), img)
        nodes.append(n)
    pod = make_pod("p").image(*images[:3])
    _, scores = run(nodes, pod)
    holders = {
        img: sum(1 for n in nodes if any(img in e["names"] for e in n["status"].get("images", []))) for img in images
    }
    for i, n in enumerate(nodes):
        sizes = {name: e["sizeBytes"] for e in n["status"].get("images", []) for name in e["names"]}
        total = sum(int(sizes[img] * (holders[img] / len(nodes))) for img in images[:3] if img in sizes)
        hi = 1000 * MB * 3
        total = min(max(total, 23 * MB), hi)
        assert scores[i] == 100 * (total - 23 * MB) // (hi - 23 * MB), i


def test_plugin_identity_and_args():
    assert ImageLocality.NAME == "ImageLocality" and ImageLocality.EVENTS == frozenset()
    with pytest.raises(ValueError, match="ImageLocality takes no arguments"):
        ImageLocality({"minThreshold": 1})
