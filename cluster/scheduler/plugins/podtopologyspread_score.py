"""PodTopologySpread's Score half: ScheduleAnyway constraints as a preference.

Owns the raw spread score of each candidate node (``soft_scores``, the PreScore work)
and its NormalizeScore (``normalize_spread``), with upstream's formulas:

    raw(node) = round(sum over constraints whose key the node has of
                      count(domain of node) * log(size + 2) + (maxSkew - 1))
    normalized = 100 * (max + min - raw) // max   (100 for all when max == 0)

``size`` is the number of domains among the scored candidates (for the hostname key: the
number of candidates not ignored) and ``count`` the matching pods in the domain over all
eligible nodes; for the hostname key it is the pods on the node itself. Candidates that
lack a topology key are "ignored" (raw and normalized score 0), unless the constraints are
the system defaults, where a node without a zone label is still spread by hostname.
Called by ``podtopologyspread.PodTopologySpread.pre_score`` and ``normalize``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..cache import PodInfo, Snapshot, Topology
from ..framework import MAX_NODE_SCORE
from .podtopologyspread_filter import HOSTNAME_KEY, Constraint, NodeEligibility, RowsMemo, match


def _num_domains(topo: Topology, cand_ids: np.ndarray, kept: np.ndarray | None, has: np.ndarray | None) -> int:
    """Distinct domains among the kept candidates (masks None: every candidate, all of
    them with the label).

    A kept candidate without the label (possible only for system defaults) files under the
    empty value, as upstream's map lookup does, which adds one domain unless a node is
    really labelled with "".
    """
    ids = cand_ids if kept is None or has is None else cand_ids[kept & has]
    size = int(np.count_nonzero(np.bincount(ids, minlength=topo.num_domains)))
    if kept is not None and has is not None and (kept & ~has).any():
        empty = topo.values.index("") if "" in topo.values else -1
        if empty < 0 or not (ids == empty).any():
            size += 1
    return size


def soft_scores(
    snap: Snapshot,
    pod: PodInfo,
    soft: Sequence[Constraint],
    candidates: np.ndarray,
    require_all: bool,
    eligibility: NodeEligibility,
    memo: RowsMemo,
) -> tuple[np.ndarray, np.ndarray | None]:
    """PreScore: (raw int64 score per candidate, mask of ignored candidates, None when
    every node carries every key, so that no candidate is ignored)."""
    everywhere = eligibility.with_keys(snap, tuple(dict.fromkeys(c.topology_key for c in soft)))[1]
    return _scores(snap, pod, soft, candidates, require_all, eligibility, memo, everywhere)


def _scores(
    snap: Snapshot,
    pod: PodInfo,
    soft: Sequence[Constraint],
    candidates: np.ndarray,
    require_all: bool,
    eligibility: NodeEligibility,
    memo: RowsMemo,
    everywhere: bool,
) -> tuple[np.ndarray, np.ndarray | None]:
    """``soft_scores``; ``everywhere``: every node carries every key, so no candidate is
    ignored and every term counts, and the masks drop out, as they do for a constraint
    whose eligible nodes are every node (the float operations are the same either way, in
    the same order, so the scores are too)."""
    # The hostname term reads the candidates' own counts: its ids only say who lacks the key.
    cand_ids = [
        None if everywhere and c.topology_key == HOSTNAME_KEY else snap.topology(c.topology_key).ids[candidates]
        for c in soft
    ]
    ignored = kept = None
    if not everywhere:
        ignored = np.zeros(len(candidates), dtype=bool)
        if require_all:
            for ids in cand_ids:
                if ids is not None:  # always, here: only ``everywhere`` skips the hostname's
                    ignored |= ids < 0
        kept = ~ignored
    total: np.ndarray | None = None
    for c, ids in zip(soft, cand_ids):
        assert c.selector is not None  # compiled: only templates lack a selector
        matched = match(snap, pod.namespace, c.selector, memo)
        has = None if everywhere or ids is None else ids >= 0
        if c.topology_key == HOSTNAME_KEY:
            # Per node, without inclusion policies: the candidates passed the filters.
            size = len(candidates) if kept is None else int(np.count_nonzero(kept))
            cnt = matched.on_nodes(snap.num_nodes)[candidates]
        else:
            assert ids is not None  # read for every key but the hostname
            topo = snap.topology(c.topology_key)
            size = _num_domains(topo, ids, kept, has)
            keys = tuple(dict.fromkeys(x.topology_key for x in soft)) if require_all else (c.topology_key,)
            eligible, sig = eligibility.eligible(snap, pod.pod, c, keys)
            every = eligibility.covers_all(sig)
            cnt = matched.in_domains(topo.ids, None if every else eligible, topo.num_domains)[ids]  # -1: the trailing 0
        term = cnt * math.log(size + 2) + (c.max_skew - 1)
        if has is not None:
            term = np.where(has, term, 0.0)
        total = term if total is None else total + term
    assert total is not None  # PreScore runs only with soft constraints
    # Go's math.Round (half away from zero); scores are never negative.
    total += 0.5
    raw = np.floor(total, out=total).astype(np.int64)
    if ignored is not None:
        raw[ignored] = 0
    return raw, ignored


def normalize_spread(scores: np.ndarray, ignored: np.ndarray | None) -> None:
    """NormalizeScore in place: fewer matching pods score higher; ignored nodes get 0
    (``ignored`` None: none is)."""
    if ignored is None:
        if len(scores):
            lo, hi = int(scores.min()), int(scores.max())
            if hi == 0:
                scores[:] = MAX_NODE_SCORE
            else:
                scores[:] = MAX_NODE_SCORE * (hi + lo - scores) // hi
        return
    kept = ~ignored
    if kept.any():
        s = scores[kept]
        lo, hi = int(s.min()), int(s.max())
        if hi == 0:
            scores[kept] = MAX_NODE_SCORE
        else:
            scores[kept] = MAX_NODE_SCORE * (hi + lo - s) // hi
    scores[ignored] = 0
