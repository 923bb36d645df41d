"""A DaemonSet's update strategy: which old pods a rolling update deletes, where it surges.

Owns what upstream's ``pkg/controller/daemon/update.go`` decides for a DaemonSet whose
template changed: the resolved ``maxSurge``/``maxUnavailable`` (``fenceposts``), whether a
pod runs the current template (``is_updated``), the one old and one new pod a node may
hold (``split_node``), and one rolling step (``rolling_step``). ``OnDelete`` needs
nothing here: the controller replaces only the pods that go, with the new template.

Who calls it: ``daemonset.DaemonSetController`` at each sync it may manage, after its
per-node pass and only while some pod runs an older template; tests. Pure functions of
plain dicts.

The rules, as upstream applies them (a pod is available when Ready for
``minReadySeconds``; pods being deleted are not counted):

- Without surge: a node with no pod, or with both an old and a new pod, or with more than
  one of either, counts as unavailable; so does a node whose new pod is not available. An
  old pod that is not available is deleted at once; available old pods are deleted (nodes
  in name order) while fewer than ``maxUnavailable`` nodes are unavailable.
- With surge: a node whose old pod is not available gets a new pod at once (or, when the
  DaemonSet should no longer run there, the old pod is deleted); up to ``maxSurge`` nodes
  with an available old pod get a new pod beside it, counting nodes whose new pod is not
  yet available; an old pod is deleted once the new pod beside it is available. Old pods
  on nodes the DaemonSet should no longer run on are deleted only while more pods are
  available than desired.
- ``maxSurge`` and ``maxUnavailable`` are an int or a percent of the desired number of
  nodes, rounded up; both 0 means ``maxUnavailable`` 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..api.objects import is_terminating, labels_of, name_of
from ..api.workloadvalidation import resolve_percent
from .ownedpods import available_at, is_pod_ready
from .reconciler import Obj

__all__ = [
    "GENERATION_LABEL",
    "HASH_LABEL",
    "RollingStep",
    "fenceposts",
    "history_to_prune",
    "is_updated",
    "rolling_step",
    "split_node",
]

HASH_LABEL = "controller-revision-hash"  # upstream apps.DefaultDaemonSetUniqueLabelKey
GENERATION_LABEL = "pod-template-generation"  # upstream extensions.DaemonSetTemplateGenerationKey


def fenceposts(strategy: Mapping[str, Any] | None, desired: int) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) resolved against ``desired`` nodes (upstream
    updatedDesiredNodeCounts); (0, 0) for OnDelete, and for no type at all (the apiserver
    defaults one; upstream's controller rolls nothing without it)."""
    strategy = strategy or {}
    if strategy.get("type") != "RollingUpdate":
        return 0, 0
    rolling = strategy.get("rollingUpdate") or {}
    surge = resolve_percent(rolling.get("maxSurge", 0), desired, round_up=True)
    unavailable = resolve_percent(rolling.get("maxUnavailable", 1), desired, round_up=True)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def is_updated(pod: Obj, hash_: str, generation: str | None) -> bool:
    """The pod runs the current template: its revision hash, or its template generation,
    is the DaemonSet's (upstream IsPodUpdated)."""
    labels = labels_of(pod)
    return (
        bool(hash_)
        and labels.get(HASH_LABEL) == hash_
        or (generation is not None and labels.get(GENERATION_LABEL) == generation)
    )


def split_node(pods: Sequence[Obj], hash_: str, generation: str | None) -> tuple[Obj | None, Obj | None, bool]:
    """(new pod, old pod, ok) of one node's pods not being deleted; not ok when there is
    more than one of either (upstream findUpdatedPodsOnNode)."""
    new = old = None
    for pod in pods:
        if is_terminating(pod):
            continue
        if is_updated(pod, hash_, generation):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


class RollingStep:
    """What one rolling step asks for: old pods to delete, nodes to create a pod on, and
    when a pod not yet available becomes so (to look again then)."""

    __slots__ = ("deletes", "creates", "wake")

    def __init__(self) -> None:
        self.deletes: list[Obj] = []
        self.creates: list[str] = []
        self.wake: float | None = None


class _Availability:
    def __init__(self, min_ready: float, now: float, step: RollingStep):
        self.min_ready, self.now, self.step = min_ready, now, step

    def __call__(self, pod: Obj) -> bool:
        if not is_pod_ready(pod):
            return False
        at = available_at(pod, self.min_ready)
        if at is None or at <= self.now:
            return True
        self.step.wake = at if self.step.wake is None else min(self.step.wake, at)
        return False


def rolling_step(
    by_node: Mapping[str, Sequence[Obj]],
    should_run: Mapping[str, bool],
    hash_: str,
    generation: str | None,
    fences: tuple[int, int],
    desired: int,
    min_ready: float,
    now: float,
) -> RollingStep:
    """One step of upstream rollingUpdate over every node holding pods of the DaemonSet
    (``by_node``, visited in name order); ``should_run[node]`` as placement says."""
    step = RollingStep()
    available = _Availability(min_ready, now, step)
    surge, unavailable = fences
    if surge == 0:
        _without_surge(by_node, hash_, generation, unavailable, available, step)
    else:
        _with_surge(by_node, should_run, hash_, generation, surge, desired, available, step)
    return step


def _without_surge(
    by_node: Mapping[str, Sequence[Obj]],
    hash_: str,
    generation: str | None,
    max_unavailable: int,
    available: _Availability,
    step: RollingStep,
) -> None:
    num_unavailable = 0
    replace: list[Obj] = []
    candidates: list[Obj] = []
    for name in sorted(by_node):
        new, old, ok = split_node(by_node[name], hash_, generation)
        if ok and new is not None and old is None:
            num_unavailable += not available(new)
        elif ok and new is None and old is not None:
            if not available(old):
                replace.append(old)
            elif num_unavailable < max_unavailable:
                candidates.append(old)
        else:
            num_unavailable += 1  # both or neither: the per-node pass sorts this node out first
    room = min(max(max_unavailable - num_unavailable, 0), len(candidates))
    step.deletes = replace + candidates[:room]


def _with_surge(
    by_node: Mapping[str, Sequence[Obj]],
    should_run: Mapping[str, bool],
    hash_: str,
    generation: str | None,
    max_surge: int,
    desired: int,
    available: _Availability,
    step: RollingStep,
) -> None:
    deletes: list[Obj] = []
    sunset: list[Obj] = []
    candidates: list[str] = []
    allowed: list[str] = []
    num_surge = num_available = 0
    for name in sorted(by_node):
        new, old, ok = split_node(by_node[name], hash_, generation)
        if not ok:
            num_surge += 1
            continue
        shown = old if old is not None else new
        num_available += shown is not None and available(shown)
        if old is None:
            continue
        if new is None:
            runs = should_run.get(name, False)
            if not available(old) and runs:
                allowed.append(name)  # out of date and down: replace it at once
            elif not available(old):
                deletes.append(old)
            elif not runs:
                sunset.append(old)
            elif num_surge < max_surge:
                candidates.append(name)
        elif not available(new):
            num_surge += 1  # waiting for the surged pod
        else:
            deletes.append(old)
    spare = min(max(num_available - desired, 0), len(sunset))
    deletes += sunset[:spare]
    room = min(max(max_surge - num_surge, 0), len(candidates))
    step.deletes = deletes
    step.creates = allowed + candidates[:room]


def history_to_prune(revisions: Sequence[Obj], current: str, live: set[str], limit: int) -> list[Obj]:
    """The revisions to delete, oldest first (upstream cleanupHistory): as many of the
    non-current ones as exceed ``limit``, skipping those a pod still runs (``live``)."""
    old = [r for r in revisions if name_of(r) != current]
    kill, out = len(old) - limit, []
    for rev in old:
        if kill <= 0:
            break
        if name_of(rev) not in live:
            out.append(rev)
            kill -= 1
    return out
