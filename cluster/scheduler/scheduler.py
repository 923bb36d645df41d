"""The scheduler: informer events in, scheduling decisions out.

Owns the scheduling cycle (upstream ``schedule_one.go``): pop a pod, filter nodes in
upstream's round-robin search order until that search would stop (in growing chunks of
rows, ``search.chunked_take``), score the feasible nodes it collected, choose one,
assume it in the cache and emit a bind. Failures become a PodScheduled=False condition
and a FailedScheduling event. Called by the scheduler component, which feeds watch
events to ``on_node``/``on_pod_event`` (the ``WatchIntake`` half, ``intake.py``), calls
``schedule`` in a loop, sends the returned binds/conditions/events to the apiserver in
batches, and reports bind failures back through ``on_bind_failed``. Pure Python: time comes in as ``now`` (emulated seconds).

Determinism: where upstream is random (ties between equally scored nodes) a
``random.Random(seed)`` picks uniformly among the tied nodes, in the order the search
found them; the RNG is consulted only when there is a tie, so a replay with the same
seed and the same inputs makes the same choices.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..api.events import event_about, make_event
from ..api.objects import DEFAULT_SCHEDULER
from .accel import Accelerate
from .accel.fastfilter import FastFilters
from .accel.kindrun import KindRun, start_run
from .accel.lazyfilter import LazyFilterRun
from .accel.rowmemo import RowMemo, RowMemos, memo_score
from .accel.signature import sign_pod
from .accel.veto import VetoMemo
from .cache import DEFAULT_ASSUME_TTL, Cache
from .explain import Explainer, check_mode
from .explain_cycle import Choice
from .filtering import FilterRun, run_filters
from .framework import ClusterEvent, CycleState, Framework, ProfileConfig, Registry, ScorePart
from .host import SchedulerHost, apply_post_filter
from .intake import WatchIntake
from .nominator import NominatingInfo
from .output import ScheduleOutput, record_condition
from .plugins import DEFAULT_PLUGINS, default_registry
from .podinfo import PodInfo
from .priorityload import PriorityLoad
from .queue import (
    DEFAULT_INITIAL_BACKOFF,
    DEFAULT_MAX_BACKOFF,
    DEFAULT_MAX_IN_UNSCHEDULABLE,
    QueuedPodInfo,
    SchedulingQueue,
)
from .search import num_feasible_nodes_to_find, select_host
from .snapshot import Snapshot
from .status import NO_NODES_AVAILABLE, SUCCESS, Code, Diagnosis, Status, fit_error_message, single_node_diagnosis

EVENT_NOTE_LIMIT = 1024  # upstream truncates event messages to the Event note limit


@dataclass(frozen=True)
class SchedulerConfig:
    profiles: tuple[ProfileConfig, ...] = (ProfileConfig(),)
    percentage_of_nodes_to_score: int = 0  # 0: upstream's adaptive percentage
    assume_ttl: float = DEFAULT_ASSUME_TTL
    pod_max_in_unschedulable_seconds: float = DEFAULT_MAX_IN_UNSCHEDULABLE
    pod_initial_backoff_seconds: float = DEFAULT_INITIAL_BACKOFF
    pod_max_backoff_seconds: float = DEFAULT_MAX_BACKOFF
    pop_from_backoff: bool = True  # the SchedulerPopFromBackoffQ feature gate (see queue.py)
    registry: Registry | None = None  # out-of-tree plugins, merged into the default registry
    accelerate: Accelerate = Accelerate()  # the speed-ups (accel/): on by default
    explain: str = "failed"  # SchedulingResult recording: failed, all or none (explain.py)

    def __post_init__(self) -> None:
        check_mode(self.explain)
        pcts = [self.percentage_of_nodes_to_score] + [p.percentage_of_nodes_to_score for p in self.profiles]
        for pct in pcts:
            if pct is not None and not 0 <= pct <= 100:
                raise ValueError(f"percentageOfNodesToScore: {pct!r} must be between 0 and 100")
        if not self.profiles:
            raise ValueError("profiles: at least one profile is required")


def truncate_message(message: str) -> str:
    if len(message) <= EVENT_NOTE_LIMIT:
        return message
    return message[: EVENT_NOTE_LIMIT - 4] + " ..."


class Scheduler(WatchIntake):
    """One scheduler (all its profiles) over one cache and one queue. Single-threaded."""

    def __init__(self, config: SchedulerConfig | None = None, seed: int = 0):
        self.config = config = config or SchedulerConfig()
        registry = default_registry()
        if config.registry is not None:
            registry.merge(config.registry)
        self.frameworks: dict[str, Framework] = {}
        for profile in config.profiles:
            if profile.scheduler_name in self.frameworks:
                raise ValueError(f"profiles: schedulerName {profile.scheduler_name!r} is used twice")
            self.frameworks[profile.scheduler_name] = Framework(
                profile, DEFAULT_PLUGINS if profile.plugins is None else profile.plugins, registry
            )
        fwks = list(self.frameworks.values())
        # One per profile: Framework() refuses a profile without a QueueSort plugin.
        sorts = [f.queue_sort for f in fwks if f.queue_sort is not None]
        if len({s.NAME for s in sorts}) > 1:
            raise ValueError("profiles: all profiles must use the same QueueSort plugin")
        event_map: dict[str, set[str]] = {}
        for f in fwks:
            for ev, names in f.cluster_events().items():
                event_map.setdefault(ev, set()).update(names)
        self.cache = Cache(config.assume_ttl)
        self.queue = SchedulingQueue(
            sorts[0],
            event_map,
            config.pod_max_in_unschedulable_seconds,
            config.pod_initial_backoff_seconds,
            config.pod_max_backoff_seconds,
            self._pre_enqueue,
            config.pop_from_backoff,
        )
        self.next_start_node_index = 0
        self._rng = random.Random(seed)
        self._pdbs: dict[tuple[str, str], dict[str, Any]] = {}
        self.queue.nominator.load = PriorityLoad(self.cache)
        self.accel = accel = config.accelerate
        self.host = SchedulerHost(self.cache, self.queue, self._rng, self._pdbs, accel)
        for f in fwks:
            f.host = self.host
        self._binding: dict[str, QueuedPodInfo] = {}  # assumed pods whose bind is in flight
        # Verdicts and scores per kind of pod across cycles (rowmemo.py); None: every cycle
        # runs every plugin over the rows it visits (the tests compare both ways).
        # Explaining every placement: the memos keep each Score plugin's own scores too.
        self._explain_all = config.explain == "all"
        self.row_memos: RowMemos | None = None
        if accel.row_memo and accel.lazy_filter:
            self.row_memos = RowMemos(self.cache, keep_parts=self._explain_all)
        self.vetoes: VetoMemo | None = VetoMemo() if accel.veto_memo else None  # None: summed anew each cycle
        # The accelerators' hook into PreFilter and Filter (fastfilter.py); None: the plain path.
        self.fast_filters: FastFilters | None = None
        if accel.lazy_filter or accel.resource_arithmetic:
            decide = self.host.resources_decide if accel.resource_arithmetic else None
            self.fast_filters = FastFilters(decide, accel.lazy_filter, self.vetoes)
        # The next pod of the last full cycle's kind skips PreFilter and PreScore
        # (kindrun.py); False: every pod runs the full cycle (the tests compare both ways).
        self.kind_runs = accel.kind_runs and self.row_memos is not None
        self._run: KindRun | None = None
        self.kind_run_pods = 0  # pods placed through a run
        self._memo_used: RowMemo | None = None  # the row memo the last _schedule_pod chose through
        self._signature: bytes | None = None  # the signature of the pod of that cycle (signature.py)
        self._searched = (0, 0)  # (start, processed) of the last search (_search)
        self._choice: Choice | None = None  # what the cycle that chose saw, when explaining all
        self._carry = ScheduleOutput()  # produced between schedule() calls (bind failures)
        self.explain: Explainer | None = None  # SchedulingResult recording (explain.py)
        if config.explain != "none":
            self.explain = Explainer(config.explain, self.cache, self.queue, self._nodes_to_find)
        self.stats = {
            "attempts": 0,
            "scheduled": 0,
            "unschedulable": 0,
            "errors": 0,
            "bindFailures": 0,
            "bindConflicts": 0,
            "preemptions": 0,
            "victims": 0,
        }

    def _pre_enqueue(self, pinfo: PodInfo) -> Status:
        fwk = self._framework_for(pinfo)
        return SUCCESS if fwk is None else fwk.run_pre_enqueue(pinfo)

    def next_wakeup(self) -> float | None:
        """The earliest emulated time a ``schedule`` call has time-driven work (a backoff
        ending, the leftover flush, an assumed pod expiring); None when nothing waits."""
        times = [t for t in (self.queue.next_wakeup(), self.cache.next_expiry()) if t is not None]
        return min(times) if times else None

    def on_bind_failed(self, namespace: str, name: str, uid: str, reason: str, conflict: bool, now: float) -> None:
        """The apiserver refused a bind. ``conflict``: the pod is already bound or gone.

        The assumption is forgotten (waking pods its resources may now fit) and, unless
        ``conflict``, the pod is tried again. Its FailedScheduling event (and, unless
        ``conflict``, its SchedulerError condition) come out of the next ``schedule`` call.
        """
        self.stats["bindConflicts" if conflict else "bindFailures"] += 1
        node_name = self.cache.pod_node(uid)
        qp = self._binding.pop(uid, None)
        pinfo = self.cache.forget_pod(uid)
        if pinfo is None or qp is None:
            return  # confirmed, deleted or expired meanwhile: nothing is held for it any more
        assert node_name is not None  # the pod was placed (forget_pod returned it)
        fwk = self._framework_for(pinfo)
        if fwk is not None:
            fwk.run_unreserve(CycleState(), pinfo, node_name)
        # What the pod held is free again, as if an assigned pod had been deleted.
        self.queue.move_all_to_active(ClusterEvent.ASSIGNED_POD_DELETE, now)
        component = fwk.profile_name if fwk is not None else DEFAULT_SCHEDULER
        self._carry.events.append(
            make_event(
                pinfo.pod, "FailedScheduling", truncate_message(reason), now, type="Warning", component=component
            )
        )
        if conflict:
            return
        record_condition(pinfo.pod, "SchedulerError", reason, now, self._carry)
        self.queue.requeue_after_error(qp, now)

    def pending_count(self) -> int:
        return len(self.queue)

    def has_ready(self) -> bool:
        """Whether a pod is ready for a scheduling attempt now (the actor polls without
        waiting while one is)."""
        return self.queue.has_ready()

    # ---- the loop ----------------------------------------------------------------------

    def schedule(self, now: float, max_pods: int = 1000) -> ScheduleOutput:
        """Run housekeeping due at ``now``, then up to ``max_pods`` scheduling cycles."""
        out, self._carry = self._carry, ScheduleOutput()
        self._expire_assumed(now)
        self.queue.flush(now)
        self._run = None  # watch events came in since the last call: the run may not stand
        for _ in range(max_pods):
            qp = self.queue.pop()
            if qp is None:
                break
            if self.explain is not None:
                self.explain.begin(self.next_start_node_index)
            self._choice = None
            if self._run is not None and self._schedule_in_run(self._run, qp, now, out):
                continue
            self._run = None
            self._schedule_one(qp, now, out)
        self._run = None
        if self.explain is not None:  # the batch's Score figures, while its node indices hold
            self.explain.flush()
        return out

    def _expire_assumed(self, now: float) -> None:
        expired = self.cache.cleanup(now)
        for pinfo in expired:
            qp = self._binding.pop(pinfo.uid, None)
            # The watch never confirmed the bind, and the pod was neither deleted nor seen
            # bound: as far as we know it is still pending, so it is tried again. (Upstream
            # only forgets; its bind result always arrives, an actor's reply may not.)
            if qp is not None:
                self.queue.requeue_after_error(qp, now)
        if expired:
            self.queue.move_all_to_active(ClusterEvent.ASSIGNED_POD_DELETE, now)

    def _schedule_one(self, qp: QueuedPodInfo, now: float, out: ScheduleOutput) -> None:
        qp.pinfo.expand()
        fwk = self._framework_for(qp.pinfo)
        if fwk is None:  # its schedulerName changed after it was queued
            return
        self.stats["attempts"] += 1
        state = CycleState()
        cycle = self.queue.scheduling_cycle
        self._memo_used = self._signature = self._choice = None
        index, status, diagnosis = self._schedule_pod(fwk, state, qp.pinfo, now)
        if index is None:
            self._handle_failure(fwk, qp, status, diagnosis, cycle, now, out, state)
            return
        run = None
        if self.kind_runs and self._memo_used is not None and not len(self.queue.nominator):
            # Taken before Reserve: the run keeps what PreFilter and PreScore wrote.
            run = start_run(fwk, state, qp.pinfo, self._memo_used, self._signature, self.cache.node_epoch)
        node_name = self.cache.snapshot().node_name(index)
        if self._assume_and_bind(fwk, state, qp, node_name, cycle, now, out):
            self._run = run

    def _schedule_in_run(self, run: KindRun, qp: QueuedPodInfo, now: float, out: ScheduleOutput) -> bool:
        """Place a pod of ``run``'s kind as its full cycle would, skipping PreFilter and
        PreScore (kindrun.py); False, having changed nothing the full cycle reads, when the
        run does not serve it or its search needs explaining."""
        pinfo = qp.pinfo  # kept as bytes when the run knows its kind by them (KindRun.serves)
        if len(self.queue.nominator) or not run.serves(self._framework_for(pinfo), pinfo, self.cache.node_epoch):
            return False
        snap = self.cache.snapshot()
        fwk, m = run.fwk, snap.num_nodes
        start = self.next_start_node_index % m
        chosen = run.choose(snap, start, self._nodes_to_find(fwk, m), self._rng.randrange)
        if chosen is not None:
            index, processed = chosen
            self.next_start_node_index = (start + processed) % m
            if self._explain_all:
                assert run.window is not None  # choose() set it
                self._choice = self._run_choice(run, snap, start, processed, run.window)
        else:
            # A search that finds nothing processes every node, so leaves the start index
            # as it was; one that fails on an error (None) does not move it either.
            positions = self._search(fwk, run.filter_run(snap), None, m)
            if positions is None or not len(positions):
                return False
            index = int(positions[0])
            if len(positions) > 1:
                total = run.totals(snap, positions)
                if total is None:
                    return False
                index = int(positions[select_host(total, self._rng.randrange)])
            if self._explain_all:
                self._choice = self._run_choice(run, snap, *self._searched, positions)
        self.stats["attempts"] += 1
        self.kind_run_pods += 1
        if not self._assume_and_bind(
            fwk, run.state.clone(), qp, snap.node_name(index), self.queue.scheduling_cycle, now, out
        ):
            self._run = None
        return True

    @staticmethod
    def _run_choice(run: KindRun, snap: Snapshot, start: int, processed: int, candidates: np.ndarray) -> Choice | None:
        """What a run's search saw, for the explanation (its rejections judged again only
        when asked, and only for the rows the memo holds infeasible)."""
        parts = run.parts(candidates) if len(candidates) > 1 else []
        if parts is None:
            return None
        return Choice(
            start, None, processed, candidates, lambda judged: run.filter_run(snap).rejections_among(judged), parts
        )

    # ---- one cycle ---------------------------------------------------------------------

    def _schedule_pod(
        self, fwk: Framework, state: CycleState, pinfo: PodInfo, now: float
    ) -> tuple[int | None, Status, Diagnosis | None]:
        """Pick a node index, or explain why none (a Diagnosis for rejections)."""
        snap = self.cache.snapshot()
        n = snap.num_nodes
        if n == 0:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_NODES_AVAILABLE,)), None
        self.host.set_cycle(fwk, now)
        nominated_name = self.queue.nominator.node_of(pinfo.uid) or pinfo.nominated_node_name
        if nominated_name and self.host.nominated_node_fits(pinfo, nominated_name):
            # Upstream tries the nominated node alone first (evaluateNominatedNode), which
            # leaves the round-robin start at (start + 1) % 1 == 0 whatever the outcome.
            self.next_start_node_index = 0
            return snap.index_of(nominated_name), SUCCESS, None
        run = run_filters(fwk, self.cache, self.queue.nominator, pinfo, state, self.fast_filters)
        status, allowed = run.status, run.allowed
        if not status.is_success():
            if not status.is_rejected():
                return None, status, None
            diag = Diagnosis(n, pre_filter_msg=status.message())
            diag.unschedulable_plugins.update(state.narrowed_by)
            if status.plugin:
                diag.unschedulable_plugins.add(status.plugin)
            return None, status, diag
        memo = None
        if self.row_memos is not None and allowed is None and isinstance(run, LazyFilterRun):
            self._signature = sign_pod(fwk, state, pinfo)
            memo = run.memo = self.row_memos.for_signature(self._signature)
        nominated = snap.index_of(nominated_name) if nominated_name else None
        if nominated is not None:
            # Upstream first searches the one-node list [nominated], which leaves its start
            # index at (start + 1) % 1 == 0 whatever the outcome.
            ok = run.judge(np.array([nominated], dtype=np.intp))
            if ok is None:
                return None, run.status, None
            self.next_start_node_index = 0
            if ok[0]:
                return nominated, SUCCESS, None
        search = None if allowed is None else np.flatnonzero(allowed)
        positions = self._search(fwk, run, search, n)
        if positions is None:
            return None, run.status, None
        if len(positions) == 0:
            diag = Diagnosis(n, rejections=run.rejections(), absent=None if allowed is None else ~allowed)
            diag.unschedulable_plugins = {r.plugin for r in diag.rejections} | set(state.narrowed_by)
            return None, Status(Code.UNSCHEDULABLE), diag
        candidates = positions if search is None else search[positions]
        self._memo_used = memo
        return self._select(fwk, state, pinfo, run, search, candidates)

    def _select(
        self,
        fwk: Framework,
        state: CycleState,
        pinfo: PodInfo,
        run: FilterRun,
        search: np.ndarray | None,
        candidates: np.ndarray,
    ) -> tuple[int | None, Status, Diagnosis | None]:
        """Score the ``candidates`` the search collected and pick one (upstream's
        prioritizeNodes and selectHost); explaining every placement, keep what was seen."""
        parts: list[ScorePart] | None = [] if self._explain_all else None
        if parts is not None:
            start, processed = self._searched
            self._choice = Choice(start, search, processed, candidates, run.rejections_among, parts)
        if len(candidates) == 1:
            return int(candidates[0]), SUCCESS, None
        snap = self.cache.snapshot()
        if self._memo_used is None:
            total, status = fwk.run_score(state, pinfo, snap, candidates, parts)
        else:
            total, status = memo_score(fwk, state, pinfo, snap, candidates, self._memo_used, parts)
        if not status.is_success():
            return None, status, None
        assert total is not None  # run_score returns a total with every success
        return int(candidates[select_host(total, self._rng.randrange)]), SUCCESS, None

    def _search(self, fwk: Framework, run: FilterRun, search: np.ndarray | None, n: int) -> np.ndarray | None:
        """Positions in the search list (``search``'s nodes, or all ``n``) that upstream's
        round-robin search collects, judging nodes only until it stops; advances its start.
        None after a Filter error (in ``run.status``)."""
        m = n if search is None else len(search)
        start = self.next_start_node_index % m if m else 0
        taken = run.take(search, start, self._nodes_to_find(fwk, m))
        if taken is None:
            return None
        positions, processed = taken
        if m:
            self.next_start_node_index = (start + processed) % m
        self._searched = (start, processed)
        return positions

    def _nodes_to_find(self, fwk: Framework, m: int) -> int:
        """How many feasible nodes the search collects among ``m``: the profile's
        percentageOfNodesToScore (else the configuration's), or 1 with nothing to score."""
        pct = fwk.percentage_of_nodes_to_score
        pct = self.config.percentage_of_nodes_to_score if pct is None else pct
        return num_feasible_nodes_to_find(pct, m) if fwk.has_score_plugins() else 1

    def _assume_and_bind(
        self,
        fwk: Framework,
        state: CycleState,
        qp: QueuedPodInfo,
        node_name: str,
        cycle: int,
        now: float,
        out: ScheduleOutput,
    ) -> bool:
        """Assume, then Reserve, Permit, PreBind and Bind; False when one failed (the pod
        is then handled as a failed cycle)."""
        pinfo = qp.pinfo
        if self.explain is not None:  # before the pod counts on the node
            self.explain.chosen(fwk, pinfo, node_name, now, self._choice)
        self.cache.assume_pod(pinfo, node_name, now)
        self.queue.nominator.delete(pinfo.uid)  # assumed: its nomination has served
        status = fwk.run_reserve(state, pinfo, node_name)  # unreserves itself on failure
        bind_failed = False
        batched = False
        if status.is_success():
            status = fwk.run_permit(state, pinfo, node_name)
            if status.is_success():
                status = fwk.run_pre_bind(state, pinfo, node_name)
                bind_failed = not status.is_success()
            if status.is_success():
                status, batched = fwk.run_bind(state, pinfo, node_name)
                bind_failed = not status.is_success()
            if not status.is_success():
                fwk.run_unreserve(state, pinfo, node_name)
        if not status.is_success():
            self.cache.forget_pod(pinfo.uid)
            if bind_failed:
                self.queue.move_all_to_active(ClusterEvent.ASSIGNED_POD_DELETE, now)
            self._handle_failure(fwk, qp, status, single_node_diagnosis(status), cycle, now, out)
            return False
        if batched:  # DefaultBinder: the actor sends the API bind in a batch
            out.binds.append((pinfo.namespace, pinfo.name, pinfo.uid, node_name))
            pinfo.expect_bound(node_name)  # its confirmation is then read by its head
        self._binding[pinfo.uid] = qp
        self.stats["scheduled"] += 1
        # Upstream records Scheduled after the bind call returns; the bind is the actor's
        # now, so the event travels in the same batch as the bind.
        ns, name = pinfo.namespace, pinfo.name
        message = f"Successfully assigned {ns}/{name} to {node_name}"
        out.events.append(
            event_about("Pod", ns, name, pinfo.uid, "Scheduled", message, now, component=fwk.profile_name)
        )
        return True

    def _handle_failure(
        self,
        fwk: Framework,
        qp: QueuedPodInfo,
        status: Status,
        diag: Diagnosis | None,
        cycle: int,
        now: float,
        out: ScheduleOutput,
        state: CycleState | None = None,
    ) -> None:
        pinfo = qp.pinfo
        pinfo.expand()  # a pod a cycle failed keeps its object (queueing hints read it)
        if status.is_rejected():
            self.stats["unschedulable"] += 1
            nominating = self._post_filter(fwk, state, pinfo, diag, now, out)
            message = fit_error_message(diag) if diag is not None else status.message()
            qp.unschedulable_plugins = set(diag.unschedulable_plugins) if diag is not None else set()
            reason = "Unschedulable"
            self.queue.add_unschedulable_if_not_present(qp, now, cycle, nominating)
        else:
            self.stats["errors"] += 1
            message, reason = status.message(), "SchedulerError"
            self.queue.requeue_after_error(qp, now)
        out.events.append(
            make_event(
                pinfo.pod,
                "FailedScheduling",
                truncate_message(message),
                now,
                type="Warning",
                component=fwk.profile_name,
            )
        )
        if self.explain is not None:
            self.explain.failed(fwk, pinfo, status, diag, message, now)
        record_condition(pinfo.pod, reason, message, now, out)

    def _post_filter(
        self,
        fwk: Framework,
        state: CycleState | None,
        pinfo: PodInfo,
        diag: Diagnosis | None,
        now: float,
        out: ScheduleOutput,
    ) -> NominatingInfo | None:
        """Preemption: runs when filters rejected the pod; its message joins the FitError."""
        if diag is None or state is None or not fwk.has_post_filter_plugins():
            return None
        signature = None
        if self.accel.fast_preemption:  # the cycle's, when its search signed the pod
            signature = self._signature if self._signature is not None else sign_pod(fwk, state, pinfo)
        self.host.signature = signature
        result, pstatus = fwk.run_post_filter(state, pinfo, self.cache.snapshot(), diag)
        if self.explain is not None:
            self.explain.post_filter(pinfo, result, pstatus)
        if pstatus.message():
            diag.post_filter_msg = pstatus.message()
        if result is not None and result.nominated_node_name:
            self.stats["preemptions"] += 1
            self.stats["victims"] += len(result.victims)
            # DefaultPreemption only nominates a node whose failure was resolvable: every
            # filter that does not depend on the pods placed there passed.
            pinfo.passed_static = (result.nominated_node_name, self.cache.node_epoch)
        return apply_post_filter(fwk, self.queue, pinfo, result, now, out)
