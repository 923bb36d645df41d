"""What a pod with probes, lifecycle hooks or init containers needs beyond ``PodRecord``.

Owns ``PodLife`` (kept in ``PodRecord.life``; None for every other pod, so a pod without
any of these costs nothing more), its construction from the pod's spec and ``kubemu.io/``
annotations (``life_of``), and the container flags and init-container states that
``pods.pod_status`` renders from it. ``probes.py`` drives the probes and the init
sequence; ``kubelet.py`` asks it for the hook times.

A probe's fields default as upstream's apiserver defaults them (period 10 s, timeout 1 s,
success and failure thresholds 1 and 3, initial delay 0); values below 1 count as 1.
"""

from __future__ import annotations

from typing import Any

from ..api.annotations import LIVENESS, POST_START_SECONDS, PRE_STOP_SECONDS, READINESS, RUN_SECONDS, STARTUP
from ..api.probeoutcome import Outcome, hook_for, outcome_for

# Probe kinds as upstream names them in its events ("Readiness probe failed: ...").
STARTUP_PROBE, LIVENESS_PROBE, READINESS_PROBE = "Startup", "Liveness", "Readiness"
_FIELDS = (
    ("startupProbe", STARTUP_PROBE, STARTUP),
    ("livenessProbe", LIVENESS_PROBE, LIVENESS),
    ("readinessProbe", READINESS_PROBE, READINESS),
)


class Probe:
    """One probe worker: a container's probe of one kind and its running tally."""

    __slots__ = (
        "container",
        "kind",
        "delay",
        "period",
        "timeout",
        "success",
        "failure",
        "grace",
        "outcome",
        "handler",
        "result",
        "last",
        "count",
        "held",
        "timer",
        "due",
    )

    def __init__(self, container: str, kind: str, spec: dict[str, Any], outcome: Outcome, handler: tuple):
        self.container, self.kind, self.outcome, self.handler = container, kind, outcome, handler
        self.delay = float(_int(spec, "initialDelaySeconds", 0, 0))
        self.period = float(_int(spec, "periodSeconds", 10, 1))
        self.timeout = float(_int(spec, "timeoutSeconds", 1, 1))
        self.success = _int(spec, "successThreshold", 1, 1)
        self.failure = _int(spec, "failureThreshold", 3, 1)
        grace = spec.get("terminationGracePeriodSeconds")  # a liveness or startup probe's own
        self.grace: float | None = float(grace) if isinstance(grace, int) and not isinstance(grace, bool) else None
        self.timer: int | None = None
        self.due = 0.0  # when the pending timer fires
        self.reset()

    def reset(self) -> None:
        """A new container run: upstream's initial results (readiness failed, liveness
        passed, startup unknown) and no tally."""
        self.result: bool | None = {READINESS_PROBE: False, LIVENESS_PROBE: True}.get(self.kind)
        self.last: bool | None = None
        self.count = 0
        self.held = False  # a liveness or startup failure killed the container: no more probes


class PodLife:
    __slots__ = (
        "probes",
        "post_start",
        "pre_stop",
        "init_runs",
        "init_times",
        "init_next",
        "init_codes",
        "init_own",
        "init_restarts",
        "init_last",
        "initialized_at",
        "kill_code",
    )

    def __init__(
        self,
        probes: tuple[Probe, ...],
        post_start: float,
        pre_stop: float,
        init_runs: tuple[float, ...],
        init_own: tuple[bool, ...] = (),
    ):
        self.probes = probes
        self.post_start = post_start  # summed: upstream starts the containers one after another
        self.pre_stop = pre_stop  # the longest: the containers stop side by side
        self.init_runs = list(init_runs)  # per init container (a sidecar's is unused); its command's may set it
        self.init_times: list[list[float | None]] = [[None, None] for _ in init_runs]  # [started, finished]
        self.init_own = init_own or tuple(False for _ in init_runs)  # run-seconds declared: its command is not run
        self.init_codes = [0 for _ in init_runs]  # each one's exit code (its command's, ``commandrun.py``)
        self.init_restarts = [0 for _ in init_runs]
        self.init_last: list[tuple[int, float, float] | None] = [None for _ in init_runs]  # its failed run before
        self.init_next = 0  # the init container to start or wait for
        self.initialized_at: float | None = None if init_runs else 0.0
        self.kill_code = 0  # the exit code of a probe's kill under way

    def started(self, name: str) -> bool:
        """A running container has started unless its startup probe has yet to pass."""
        return all(p.result for p in self.probes if p.container == name and p.kind == STARTUP_PROBE)

    def ready(self, name: str) -> bool:
        """A running container is ready once started and its readiness probe passes."""
        return self.started(name) and all(
            p.result for p in self.probes if p.container == name and p.kind == READINESS_PROBE
        )

    def all_ready(self, names: list[str]) -> bool:
        return all(self.ready(n) for n in names)


def life_of(pod: dict[str, Any]) -> PodLife | None:
    """The pod's probes, hook times and init run times, or None when it has none of them
    (the common case: a quick look at each container, nothing kept)."""
    spec = pod.get("spec") or {}
    containers = [c for c in spec.get("containers") or () if isinstance(c, dict)]
    inits = [c for c in spec.get("initContainers") or () if isinstance(c, dict)]
    if not inits and not any(_has_any(c) for c in containers):
        return None
    ann = (pod.get("metadata") or {}).get("annotations") or {}
    sidecars = [c for c in inits if c.get("restartPolicy") == "Always"]
    probes = []
    post_start = pre_stop = 0.0
    for c in sidecars + containers:
        name = str(c.get("name", ""))
        for field, kind, key in _FIELDS:
            spec_p = c.get(field)
            if isinstance(spec_p, dict):
                probes.append(Probe(name, kind, spec_p, outcome_for(ann, key, name), _handler(spec_p, c)))
        hooks = c.get("lifecycle") or {}
        if isinstance(hooks, dict) and hooks.get("preStop"):
            pre_stop = max(pre_stop, hook_for(ann, PRE_STOP_SECONDS, name))
        if isinstance(hooks, dict) and hooks.get("postStart") and c in containers:
            post_start += hook_for(ann, POST_START_SECONDS, name)
    own = tuple(_own(ann, c) for c in inits)
    runs = tuple(hook_for(ann, RUN_SECONDS, str(c.get("name", ""))) if mine else 0.0 for c, mine in zip(inits, own))
    return PodLife(tuple(probes), post_start, pre_stop, runs, own)


def _own(ann: dict[str, Any], c: dict[str, Any]) -> bool:
    # An init container runs only its own run-seconds: the pod-wide one is the app's.
    return f"{RUN_SECONDS}.{c.get('name', '')}" in ann


def _has_any(c: dict[str, Any]) -> bool:
    return bool(c.get("livenessProbe") or c.get("readinessProbe") or c.get("startupProbe") or c.get("lifecycle"))


def _int(spec: dict[str, Any], field: str, default: int, least: int) -> int:
    value = spec.get(field)
    if not isinstance(value, int) or isinstance(value, bool):
        return default
    return max(value, least)


def _handler(probe: dict[str, Any], container: dict[str, Any]) -> tuple:
    """How the probe reaches the container, enough to word its failures as upstream does."""
    if isinstance(probe.get("httpGet"), dict):
        h = probe["httpGet"]
        scheme = str(h.get("scheme") or "HTTP").lower()
        return ("http", scheme, _port(h.get("port"), container), str(h.get("path") or "/"))
    if isinstance(probe.get("tcpSocket"), dict):
        return ("tcp", _port(probe["tcpSocket"].get("port"), container))
    if isinstance(probe.get("grpc"), dict):
        return ("grpc", _port(probe["grpc"].get("port"), container))
    return ("exec",)


def _port(port: Any, container: dict[str, Any]) -> str:
    """A named port resolved against the container's ports, as the prober does."""
    if isinstance(port, str) and not port.isdigit():
        for p in container.get("ports") or ():
            if isinstance(p, dict) and p.get("name") == port:
                return str(p.get("containerPort", port))
    return str(port)


def failure_text(handler: tuple, ip: str, answered: bool, timeout: float) -> str:
    """What upstream's prober reports for a failed probe (``answered`` False: it timed out)."""
    kind = handler[0]
    if kind == "http":
        _, scheme, port, path = handler
        if answered:
            return "HTTP probe failed with statuscode: 500"
        url = f"{scheme}://{ip}:{port}{path}"
        return f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    if kind == "tcp":
        reason = "connect: connection refused" if answered else "i/o timeout"
        return f"dial tcp {ip}:{handler[1]}: {reason}"
    if kind == "grpc":
        if answered:
            return 'service unhealthy (responded with "NOT_SERVING")'
        return f"timeout: health rpc did not complete within {timeout:g}s"
    return "" if answered else f"command timed out after {timeout:g}s"
