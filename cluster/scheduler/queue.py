"""The scheduling queue: pending pods waiting for a scheduling cycle.

Owns where every pending pod waits: ``activeQ`` (a heap in QueueSort order, popped by the
scheduler), ``podBackoffQ`` (pods that failed, waiting out a backoff of 1 s doubling to
10 s per attempt) and ``unschedulablePods`` (pods a cycle rejected, waiting for a cluster
event that may help, or for the 5-minute leftover flush). Called by ``Scheduler``:
informer events (``add``/``update``/``delete``), the cycle (``pop``,
``add_unschedulable_if_not_present``), cluster events (``move_all_to_active``) and time
(``flush``, ``next_wakeup``).

A pod's life in the queue (upstream's rules without queueing hints):

    event                              from                 to
    add (new pending pod)              -                    activeQ, or gated if PreEnqueue refuses
    update of a gated pod              gated                activeQ once PreEnqueue accepts
    pop                                activeQ              (in a cycle)
    failed cycle, a plugin rejected    (in a cycle)         unschedulablePods
    failed cycle, no rejector / error  (in a cycle)         backoffQ
    failed cycle, a move arrived       (in a cycle)         backoffQ
      while it was being scheduled
    move event the rejector cares for  unschedulablePods    backoffQ if backing off, else activeQ
    spec/metadata update               unschedulablePods    backoffQ if backing off, else activeQ
    backoff expired (flush)            backoffQ             activeQ
    pop while activeQ is empty         backoffQ (rejected)  (in a cycle), backoff cut short
    any move into activeQ              -                    gated instead if PreEnqueue refuses
    activate (e.g. preemption over)    gated                activeQ, if PreEnqueue now accepts
    parked > 5 min (flush)             unschedulablePods    backoffQ if backing off, else activeQ
    delete                             any                  -

backoffQ is two heaps, as upstream since 1.33: pods a plugin rejected (ordered by backoff
expiry, then QueueSort order) and pods that failed with an error (by expiry). With
``pop_from_backoff`` (upstream's SchedulerPopFromBackoffQ, beta and on by default since
1.33) an empty activeQ hands out the first rejected pod still backing off rather than
leaving the scheduler idle; pods that failed with an error always wait their backoff out.
Upstream also rounds expiries down to 1 s ordering windows; kubemu keeps exact expiries.

Upstream flushes backoffQ every second and the leftovers every 30 s; ``flush`` runs at
every ``schedule`` call, so pods move exactly when due and ``next_wakeup`` tells the
actor when to call again. Gated pods (PreEnqueue refused them) wait apart from
unschedulablePods: no cluster event or flush moves them, only their own update. The
PodNominator (``nominator``) lives here and follows every pending pod's add, update,
delete and failed cycle; what uses the nominations (the filter's nominated-pods pass and
preemption) comes with the preemption issue.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterator
from typing import Any

from .cache import PodInfo
from .framework import ClusterEvent, QueueSortPlugin
from .nominator import NominatingInfo, PodNominator
from .status import SUCCESS, Status

DEFAULT_MAX_IN_UNSCHEDULABLE = 300.0  # DefaultPodMaxInUnschedulablePodsDuration, emulated seconds
DEFAULT_INITIAL_BACKOFF = 1.0  # podInitialBackoffSeconds
DEFAULT_MAX_BACKOFF = 10.0  # podMaxBackoffSeconds

# Fields a pod update may change without making the pod worth retrying (upstream isPodUpdated).
_IGNORED_META = ("resourceVersion", "generation", "managedFields", "finalizers")


def backoff_duration(attempts: int, initial: float, maximum: float) -> float:
    """Backoff after ``attempts`` attempts: initial, doubled per further attempt, capped."""
    duration = initial
    for _ in range(1, attempts):
        if duration > maximum - duration:
            return maximum
        duration += duration
    return duration


class QueuedPodInfo:
    __slots__ = (
        "pinfo",
        "timestamp",
        "initial_attempt_timestamp",
        "attempts",
        "unschedulable_plugins",
        "seq",
        "key",
        "parked_seq",
    )

    def __init__(self, pinfo: PodInfo, now: float):
        self.pinfo = pinfo
        self.timestamp = now  # when the pod entered (or last failed back into) the queue
        self.initial_attempt_timestamp: float | None = None
        self.attempts = 0
        self.unschedulable_plugins: set[str] = set()  # plugins that rejected it last cycle
        self.seq = -1  # heap entry identity; a stale heap entry has another seq
        self.key: tuple[Any, ...] = ()  # the sort key it was last pushed with
        self.parked_seq = -1  # order among parked pods, for deterministic moves

    @property
    def uid(self) -> str:
        return self.pinfo.uid

    @property
    def priority(self) -> int:
        return self.pinfo.priority

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.pinfo.namespace}/{self.pinfo.name}, prio={self.priority})"


def is_pod_updated(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """True if an update changed more than status and bookkeeping metadata."""
    if old.get("spec") != new.get("spec"):
        return True
    om, nm = dict(old.get("metadata") or {}), dict(new.get("metadata") or {})
    for k in _IGNORED_META:
        om.pop(k, None)
        nm.pop(k, None)
    return om != nm


class SchedulingQueue:
    def __init__(
        self,
        sort: QueueSortPlugin,
        event_map: dict[str, set[str]] | None = None,
        max_in_unschedulable: float = DEFAULT_MAX_IN_UNSCHEDULABLE,
        initial_backoff: float = DEFAULT_INITIAL_BACKOFF,
        max_backoff: float = DEFAULT_MAX_BACKOFF,
        pre_enqueue: Callable[[PodInfo], Status] | None = None,
        pop_from_backoff: bool = True,
    ):
        self._sort_key = sort.sort_key
        self.pop_from_backoff = pop_from_backoff
        self._pre_enqueue = pre_enqueue or (lambda pinfo: SUCCESS)
        self._gated: dict[str, QueuedPodInfo] = {}
        self.nominator = PodNominator()
        self._event_map = event_map or {}
        self.max_in_unschedulable = max_in_unschedulable
        self.initial_backoff, self.max_backoff = initial_backoff, max_backoff
        self._heap: list[tuple[Any, ...]] = []
        self._active: dict[str, QueuedPodInfo] = {}
        # Insertion order is timestamp order (timestamps are "now" on insert), which lets
        # the leftover flush stop at the first pod that is not yet due.
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        # Parked pods by rejecting plugin, so an event that no rejector cares about costs
        # nothing however many pods are parked (every bind confirmation is such an event).
        self._by_rejector: dict[str, dict[str, QueuedPodInfo]] = {}
        self._backoff: dict[str, QueuedPodInfo] = {}
        # Entries are (expiry, ..., seq, qp); an entry whose qp left backoffQ or was pushed
        # again (another seq) is stale and skipped.
        self._backoff_heap: list[tuple[Any, ...]] = []  # rejected pods: (expiry, *sort key, seq, qp)
        self._error_heap: list[tuple[Any, ...]] = []  # failed with an error: (expiry, seq, qp)
        self._seq = itertools.count()
        self.scheduling_cycle = 0
        self.move_request_cycle = -1

    # ---- sizes and lookup --------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._active) + len(self._unschedulable) + len(self._backoff) + len(self._gated)

    def active_count(self) -> int:
        return len(self._active)

    def unschedulable_count(self) -> int:
        return len(self._unschedulable)

    def backoff_count(self) -> int:
        return len(self._backoff)

    def queued(self) -> Iterator[QueuedPodInfo]:
        """Every pod in the queue: active, unschedulable, backing off or gated."""
        return itertools.chain(
            self._active.values(), self._unschedulable.values(), self._backoff.values(), self._gated.values()
        )

    def get(self, uid: str) -> QueuedPodInfo | None:
        return self._active.get(uid) or self._unschedulable.get(uid) or self._backoff.get(uid) or self._gated.get(uid)

    def is_gated(self, uid: str) -> bool:
        return uid in self._gated

    def in_backoff(self, uid: str) -> bool:
        return uid in self._backoff

    def unschedulable_pods(self) -> list[QueuedPodInfo]:
        return list(self._unschedulable.values())

    # ---- backoff -----------------------------------------------------------------------

    def backoff_expiry(self, qp: QueuedPodInfo) -> float:
        return qp.timestamp + backoff_duration(qp.attempts, self.initial_backoff, self.max_backoff)

    def is_backing_off(self, qp: QueuedPodInfo, now: float) -> bool:
        return qp.attempts > 0 and self.backoff_expiry(qp) > now

    def _push_backoff(self, qp: QueuedPodInfo) -> None:
        qp.seq = next(self._seq)
        self._backoff[qp.uid] = qp
        if qp.unschedulable_plugins:
            heapq.heappush(self._backoff_heap, (self.backoff_expiry(qp), *self._sort_key(qp), qp.seq, qp))
        else:
            heapq.heappush(self._error_heap, (self.backoff_expiry(qp), qp.seq, qp))

    def _live_head(self, heap: list[tuple[Any, ...]]) -> tuple[Any, ...] | None:
        """The first entry of a backoff heap that is not stale, dropping stale ones."""
        backoff = self._backoff
        while heap:
            qp: QueuedPodInfo = heap[0][-1]
            if backoff.get(qp.uid) is qp and qp.seq == heap[0][-2]:
                return heap[0]
            heapq.heappop(heap)
        return None

    def _requeue(self, qp: QueuedPodInfo, now: float) -> None:
        """To backoffQ while the pod's backoff lasts, else to activeQ (through PreEnqueue)."""
        if self.is_backing_off(qp, now):
            self._push_backoff(qp)
        else:
            self._enter_active(qp)

    def _enter_active(self, qp: QueuedPodInfo) -> bool:
        """Into activeQ if the PreEnqueue plugins let it (upstream's moveToActiveQ), else
        gated until ``activate`` or its own update. True if it entered."""
        status = self._pre_enqueue(qp.pinfo)
        if status.is_success():
            self._push_active(qp)
            return True
        qp.unschedulable_plugins = {status.plugin}
        self._gated[qp.uid] = qp
        return False

    def activate(self, uid: str, now: float) -> bool:
        """Upstream's Activate (e.g. once the pod's preemption is over): a gated pod goes
        straight to activeQ, backoff or not, if PreEnqueue now lets it."""
        qp = self._gated.pop(uid, None)
        if qp is None:
            return False
        return self._enter_active(qp)

    def next_wakeup(self) -> float | None:
        """The earliest emulated time a time-driven move is due (None: nothing waits)."""
        times = [head[0] for head in map(self._live_head, (self._backoff_heap, self._error_heap)) if head]
        if self._unschedulable:
            first = next(iter(self._unschedulable.values()))
            # The first instant strictly after the limit: ``flush`` moves a pod only once it
            # has waited longer than the limit, so waking at the limit itself would find
            # nothing due and ask for the same instant again.
            times.append(math.nextafter(first.timestamp + self.max_in_unschedulable, math.inf))
        return min(times) if times else None

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
        # (seq test first: mypy reads ``x is active.get(...)`` as "x may be None")
        self._heap = [e for e in self._heap if e[-1].seq == e[-2] and self._active.get(e[-1].uid) is e[-1]]
        heapq.heapify(self._heap)

    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule: activeQ's head; when activeQ is empty and
        ``pop_from_backoff`` is on, the first rejected pod in backoffQ; else None."""
        heap, active = self._heap, self._active
        while heap:
            entry = heapq.heappop(heap)
            qp: QueuedPodInfo = entry[-1]
            if active.get(qp.uid) is qp and qp.seq == entry[-2]:
                del active[qp.uid]
                return self._popped(qp)
        while self.pop_from_backoff and self._live_head(self._backoff_heap) is not None:
            qp = heapq.heappop(self._backoff_heap)[-1]
            del self._backoff[qp.uid]
            if self._pre_enqueue(qp.pinfo).is_success():
                return self._popped(qp)
            self._enter_active(qp)  # gated: PreEnqueue refuses it
        return None

    def _popped(self, qp: QueuedPodInfo) -> QueuedPodInfo:
        qp.attempts += 1
        if qp.initial_attempt_timestamp is None:
            qp.initial_attempt_timestamp = qp.timestamp
        self.scheduling_cycle += 1
        return qp

    def has_ready(self) -> bool:
        """Whether ``pop`` would hand out a pod now."""
        return bool(self._active) or (self.pop_from_backoff and self._live_head(self._backoff_heap) is not None)

    # ---- informer events ---------------------------------------------------------------

    def add(self, pinfo: PodInfo, now: float, status_nominated: str | None = None) -> QueuedPodInfo:
        """A new pending pod, through PreEnqueue (scheduling gates). ``status_nominated``:
        its ``status.nominatedNodeName`` when the caller has read it (``Nominator.add``)."""
        qp = QueuedPodInfo(pinfo, now)
        status = self._pre_enqueue(pinfo)
        if status.is_success():
            self._push_active(qp)
        else:
            qp.unschedulable_plugins = {status.plugin}
            self._gated[qp.uid] = qp
        self.nominator.add(pinfo, status_nominated=status_nominated)
        return qp

    def update(self, qp: QueuedPodInfo, old_pod: dict[str, Any], now: float) -> None:
        """``qp.pinfo`` already holds the new object; ``old_pod`` is the one it replaced."""
        uid = qp.uid
        self.nominator.update(old_pod, qp.pinfo)
        if uid in self._active:
            if self._sort_key(qp) != qp.key:
                self._push_active(qp)  # priority changed: the old heap entry goes stale
            return
        if uid in self._gated:
            if self._pre_enqueue(qp.pinfo).is_success():
                del self._gated[uid]
                qp.unschedulable_plugins = set()
                self._requeue(qp, now)
            return
        if uid in self._unschedulable and is_pod_updated(old_pod, qp.pinfo.pod):
            self._unpark(uid)
            self._requeue(qp, now)

    def delete(self, uid: str) -> QueuedPodInfo | None:
        self.nominator.delete(uid)
        return (
            self._active.pop(uid, None)
            or self._unpark(uid)
            or self._backoff.pop(uid, None)
            or self._gated.pop(uid, None)
        )

    # ---- unschedulablePods ---------------------------------------------------------------

    def _park(self, qp: QueuedPodInfo) -> None:
        qp.parked_seq = next(self._seq)
        self._unschedulable[qp.uid] = qp
        for plugin in qp.unschedulable_plugins:
            self._by_rejector.setdefault(plugin, {})[qp.uid] = qp

    def _unpark(self, uid: str) -> QueuedPodInfo | None:
        qp = self._unschedulable.pop(uid, None)
        if qp is not None:
            for plugin in qp.unschedulable_plugins:
                bucket = self._by_rejector.get(plugin)
                if bucket is not None:
                    bucket.pop(uid, None)
                    if not bucket:
                        del self._by_rejector[plugin]
        return qp

    # ---- after a cycle -----------------------------------------------------------------

    def add_unschedulable_if_not_present(
        self, qp: QueuedPodInfo, now: float, pod_cycle: int, nominating: NominatingInfo | None = None
    ) -> None:
        """A pod whose cycle failed. Parked until a helpful event if a plugin rejected it;
        backed off if none did (an error, "no nodes available") or if an event that may
        help arrived while it was being scheduled."""
        if self.get(qp.uid) is not None:
            return
        qp.timestamp = now
        self.nominator.add(qp.pinfo, nominating)
        if self.move_request_cycle >= pod_cycle or not qp.unschedulable_plugins:
            self._push_backoff(qp)
        else:
            self._park(qp)

    def requeue_after_error(self, qp: QueuedPodInfo, now: float) -> None:
        """A pod whose cycle or bind failed with an error: backed off, then retried."""
        if self.get(qp.uid) is not None:
            return
        qp.timestamp = now
        qp.unschedulable_plugins = set()
        self.nominator.add(qp.pinfo)
        self._push_backoff(qp)

    # ---- moves and flushes -------------------------------------------------------------

    def move_all_to_active(
        self, event: str, now: float, pre_check: Callable[[QueuedPodInfo], bool] | None = None
    ) -> int:
        """Move the unschedulable pods ``event`` may help back to activeQ. Returns how many."""
        self.move_request_cycle = self.scheduling_cycle
        if not self._unschedulable:  # nothing parked: a wave of victims' deletes finds none after the first
            return 0
        if event in (ClusterEvent.WILDCARD, ClusterEvent.UNSCHEDULABLE_TIMEOUT):
            candidates = list(self._unschedulable.values())
        else:
            # Only pods one of whose rejectors registered for the event; parked pods always
            # have a rejector (those without go to backoffQ). Kept in parking order.
            found: dict[str, QueuedPodInfo] = {}
            for plugin in self._event_map.get(event, ()):
                found.update(self._by_rejector.get(plugin) or {})
            candidates = sorted(found.values(), key=self._parking_order)
        moved = [qp for qp in candidates if pre_check is None or pre_check(qp)]
        for qp in moved:
            self._unpark(qp.uid)
            self._requeue(qp, now)
        return len(moved)

    def _parking_order(self, qp: QueuedPodInfo) -> tuple[float, int]:
        return (qp.timestamp, qp.parked_seq)

    def flush(self, now: float) -> int:
        """Time-driven moves due at ``now``: backoffQ pods whose backoff is over, and pods
        parked longer than ``max_in_unschedulable`` (strictly longer, as upstream), which
        go through backoff if still backing off. Returns how many pods moved."""
        moved = 0
        for heap in (self._backoff_heap, self._error_heap):
            while (head := self._live_head(heap)) is not None and head[0] <= now:
                qp = heapq.heappop(heap)[-1]
                del self._backoff[qp.uid]
                moved += self._enter_active(qp)
        due = []
        for qp in self._unschedulable.values():
            if now <= qp.timestamp + self.max_in_unschedulable:  # the same sum as next_wakeup's
                break
            due.append(qp)
        for qp in due:
            self._unpark(qp.uid)
            self._requeue(qp, now)  # UnschedulableTimeout
        return moved + len(due)
