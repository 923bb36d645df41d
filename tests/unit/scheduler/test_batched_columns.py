"""The placed pods' columns (``PodTable``) and per-priority loads (``PriorityLoad``) take
attaches in batches: whatever the batch size, a reader sees what pod-at-a-time writes
would have given.

Each test drives a real ``Cache`` through a seeded random mix of assumes, forgets, binds
to another node, start times appearing and node removals (which move rows), and checks
the columns and the loads against sums recomputed from the placed pods themselves, with
a batch of 1 (every attach written at once), of 3 (the threshold hit often) and the
default (only readers flush).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from sched_builders import make_node, make_pod

from cluster.scheduler import podtable, priorityload
from cluster.scheduler.cache import Cache

NODES = [f"n{i}" for i in range(8)]


@pytest.fixture(
    params=[(1, None), (3, 0), (None, 0), (None, None)],
    ids=["batch-1", "batch-3-vectors", "reads-vectors", "default"],
)
def batch(request, monkeypatch):
    flush_at, few = request.param
    for module in (podtable, priorityload):
        if flush_at is not None:
            monkeypatch.setattr(module, "FLUSH_AT", flush_at)
        if few is not None:  # 0: every flush takes the vector way, however small
            monkeypatch.setattr(module, "FEW", few)
    return request.param


def _pod(rng: random.Random, i: int) -> dict:
    pod = make_pod(f"p{i}", uid=f"u{i}").req(cpu=f"{rng.randint(1, 9) * 100}m", memory=f"{rng.randint(1, 4)}Gi")
    return pod.prio(rng.choice([-5, 0, 0, 10, 1000]))


def _expected_table(c: Cache) -> dict[str, tuple]:
    snap = c.snapshot()
    out = {}
    for pinfo in c.placed_pods():
        node = c.pod_node(pinfo.uid)
        if c.node_info(node) is None:
            continue  # a ghost: not attached, so not in the table
        out[pinfo.uid] = (snap.index_of(node), pinfo.priority, dict(pinfo.req_cols), pinfo.start_time)
    return out


def _check_table(c: Cache, attach_order: list[str]) -> None:
    expected = _expected_table(c)
    table = c.table
    assert len(table) == len(expected)
    seqs = {}
    for uid, (row, prio, req_cols, start_raw) in expected.items():
        slot = table.slot_of(uid)
        assert table.pods[slot].uid == uid
        assert int(table.node_row[slot]) == row
        assert int(table.priority[slot]) == prio
        assert {col: int(table.requests[slot, col]) for col in req_cols} == req_cols
        assert int(table.requests[slot].sum()) == sum(req_cols.values())
        start = float(table.start[slot])
        assert (start != start) if start_raw is None else start == pytest.approx(60.0)
        seqs[uid] = int(table.seq[slot])
    # seq keeps attach order (what ties sort by), whatever the slots.
    last = {uid: i for i, uid in enumerate(attach_order)}  # a pod moved is attached anew
    live = sorted((uid for uid in last if uid in expected), key=last.__getitem__)
    assert sorted(live, key=seqs.__getitem__) == live
    free_rows = np.flatnonzero(table.node_row[: table.size] < 0)
    assert len(free_rows) == table.size - len(expected)


def _check_loads(c: Cache) -> None:
    cols = [0, 1]
    ids = c.row_ids()
    for below in (-1, 0, 5, 2000):
        req = np.zeros((len(ids), 2), dtype=np.int64)
        count = np.zeros(len(ids), dtype=np.int64)
        snap = c.snapshot()
        for row, prio, req_cols, _ in _expected_table(c).values():
            if prio < below:
                count[row] += 1
                for j, col in enumerate(cols):
                    req[row, j] += req_cols.get(col, 0)
        got = c.placed_load.totals(cols, below=below)
        if not count.any():
            assert got is None
        else:
            assert got is not None and snap.num_nodes == len(ids)
            np.testing.assert_array_equal(got[0], req)
            np.testing.assert_array_equal(got[1], count)


@pytest.mark.parametrize("seed", range(6))
def test_columns_and_loads_match_pod_at_a_time_sums(batch, seed):
    rng = random.Random(seed)
    c = Cache()
    for name in NODES:
        c.add_node(make_node(name, cpu="64", memory="256Gi"))
    nodes = list(NODES)
    placed: dict[str, dict] = {}
    attach_order: list[str] = []
    for i in range(160):
        op = rng.random()
        if op < 0.55 or not placed:
            pod = _pod(rng, i)
            node = rng.choice(nodes)
            c.assume_pod(c.new_pod_info(pod), node, 0.0)
            placed[pod["metadata"]["uid"]] = pod.node(node)
            attach_order.append(pod["metadata"]["uid"])
        elif op < 0.7:
            uid = rng.choice(sorted(placed))
            if c.forget_pod(uid) is not None or c.remove_pod(uid) is not None:
                del placed[uid]
        elif op < 0.8:  # the bind went elsewhere: detached here, attached there
            uid = rng.choice(sorted(placed))
            before, after = c.pod_node(uid), rng.choice(nodes)
            moved = placed[uid].copy_().node(after)
            c.add_pod(moved)
            placed[uid] = moved
            if after != before:
                attach_order.append(uid)
        elif op < 0.93:  # a start time appears on a placed pod
            uid = rng.choice(sorted(placed))
            started = placed[uid].copy_()
            started["status"] = {"phase": "Running", "startTime": "2026-01-01T00:01:00Z"}
            c.add_pod(started)
            placed[uid] = started
        elif len(nodes) > 3:  # a node goes: the last row moves into its place
            gone = rng.choice(nodes)
            nodes.remove(gone)
            c.remove_node(gone)
        if rng.random() < 0.2:
            _check_table(c, attach_order)
            _check_loads(c)
    _check_table(c, attach_order)
    _check_loads(c)


def test_a_pod_forgotten_before_any_reader_never_reaches_the_columns():
    c = Cache()
    c.add_node(make_node("n1"))
    pinfo = c.new_pod_info(make_pod("a", uid="ua").req(cpu="1").prio(3))
    c.assume_pod(pinfo, "n1", 0.0)
    assert len(c._table) == 1  # noted, not yet written
    c.forget_pod("ua")
    table = c.table
    assert (len(table), table.size) == (0, 0)
    assert c.placed_load.totals([0], below=10) is None
