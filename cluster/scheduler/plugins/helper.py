"""Score helpers shared by plugins (upstream's ``helper`` package, vectorised).

Owns ``default_normalize_score``, the NormalizeScore most score plugins use. Called by
TaintToleration, NodeAffinity and PodTopologySpread in their' ``normalize``.
"""

from __future__ import annotations

import numpy as np

from ..framework import MAX_NODE_SCORE


def default_normalize_score(scores: np.ndarray, reverse: bool, max_priority: int = MAX_NODE_SCORE) -> None:
    """Scale ``scores`` in place so the highest becomes ``max_priority`` (integer division,
    as upstream); ``reverse`` flips them. All zero: unchanged, or all ``max_priority``
    when reversed."""
    if len(scores) == 0:
        return
    top = int(scores.max())
    if top == 0:
        if reverse:
            scores[:] = max_priority
        return
    scores *= max_priority
    scores //= top
    if reverse:
        np.subtract(max_priority, scores, out=scores)
