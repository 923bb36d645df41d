"""Why each pod was, or was not, scheduled: the scheduler's ``SchedulingResult`` objects.

Owns the recorder (``Explainer``) behind the profile setting ``explain``: ``failed`` (the
default: failed attempts, and the attempt that finally placed a pod that had failed),
``all`` (every attempt, with the Score of the top nodes per plugin and the final
ranking) or ``none``. For each attempt it keeps, per plugin, the Filter verdict counts by
reason (those of the FailedScheduling message) with the first rejected node names, or
for a placed pod the Score plugins' top nodes (raw, normalised, weighted) and the
ranking, and for a failed one the preemption outcome (nominated node, victims, or why
preemption did not help). The figures come from ``explain_cycle.py``: the failed cycle's
own diagnosis; for a placed pod, what its cycle saw (a ``Choice``: its search, the
rejections among the nodes it judged, every Score plugin's scores, which the accelerators
supply as the plain cycle computes them), or, where the cycle cannot tell (a nominated
node retried, a lazy run vetoed by nominated load), the plain reference cycle run again
for the pod. Either way the figures are the reference cycle's.

Bounded: the last ``Limits.attempts`` attempts per pod, ``Limits.pods`` pods (the least
recently explained is dropped, and its object deleted), the ``top`` scores and ``names``
node names per reason. It lives outside the pod (annotations break at a few thousand
nodes): each explained pod's record travels as one object of the read-only kind
``kubemu.io/v1alpha1 SchedulingResult`` (same namespace and name as the pod, owned by it,
so the garbage collector deletes it with the pod), written in the scheduler component's
batches (``writes``) by server-side apply. The front end serves it read-only; the
scenario report and ``kubemu explain`` read it like any other object.

Called by ``Scheduler`` at four points of its cycle: ``begin`` (a pod is popped: the
round-robin start index), ``chosen`` (a node was picked, before the pod is assumed),
``post_filter`` (preemption's verdict) and ``failed`` (the cycle failed, with its message).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from ..api.patches import Apply
from ..api.requests import Delete, Patch, Request
from ..clock import rfc3339
from .explain_cycle import Choice, Limits, choice_record, diagnosis_entries, explain_choice
from .explain_scores import Scores, rank

if TYPE_CHECKING:
    from .cache import Cache, PodInfo
    from .framework import Framework, PostFilterResult
    from .queue import SchedulingQueue
    from .status import Diagnosis, Status

MODES = ("failed", "all", "none")
KIND = "SchedulingResult"
API_VERSION = "kubemu.io/v1alpha1"
SCHEDULED, UNSCHEDULABLE, ERROR, PREEMPTING = "Scheduled", "Unschedulable", "Error", "Preempting"
REASON_WIDTH = 120  # the summary reason of a failed pod, cut for the table


def check_mode(mode: Any, path: str = "spec.scheduler.explain") -> str:
    """The mode, or a ValueError naming ``path`` and the value."""
    if mode not in MODES:
        raise ValueError(f'{path}: "{mode}" must be one of {", ".join(MODES)}')
    return str(mode)


class _Record:
    __slots__ = ("namespace", "name", "uid", "scheduler", "attempts", "history", "written")

    def __init__(self, pod: PodInfo, scheduler: str):
        self.namespace, self.name, self.uid, self.scheduler = pod.namespace, pod.name, pod.uid, scheduler
        self.attempts = 0  # every attempt explained, including those no longer kept
        # Attempts written and done with are kept as their JSON: one object the garbage
        # collector never scans, where the dicts were dozens it scanned again and again.
        self.history: list[dict[str, Any] | bytes] = []
        self.written = False  # its object was sent at least once


class Explainer:
    def __init__(
        self,
        mode: str,
        cache: Cache,
        queue: SchedulingQueue,
        nodes_to_find: Callable[[Framework, int], int],
        limits: Limits | None = None,
    ):
        self.mode = check_mode(mode)
        self.limits = limits or Limits()
        self._cache, self._queue, self._nodes_to_find = cache, queue, nodes_to_find
        self._records: OrderedDict[str, _Record] = OrderedDict()  # pod uid -> record, least recent first
        self._dirty: dict[str, None] = {}  # uids whose object must be written
        self._dropped: list[tuple[str, str]] = []  # (namespace, name) of objects to delete
        self._start = 0
        self._current: tuple[str, dict[str, Any]] | None = None  # (uid, attempt) of this cycle
        self._preemption: tuple[str, dict[str, Any]] | None = None
        self._unranked: list[Scores] = []  # placements whose Score figures flush() fills in
        self._last_time = (-1.0, "")

    # ---- the cycle's call sites --------------------------------------------------------

    def begin(self, start: int) -> None:
        """A pod was popped; its search starts at ``start`` (the round-robin index)."""
        self._start, self._current, self._preemption = start, None, None

    def chosen(self, fwk: Framework, pod: PodInfo, node: str, now: float, choice: Choice | None = None) -> None:
        """The cycle picked ``node``; called before the pod is assumed there. ``choice``:
        what that cycle saw (``explain_cycle.Choice``), when it can tell; else the plain
        cycle is run again for the figures. Its Score figures are ranked by ``flush``."""
        scores = None
        if self.mode == "all":
            found = None if choice is None else choice_record(self._cache.snapshot(), node, choice, self.limits)
            if found is None:
                head = explain_choice(
                    fwk, self._cache, self._queue.nominator, pod, self._start, self._nodes_to_find, node, self.limits
                )
            else:
                head, scores = found
        elif pod.uid in self._records:  # a pod that failed before: its final placement
            head = {"node": node}
        else:
            return
        attempt = {"attempt": 0, "time": self._time(now), "result": SCHEDULED, **head}
        if scores is not None:
            scores.attempt = attempt
            self._unranked.append(scores)
        self._push(fwk, pod, attempt)
        self._current = (pod.uid, attempt)

    def _time(self, now: float) -> str:
        if now != self._last_time[0]:  # a batch of cycles shares its time
            self._last_time = (now, rfc3339(now))
        return self._last_time[1]

    def flush(self) -> None:
        """Rank the Score figures of the placements since the last call. Called at the end
        of every ``Scheduler.schedule`` call, before any node changes (their node indices
        are the snapshot's), and before anything reads the records."""
        if self._unranked:
            rank(self._unranked, self._cache.snapshot().node_name, self.limits.top)
            self._unranked = []

    def post_filter(self, pod: PodInfo, result: PostFilterResult | None, status: Status) -> None:
        """Preemption's verdict for the failed cycle of ``pod``."""
        out: dict[str, Any] = {"message": status.message()}
        if result is not None and result.nominated_node_name:
            cap = self.limits.names
            out["nominatedNode"] = result.nominated_node_name
            out["victimCount"] = len(result.victims)
            out["victims"] = [
                {
                    "namespace": v.namespace,
                    "name": v.name,
                    "priority": v.priority,
                    "why": f"priority {v.priority} is below the preemptor's {pod.priority}",
                }
                for v in result.victims[:cap]
            ]
            if result.clear_nominations:
                out["clearedNominations"] = [f"{p.namespace}/{p.name}" for p in result.clear_nominations[:cap]]
        self._preemption = (pod.uid, out)

    def failed(
        self, fwk: Framework, pod: PodInfo, status: Status, diag: Diagnosis | None, message: str, now: float
    ) -> None:
        """The cycle of ``pod`` failed with ``message`` (its FailedScheduling event's)."""
        if self.mode == "none":
            return
        self.flush()  # the attempt of a pod placed then refused gets its figures before the message
        result = UNSCHEDULABLE if status.is_rejected() else ERROR
        current = self._current if self._current is not None and self._current[0] == pod.uid else None
        attempt: dict[str, Any] = current[1] if current is not None else {"attempt": 0, "time": self._time(now)}
        attempt["result"] = result
        attempt["message"] = message
        if diag is not None:
            snap = self._cache.snapshot()
            attempt["nodes"] = attempt.get("nodes", diag.num_all_nodes)
            attempt["filters"] = diagnosis_entries(snap, diag, status, self.limits.names, attempt.get("node", ""))
        if self._preemption is not None and self._preemption[0] == pod.uid:
            attempt["preemption"] = pre = self._preemption[1]
            if pre.get("nominatedNode"):
                attempt["result"] = PREEMPTING
        if current is None:
            self._push(fwk, pod, attempt)
        else:
            self._dirty[pod.uid] = None
        self._current = self._preemption = None

    # ---- what is kept ------------------------------------------------------------------

    def _push(self, fwk: Framework, pod: PodInfo, attempt: dict[str, Any]) -> None:
        rec = self._records.get(pod.uid)
        if rec is None:
            rec = self._records[pod.uid] = _Record(pod, fwk.profile_name)
            if len(self._records) > self.limits.pods:
                _, old = self._records.popitem(last=False)
                self._dirty.pop(old.uid, None)
                if old.written:
                    self._dropped.append((old.namespace, old.name))
        else:
            self._records.move_to_end(pod.uid)
        rec.attempts += 1
        attempt["attempt"] = rec.attempts
        rec.history.append(attempt)
        del rec.history[: -self.limits.attempts]
        self._dirty[pod.uid] = None

    def __len__(self) -> int:
        return len(self._records)

    def result(self, uid: str) -> dict[str, Any] | None:
        """The SchedulingResult object of the pod ``uid``, as it is written; None if not kept."""
        self.flush()
        rec = self._records.get(uid)
        return None if rec is None else to_object(rec)

    def writes(self) -> list[Request]:
        """The objects changed since the last call (server-side apply: created or replaced)
        and the deletes of records dropped by the cap."""
        self.flush()
        out: list[Request] = [Delete(KIND, ns, name) for ns, name in self._dropped]
        current = None if self._current is None else self._current[1]  # failed() may still add to it
        for uid in self._dirty:
            rec = self._records[uid]
            rec.written = True
            out.append(Patch(KIND, rec.namespace, rec.name, "", Apply(to_object(rec))))
            rec.history = [a if type(a) is bytes or a is current else orjson.dumps(a) for a in rec.history]
        self._dirty.clear()
        self._dropped.clear()
        return out


def summary(last: dict[str, Any]) -> tuple[str, str]:
    """(node, reason) of the last attempt, for the object's status and the table."""
    pre = last.get("preemption") or {}
    node = pre.get("nominatedNode") or last.get("node", "")
    if last["result"] == SCHEDULED:
        total = last.get("chosenTotal")
        reason = last.get("note") or (f"score {total}, best of {last.get('feasible', 0)} feasible" if total else "")
        return node, reason
    msg = last.get("message", "")
    if pre.get("nominatedNode"):
        msg = f"preempting {pre.get('victimCount', 0)} pod(s) on {node}"
    return node, msg if len(msg) <= REASON_WIDTH else msg[: REASON_WIDTH - 3] + "..."


def to_object(rec: _Record) -> dict[str, Any]:
    history: list[dict[str, Any]] = [a if isinstance(a, dict) else orjson.loads(a) for a in rec.history]
    last = history[-1]
    node, reason = summary(last)
    owner = {"apiVersion": "v1", "kind": "Pod", "name": rec.name, "uid": rec.uid}
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": rec.name, "namespace": rec.namespace, "ownerReferences": [owner]},
        "status": {
            "podUID": rec.uid,
            "schedulerName": rec.scheduler,
            "attempts": rec.attempts,
            "result": last["result"],
            "node": node,
            "reason": reason,
            "lastAttemptTime": last["time"],
            "history": history,
        },
    }
