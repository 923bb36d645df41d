"""Plugin verdicts (``Status``) and the explanation of a failed cycle (``Diagnosis``).

Owns the status codes every extension point speaks, the per-cycle record of which nodes
each filter rejected and why, and the FitError text the scheduler writes into the pod's
PodScheduled condition and its FailedScheduling event. Called by the framework (which
builds a ``Diagnosis`` from vectorised filter results), by the scheduler (which turns it
into a message) and, in the next issue, by preemption (which asks which nodes a rejection
could be resolved on).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

NO_NODES_AVAILABLE = "no nodes available to schedule pods"
# Nodes outside a PreFilterResult never reach Filter; upstream counts them under this reason.
PREFILTER_ABSENT_REASON = "node is filtered out by the prefilter result"


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    # Rejected, but evicting pods (preemption) might make the node fit.
    UNSCHEDULABLE = 2
    # Rejected for a reason preemption cannot change (labels, taints, missing node).
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    # A PreFilter/PreScore plugin has nothing to say about this pod: its Filter/Score is skipped.
    SKIP = 4


_SUCCESS, _SKIP, _ERROR = Code.SUCCESS, Code.SKIP, Code.ERROR
_REJECTED = (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


@dataclass(frozen=True)
class Status:
    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @classmethod
    def error(cls, message: str, plugin: str = "") -> Status:
        return cls(Code.ERROR, (message,), plugin)

    @classmethod
    def unschedulable(cls, *reasons: str, plugin: str = "", resolvable: bool = True) -> Status:
        code = Code.UNSCHEDULABLE if resolvable else Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return cls(code, tuple(reasons), plugin)

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, self.reasons, plugin)

    # Every cycle asks these a few dozen times: the codes are module globals below, since
    # reading a member off the enum class costs several times the comparison.
    def is_success(self) -> bool:
        return self.code == _SUCCESS

    def is_skip(self) -> bool:
        return self.code == _SKIP

    def is_rejected(self) -> bool:
        return self.code in _REJECTED

    def is_error(self) -> bool:
        return self.code == _ERROR

    def message(self) -> str:
        return ", ".join(self.reasons)


SUCCESS = Status()
SKIP = Status(Code.SKIP)


@dataclass(frozen=True)
class Rejection:
    """One reason a filter plugin gave, for the nodes in ``mask`` it was the first to reject."""

    plugin: str
    code: Code
    reason: str
    mask: np.ndarray  # bool over snapshot node indices


@dataclass
class Diagnosis:
    """Why a pod fitted no node: a per-reason record kept as masks, not per-node objects.

    Upstream keeps a Status per node; with thousands of nodes that is the slow part of a
    failed cycle, so node statuses are materialised only on request (``node_status``).
    A node is attributed to the first filter plugin that rejected it, as upstream's
    ``RunFilterPlugins`` stops at the first failure.
    """

    num_all_nodes: int
    rejections: list[Rejection] = field(default_factory=list)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    # Nodes never filtered because a PreFilterResult left them out.
    absent: np.ndarray | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)

    def node_status(self, index: int) -> Status:
        if self.absent is not None and self.absent[index]:
            return Status.unschedulable(PREFILTER_ABSENT_REASON, resolvable=False)
        hits = [r for r in self.rejections if r.mask[index]]
        if not hits:
            return SUCCESS
        code = max(r.code for r in hits)  # one unresolvable reason makes the node unresolvable
        return Status(code, tuple(r.reason for r in hits), hits[0].plugin)

    def unresolvable_mask(self, num_nodes: int) -> np.ndarray:
        """Nodes where preemption cannot help (for the next issue's PostFilter)."""
        out = np.zeros(num_nodes, dtype=bool) if self.absent is None else self.absent.copy()
        for r in self.rejections:
            if r.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                out |= r.mask
        return out

    def reason_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.rejections:
            n = int(np.count_nonzero(r.mask))
            if n:
                counts[r.reason] = counts.get(r.reason, 0) + n
        if self.absent is not None:
            n = int(np.count_nonzero(self.absent))
            if n:
                counts[PREFILTER_ABSENT_REASON] = counts.get(PREFILTER_ABSENT_REASON, 0) + n
        return counts


def fit_error_message(diag: Diagnosis) -> str:
    """The FitError text: ``0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.``

    As upstream, the "<count> <reason>" strings themselves are sorted, so "10 ..." sorts
    before "2 ...". A PreFilter rejection replaces the histogram.
    """
    msg = f"0/{diag.num_all_nodes} nodes are available:"
    if diag.pre_filter_msg:
        msg += f" {diag.pre_filter_msg}."
    else:
        parts = sorted(f"{n} {reason}" for reason, n in diag.reason_counts().items())
        if parts:
            msg += f" {', '.join(parts)}."
    if diag.post_filter_msg:
        # The preemption message is itself a FitError text ending in "."; the reference's
        # shape has one full stop at the end, not two.
        post = diag.post_filter_msg
        msg += f" {post}" if post.endswith(".") else f" {post}."
    return msg


def single_node_diagnosis(status: Status) -> Diagnosis | None:
    """A Reserve/Permit rejection reads as a FitError over the one chosen node, as upstream."""
    if not status.is_rejected():
        return None
    one = np.ones(1, dtype=bool)
    diag = Diagnosis(1, rejections=[Rejection(status.plugin, status.code, r, one) for r in status.reasons])
    if status.plugin:
        diag.unschedulable_plugins.add(status.plugin)
    return diag
