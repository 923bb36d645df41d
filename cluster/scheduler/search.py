"""Which feasible nodes a cycle scores: upstream's round-robin search, as arithmetic.

Owns ``num_feasible_nodes_to_find`` (how many feasible nodes the search collects, from
percentageOfNodesToScore), ``rotated_take`` (the nodes upstream's search would collect
from a start index, and how far it got, given every node's verdict) and ``chunked_take``
(the same answer, judging nodes in growing chunks of the search order and stopping as
soon as the answer is known, as upstream stops filtering), and ``select_host`` (the best
total among the collected nodes, ties drawn uniformly by ``draw_tied``). Called by
``Scheduler``, and by ``RowMemo`` and ``KindRun`` for the searches of a run.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
FIRST_CHUNK = 256  # the smallest chunk of nodes judged at once (numpy's overhead per call)


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes the search collects before it stops (upstream's formula)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


def rotated_take(feasible: np.ndarray, start: int, k: int) -> tuple[np.ndarray, int]:
    """Emulate upstream's search over ``feasible`` from ``start``, wrapping around.

    Returns the positions of the first ``k`` feasible entries in search order and the
    number of entries the search processed. Upstream stops when it finds a ``k+1``-th
    feasible node (which it drops), so it has processed every entry before that one;
    with ``k`` or fewer feasible entries it processes all of them.
    """
    return rotated_take_idx(np.flatnonzero(feasible), len(feasible), start, k)


def rotated_take_idx(idx: np.ndarray, n: int, start: int, k: int) -> tuple[np.ndarray, int]:
    """``rotated_take`` given the feasible positions ``idx`` (ascending) among ``n``."""
    split = int(idx.searchsorted(start))
    if len(idx) <= k:
        return np.concatenate((idx[split:], idx[:split])), n
    tail = len(idx) - split
    if tail > k:
        return idx[split : split + k], int(idx[split + k]) - start
    order = np.concatenate((idx[split:], idx[: k - tail]))
    return order, (int(idx[k - tail]) - start) % n


def chunked_take(
    judge: Callable[[slice], np.ndarray | None], m: int, start: int, k: int
) -> tuple[np.ndarray, int] | None:
    """``rotated_take`` over ``m`` positions whose verdicts ``judge`` gives for a slice of
    positions, asked for chunks of the search order (from ``start``, wrapping; the first
    ``max(2k, FIRST_CHUNK)`` long, then doubling, and none across the wrap) until a
    ``k+1``-th feasible position is found. None if ``judge`` returns None (an error)."""
    found: list[np.ndarray] = []
    count = offset = 0
    size = max(2 * k, FIRST_CHUNK)
    while offset < m:
        first = (start + offset) % m
        end = min(first + size, m if first >= start else start)
        ok = judge(slice(first, end))
        if ok is None:
            return None
        hits = ok.nonzero()[0]  # numpy's flatnonzero wraps this in two Python calls
        if first:
            hits += first
        if count + len(hits) > k:
            found.append(hits[: k - count])
            return _concat(found), (int(hits[k - count]) - start) % m
        found.append(hits)
        count += len(hits)
        offset += end - first
        size *= 2
    return _concat(found), m


def _concat(found: list[np.ndarray]) -> np.ndarray:
    if len(found) == 1:
        return found[0]
    return np.concatenate(found) if found else np.empty(0, dtype=np.intp)


def select_host(total: np.ndarray, draw: Callable[[int], int]) -> int:
    """Position of the best total (``draw_tied`` among the best)."""
    # argmax is numpy's C method; max() goes through a Python wrapper on every call.
    return draw_tied((total == total[total.argmax()]).nonzero()[0], draw)


def draw_tied(tied: np.ndarray, draw: Callable[[int], int]) -> int:
    """One of ``tied``, drawn uniformly by ``draw(n)`` (the scheduler's seeded RNG) when
    there are several, as upstream's selectHost samples its ties."""
    return int(tied[0] if len(tied) == 1 else tied[draw(len(tied))])
