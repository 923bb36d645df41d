"""The scheduler's side of preemption: what a PostFilter may ask, and what its verdict does.

Owns ``SchedulerHost`` (the ``PreemptionHost`` a Framework hands its PostFilter plugins:
the clock, the seeded RNG, the nominator, the PodDisruptionBudgets, and a what-if filter
on one node with some pods taken off it) and ``apply_post_filter`` (upstream's
handling of a PostFilter result plus prepareCandidate: the preemptor's nomination, the
victims' DisruptionTarget condition, their graceful deletion and ``Preempted`` events,
and the cleared nominations of lower-priority pods). Created and called by ``Scheduler``.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..api.events import make_event
from ..api.placement import resource_fit
from ..clock import rfc3339
from .accel import Accelerate
from .accel.preemption_fast import DryRunMemo, fast_candidate
from .cache import Cache, PodInfo
from .framework import CycleState, Framework, PostFilterResult, PreemptionHost
from .nominator import MODE_OVERRIDE, NominatingInfo
from .plugins.noderesources import TOO_MANY_PODS
from .podterms import REQUIRED_ANTI_AFFINITY
from .queue import SchedulingQueue
from .status import Code, Status

if TYPE_CHECKING:
    from .output import ScheduleOutput
    from .plugins.noderesources import NodeResourcesFit
    from .plugins.podtopologyspread import PodTopologySpread

DISRUPTION_TARGET = "DisruptionTarget"
PREEMPTION_REASON = "PreemptionByScheduler"


class SchedulerHost(PreemptionHost):
    def __init__(
        self,
        cache: Cache,
        queue: SchedulingQueue,
        rng: random.Random,
        pdbs: dict[tuple[str, str], dict[str, Any]],
        accel: Accelerate | None = None,
    ) -> None:
        self._cache, self._queue, self._rng, self._pdbs = cache, queue, rng, pdbs
        self._accel = accel or Accelerate()
        self._memo = DryRunMemo()  # the vectorised dry run's verdicts, kept across cycles
        # Preemptions whose effect is not seen yet: preemptor uid -> victim uids not yet
        # seen deleted or terminating, and the reverse map (DefaultPreemption.pre_enqueue).
        self._preempting: dict[str, set[str]] = {}
        self._victim_of: dict[str, str] = {}
        self._now = 0.0
        # The signature of the pod whose PostFilter runs (set by the scheduler): the dry
        # run's memo key; None: the pod is unsignable, and the per-node code runs.
        self.signature: bytes | None = None
        # The profile whose cycle is running. None only until the first set_cycle, which runs
        # before any PostFilter can call back here; typed as set so the what-if paths (per
        # dry-run node) need no None checks.
        self.framework: Framework = None  # type: ignore[assignment]

    def set_cycle(self, framework: Framework, now: float) -> None:
        self.framework, self._now = framework, now

    def now(self) -> float:
        return self._now

    def rng(self) -> random.Random:
        return self._rng

    def nominated_pods(self, node_name: str) -> list[PodInfo]:
        return self._queue.nominator.pods_for_node(node_name)

    def pdbs(self) -> list[dict[str, Any]]:
        return list(self._pdbs.values())

    # ---- preemptions in flight ------------------------------------------------------

    def begin_preemption(self, preemptor_uid: str, victim_uids: list[str]) -> None:
        if victim_uids:
            self._preempting[preemptor_uid] = set(victim_uids)
            for uid in victim_uids:
                self._victim_of[uid] = preemptor_uid

    def preemption_pending(self, uid: str) -> bool:
        return uid in self._preempting

    def victim_gone(self, uid: str) -> str | None:
        """A pod was seen deleted or terminating; if it was the last victim of a
        preemption, that preemption is over: returns the preemptor's uid."""
        preemptor = self._victim_of.pop(uid, None)
        if preemptor is None:
            return None
        waiting = self._preempting.get(preemptor)
        if waiting is None:
            return None
        waiting.discard(uid)
        if waiting:
            return None
        del self._preempting[preemptor]
        return preemptor

    def forget_preemptor(self, uid: str) -> None:
        """The preemptor was deleted or bound: nothing waits on its victims any more."""
        for victim in self._preempting.pop(uid, ()):
            self._victim_of.pop(victim, None)

    def filter_on_node(self, state: CycleState, pod: PodInfo, node_index: int, removed: list[PodInfo]) -> Status:
        """Run PreFilter and Filter again with ``removed`` off their nodes (the cycle's
        PreFilter state depends on which pods are placed) and read one node's verdict.
        When only resources can tell (see ``resources_decide``), arithmetic on the node's
        row gives the same verdict without re-running every plugin over every node."""
        if self._accel.resource_arithmetic and self.resources_decide(pod):
            return self._fit_on_node(pod, node_index, removed)
        # As upstream's SelectVictimsOnNode: the filters run on this node only, first with
        # the pods nominated to it (equal or higher priority) counted, then without them.
        ni = self._cache.snapshot().node_info(node_index)
        held = [
            (other, ni.name)
            for other in self._queue.nominator.pods_for_node(ni.name)
            if other.uid != pod.uid and other.priority >= pod.priority and other.node is None
        ]
        with self._cache.without(removed):
            if held:
                with self._cache.holding(held):
                    status = self._filters_on_node(pod, node_index)
                if not status.is_success():
                    return status
            return self._filters_on_node(pod, node_index)

    def _filters_on_node(self, pod: PodInfo, i: int) -> Status:
        """PreFilter, then every Filter plugin on node ``i`` alone, over the cache as it is now."""
        fwk, snap, state = self.framework, self._cache.snapshot(), CycleState()
        status, allowed = fwk.run_pre_filter(state, pod, snap)
        if not status.is_success():
            return status
        if allowed is not None and not allowed[i]:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node is filtered out by the prefilter result",))
        outcome = fwk.run_filter(state, pod, snap, None, np.array([i], dtype=np.intp))
        if not outcome.status.is_success():
            return outcome.status
        assert outcome.feasible is not None  # a successful outcome has its verdicts
        if outcome.feasible[0]:
            return Status()
        hits = outcome.rejections()
        if not hits:
            return Status(Code.UNSCHEDULABLE, ())
        return Status(max(r.code for r in hits), tuple(r.reason for r in hits), hits[0].plugin)

    def fast_candidate(
        self, pod: PodInfo, potential: np.ndarray, offset: int, wanted: int, now: float
    ) -> tuple[int, list[PodInfo]] | None:
        """The dry run and the choice of node as array operations (``preemption_fast``),
        when only resources decide and no PodDisruptionBudget exists: (node index,
        victims), or None to run the per-node code."""
        signature = self.signature
        if signature is None or not self._accel.fast_preemption or self._pdbs or not self.resources_decide(pod):
            return None
        snap = self._cache.snapshot()
        fit = cast("NodeResourcesFit | None", self.framework.plugins.get("NodeResourcesFit"))
        if fit is not None and any(fit.ignores_column(col, snap) for col, _ in pod.req_cols):
            return None
        load = self._queue.nominator.load
        if load is None or load.special_at_or_above(pod.priority):
            return None
        return fast_candidate(
            self._cache,
            self._memo,
            pod,
            load,
            self._queue.nominator.node_of(pod.uid),
            potential,
            offset,
            wanted,
            now,
            signature,
        )

    def nominated_node_fits(self, pod: PodInfo, node_name: str) -> bool:
        """The preemptor's retry on its nominated node, cheaply: true when only resources
        decide, preemption found every other filter passing there and no node changed
        since (``passed_static``), and the node's resources now fit the pod with the
        nominated pods of equal or higher priority (both filter passes, by arithmetic).
        False means "run the full filter", never "does not fit"."""
        if not self._accel.nominated_fit or pod.passed_static != (node_name, self._cache.node_epoch):
            return False
        if not self.resources_decide(pod):
            return False
        i = self._cache.snapshot().index_of(node_name)
        return i is not None and self._fit_on_node(pod, i, []).is_success()

    def resources_decide(self, pod: PodInfo) -> bool:
        """True when, on a node where preemption might help (its filters other than the
        pod-dependent ones passed), only NodeResourcesFit's verdict can depend on which pods
        are there: the pod has no inter-pod terms, host ports or hard spread constraints,
        no placed pod has required anti-affinity, and the profile runs only in-tree filters."""
        fwk = self.framework
        if pod.terms is not None or pod.host_ports or not _IN_TREE_FILTERS.issuperset(fwk.plugins):
            return False
        if self._cache.snapshot().pods.groups(REQUIRED_ANTI_AFFINITY):
            return False
        spread = cast("PodTopologySpread | None", fwk.plugins.get("PodTopologySpread"))
        if (pod.pod.get("spec") or {}).get("topologySpreadConstraints"):
            return False
        return spread is None or not any(c.hard for c in spread.default_constraints)

    def _fit_on_node(self, pod: PodInfo, i: int, removed: list[PodInfo]) -> Status:
        snap = self._cache.snapshot()
        ni = snap.node_info(i)
        free = snap.allocatable[i] - snap.requested[i]
        count = int(snap.pod_count[i])
        for victim in removed:
            if victim.node is ni:
                count -= 1
                for col, amount in victim.req_cols:
                    free[col] += amount
        for other in self._queue.nominator.pods_for_node(ni.name):
            if other.uid != pod.uid and other.priority >= pod.priority and other.node is None:
                count += 1
                for col, amount in other.req_cols:
                    free[col] -= amount
        fit = cast("NodeResourcesFit | None", self.framework.plugins.get("NodeResourcesFit"))
        if fit is None:
            return Status()  # nothing here judges load
        wanted = [(col, amount) for col, amount in pod.req_cols if not fit.ignores_column(col, snap)]
        too_many, shortages = resource_fit(wanted, free.__getitem__, count, int(snap.allowed_pods[i]))
        reasons = [TOO_MANY_PODS] if too_many else []
        reasons.extend(fit.reason(col, snap) for col, _ in shortages)
        return Status(Code.UNSCHEDULABLE, tuple(reasons), "NodeResourcesFit") if reasons else Status()


_IN_TREE_FILTERS = frozenset(
    {
        "SchedulingGates",
        "PrioritySort",
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeBinding",  # its verdict reads claims and volumes, never the pods placed (issue 40)
        "PodTopologySpread",
        "InterPodAffinity",
        "DefaultPreemption",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "DefaultBinder",
    }
)


def apply_post_filter(
    fwk: Framework,
    queue: SchedulingQueue,
    pinfo: PodInfo,
    result: PostFilterResult | None,
    now: float,
    out: ScheduleOutput,
) -> NominatingInfo | None:
    """Turn a PostFilter result into queue changes and API writes; returns the nomination
    the pod is parked with (None: leave it as its status says)."""
    if result is None:
        return None
    node = result.nominated_node_name
    evicted = [v.uid for v in result.victims if _evict(fwk, v, pinfo, node, now, out)]
    if fwk.host is not None:
        cast(SchedulerHost, fwk.host).begin_preemption(pinfo.uid, evicted)  # the Scheduler sets its SchedulerHost
    for other in result.clear_nominations:
        queue.nominator.delete(other.uid)
        out.nominations.append((other.namespace, other.name, other.uid, ""))
    current = queue.nominator.node_of(pinfo.uid) or (pinfo.pod.get("status") or {}).get("nominatedNodeName") or ""
    if current != node:
        out.nominations.append((pinfo.namespace, pinfo.name, pinfo.uid, node))
    return NominatingInfo(node, MODE_OVERRIDE)


def _evict(fwk: Framework, victim: PodInfo, preemptor: PodInfo, node: str, now: float, out: ScheduleOutput) -> bool:
    """Write the victim's condition, delete and event; False if it was already going."""
    if victim.deleting:
        return False
    cond = {
        "type": DISRUPTION_TARGET,
        "status": "True",
        "reason": PREEMPTION_REASON,
        "message": f"{fwk.profile_name}: preempting to accommodate a higher priority pod",
        "lastTransitionTime": rfc3339(now),
    }
    out.pod_conditions.append((victim.namespace, victim.name, victim.uid, cond))
    out.deletes.append((victim.namespace, victim.name, victim.uid))
    out.events.append(
        make_event(
            victim.ref(),
            "Preempted",
            f"Preempted by pod {preemptor.uid} on node {node}",
            now,
            component=fwk.profile_name,
        )
    )
    return True
