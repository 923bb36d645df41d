"""Probes, init containers and lifecycle hooks of the pods that declare them, on the emulated clock.

``ProbeMixin`` is a part of ``Kubelet`` and acts only on pods whose ``PodRecord.life`` is
set (``podlife.life_of``): a pod without probes, hooks or init containers never reaches
it. Each probe is a worker as upstream's prober runs one: its answers are declared by
``kubemu.io/readiness|liveness|startup`` (``cluster/api/probeoutcome.py``), asked at
``startedAt + initialDelaySeconds`` and then every ``periodSeconds``; ``failureThreshold``
failures (``successThreshold`` successes) in a row change its result. Timers are tokens
``(node, "probe", uid, (run, index, phase))``; a token of an earlier run is dropped.

| probe      | result                 | effect |
|------------|------------------------|--------|
| any        | a failed answer        | Warning ``Unhealthy`` "<Kind> probe failed: <output>" |
| any        | no answer (``timeout``) | the failure counts ``timeoutSeconds`` after the probe began |
| startup    | success                | container ``started``; its liveness and readiness probes begin at their next tick |
| startup    | failure                | as a liveness failure, "failed startup probe" |
| liveness   | failure                | ``Killing`` "Container c failed liveness probe, will be restarted"; the containers stop (preStop, then SIGTERM, within the probe's or the pod's grace) and exit 143 (137 when the grace ran out); restartPolicy decides as for any exit (CrashLoopBackOff) |
| readiness  | success / failure      | the container's ``ready``; the pod's ContainersReady and Ready |

An ``httpGet`` probe with no declared outcome, of a static server's image on its port, is
answered by the container's files (``containerfiles.py``: 200 or 404, "HTTP probe failed
with statuscode: 404"); files change only through ``kubectl exec``, so such a probe keeps
ticking in the background. The kubelet also answers the apiserver's calls into its
containers here (``answer_call``: exec and the pod proxy).

Until its startup probe passes a container is not started and its other probes wait;
until its readiness probe passes it is not ready (upstream's initial results). A probe
whose declared answer can no longer change stops ticking once its result matches; one
that keeps failing only for its events (a failed readiness probe) ticks in the
background, so a scenario can still settle. kubemu's containers of one pod share one run:
a liveness kill restarts them together.

Init containers (``_init_step``): after ``start-seconds`` each runs in order for its
``kubemu.io/run-seconds.<name>`` (0 by default: it completes at once) and ends Completed,
exit 0; without that annotation, a command the emulated shell knows decides its time and
exit code (``commandrun.py``). One that exits non-zero fails a ``Never`` pod (Initialized
False naming it) or restarts after the CrashLoopBackOff delay (10 s doubling to 300 s,
its restartCount and lastState kept), the containers after it waiting; a sidecar (``restartPolicy: Always``) starts and keeps running. Once the last has
finished the pod is Initialized and its containers start. ``postStart`` hooks hold the
containers in ContainerCreating for ``kubemu.io/post-start-seconds`` (per container, summed:
upstream starts them one by one); ``preStop`` hooks run for ``kubemu.io/pre-stop-seconds``
before SIGTERM, within the grace period, and leave the containers at least 2 s after
SIGTERM (upstream's minimum).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..api.containerfiles import HTTPAnswer
from ..api.kubeletcalls import ContainerExec, ContainerGet, KubeletCall
from ..api.probeoutcome import ALWAYS_PASS
from .containerfiles import container_exec, container_get, probe_get
from .podlife import LIVENESS_PROBE, READINESS_PROBE, STARTUP_PROBE, Probe, failure_text
from .pods import BACKOFF_INITIAL, BACKOFF_MAX, DEFAULT_GRACE, FAILED, PENDING, RUNNING, START, PodRecord
from .pressure import EXIT_KILLED, EXIT_SIGTERM

if TYPE_CHECKING:
    from .kubeletself import KubeletSelf

PROBE, INIT, KILLED = "probe", "init", "killed"  # timer kinds (the last two are lifecycle steps)
MIN_GRACE_AFTER_PRE_STOP = 2.0  # upstream's minimumGracePeriodInSeconds


def stop_seconds(rec: PodRecord, grace: float) -> tuple[float, bool]:
    """How long stopping the containers takes within ``grace``, and whether they stop on
    their own after SIGTERM (else they are killed when the grace runs out)."""
    stop = rec.emu.stop_seconds
    pre = rec.life.pre_stop if rec.life is not None else 0.0
    if pre <= 0 or grace <= 0:
        return min(stop, grace), stop <= grace
    hook = min(pre, grace)
    left = max(grace - hook, MIN_GRACE_AFTER_PRE_STOP)
    return hook + min(stop, left), stop <= left


class ProbeMixin:
    """The probe, init-container and hook part of ``Kubelet``; see the module docstring."""

    __slots__ = ()

    # ---- the apiserver's calls (kubectl exec, the pod proxy) --------------------------------

    def answer_call(self: KubeletSelf, call: KubeletCall, now: float) -> Any:
        """An exec's ``ExecResult``, a GET's ``HTTPAnswer`` (None: nothing known listens),
        or a log's text (None: no output kept, ``commandrun.py``)."""
        rec = self._pods.get(call.uid)
        if isinstance(call, ContainerExec):
            return container_exec(self, rec, call, now)
        if isinstance(call, ContainerGet):
            return container_get(self, rec, call)
        return self.container_log(call)

    # ---- init containers ----------------------------------------------------------------

    def _init_step(self: KubeletSelf, rec: PodRecord, t: float) -> None:
        """Start the next init container, or finish the running one, at ``t``."""
        life = rec.life
        assert life is not None and rec.state == PENDING  # INIT timers exist only then
        while life.init_next < len(life.init_runs):
            i = life.init_next
            times = life.init_times[i]
            if times[0] is None:
                if rec.create is not None and not self._creatable(rec, [rec.init[i][0]], INIT, t):
                    return  # held: ``createwait.py`` retries it
                times[0] = t
                self._init_command(rec, i, t)
            if not rec.init[i][2]:  # a regular one runs to completion; a sidecar runs on
                started, run = times[0], life.init_runs[i]
                assert started is not None
                if started + run > t:
                    self._write(rec)
                    if not math.isinf(run):
                        self._after(rec, started + run - t, INIT, t)
                    return
                times[1] = started + run
                if life.init_codes[i] != 0:
                    self._init_failed(rec, i, t)
                    return
            life.init_next = i + 1
        life.initialized_at = t
        if life.post_start > 0:
            self._write(rec)
        self._after(rec, life.post_start, START, t)

    def _init_command(self: KubeletSelf, rec: PodRecord, i: int, t: float) -> None:
        """Init container ``i`` starts at ``t``: its known command decides how long it runs
        and its exit code (``commandrun.py``), unless its run-seconds are declared."""
        life, cmds, name = rec.life, rec.cmds, rec.init[i][0]
        assert life is not None
        if cmds is None or name not in cmds.known or life.init_own[i] or rec.init[i][2]:
            return
        self._run_commands(rec, [name], t)
        ran = cmds.runs[name]
        life.init_runs[i], life.init_codes[i] = ran.seconds, ran.code

    def _init_failed(self: KubeletSelf, rec: PodRecord, i: int, t: float) -> None:
        """Init container ``i`` exited non-zero at ``t``: with restartPolicy Never the pod
        fails; else it restarts after the CrashLoopBackOff delay, the rest still waiting."""
        life = rec.life
        assert life is not None
        times = life.init_times[i]
        assert times[0] is not None and times[1] is not None
        if rec.policy == "Never":
            rec.state = FAILED
            self._cancel_timers(rec)
            self._release(rec)
            self._write(rec)
            return
        life.init_last[i] = (life.init_codes[i], times[0], times[1])
        life.init_restarts[i] += 1
        life.init_times[i] = [None, None]
        rec.backoff = BACKOFF_INITIAL if rec.backoff == 0 else min(rec.backoff * 2, BACKOFF_MAX)
        name = rec.init[i][0]
        self._event(
            rec, "BackOff", f"Back-off restarting failed container {name} in pod {rec.format_pod()}", t, "Warning"
        )
        self._write(rec)
        self._after(rec, rec.backoff, INIT, t)

    # ---- probes ---------------------------------------------------------------------

    def _probes_begin(self: KubeletSelf, rec: PodRecord, t: float) -> None:
        """The containers (re)started at ``t``: every probe starts afresh."""
        life = rec.life
        assert life is not None
        for i, p in enumerate(life.probes):
            self._timers.cancel(p.timer)
            p.timer = None
            p.reset()
            if p.kind == STARTUP_PROBE or life.started(p.container):
                self._probe_at(rec, i, t + p.delay)

    def _probes_adopted(self: KubeletSelf, rec: PodRecord, now: float) -> None:
        """A restarted kubelet took the pod over: its init containers are done, and a
        running one is taken as started and ready as it was, probed again from now on."""
        life = rec.life
        if life is None:
            return
        for times in life.init_times:
            times[0] = times[1] = rec.admitted_at
        life.init_next, life.initialized_at = len(life.init_runs), rec.admitted_at
        if rec.state != RUNNING:
            return
        for i, p in enumerate(life.probes):
            p.reset()
            p.result = True
            self._probe_at(rec, i, now)

    def _probes_stop(self: KubeletSelf, rec: PodRecord) -> None:
        if rec.life is None:
            return
        for p in rec.life.probes:
            self._timers.cancel(p.timer)
            p.timer = None

    def _probe_at(
        self: KubeletSelf, rec: PodRecord, i: int, at: float, phase: int = 0, background: bool = False
    ) -> None:
        assert rec.life is not None
        p = rec.life.probes[i]
        self._timers.cancel(p.timer)
        p.due = at
        p.timer = self._timers.schedule(at, (self.name, PROBE, rec.uid, (rec.runs, i, phase)), background)

    def _on_probe(self: KubeletSelf, rec: PodRecord, tag: tuple[int, int, int]) -> None:
        """A probe's timer came due: ask it (phase 0), or count its timeout (phase 1), at
        the scheduled time (a late tick does not shift the trace)."""
        run, i, phase = tag
        life = rec.life
        if life is None or run != rec.runs or rec.state != RUNNING or i >= len(life.probes):
            return
        p = life.probes[i]
        p.timer, t = None, p.due
        if (
            p.held
            or (p.kind == STARTUP_PROBE and p.result)
            or not (p.kind == STARTUP_PROBE or life.started(p.container))
        ):
            return  # killed, started already, or waiting for the startup probe (which resumes it)
        if phase == 1:
            self._probe_answer(rec, i, False, t, t - p.timeout, answered=False)
            return
        assert rec.started_at is not None  # a running container has started
        served = _served(self, rec, p)
        if served is not None:  # a static server's files answer (HTTP: 2xx and 3xx succeed)
            self._probe_answer(rec, i, 200 <= served.code < 400, t, t, code=served.code)
            return
        answer = p.outcome.answer(t - rec.started_at)
        if answer is None:
            self._probe_at(rec, i, t + p.timeout, phase=1)
        else:
            self._probe_answer(rec, i, answer, t, t)

    def _probe_answer(
        self: KubeletSelf,
        rec: PodRecord,
        i: int,
        ok: bool,
        t: float,
        began: float,
        answered: bool = True,
        code: int | None = None,
    ) -> None:
        """``code``: the HTTP status a static server's files gave (None: a declared outcome)."""
        life = rec.life
        assert life is not None and rec.started_at is not None
        p = life.probes[i]
        if not ok:
            text = failure_text(p.handler, rec.pod_ip, answered, p.timeout)
            if code is not None:
                text = f"HTTP probe failed with statuscode: {code}"
            self._event(rec, "Unhealthy", f"{p.kind} probe failed: {text}", t, "Warning")
        p.count = p.count + 1 if p.last == ok else 1
        p.last = ok
        if p.count >= (p.success if ok else p.failure) and p.result != ok:
            was = life.all_ready(rec.app_names())
            p.result = ok
            if not ok and p.kind != READINESS_PROBE:
                self._probe_kill(rec, p, t)
                return
            if ok and p.kind == STARTUP_PROBE:
                self._probes_resume(rec, p.container, t)
            if life.all_ready(rec.app_names()) != was:
                rec.ready_at = t
            self._write(rec)
        if ok and p.kind == STARTUP_PROBE:
            return  # started: upstream's startup worker idles from here
        nxt = max(began + p.period, t)  # a timeout past the period: the ticker's queued tick at once
        if code is not None:  # files change only by an exec: tick on, in the background
            self._probe_at(rec, i, nxt, background=True)
            return
        steady = p.outcome.steady(nxt - rec.started_at)
        if steady is True and p.result is True:
            return  # nothing can change any more, and success makes no events
        self._probe_at(rec, i, nxt, background=steady is not True and steady == p.result)

    def _probes_resume(self: KubeletSelf, rec: PodRecord, container: str, t: float) -> None:
        """The container's startup probe passed: its other probes run from their next tick."""
        life = rec.life
        assert life is not None and rec.started_at is not None
        for i, q in enumerate(life.probes):
            if q.container == container and q.kind != STARTUP_PROBE:
                first = rec.started_at + q.delay
                k = max(0, math.ceil((t - first) / q.period))
                self._probe_at(rec, i, first + k * q.period)

    def _probe_kill(self: KubeletSelf, rec: PodRecord, p: Probe, t: float) -> None:
        """A liveness (or startup) probe failed: kill the containers; they exit once stopped."""
        assert rec.life is not None
        self._probes_stop(rec)
        for q in rec.life.probes:
            q.held = True
        what = "liveness" if p.kind == LIVENESS_PROBE else "startup"
        self._event(rec, "Killing", f"Container {p.container} failed {what} probe, will be restarted", t)
        grace = p.grace if p.grace is not None else (DEFAULT_GRACE if rec.grace is None else rec.grace)
        took, on_its_own = stop_seconds(rec, max(0.0, float(grace)))
        if rec.exit_at is not None and rec.exit_at <= t + took:
            return  # it exits by itself first (its exit timer stands)
        rec.life.kill_code = EXIT_SIGTERM if on_its_own else EXIT_KILLED
        self._after(rec, took, KILLED, t)

    def _killed(self: KubeletSelf, rec: PodRecord, t: float) -> None:
        assert rec.life is not None
        self._exit(rec, t, rec.life.kill_code)


def _served(k: KubeletSelf, rec: PodRecord, p: Probe) -> HTTPAnswer | None:
    """What an httpGet probe gets from a container whose image the table knows as a static
    server, when no annotation declares its outcome; None otherwise."""
    if p.outcome is not ALWAYS_PASS or p.handler[0] != "http":
        return None
    return probe_get(k, rec, p.container, p.handler[2], p.handler[3])
