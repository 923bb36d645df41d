"""What the scheduler makes of its watch events: the cache and the queue follow them.

Owns the informer side of the scheduler (upstream's ``eventhandlers.go``): PDBs and
namespace labels for preemption and inter-pod terms, nodes into the cache with the
queue moves a node change may help, and pods: a pending pod into the queue, a bound one
into the cache (confirming an assumption), a deleted or terminal one out of both, and a
relist's deletion by the uid the reflector remembers. Pod events are judged by their head
first (``cluster/api/podhead.py``): the status writes and deletions of placed pods
settle without decoding the pod. A mixin of ``scheduler.Scheduler``, which builds the
state it reads (cache, queue, host, frameworks); the scheduler component feeds it.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from ..api.objects import DEFAULT_SCHEDULER, is_terminal, is_terminating, node_name_of, uid_of
from ..runtime.component import WatchEvent
from .accel import Accelerate
from .cache import Cache, PodInfo
from .framework import ClusterEvent, Framework
from .precheck import fits_node

if TYPE_CHECKING:
    from ..api.podhead import PodHead
    from .host import SchedulerHost
    from .queue import QueuedPodInfo, SchedulingQueue

# New pending pods keep their decoded object while the active queue holds no more than
# this many: a cycle soon reads them whole, and decoding them again then cost as much as
# the first time. A longer backlog is held as bytes (a pod's dict is several times its
# encoding), so a burst of a million creates does not hold a million dicts.
DECODED_BACKLOG = 2048

_NODE_CHANGE_EVENTS = (  # cache aspect -> cluster event, in upstream's order
    ("allocatable", ClusterEvent.NODE_ALLOCATABLE),
    ("labels", ClusterEvent.NODE_LABEL),
    ("taints", ClusterEvent.NODE_TAINT),
    ("unschedulable", ClusterEvent.NODE_TAINT),
)


class WatchIntake:
    """The watch-event half of ``Scheduler`` (see the module docstring)."""

    cache: Cache
    queue: SchedulingQueue
    host: SchedulerHost
    frameworks: dict[str, Framework]
    _pdbs: dict[tuple[str, str], dict[str, Any]]
    _binding: dict[str, QueuedPodInfo]
    accel: Accelerate

    def _framework_for(self, pinfo: PodInfo) -> Framework | None:
        return self.frameworks.get(pinfo.scheduler_name or DEFAULT_SCHEDULER)

    def on_pdb(self, event_type: str, pdb: dict[str, Any], now: float) -> None:
        """PodDisruptionBudgets (with their status), which preemption consults."""
        meta = pdb.get("metadata") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        if event_type == "DELETED":
            self._pdbs.pop(key, None)
        else:
            self._pdbs[key] = pdb

    def on_namespace(self, event_type: str, namespace: dict[str, Any], now: float) -> None:
        """Namespace labels, for inter-pod terms with a namespaceSelector."""
        meta = namespace.get("metadata") or {}
        name = meta.get("name", "")
        if event_type == "DELETED":
            self.cache.namespace_labels.pop(name, None)
            return
        labels = dict(meta.get("labels") or {})
        if self.cache.namespace_labels.get(name) != labels:
            self.cache.namespace_labels[name] = labels
            self.queue.move_all_to_active(ClusterEvent.NAMESPACE_CHANGE, now)

    def on_node(self, event_type: str, node: dict[str, Any], now: float, raw: bytes | None = None) -> None:
        if event_type == "DELETED":
            if self.cache.remove_node((node.get("metadata") or {}).get("name", "")):
                self.queue.move_all_to_active(ClusterEvent.NODE_DELETE, now)
            return
        changed = self.cache.add_node(node, raw)
        if not changed:
            return  # a heartbeat: nothing a pod could be waiting for
        ni = self.cache.node_info((node.get("metadata") or {}).get("name", ""))
        assert ni is not None  # add_node just stored it

        def could_fit(qp: QueuedPodInfo) -> bool:  # upstream's preCheckForNode
            return fits_node(qp.pinfo, ni, self.cache)

        if "added" in changed:
            self.queue.move_all_to_active(ClusterEvent.NODE_ADD, now, pre_check=could_fit)
            return
        done = set()
        for aspect, event in _NODE_CHANGE_EVENTS:
            if aspect in changed and event not in done:
                done.add(event)
                self.queue.move_all_to_active(event, now, pre_check=could_fit)

    def on_pod(self, event_type: str, pod: dict[str, Any], now: float, raw: bytes | None = None) -> None:
        """A pod's watch event; ``raw`` (its encoding, when the watch has it) is what the
        cache keeps of a placed pod."""
        self._on_pod(event_type, pod, now, raw)

    def _on_pod(
        self, event_type: str, pod: dict[str, Any], now: float, raw: bytes | None, head: PodHead | None = None
    ) -> None:
        """``head``: the head of ``raw``, when the caller has it."""
        uid = uid_of(pod)
        if node_name_of(pod):
            self._on_assigned_pod(event_type, pod, uid, now, raw)
        else:
            self._on_unassigned_pod(event_type, pod, uid, now, raw, head)

    def on_pod_event(self, ev: WatchEvent, now: float) -> None:
        """``on_pod`` of a watch event, reading the pod only when its head does not settle
        it: most events of placed pods (their status writes, deletions) change nothing
        the scheduler parsed."""
        head = ev.head
        if head.node_name:
            if ev.type == "DELETED" or head.terminal:
                self._seen_assigned(head.uid, True, now)
                self._assigned_gone(head.uid, now)
                return
            pinfo = self.cache.confirm_by_head(head, ev.raw)
            if pinfo is not None:  # our own bind coming back: the assumption holds
                self._seen_assigned(head.uid, head.deleting, now)
                self._move_for_assigned_pod(ClusterEvent.ASSIGNED_POD_ADD, (pinfo,), now)
                return
            pinfo = self.cache.head_refreshable(head, ev.raw)
            if pinfo is not None:
                self._seen_assigned(head.uid, head.deleting, now)
                started = head.deleting and not pinfo.deleting
                old = SimpleNamespace(namespace=pinfo.namespace, labels=pinfo.labels) if started else None
                self.cache.refresh_by_head(pinfo, ev.raw, head)  # type: ignore[arg-type]
                if old is not None:  # spread no longer counts it
                    self._move_for_assigned_pod(ClusterEvent.ASSIGNED_POD_UPDATE, (old, pinfo), now)
                return
        elif self.accel.pod_heads and self._add_by_head(ev, head, now):
            return
        self._on_pod(ev.type, ev.obj, now, ev.raw, head)

    def _add_by_head(self, ev: WatchEvent, head: PodHead, now: float) -> bool:
        """A new pending pod behind a backlog, of a template seen lately, queued as its bytes
        without decoding them (``PodInfo.from_head``): what ``_on_unassigned_pod`` would do
        with the object and then ``_hold``. False, having done nothing, for any other pod."""
        if ev.type == "DELETED" or head.terminal or head.deleting or ev.raw is None:
            return False
        if not self._behind_backlog():
            return False  # it would be held decoded: decode it now
        if self.queue.get(head.uid) is not None or self.cache.is_assumed(head.uid):
            return False
        template = self.cache.columns.template_of_head(head)
        if template is None or (template.scheduler_name or DEFAULT_SCHEDULER) not in self.frameworks:
            return False
        self.queue.add(PodInfo.from_head(head, ev.raw, template), now, status_nominated=head.nominated)
        return True

    def _seen_assigned(self, uid: str, leaving: bool, now: float) -> None:
        """What any event of a bound pod settles: it is no longer pending, and a victim
        that is going (``leaving``: deleted, terminal or terminating) ends its preemption."""
        self.queue.delete(uid)  # bound by someone else while pending
        self._binding.pop(uid, None)
        self.host.forget_preemptor(uid)
        if leaving:
            preemptor = self.host.victim_gone(uid)
            if preemptor is not None:
                self.queue.activate(preemptor, now)  # its preemption is over

    def _assigned_gone(self, uid: str, now: float) -> None:
        # The upstream informer excludes terminal pods, so turning terminal reads as a delete.
        if self.cache.remove_pod(uid) is not None:
            self.queue.move_all_to_active(ClusterEvent.ASSIGNED_POD_DELETE, now)

    def _on_assigned_pod(self, event_type: str, pod: dict[str, Any], uid: str, now: float, raw: bytes | None) -> None:
        gone = event_type == "DELETED" or is_terminal(pod)
        self._seen_assigned(uid, gone or is_terminating(pod), now)
        if gone:
            self._assigned_gone(uid, now)
            return
        known = self.cache.pod_info(uid)
        was_assumed = self.cache.is_assumed(uid)
        old, same = None, None
        if known is not None and not was_assumed:
            same = known.same_spec(pod)  # handed on: the cache would compute it again
            if (not same and known.terms_changed(pod)) or (is_terminating(pod) and not known.deleting):
                # Relabelled, or started terminating (spread no longer counts it).
                old = SimpleNamespace(namespace=known.namespace, labels=known.labels)
        pinfo = self.cache.add_pod(pod, raw, same_spec=same)
        if known is None or was_assumed:
            self._move_for_assigned_pod(ClusterEvent.ASSIGNED_POD_ADD, (pinfo,), now)
        elif old is not None:
            self._move_for_assigned_pod(ClusterEvent.ASSIGNED_POD_UPDATE, (old, pinfo), now)

    def _move_for_assigned_pod(self, event: str, versions: tuple[Any, ...], now: float) -> None:
        """Upstream's AssignedPodAdded/Updated: only the pods the change may help move,
        as the plugins that rejected them judge (required pod affinity it now matches, a
        spread constraint whose counts it changes). An update is judged on both the old
        and the new version: a pod that stops matching can help too."""
        if not self.queue.unschedulable_count():
            return
        labels = self.cache.namespace_labels.get

        def may_help(qp: QueuedPodInfo) -> bool:
            fwk = self._framework_for(qp.pinfo)
            if fwk is None:
                return False
            for name in qp.unschedulable_plugins:
                judge = getattr(fwk.plugins.get(name), "assigned_pod_may_help", None)
                if judge is not None and any(judge(qp.pinfo, v, labels) for v in versions):
                    return True
            return False

        self.queue.move_all_to_active(event, now, pre_check=may_help)

    def _responsible_for(self, pod: dict[str, Any]) -> bool:
        return ((pod.get("spec") or {}).get("schedulerName") or DEFAULT_SCHEDULER) in self.frameworks

    def _on_unassigned_pod(
        self, event_type: str, pod: dict[str, Any], uid: str, now: float, raw: bytes | None, head: PodHead | None = None
    ) -> None:
        if event_type == "DELETED" or is_terminal(pod) or is_terminating(pod) or not self._responsible_for(pod):
            self.queue.delete(uid)
            self.host.forget_preemptor(uid)
            self._binding.pop(uid, None)
            if self.cache.forget_pod(uid) is not None:  # deleted while its bind was in flight
                self.queue.move_all_to_active(ClusterEvent.ASSIGNED_POD_DELETE, now)
            return
        if self.cache.is_assumed(uid):
            # Upstream skips updates of assumed pods; the cache still takes the newest
            # object, so a relabel during the bind is indexed and a requeue uses it.
            self.cache.update_assumed(pod)
            return
        qp = self.queue.get(uid)
        if qp is None:
            pinfo = self.cache.new_pod_info(pod)
            if head is not None:
                self.cache.columns.remember_head(head, pinfo)  # the next of its template: _add_by_head
            self.queue.add(pinfo, now)
            self._hold(pinfo, raw, head)
            return
        old = qp.pinfo.pod
        qp.pinfo.refresh(pod, self.cache.columns)
        self.queue.update(qp, old, now)
        if not qp.attempts:
            # Never tried yet: only a cycle reads it whole. A pod a cycle has failed keeps
            # its dict, since queueing hints read it on every cluster event.
            self._hold(qp.pinfo, raw, head)

    def _behind_backlog(self) -> bool:
        """Is a new pending pod kept as its bytes (see ``DECODED_BACKLOG``)?"""
        return self.queue.active_count() > DECODED_BACKLOG

    def _hold(self, pinfo: PodInfo, raw: bytes | None, head: PodHead | None) -> None:
        """An untried pending pod: as bytes behind a long backlog, else decoded (see
        ``DECODED_BACKLOG``)."""
        if self._behind_backlog():
            pinfo.compact(raw, head=head)
