"""DefaultPreemption: the PostFilter that evicts lower-priority pods to make room.

Owns the plugin face of preemption: its args (upstream's DefaultPreemptionArgs, with the
same defaults and validation) and ``post_filter``, which runs one attempt of the evaluator
in ``scheduler/preemption.py`` and prefixes its message with "preemption: " as upstream.
Built by the registry with ``handle`` = the profile's Framework; at run time it reads
``handle.host``, the ``PreemptionHost`` the Scheduler sets, and returns the chosen node
with its victims and the nominations to clear. The Scheduler turns that result into API
writes (upstream's prepareCandidate); this plugin writes nothing.

    minCandidateNodesPercentage: 0..100 (default 10)  share of the potential nodes to dry-run
    minCandidateNodesAbsolute:   >= 0   (default 100) but at least this many
    (not both 0)
"""

from __future__ import annotations

from typing import Any

from ..cache import PodInfo, Snapshot
from ..framework import CycleState, PluginError, PostFilterPlugin, PostFilterResult, PreEnqueuePlugin
from ..preemption import (
    filter_pods_with_pdb_violation,
    more_important_key,
    num_candidates,
    pick_one_node,
    pod_eligible,
    preempt,
)
from ..status import SUCCESS, Code, Diagnosis, Status

PERCENTAGE = "minCandidateNodesPercentage"
ABSOLUTE = "minCandidateNodesAbsolute"
DEFAULT_PERCENTAGE = 10
DEFAULT_ABSOLUTE = 100


def _int_arg(args: dict[str, Any], name: str, default: int) -> int:
    value = args.get(name)
    if value is None:  # unset: the v1 defaulting fills it in
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"DefaultPreemption: {name} must be an integer, got {value!r}")
    return value


def parse_args(args: dict[str, Any] | None) -> tuple[int, int]:
    """(percentage, absolute) from DefaultPreemptionArgs, validated as upstream."""
    args = dict(args or {})
    unknown = set(args) - {PERCENTAGE, ABSOLUTE}
    if unknown:
        raise ValueError(f"DefaultPreemption: unknown arguments {sorted(unknown)}")
    pct = _int_arg(args, PERCENTAGE, DEFAULT_PERCENTAGE)
    absolute = _int_arg(args, ABSOLUTE, DEFAULT_ABSOLUTE)
    if not 0 <= pct <= 100:
        raise ValueError(f"DefaultPreemption: {PERCENTAGE}: Invalid value: {pct}: not in valid range [0, 100]")
    if absolute < 0:
        raise ValueError(f"DefaultPreemption: {ABSOLUTE}: Invalid value: {absolute}: not in valid range [0, inf)")
    if pct == 0 and absolute == 0:
        raise ValueError(f"DefaultPreemption: {PERCENTAGE} and {ABSOLUTE} cannot both be zero")
    return pct, absolute


WAITING = "waiting for the preemption for this pod to be finished"


class DefaultPreemption(PostFilterPlugin, PreEnqueuePlugin):
    NAME = "DefaultPreemption"
    # No cluster event moves a pod this plugin gates: the Scheduler activates it once the
    # deletions of its victims have been seen (see pre_enqueue).
    EVENTS = frozenset()

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        self.percentage, self.absolute = parse_args(args)
        self.handle = handle

    def pre_enqueue(self, pod: PodInfo) -> Status:
        """Upstream's async preemption (on by default since 1.33) keeps a preemptor out of
        activeQ until its preemption's API calls are done, so that it cannot preempt again
        meanwhile. kubemu sends those calls without waiting, so the pod waits until the
        scheduler has seen each victim deleted or terminating."""
        host = getattr(self.handle, "host", None)
        if host is not None and host.preemption_pending(pod.uid):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (WAITING,), self.NAME)
        return SUCCESS

    def post_filter(
        self, state: CycleState, pod: PodInfo, snap: Snapshot, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]:
        host = getattr(self.handle, "host", None)
        if host is None:
            raise PluginError("no PreemptionHost is set on the framework")
        result, status = preempt(host, state, pod, snap, diagnosis, self.percentage, self.absolute)
        msg = status.message()
        if msg:
            status = Status(status.code, (f"preemption: {msg}",), status.plugin)
        return result, status


__all__ = [
    "DefaultPreemption",
    "parse_args",
    "filter_pods_with_pdb_violation",
    "more_important_key",
    "num_candidates",
    "pick_one_node",
    "pod_eligible",
]
