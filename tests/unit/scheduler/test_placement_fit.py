"""The resource fit (``cluster/api/placement.py``): one rule in its scalar, per-node-array
and matrix forms; the six callers use it and write no comparison of their own; and the
scheduler honours pod overhead in fit and scoring."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from sched_builders import make_node, make_pod, make_scheduler

from cluster.api.placement import fits, fits_rows, resource_fit
from cluster.scheduler.cache import CPU_COL

ROOT = Path(__file__).resolve().parents[3]
CALLERS = (
    "cluster/scheduler/plugins/noderesources.py",
    "cluster/scheduler/host.py",
    "cluster/scheduler/precheck.py",
    "cluster/scheduler/accel/preemption_fast.py",
    "cluster/kubelet/admission.py",
    "cluster/yunikorn/nodefit.py",
    "cluster/yunikorn/nodes.py",
)
# What a private copy of the rule looks like: free room or a pod count compared with a
# request or an allowed count.
_COPY = re.compile(
    r"(free|room|trial)\b[^\n#]*(<|>=?)\s*(amount|need|want|v)\b"
    r"|(amount|need|want)\s*>\s*(free|room|cap)"
    r"|count\s*\+\s*[12]\s*(<=|>)\s*allowed"
    r"|pod_count\[[^\]]*\]\s*>=\s*[a-z_.]*allowed"
)


@pytest.mark.parametrize(
    "free,count,allowed,want_too_many,want_short",
    [
        ({"cpu": 1000, "memory": 10}, 0, 10, False, []),
        ({"cpu": 999, "memory": 10}, 0, 10, False, ["cpu"]),
        ({"cpu": 999, "memory": 9}, 10, 10, True, ["cpu", "memory"]),
        ({"cpu": 1000, "memory": 10}, 9, 10, False, []),  # the tenth pod still fits
        ({"cpu": 1000, "memory": 10}, 10, 10, True, []),
        ({"cpu": 1000, "memory": 10}, None, None, False, []),  # no pod limit checked
    ],
)
def test_the_scalar_fit_lists_the_pod_count_then_each_short_resource(free, count, allowed, want_too_many, want_short):
    wanted = [("cpu", 1000), ("memory", 10)]
    too_many, shortages = resource_fit(wanted, free.__getitem__, count, allowed)
    assert too_many == want_too_many and [k for k, _ in shortages] == want_short
    assert fits(wanted, free.__getitem__, count, allowed) == (not want_too_many and not want_short)


def test_the_array_fit_judges_every_node_as_the_scalar_fit_does_one():
    rng = np.random.default_rng(3)
    free = rng.integers(0, 2000, size=(50, 3))
    count = rng.integers(0, 12, size=50)
    allowed = np.full(50, 10)
    need = np.array([900, 1000, 0])
    wanted = list(enumerate(need.tolist()))
    too_many, shortages = resource_fit(wanted, lambda col: free[:, col], count, allowed)
    by_row = fits_rows(free, need, count, allowed)
    for i in range(50):
        one = fits(wanted, free[i].__getitem__, int(count[i]), 10)
        short_here = [col for col, mask in shortages if mask[i]]
        assert one == (not too_many[i] and not short_here) == bool(by_row[i])


@pytest.mark.parametrize("path", CALLERS)
def test_each_caller_uses_the_placement_library_and_keeps_no_copy(path):
    text = (ROOT / path).read_text()
    assert "api.placement import" in text, f"{path} does not call the placement library"
    copies = [line.strip() for line in text.splitlines() if _COPY.search(line)]
    assert not copies, f"{path} compares resources itself: {copies}"


def test_the_copy_pattern_does_recognise_a_private_fit():
    # The check above would be worthless if the pattern could not see a copy.
    for line in ("if want > cap - used:", "ok &= free[:, col] >= v", "fits = count + 1 <= allowed[rows]"):
        assert _COPY.search(line), line


def _overhead_pod(name: str, cpu: str, overhead_cpu: str):
    p = make_pod(name).req(cpu=cpu, memory="1Gi")
    p["spec"]["overhead"] = {"cpu": overhead_cpu, "memory": "100Mi"}
    return p


def test_pod_overhead_counts_in_the_fit():
    # 3 CPU requested + 1.5 CPU overhead does not fit a 4-CPU node; without it, it would.
    s = make_scheduler([make_node("n1", cpu="4")], [_overhead_pod("a", "3", "1500m")])
    out = s.schedule(1.0)
    assert out.binds == []
    assert "0/1 nodes are available: 1 Insufficient cpu." in out.events[0]["message"]
    s2 = make_scheduler([make_node("n1", cpu="4")], [_overhead_pod("a", "3", "1")])
    assert [b[3] for b in s2.schedule(1.0).binds] == ["n1"]


def test_pod_overhead_counts_in_the_score_and_in_what_the_node_then_holds():
    # n1 holds 1 CPU requested + 2 CPU overhead, n2 a 2.5 CPU pod: counting the overhead,
    # n2 is the emptier node and LeastAllocated picks it (without it, n1 would win).
    placed = [_overhead_pod("big", "1", "2").node("n1"), make_pod("b").req(cpu="2500m", memory="1Gi").node("n2")]
    s = make_scheduler([make_node("n1", cpu="8"), make_node("n2", cpu="8")], placed)
    snap = s.cache.snapshot()
    assert snap.requested[snap.index_of("n1"), CPU_COL] == 3000  # request + overhead
    s.on_pod("ADDED", make_pod("c").req(cpu="1", memory="1Gi"), 1.0)
    assert [b[3] for b in s.schedule(1.0).binds] == ["n2"]
