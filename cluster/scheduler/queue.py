"""The scheduling queue: pending pods waiting for a scheduling cycle.

Owns where every pending pod waits: ``activeQ`` (a heap in QueueSort order, popped by the
scheduler), ``unschedulablePods`` (pods a cycle rejected, waiting for a cluster event that
may help, or for the 5-minute leftover flush). Called by ``Scheduler``: informer events
(``add``/``update``/``delete``), the cycle (``pop``, ``add_unschedulable_if_not_present``,
``requeue_after_error``), cluster events (``move_all_to_active``) and time (``flush``).

Seams for the next issue (not implemented here):
- backoffQ: upstream sends a pod to ``podBackoffQ`` (1 s doubling to 10 s) when it failed
  with an error, when a move event arrived during its cycle, or when it is moved while
  still backing off. Every such place below is marked ``# backoffQ seam``; until then a
  pod that would back off waits only until the next ``flush`` (the next ``schedule``
  call), which is enough to stop a failing pod from spinning inside one call.
- nominator: the PodNominator is updated on add, update, delete and on a failed cycle;
  those places are marked ``# nominator seam``.
- PreEnqueue (scheduling gates) would run in ``add`` before a pod enters activeQ.
"""
from __future__ import annotations

import heapq
import itertools

from .cache import PodInfo
from .framework import ClusterEvent, QueueSortPlugin

DEFAULT_MAX_IN_UNSCHEDULABLE = 300.0  # DefaultPodMaxInUnschedulablePodsDuration, emulated seconds

# Fields a pod update may change without making the pod worth retrying (upstream isPodUpdated).
_IGNORED_META = ("resourceVersion", "generation", "managedFields", "finalizers")


class QueuedPodInfo:
    __slots__ = ("pinfo", "timestamp", "initial_attempt_timestamp", "attempts",
                 "unschedulable_plugins", "seq", "key")

    def __init__(self, pinfo: PodInfo, now: float):
        self.pinfo = pinfo
        self.timestamp = now  # when the pod entered (or last failed back into) the queue
        self.initial_attempt_timestamp: float | None = None
        self.attempts = 0
        self.unschedulable_plugins: set[str] = set()  # plugins that rejected it last cycle
        self.seq = -1  # heap entry identity; a stale heap entry has another seq
        self.key: tuple = ()  # the sort key it was last pushed with

    @property
    def uid(self) -> str:
        return self.pinfo.uid

    @property
    def priority(self) -> int:
        return self.pinfo.priority

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.pinfo.namespace}/{self.pinfo.name}, prio={self.priority})"


def is_pod_updated(old: dict, new: dict) -> bool:
    """True if an update changed more than status and bookkeeping metadata."""
    if old.get("spec") != new.get("spec"):
        return True
    om, nm = dict(old.get("metadata") or {}), dict(new.get("metadata") or {})
    for k in _IGNORED_META:
        om.pop(k, None)
        nm.pop(k, None)
    return om != nm


class SchedulingQueue:
    def __init__(self, sort: QueueSortPlugin, event_map: dict[str, set[str]] | None = None,
                 max_in_unschedulable: float = DEFAULT_MAX_IN_UNSCHEDULABLE):
        self._sort_key = sort.sort_key
        self._event_map = event_map or {}
        self.max_in_unschedulable = max_in_unschedulable
        self._heap: list[tuple] = []
        self._active: dict[str, QueuedPodInfo] = {}
        # Insertion order is timestamp order (timestamps are "now" on insert), which lets
        # the leftover flush stop at the first pod that is not yet due.
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._retry_next_flush: dict[str, QueuedPodInfo] = {}  # backoffQ seam
        self._seq = itertools.count()
        self.scheduling_cycle = 0
        self.move_request_cycle = -1

    # ---- sizes and lookup --------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._active) + len(self._unschedulable) + len(self._retry_next_flush)

    def active_count(self) -> int:
        return len(self._active)

    def unschedulable_count(self) -> int:
        return len(self._unschedulable)

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self._active.get(uid) or self._unschedulable.get(uid) or self._retry_next_flush.get(uid)

    def in_active(self, uid: str) -> bool:
        return uid in self._active

    def in_unschedulable(self, uid: str) -> bool:
        return uid in self._unschedulable

    # ---- activeQ heap ------------------------------------------------------------------

    def _push_active(self, qp: QueuedPodInfo) -> None:
        qp.seq = next(self._seq)
        qp.key = self._sort_key(qp)
        self._active[qp.uid] = qp
        heapq.heappush(self._heap, qp.key + (qp.seq, qp))
        if len(self._heap) > 2 * len(self._active) + 64:
            self._compact()

    def _compact(self) -> None:
        self._heap = [e for e in self._heap if self._active.get(e[-1].uid) is e[-1] and e[-1].seq == e[-2]]
        heapq.heapify(self._heap)

    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or None when activeQ is empty."""
        heap, active = self._heap, self._active
        while heap:
            entry = heapq.heappop(heap)
            qp = entry[-1]
            if active.get(qp.uid) is qp and qp.seq == entry[-2]:
                del active[qp.uid]
                qp.attempts += 1
                if qp.initial_attempt_timestamp is None:
                    qp.initial_attempt_timestamp = qp.timestamp
                self.scheduling_cycle += 1
                return qp
        return None

    # ---- informer events ---------------------------------------------------------------

    def add(self, pinfo: PodInfo, now: float) -> QueuedPodInfo:
        """A new pending pod. (PreEnqueue / scheduling gates would be checked here.)"""
        qp = QueuedPodInfo(pinfo, now)
        self._push_active(qp)
        # nominator seam: AddNominatedPod(pinfo, ModeNoop) from status.nominatedNodeName.
        return qp

    def update(self, qp: QueuedPodInfo, old_pod: dict, now: float) -> None:
        """``qp.pinfo`` already holds the new object; ``old_pod`` is the one it replaced."""
        uid = qp.uid
        # nominator seam: UpdateNominatedPod(old_pod, qp.pinfo).
        if uid in self._active:
            if self._sort_key(qp) != qp.key:
                self._push_active(qp)  # priority changed: the old heap entry goes stale
            return
        if uid in self._unschedulable and is_pod_updated(old_pod, qp.pinfo.pod):
            del self._unschedulable[uid]
            self._push_active(qp)  # backoffQ seam: to backoffQ if still backing off

    def delete(self, uid: str) -> QueuedPodInfo | None:
        # nominator seam: DeleteNominatedPodIfExists.
        return self._active.pop(uid, None) or self._unschedulable.pop(uid, None) or \
            self._retry_next_flush.pop(uid, None)

    # ---- after a cycle -----------------------------------------------------------------

    def add_unschedulable_if_not_present(self, qp: QueuedPodInfo, now: float, pod_cycle: int) -> None:
        """A pod a cycle rejected (FitError). Waits for a helpful event or the leftover flush.

        Upstream sends a pod that no plugin rejected (e.g. "no nodes available") to
        backoffQ; without one it is parked here instead, and every event moves it.
        """
        if self.get(qp.uid) is not None:
            return
        qp.timestamp = now
        # nominator seam: AddNominatedPod(qp.pinfo, nominating info of the cycle).
        if self.move_request_cycle >= pod_cycle:
            # An event that may help arrived while the pod was being scheduled.
            self._retry_next_flush[qp.uid] = qp  # backoffQ seam
        else:
            self._unschedulable[qp.uid] = qp

    def requeue_after_error(self, qp: QueuedPodInfo, now: float) -> None:
        """A pod whose cycle or bind failed with an error: retried, not parked."""
        if self.get(qp.uid) is not None:
            return
        qp.timestamp = now
        qp.unschedulable_plugins = set()
        self._retry_next_flush[qp.uid] = qp  # backoffQ seam

    # ---- moves and flushes -------------------------------------------------------------

    def _worth_requeuing(self, qp: QueuedPodInfo, event: str) -> bool:
        if not qp.unschedulable_plugins or event in (ClusterEvent.WILDCARD, ClusterEvent.UNSCHEDULABLE_TIMEOUT):
            return True
        interested = self._event_map.get(event)
        return bool(interested and not interested.isdisjoint(qp.unschedulable_plugins))

    def move_all_to_active(self, event: str, now: float, pre_check=None) -> int:
        """Move the unschedulable pods ``event`` may help back to activeQ. Returns how many."""
        self.move_request_cycle = self.scheduling_cycle
        moved = [qp for qp in self._unschedulable.values()
                 if (pre_check is None or pre_check(qp)) and self._worth_requeuing(qp, event)]
        for qp in moved:
            del self._unschedulable[qp.uid]
            self._push_active(qp)  # backoffQ seam: to backoffQ if still backing off
        return len(moved)

    def flush(self, now: float) -> int:
        """Time-driven moves due at ``now``: pods parked past ``max_in_unschedulable``
        (strictly longer, as upstream), and pods waiting for a retry. Returns how many moved.

        Upstream checks the leftovers every 30 s, so a pod moves up to 30 s after its
        5 minutes; here every ``schedule`` call checks, so it moves at its 5 minutes.
        """
        due = []
        for qp in self._unschedulable.values():
            if now - qp.timestamp <= self.max_in_unschedulable:
                break
            due.append(qp)
        for qp in due:
            del self._unschedulable[qp.uid]
            self._push_active(qp)  # backoffQ seam: UnschedulableTimeout goes via backoff when due
        retry = list(self._retry_next_flush.values())
        self._retry_next_flush.clear()
        for qp in retry:
            self._push_active(qp)
        return len(due) + len(retry)
