"""One emulated kubelet: node registration, lease heartbeats, admission and the pod lifecycle.

Owns the state of one node's pods and what it knows of its stored Node; the Node object,
its Lease and the node-level chaos actions are ``NodeStatusMixin``'s (``nodestatus.py``).
A ``NodeHost`` holds many kubelets and calls them with the pod and Node watch events of
their node and with their due timers; every output goes into the host's shared ``Outbox``
and every delay into its shared ``TimerQueue`` as a token ``(node name, kind, uid,
generation)``. Time is always passed in.

Pod lifecycle (states from ``pods.py``; ``t`` is the emulated time of the transition):

| state             | input                                   | next              | outputs |
|-------------------|-----------------------------------------|-------------------|---------|
| (new)             | on_pod, phase already Succeeded/Failed  | SUCCEEDED/FAILED  | none (finished before this kubelet knew it) |
| (new)             | on_pod, status Running, container running | RUNNING (adopted) | none; resources taken; timer exit @ startedAt+run-seconds; timer oom as at start |
| (new)             | on_pod, status Running, container waiting after an exit | BACKOFF (adopted) | none; resources taken; timer start @ finishedAt+back-off |
| (new)             | on_pod, status Pending with a startTime | PENDING (adopted) | none; resources taken; timer start @ startTime+start-seconds |
| RUNNING (adopted) | the status has the kubelet's DisruptionTarget | STOPPING (evicting) | none; timer stopped @ since+min(stop-seconds, eviction grace) |
| (adopted)         | the pod is already terminating          | as on deletionTimestamp below | (Killing per container when RUNNING) |
| (new)             | on_pod, not adopted, already terminating | DELETED          | confirm delete |
| (new)             | on_pod, admission refuses               | REJECTED          | status Failed + reason/message; Warning event <reason> |
| (new)             | on_pod, admitted                        | PENDING           | status Pending (ContainerCreating); timer start @ t+start-seconds |
| PENDING, BACKOFF  | timer start                             | RUNNING           | status Running; the containers' known commands run (``commandrun.py``); timer exit @ t+run-seconds (if set; else when the commands end, if they do); timer oom @ when memory first passes a limit (if ever) |
| PENDING           | timer start or init, a container's image or configuration missing | PENDING (held) | Waiting ErrImagePull, ImagePullBackOff, ErrImageNeverPull or CreateContainerConfigError; the rows in ``createwait.py`` |
| RUNNING           | timer exit; Never, or OnFailure and 0   | SUCCEEDED/FAILED  | status (terminated, exit code: the declared one, else the commands' first non-zero); resources released |
| RUNNING           | timer exit; Always, or OnFailure and ≠0 | BACKOFF           | restartCount+1; status CrashLoopBackOff; Warning BackOff; timer start @ t+backoff |
| RUNNING           | timer oom                               | as timer exit     | exit code 137, the killed containers' reason OOMKilled; Warning OOMKilling on the Node |
| PENDING, BACKOFF, RUNNING | timer deadline (activeDeadlineSeconds) | FAILED, or STOPPING (to Failed) | the rows in ``deadline.py`` |
| PENDING, BACKOFF  | the eviction manager picks it           | FAILED            | Warning Evicted; status Failed, reason Evicted, its message, DisruptionTarget; resources released |
| RUNNING           | the eviction manager picks it           | STOPPING (evicting) | Warning Evicted; DisruptionTarget; Killing per container; timer stopped @ t+min(stop-seconds, eviction grace) |
| RUNNING           | deletionTimestamp                       | STOPPING          | Killing event per container; timer stopped @ t+min(stop-seconds, grace) |
| STOPPING          | deletionTimestamp with a shorter grace  | STOPPING          | timer stopped moved earlier (measured from the stop's start); the stop now ends in a confirm |
| STOPPING          | timer stopped (or oom), evicting (or past its deadline) and not deleted | FAILED | status Failed, reason Evicted (or DeadlineExceeded), exit 143 (or 137 if the grace ran out); resources released |
| STOPPING          | timer stopped (or oom), otherwise       | DELETED           | confirm delete; resources released |
| PENDING, BACKOFF, REJECTED, SUCCEEDED, FAILED | deletionTimestamp | DELETED | confirm delete at once; resources released |
| DELETED           | on_pod                                  | DELETED           | none: the confirm is sent once |
| any               | on_pod_deleted                          | (forgotten)       | timers cancelled; resources released; queued status dropped |

Adopted (``reconcile.py``): first seen with a status past admission here, as after a host
restart; taken over as the status shows, without admission, status write or event.

Admission (upstream's handler chain, first refusal wins): the eviction manager's handler
(BestEffort pods are refused under MemoryPressure, every pod under disk or PID pressure,
reason Evicted), then ``NodeAllocation.admit``: exclusive CPUs, devices, then
GeneralPredicates (``admission.py``) against the labels and taints of the Node as the
apiserver stores it (``apinode.py``; the host's Node watch calls ``on_node``), so a label
or taint set through the API counts from the next admission on, and running pods are
never checked again. "Resources" are the pod's effective requests, its exclusive CPUs,
devices and host ports; releasing them returns all of these to the node.
The eviction manager's loop, OOM timers and the pressure conditions are in
``pressure.py``; graceful deletion (the STOPPING rows) in ``stopping.py``;
``spec.activeDeadlineSeconds`` in ``deadline.py``; probes, init
containers and lifecycle hooks (PENDING runs the init containers, timer init; a liveness
kill ends in timer killed, then as timer exit) in ``probes.py``.

A delay of 0 runs its transition inline, so a pod without annotations is admitted and
Running within one ``on_pod`` call (the outbox coalesces both statuses into one write).
Other MODIFIED events are ignored but for a new ``activeDeadlineSeconds`` (the one field
of a bound pod's spec an update may change that the kubelet acts on) and added ephemeral
containers (``ephemeral.py``); the kubelet's own status writes come back through the watch.

Backoff (upstream's kubelet uses 10 s doubling to 300 s): kubemu waits 10 s before the
first restart too (upstream's first restart is immediate), doubles per restart up to
300 s, and resets to 10 s when more than 600 s (twice the cap, as upstream) passed since
the previous crash.
"""

from __future__ import annotations

import json
from functools import lru_cache

from ..api.annotations import AnnotationError, Emulation, emulation
from ..api.events import make_event
from ..api.objects import is_terminating
from ..api.predicates import host_ports
from ..api.resources import PODS
from ..runtime.component import WatchEvent
from ..runtime.timers import Handle, TimerQueue
from . import admission
from .allocation import NodeAllocation
from .apinode import AdmittedNode, NodeRead, configured_node
from .cgroups import with_parent
from .commandrun import CommandMixin, commands_of
from .containerfiles import ContainerFiles
from .createwait import PULL, CreationMixin
from .creation import Lookup, creation_of
from .deadline import DEADLINE, DeadlineMixin
from .ephemeral import EPHEMERAL, EphemeralMixin
from .eviction import EvictionManager
from .evictionconfig import parse_eviction_config
from .gates import GateMixin, gates_of
from .images import unpullable_patterns
from .node import NodeConfig, internal_ip
from .nodestatus import DEVICES, HEAL, LEASE, NodeStatusMixin
from .outbox import Outbox
from .podips import PodIPs
from .podlife import life_of
from .pods import (
    BACKOFF,
    BACKOFF_INITIAL,
    BACKOFF_MAX,
    EXIT,
    FAILED,
    REJECTED,
    RUNNING,
    START,
    STOPPED,
    SUCCEEDED,
    PodRecord,
    head_grace,
    pod_status,
    shared,
)
from .podshape import PodShape, shape_of
from .pressure import EVICT, LIFT, OOM, UNPRESSURE, PressureMixin, declared_usage, usage_view
from .probes import INIT, KILLED, PROBE, ProbeMixin
from .reconcile import ReconcileMixin
from .stopping import StopMixin

BACKOFF_RESET_AFTER = 2 * BACKOFF_MAX  # this long after a crash, the backoff starts afresh
COMPONENT = "kubelet"


class Kubelet(
    PressureMixin,
    ReconcileMixin,
    DeadlineMixin,
    EphemeralMixin,
    ProbeMixin,
    CommandMixin,
    StopMixin,
    CreationMixin,
    GateMixin,
    NodeStatusMixin,
):
    __slots__ = (
        "config",
        "images",
        "objects",
        "_held",
        "name",
        "index",
        "host_ip",
        "alloc",
        "eviction",
        "_outbox",
        "_timers",
        "_pods",
        "_used",
        "_ports",
        "_active",
        "_pod_ips",
        "_lease",
        "_lease_due",
        "_since",
        "_status_at",
        "_cordoned",
        "_stopped",
        "_extra",
        "_extra_timer",
        "_evict_timer",
        "_evict_due",
        "_pressure",
        "_device_timer",
        "_partition",
        "_heal_timer",
        "_lift_timer",
        "_api_node",
        "_node_digest",
        "files",
    )

    def __init__(self, config: NodeConfig, outbox: Outbox, timers: TimerQueue, index: int):
        self.config = config
        self.name = config.name
        self.index = index
        self.host_ip = internal_ip(index)
        # Both raise ValueError for a kubelet configuration upstream would refuse at startup.
        self.alloc = NodeAllocation(config)
        self.eviction = EvictionManager(_eviction_config(json.dumps(config.kubelet or {}, sort_keys=True, default=str)))
        self.images = unpullable_patterns(config.kubelet or {})  # ``images.py``
        # The ConfigMaps and Secrets the node host's watches hold (``creation.py``); None: none watched.
        self.objects: Lookup | None = None
        self._held: set[str] = set()  # uids of the pods whose containers cannot be created yet
        self._outbox = outbox
        self._timers = timers
        self._pods: dict[str, PodRecord] = {}
        self._used: dict[str, int] = {}  # summed requests of the pods holding resources
        self._ports: dict[tuple, int] = {}  # host ports of those pods, with how many hold each
        self._active = 0  # how many pods hold resources
        self._pod_ips = PodIPs(index)  # the node block's addresses (podips.py)
        self._lease: Handle | None = None
        self._lease_due = 0.0
        self._since = self._status_at = 0.0  # registration, and the last status posted (``nodestatus.py``)
        self._cordoned = False  # the stored Node's spec.unschedulable, last seen
        self._stopped = False
        self._extra: dict[str, int] = {}  # node-level usage from the pressure chaos action
        self._extra_timer: Handle | None = None
        self._evict_timer: Handle | None = None  # the eviction manager's next synchronize, while it runs
        self._evict_due = 0.0
        self._pressure: dict[str, tuple[bool, float]] = {}  # condition -> (True?, since)
        self._device_timer: Handle | None = None  # the end of a stopped device plugin's grace period
        self._partition = False  # heartbeats cut off (chaos), pods still running
        self._heal_timer: Handle | None = None
        self._lift_timer: Handle | None = None  # marks when held pressure conditions lift (nothing runs then)
        # The stored Node's labels and taints when they differ from the configured ones
        # (``apinode.py``), and the digest of the Node's encoded labels and spec last read.
        self._api_node: AdmittedNode | None = None
        self._node_digest = 0
        self.files = ContainerFiles()  # what exec, the pod proxy and httpGet probes see (containerfiles.py)

    @property
    def allocatable(self) -> dict[str, int]:
        return self.alloc.allocatable()

    # ---- inputs -------------------------------------------------------------------

    def on_pod_event(self, ev: WatchEvent, now: float) -> None:
        """An ADDED or MODIFIED pod event for this node: only a pod seen for the first time
        is read in full; of a known one, only whether it is being deleted (and its grace)
        and its activeDeadlineSeconds."""
        if self._stopped:
            return
        head = ev.head
        rec = self._pods.get(head.uid)
        if rec is None:
            self._new_pod(ev.obj, now)
            rec = self._pods[head.uid]
        elif head.deleting:
            self._on_deletion(rec, head_grace(head), now)
        else:
            if head.active_deadline != rec.active_deadline:
                self._deadline_changed(rec, head.active_deadline, now)
            if rec.gates is not None and ev.type == "MODIFIED":  # ``gates.py``: a condition may have changed
                self._gates_seen(rec, ev.obj, now)
            if head.uid in self._held and ev.type == "MODIFIED":  # ``createwait.py``: a label may satisfy it
                self.held_pod_updated(rec, ev.obj, now)
        if head.ephemeral > len(rec.ephemeral):  # ``ephemeral.py``: only ever added
            self._ephemeral_added(rec, ev.obj, now)

    def on_pod_deleted(self, uid: str, now: float) -> None:
        """The pod object (``uid``) is gone from the apiserver."""
        if self._stopped:
            return
        rec = self._pods.pop(uid, None)
        if rec is None:
            return
        self._cancel_timers(rec)
        self._release(rec)
        self._held.discard(uid)
        self._outbox.pod_status.pop(uid, None)  # a write to a deleted object would only fail

    def on_node(self, read: NodeRead, now: float) -> None:
        """The Node watch's ADDED or MODIFIED of this node: what later admissions check
        against. Already admitted pods are not checked again (upstream neither)."""
        digest = read.digest()
        if self._stopped or digest == self._node_digest:
            return  # a status write: nothing admission reads changed
        self._schedulable_seen(read.unschedulable(), now)  # ``nodestatus.py``
        node = read.node()
        if node is None:
            return
        self._node_digest = digest
        # Most Nodes stay as their kubelet registered them: a host of thousands keeps
        # nothing for those.
        self._api_node = None if node == configured_node(self.config) else node

    def on_node_deleted(self) -> None:
        """The Node is gone from the apiserver: admit against the configured node again."""
        self._api_node, self._node_digest = None, 0

    def on_timer(self, token: tuple, now: float) -> None:
        if self._stopped:
            return
        _, kind, uid, gen = token
        if kind == LEASE:
            self._renew(self._lease_due, now)
        elif kind == EVICT:
            self._sync(self._evict_due)  # at the scheduled time, as the lifecycle timers
        elif kind == UNPRESSURE:
            self._unpressure(now)
        elif kind == DEVICES:
            self._expire_devices(now)
        elif kind == HEAL:
            self._heal(now)
        elif kind == LIFT:
            self._lift_timer = None
        else:
            rec = self._pods.get(uid)
            if rec is None:
                return  # forgotten
            if kind == OOM:
                self._on_oom(rec, gen)
            elif kind == DEADLINE:
                self._on_deadline(rec, gen)  # a deadline's token carries its time
            elif kind == EPHEMERAL:
                self._on_ephemeral(rec, gen)  # its token carries the container's index
            elif kind == PROBE:
                self._on_probe(rec, gen)  # ``probes.py``: its token carries (run, probe, phase)
            elif rec.gen == gen:  # else superseded
                rec.timer = None
                # Transitions happen at the scheduled time, so a late tick does not shift the trace.
                self._step(kind, rec, rec.due)

    # ---- queries ------------------------------------------------------------------

    def state_of(self, uid: str) -> str | None:
        rec = self._pods.get(uid)
        return rec.state if rec else None

    def pods(self) -> dict[str, str]:
        """uid -> lifecycle state of every pod this kubelet knows."""
        return {uid: rec.state for uid, rec in self._pods.items()}

    def cgroup_of(self, uid: str) -> dict | None:
        rec = self._pods.get(uid)
        return None if rec is None or rec.cgroup is None else with_parent(rec.cgroup, rec.qos, rec.uid)

    def pod_resources(self, now: float) -> dict[str, dict]:
        """uid -> what the pod holds here (upstream's PodResources API, plus cgroups and
        usage), for every pod holding resources."""
        out = {}
        for uid, rec in self._pods.items():
            if rec.requests is not None:
                view = self.alloc.pod_view(rec)
                view["usage"] = usage_view(rec, now)
                out[uid] = view
        return out

    def node_resources(self) -> dict:
        return self.alloc.node_view()

    def requested(self) -> dict[str, int]:
        """Summed requests of the pods holding resources, with their count under ``pods``."""
        return {**self._used, PODS: self._active}

    # ---- admission ----------------------------------------------------------------

    def _new_pod(self, pod: dict, now: float) -> None:
        try:
            emu = emulation(pod)
        except AnnotationError:
            # Validation refuses these at create; one that slips through must not break a host.
            emu = Emulation()
        rec = PodRecord(pod, emu, now)
        shape = shape_of(pod)
        rec.qos = shape.qos
        try:
            rec.life = life_of(pod)
        except AnnotationError:
            rec.life = None  # as for ``emu`` above
        rec.create = creation_of(pod, self.images)
        rec.cmds = commands_of(pod)
        rec.gates = gates_of(pod)
        self._pods[rec.uid] = rec
        if self._adopt(rec, pod, now):
            self._probes_adopted(rec, now)
            return
        if is_terminating(pod):
            self._confirm(rec, now)
            return
        requests = admission.effective_requests(shape.requests, self.allocatable)
        rejection = self._eviction_admit(pod, rec) or self.alloc.admit(pod, rec, requests, self._view())
        if rejection is not None:
            self._reject(rec, rejection, now)
            return
        self._take(rec, pod, requests, shape)
        rec.pod_ip = self.host_ip if (pod.get("spec") or {}).get("hostNetwork") else self._next_ip()
        first, delay = START, emu.start_seconds
        if rec.life is not None:  # init containers first (``probes.py``), or postStart hooks
            first = INIT if rec.life.initialized_at is None else START
            delay += rec.life.post_start if first == START else 0.0
        if delay > 0:
            self._write(rec)  # else the inline start below writes Running, which supersedes it
        if rec.usage is not None:
            self._ensure_sync(now)
        self._arm_deadline(rec)
        self._after(rec, delay, first, now)

    def admitted_node(self) -> AdmittedNode:
        """The labels and taints admission checks against: the stored Node's, else (not
        seen yet, deleted, or as configured) the configured ones (upstream's getNodeAnyWay)."""
        return self._api_node or configured_node(self.config)

    def _view(self) -> admission.NodeView:
        node = self.admitted_node()
        return admission.NodeView(
            self.name, self.allocatable, self._used, self._active, node.labels, node.taints, self._ports
        )

    def _reject(self, rec: PodRecord, rejection: admission.Rejection, now: float) -> None:
        rec.state = REJECTED
        rec.reason, rec.message = rejection.reason, rejection.message
        self._event(rec, rejection.reason, rejection.message, now, "Warning")
        self._write(rec)

    def _next_ip(self) -> str:
        return self._pod_ips.take()

    def _take(self, rec: PodRecord, pod: dict, requests: dict[str, int], shape: PodShape | None = None) -> None:
        """An admitted (or adopted) pod holds its requests and ports and gets its cgroups."""
        self._hold(rec, requests, host_ports(pod))
        rec.cgroup = (shape or shape_of(pod)).cgroup(rec.qos)
        rec.usage = declared_usage(pod)

    def _hold(self, rec: PodRecord, requests: dict[str, int], ports: tuple) -> None:
        rec.requests, rec.ports = shared(requests), ports
        self._active += 1
        used = self._used
        for name, amount in requests.items():
            used[name] = used.get(name, 0) + amount
        for port in ports:
            self._ports[port] = self._ports.get(port, 0) + 1

    def _release(self, rec: PodRecord) -> None:
        if rec.requests is None:
            return
        self._pod_ips.release(rec.pod_ip)  # the sandbox is gone: its address is free
        self.alloc.release(rec)
        self._active -= 1
        used = self._used
        for name, amount in rec.requests.items():
            left = used.get(name, 0) - amount
            if left:
                used[name] = left
            else:
                used.pop(name, None)
        for port in rec.ports:
            if self._ports[port] == 1:
                del self._ports[port]
            else:
                self._ports[port] -= 1
        rec.requests, rec.ports = None, ()

    # ---- lifecycle ----------------------------------------------------------------

    def _after(self, rec: PodRecord, delay: float, kind: str, t: float) -> None:
        """Run transition ``kind`` ``delay`` seconds after ``t`` (inline when 0)."""
        self._timers.cancel(rec.timer)
        rec.timer = None
        rec.gen += 1
        if delay <= 0:
            self._step(kind, rec, t)
            return
        rec.due = t + delay
        rec.timer = self._timers.schedule(rec.due, (self.name, kind, rec.uid, rec.gen))

    def _step(self, kind: str, rec: PodRecord, t: float) -> None:
        """Run the lifecycle transition ``kind`` of the record at ``t``."""
        if kind == START:
            if rec.runs == 0 and rec.create is not None and not self._creatable(rec, rec.regular_names(), START, t):
                return  # held: ``createwait.py`` retries it
            self._start(rec, t)
        elif kind == EXIT:
            self._exit(rec, t)
        elif kind == STOPPED:
            self._stop_done(rec, t)
        elif kind == INIT:
            self._init_step(rec, t)
        elif kind == KILLED:
            self._killed(rec, t)
        elif kind == PULL:
            self._retry_creation(rec, t)

    def _start(self, rec: PodRecord, t: float) -> None:
        rec.state = RUNNING
        rec.started_at = rec.ready_at = t
        rec.runs += 1
        if rec.life is not None:
            self._probes_begin(rec, t)
        self._write(rec)
        if rec.usage is not None:
            self._schedule_oom(rec, t)
        run = rec.emu.run_seconds if rec.cmds is None else self._app_run_seconds(rec, t)  # ``commandrun.py``
        rec.exit_at = None if run is None else t + run
        if run is not None:
            self._after(rec, run, EXIT, t)

    def _exit(self, rec: PodRecord, t: float, code: int | None = None, oom: tuple[str, ...] = ()) -> None:
        """The containers' run ended: by themselves (``code`` None: the declared exit code)
        or killed by the kernel for memory (``oom`` names the containers killed)."""
        self._timers.cancel(rec.oom_timer)
        rec.oom_timer = None
        self._probes_stop(rec)
        if code is None:
            code = self._own_exit_code(rec)
        assert rec.started_at is not None  # the run that ended had started
        since_crash = t - rec.last_exit[2] if rec.last_exit else None
        rec.last_exit = (code, rec.started_at, t, oom)
        rec.ready_at, rec.exit_at = t, None
        if rec.policy == "Never" or (rec.policy == "OnFailure" and code == 0):
            rec.state = SUCCEEDED if code == 0 else FAILED
            self._cancel_timers(rec)
            self._release(rec)
            self._write(rec)
            return
        rec.restarts += 1
        rec.backoff = _next_backoff(rec.backoff, since_crash)
        rec.state = BACKOFF
        self._write(rec)
        for name in rec.app_names():
            self._event(
                rec, "BackOff", f"Back-off restarting failed container {name} in pod {rec.format_pod()}", t, "Warning"
            )
        self._after(rec, rec.backoff + (rec.life.post_start if rec.life is not None else 0.0), START, t)

    # ---- outputs --------------------------------------------------------------------

    def _write(self, rec: PodRecord) -> None:
        self._outbox.pod_status[rec.uid] = (*rec.key(), pod_status(rec, self.host_ip))

    def _event(self, rec: PodRecord, reason: str, message: str, t: float, type: str = "Normal") -> None:
        self._outbox.events.append(
            make_event(rec.ref(), reason, message, t, type=type, component=COMPONENT, host=self.name)
        )


@lru_cache(maxsize=64)
def _eviction_config(kubelet_json: str):
    """Nodes of one pool share one parsed (immutable) eviction configuration."""
    return parse_eviction_config(json.loads(kubelet_json))


def _next_backoff(previous: int, since_crash: float | None) -> int:
    if previous == 0 or since_crash is None or since_crash > BACKOFF_RESET_AFTER:
        return BACKOFF_INITIAL
    return min(previous * 2, BACKOFF_MAX)
