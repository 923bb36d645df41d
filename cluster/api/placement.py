"""The resource fit: whether a pod's requests fit a node's free room, written once.

Owns upstream's NodeResourcesFit rule (one more pod must stay within the node's allowed
pod count, and every requested resource must be at most what is free) in the two forms
its callers need, sharing one comparison:

- ``resource_fit``: the verdict per resource, over one node (Python ints) or over many at
  once (numpy arrays: one entry per node); the scheduler's NodeResourcesFit filter, its
  pre-check and preemption's what-if on one node, the kubelet's admission and YuniKorn's
  node choice all call it;
- ``fits_rows``: the same rule over a matrix of free room (nodes x requested resources),
  for preemption's vectorised dry run.

The other placement checks the scheduler, the kubelet and YuniKorn share live beside this
module: host ports and the node name (``predicates.py``), taints and tolerations
(``taints.py``), node selector and node affinity (``nodeaffinity.py``). A pod's requests
(containers, init containers, sidecars and ``spec.overhead``) come from ``resources.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import numpy as np

K = TypeVar("K")
# A count, an amount or a verdict: a Python int/bool for one node, a numpy array for many.
Amount = Any


def over_pod_limit(count: Amount, allowed: Amount) -> Amount:
    """True where one more pod would exceed the allowed pod count (``count``: the pods
    already counted on the node)."""
    return count + 1 > allowed


def short_of(free: Amount, wanted: Amount) -> Amount:
    """True where ``wanted`` is more than ``free``."""
    return wanted > free


def _any(verdict: Amount) -> bool:
    return bool(verdict) if isinstance(verdict, bool | np.bool_) else bool(verdict.any())


def resource_fit(
    wanted: Iterable[tuple[K, int]],
    free: Callable[[K], Amount],
    count: Amount = None,
    allowed: Amount = None,
) -> tuple[Amount, list[tuple[K, Amount]]]:
    """(too many pods, [(key, short), ...]) for a pod asking ``wanted`` (key, amount) pairs.

    ``free(key)`` is the room left for that key: an int for one node or an array for many,
    and each verdict has the same shape. Only the keys short somewhere are listed, in the
    order given (upstream reports the pod count first, then each resource). Without
    ``count`` the pod count is not checked (``too many`` is then False)."""
    too_many = False if count is None else over_pod_limit(count, allowed)
    shortages = []
    for key, amount in wanted:
        short = short_of(free(key), amount)
        if _any(short):
            shortages.append((key, short))
    return too_many, shortages


def fits(
    wanted: Iterable[tuple[K, int]], free: Callable[[K], Amount], count: Amount = None, allowed: Amount = None
) -> bool:
    """Whether the pod fits one node (every verdict of ``resource_fit`` false)."""
    too_many, shortages = resource_fit(wanted, free, count, allowed)
    return not too_many and not shortages


def fits_rows(free: np.ndarray, need: np.ndarray, count: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """``resource_fit`` over a matrix: ``free`` is nodes x resources, ``need`` the pod's
    amount per resource; a node fits when no resource is short and the pod count allows
    one more."""
    verdict: np.ndarray = ~over_pod_limit(count, allowed) & ~short_of(free, need).any(axis=1)
    return verdict
