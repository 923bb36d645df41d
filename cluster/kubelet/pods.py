"""Per-pod state a kubelet keeps, and the full API status that state implies.

Owns ``PodRecord`` (one small slotted object per pod on the node), the state names of
the lifecycle that ``Kubelet`` drives (see the table in ``kubelet.py``), and the
rendering of a record into a complete ``status`` dict: phase, conditions, qosClass, IPs,
startTime and container statuses. The apiserver replaces a pod's status wholesale with
it, so every field the kubelet owns is always present. Called only by ``Kubelet``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TypeVar

from ..api.annotations import Emulation
from ..api.codec import encode
from ..api.podhead import PodHead, head_of
from ..api.sharing import SharedValues
from ..clock import rfc3339

if TYPE_CHECKING:
    from ..api.usage import ContainerUsage
    from ..runtime.timers import Handle
    from .commandrun import Commands, Ran
    from .creation import Creation
    from .gates import Gates
    from .podlife import PodLife

PENDING = "Pending"  # admitted; containers being created (start-seconds)
RUNNING = "Running"
BACKOFF = "CrashLoopBackOff"  # exited, waiting to be restarted
STOPPING = "Stopping"  # deletionTimestamp seen while running; containers got SIGTERM
SUCCEEDED = "Succeeded"
FAILED = "Failed"
REJECTED = "Rejected"  # refused by admission: phase Failed, never ran
DELETED = "Deleted"  # the grace-0 confirm was emitted; waiting for the DELETED event

# Kinds of a pod's lifecycle timer, and the CrashLoopBackOff range (upstream: 10 s doubling
# to 300 s); ``kubelet.py`` drives them, ``reconcile.py`` resumes them after a restart.
START, EXIT, STOPPED = "start", "exit", "stopped"
BACKOFF_INITIAL, BACKOFF_MAX = 10, 300

DEFAULT_GRACE = 30  # seconds: a pod spec's terminationGracePeriodSeconds when it gives none

# Read-only parts of records that pods of one template have alike (requests, cgroup values,
# container names and images), kept once in this process: a node host holds thousands of
# records, and each pod's decoded copy would otherwise stay. Like ``sys.intern``, a cache
# of values, not state: an unshared copy compares equal all the same.
_SHARED = SharedValues(4096)
_T = TypeVar("_T")


def shared(value: _T) -> _T:
    """``value``, or an equal one a record holds already. Tuples of strings are kept by
    themselves, dicts by their encoding; never change what this returns."""
    try:
        key: Any = encode(value) if isinstance(value, dict) else value
        kept: _T = _SHARED.keep(key, value)
    except TypeError:  # unhashable, or not encodable: keep its own
        return value
    return kept


def grace_of(pod: dict) -> float:
    """The seconds a deleted pod's containers get to stop."""
    return head_grace(head_of(pod))


def head_grace(head: PodHead) -> float:
    """The same from the pod's head: the deletion's grace, else the spec's."""
    grace = head.grace
    if grace is None:
        grace = DEFAULT_GRACE if head.spec_grace is None else head.spec_grace
    return max(0.0, float(grace))


TERMINAL = frozenset((SUCCEEDED, FAILED, REJECTED, DELETED))
_PHASE = {
    PENDING: "Pending",
    RUNNING: "Running",
    BACKOFF: "Running",
    STOPPING: "Running",
    SUCCEEDED: "Succeeded",
    FAILED: "Failed",
    REJECTED: "Failed",
    DELETED: "Failed",
}
REJECTED_PREFIX = "Pod was rejected: "


class PodRecord:
    __slots__ = (
        "uid",
        "namespace",
        "name",
        "state",
        "emu",
        "policy",
        "containers",
        "init",
        "requests",
        "qos",
        "cgroup",
        "admitted_at",
        "scheduled_ts",
        "pod_ip",
        "started_at",
        "ready_at",
        "restarts",
        "backoff",
        "last_exit",
        "timer",
        "gen",
        "due",
        "exit_at",
        "stop_begin",
        "stop_end",
        "reason",
        "message",
        "priority",
        "grace",
        "static",
        "mem_requests",
        "ports",
        "usage",
        "runs",
        "oom_timer",
        "oom_at",
        "deleting",
        "evicting",
        "disruption",
        "active_deadline",
        "deadline_timer",
        "ephemeral",
        "life",
        "create",
        "gates",
        "cmds",
    )

    def __init__(self, pod: dict, emu: Emulation, now: float):
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        self.uid, self.name = meta.get("uid", ""), meta.get("name", "")
        self.namespace = sys.intern(meta.get("namespace", ""))
        self.state = PENDING
        self.emu = emu
        self.policy = sys.intern(spec.get("restartPolicy") or "Always")
        self.containers = shared(tuple((c.get("name", ""), c.get("image", "")) for c in spec.get("containers") or ()))
        self.init = shared(
            tuple(
                (c.get("name", ""), c.get("image", ""), c.get("restartPolicy") == "Always")
                for c in spec.get("initContainers") or ()
            )
        )
        self.requests: dict[str, int] | None = None  # set while the pod holds node resources
        self.qos = ""
        self.cgroup: dict | None = None
        self.admitted_at = now
        self.scheduled_ts = sys.intern(_scheduled_ts(pod, now))
        self.pod_ip = ""
        self.started_at: float | None = None  # when the current container run began
        self.ready_at = now  # last readiness transition
        self.restarts = 0
        self.backoff = 0  # the last CrashLoopBackOff delay, seconds; 0 = none yet
        # (exit code, started, finished, names of the containers the kernel OOM-killed)
        self.last_exit: tuple[int, float, float, tuple[str, ...]] | None = None
        self.timer: Handle | None = None  # TimerQueue handle of the one pending lifecycle timer
        self.gen = 0  # bumped per timer so a stale token is recognised
        self.due = now  # when the pending timer fires
        self.exit_at: float | None = None  # when a running container exits by itself
        self.stop_begin: float | None = None
        self.stop_end: float | None = None
        self.reason = self.message = ""
        # What the eviction manager ranks by (upstream's rankMemoryPressure) and quotes in its message.
        self.priority = int(spec.get("priority") or 0)
        self.grace = spec.get("terminationGracePeriodSeconds")
        self.static = _is_static_or_mirror(meta)
        self.mem_requests = shared(
            tuple(
                (c.get("name", ""), ((c.get("resources") or {}).get("requests") or {}).get("memory"))
                for c in spec.get("containers") or ()
            )
        )
        # container -> usage.ContainerUsage, when any usage is declared
        self.usage: dict[str, ContainerUsage] | None = None
        self.runs = 0  # container starts so far; tags the OOM timer of the current run
        self.oom_timer: Handle | None = None  # TimerQueue handle of the current run's OOM kill
        self.oom_at = 0.0  # when that kill happens
        self.ports: tuple = ()  # host ports held while the pod holds resources
        self.deleting = False  # a deletionTimestamp was seen
        self.evicting = False  # STOPPING toward phase Failed: evicted, or past its active deadline
        self.disruption: tuple[str, str, float] | None = None  # DisruptionTarget (reason, message, time)
        self.active_deadline = deadline_seconds(spec.get("activeDeadlineSeconds"))
        self.deadline_timer: Handle | None = None  # ``deadline.py``
        self.ephemeral: tuple[EphemeralRun, ...] = ()  # ``ephemeral.py``, in the order added
        self.life: PodLife | None = None  # probes, hooks, init containers (``podlife.py``); None without
        self.create: Creation | None = None  # what container creation needs (``creation.py``); None: nothing
        self.gates: Gates | None = None  # spec.readinessGates and what they read (``gates.py``); None without
        self.cmds: Commands | None = None  # containers that run their commands (``commandrun.py``); None: none

    def key(self) -> tuple[str, str, str]:
        return (self.namespace, self.name, self.uid)

    def ref(self) -> dict:
        """Enough of the Pod for an Event's involvedObject."""
        return {"kind": "Pod", "metadata": {"namespace": self.namespace, "name": self.name, "uid": self.uid}}

    def app_names(self) -> list[str]:
        """Containers that run for the pod's lifetime: sidecars then regular containers."""
        return [n for n, _, side in self.init if side] + [n for n, _ in self.containers]

    def regular_names(self) -> list[str]:
        return [n for n, _ in self.containers]

    def held(self, name: str) -> tuple[str, str] | None:
        """(reason, message) while the container cannot be created (``createwait.py``)."""
        cr = self.create
        return None if cr is None or self.state != PENDING else cr.waiting.get(name)

    def format_pod(self) -> str:
        return f"{self.name}_{self.namespace}({self.uid})"


class EphemeralRun:
    """An ephemeral container (``kubectl debug``) as the kubelet runs it: started once,
    never restarted (``ephemeral.py`` drives it)."""

    __slots__ = ("name", "image", "started", "finished", "exit_code", "due", "timer")

    def __init__(self, name: str, image: str):
        self.name, self.image = name, image
        self.started: float | None = None
        self.finished: float | None = None
        self.exit_code = 0
        self.due = 0.0  # when its pending timer fires
        self.timer: Handle | None = None


def deadline_seconds(value: object) -> int | None:
    """A spec's activeDeadlineSeconds as the kubelet keeps it: a positive integer, or None."""
    return value if isinstance(value, int) and value > 0 else None


def _is_static_or_mirror(meta: dict) -> bool:
    ann = meta.get("annotations") or {}
    source = ann.get("kubernetes.io/config.source")
    return (source is not None and source != "api") or "kubernetes.io/config.mirror" in ann


def _scheduled_ts(pod: dict, now: float) -> str:
    # Keep the scheduler's PodScheduled time: status is replaced wholesale.
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == "PodScheduled" and c.get("lastTransitionTime"):
            return c["lastTransitionTime"]
    return rfc3339(now)


def go_duration(seconds: float) -> str:
    """Go's time.Duration text for whole seconds: 10s, 1m20s, 5m0s."""
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m}m{s}s"
    h, m = divmod(m, 60)
    return f"{h}h{m}m{s}s"


def _cond(ctype: str, status: str, ts: str, reason: str = "", message: str = "") -> dict:
    c = {"type": ctype, "status": status, "lastProbeTime": None, "lastTransitionTime": ts}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def _conditions(rec: PodRecord) -> list[dict]:
    ready_ts = rfc3339(rec.ready_at)
    life = rec.life
    running = rec.state in (RUNNING, STOPPING)
    if running and (life is None or life.all_ready(rec.app_names())):
        ready = [_cond("Ready", "True", ready_ts), _cond("ContainersReady", "True", ready_ts)]
        if rec.gates is not None:  # containers ready, the gates decide Ready (``gates.py``)
            ready[0] = rec.gates.ready_condition(ready_ts)
    elif rec.state in TERMINAL:
        ready = [_cond(t, "False", ready_ts, "PodCompleted") for t in ("Ready", "ContainersReady")]
    else:
        names = rec.app_names()
        unready = [n for n in names if not life.ready(n)] if running and life is not None else names
        msg = f"containers with unready status: [{' '.join(unready)}]"
        ready = [_cond(t, "False", ready_ts, "ContainersNotReady", msg) for t in ("Ready", "ContainersReady")]
    out = [
        _initialized(rec),
        *ready,
        _cond("PodScheduled", "True", rec.scheduled_ts),
    ]
    if rec.disruption is not None:
        reason, message, t = rec.disruption
        out.append(_cond("DisruptionTarget", "True", rfc3339(t), reason, message))
    if rec.gates is not None:
        out += rec.gates.others  # conditions the kubelet does not own, kept as read
    return out


def _initialized(rec: PodRecord) -> dict:
    life = rec.life
    failed = life is not None and any(life.init_codes)  # (one failed a pod that never restarts it)
    if life is None or not rec.init or (rec.state in TERMINAL and not failed):
        return _cond("Initialized", "True", rfc3339(rec.admitted_at))
    if life.initialized_at is not None:
        return _cond("Initialized", "True", rfc3339(life.initialized_at))
    # A sidecar counts once started, a regular init container once completed (exit 0).
    left = [
        n
        for (n, _, side), (began, done), code in zip(rec.init, life.init_times, life.init_codes)
        if (done is None or code != 0) and not (side and began is not None)
    ]
    msg = f"containers with incomplete status: [{' '.join(left)}]"
    return _cond("Initialized", "False", rfc3339(rec.admitted_at), "ContainersNotInitialized", msg)


def _terminated(exit_info: tuple, name: str = "", ran: Ran | None = None) -> dict:
    """A terminated state; ``ran``: the container's own run of its command in that run
    (``commandrun.py``), whose exit code, end and message are the container's own."""
    code, started, finished = exit_info[:3]
    message = ""
    if ran is not None and ran.started == started:
        code, finished, message = ran.code, min(finished, started + ran.seconds), ran.message
    if name and name in exit_info[3]:
        reason = "OOMKilled"
    else:
        reason = "Completed" if code == 0 else "Error"
    state = {"exitCode": code, "reason": reason, "startedAt": rfc3339(started), "finishedAt": rfc3339(finished)}
    if message:
        state["message"] = message
    return {"terminated": state}


def _ran(rec: PodRecord, name: str, previous: bool = False, init: bool = False) -> Ran | None:
    """The container's run of its command in the latest (or the previous) run, when that
    run ended by itself (not killed, not by an annotation's exit; an init container's
    always does)."""
    cmds = rec.cmds
    if cmds is None:
        return None
    ran = (cmds.previous if previous else cmds.runs).get(name)
    return ran if ran is not None and (init or ran.started in cmds.ended) else None


def _app_state(rec: PodRecord, name: str) -> tuple[dict, dict, bool]:
    """(state, lastState, running) of a long-running container in the record's state."""
    if rec.state in (RUNNING, STOPPING):
        # A restarted container keeps showing how its previous run ended (e.g. OOMKilled).
        last = _terminated(rec.last_exit, name, _ran(rec, name, True)) if rec.last_exit else {}
        assert rec.started_at is not None  # a running container has started
        return {"running": {"startedAt": rfc3339(rec.started_at)}}, last, True
    if rec.state == BACKOFF:
        msg = f"back-off {go_duration(rec.backoff)} restarting failed container={name} pod={rec.format_pod()}"
        last = _terminated(rec.last_exit, name, _ran(rec, name)) if rec.last_exit else {}
        return {"waiting": {"reason": "CrashLoopBackOff", "message": msg}}, last, False
    if rec.state in (SUCCEEDED, FAILED) and rec.last_exit:
        return _terminated(rec.last_exit, name, _ran(rec, name)), {}, False
    held = rec.held(name)
    if held is not None:  # its image or configuration is missing (``createwait.py``)
        return {"waiting": {"reason": held[0], "message": held[1]}}, {}, False
    # Upstream's default waiting reason: PodInitializing in a pod with init containers.
    return {"waiting": {"reason": "PodInitializing" if rec.init else "ContainerCreating"}}, {}, False


def _container_status(
    name: str, image: str, state: dict, last: dict, running: bool, restarts: int, ready: bool | None = None
) -> dict:
    return {
        "name": name,
        "image": image,
        "imageID": "",
        "state": state,
        "lastState": last,
        "ready": running if ready is None else ready,
        "started": running,
        "restartCount": restarts,
    }


def _long_running(rec: PodRecord, name: str, image: str) -> dict:
    """The status of a regular or sidecar container: started and ready by its probes."""
    state, last, running = _app_state(rec, name)
    status = _container_status(name, image, state, last, running, rec.restarts)
    if running and rec.life is not None:
        status["started"] = rec.life.started(name)
        status["ready"] = rec.life.ready(name)
    return status


def _init_statuses(rec: PodRecord) -> list[dict]:
    life = rec.life
    out = []
    for i, (name, image, sidecar) in enumerate(rec.init):
        began, done = life.init_times[i] if life is not None else (rec.admitted_at, rec.admitted_at)
        restarts, before = (life.init_restarts[i], life.init_last[i]) if life is not None else (0, None)
        last = {} if before is None else _terminated((*before, ()), name, _ran(rec, name, True, True))
        if began is None and before is not None:  # failed: waiting to be restarted
            msg = f"back-off {go_duration(rec.backoff)} restarting failed container={name} pod={rec.format_pod()}"
            waiting = {"reason": "CrashLoopBackOff", "message": msg}
            out.append(_container_status(name, image, {"waiting": waiting}, last, False, restarts))
        elif began is None:  # not started yet: held by its image or configuration, or not its turn
            held = rec.held(name)
            waiting = {"reason": held[0], "message": held[1]} if held else {"reason": "PodInitializing"}
            out.append(_container_status(name, image, {"waiting": waiting}, {}, False, 0))
        elif sidecar and rec.state == PENDING:  # started, the pod's containers not yet
            assert life is not None  # only a record with a life is Pending with a sidecar started
            status = _container_status(name, image, {"running": {"startedAt": rfc3339(began)}}, {}, True, 0)
            status["started"], status["ready"] = life.started(name), life.ready(name)
            out.append(status)
        elif sidecar:
            status = _long_running(rec, name, image)
            if rec.restarts == 0 and "running" in status["state"]:  # its first run began before the pod's
                status["state"] = {"running": {"startedAt": rfc3339(began)}}
            out.append(status)
        elif done is None:
            running = {"running": {"startedAt": rfc3339(began)}}
            out.append(_container_status(name, image, running, last, True, restarts, False))
        else:  # completed: upstream counts a completed init container ready, not started
            code = life.init_codes[i] if life is not None else 0
            state = _terminated((code, began, done, ()), name, _ran(rec, name, init=True))
            out.append(_container_status(name, image, state, last, False, restarts, code == 0))
    return out


def _ephemeral_status(rec: PodRecord, run: EphemeralRun) -> dict:
    """Ephemeral containers are never ready and never restarted; one still running when
    the pod's own containers finished was killed with them (137)."""
    if run.finished is not None:
        state = _terminated((run.exit_code, run.started, run.finished, ()))
    elif run.started is None:
        state = {"waiting": {"reason": "ContainerCreating"}}
    elif rec.state in (SUCCEEDED, FAILED) and rec.last_exit:
        state = _terminated((137, run.started, max(run.started, rec.last_exit[2]), ()))
    else:
        state = {"running": {"startedAt": rfc3339(run.started)}}
    status = _container_status(run.name, run.image, state, {}, False, 0)
    del status["started"]  # the kubelet sets it for regular and init containers only
    return status


def _ips(rec: PodRecord, host_ip: str) -> dict:
    ips = {"hostIP": host_ip, "hostIPs": [{"ip": host_ip}]}
    return {**ips, "podIP": rec.pod_ip, "podIPs": [{"ip": rec.pod_ip}]} if rec.pod_ip else ips  # "": block full


def pod_status(rec: PodRecord, host_ip: str) -> dict:
    """The complete status the kubelet writes for the record's current state."""
    if rec.state == REJECTED:
        return {
            "phase": "Failed",
            "reason": rec.reason,
            "message": REJECTED_PREFIX + rec.message,
            "qosClass": rec.qos,
            "hostIP": host_ip,
            "hostIPs": [{"ip": host_ip}],
            "conditions": [_cond("PodScheduled", "True", rec.scheduled_ts)],
        }
    statuses = [_long_running(rec, name, image) for name, image in rec.containers]
    status = {
        "phase": _PHASE[rec.state],
        "conditions": _conditions(rec),
        "qosClass": rec.qos,
        **_ips(rec, host_ip),
        "startTime": rfc3339(rec.admitted_at),
        "containerStatuses": statuses,
    }
    if rec.init:
        status["initContainerStatuses"] = _init_statuses(rec)
    if rec.ephemeral:
        status["ephemeralContainerStatuses"] = [_ephemeral_status(rec, run) for run in rec.ephemeral]
    if rec.state == FAILED and rec.reason:  # evicted or past its deadline: that reason and message
        status["reason"], status["message"] = rec.reason, rec.message
    return status
