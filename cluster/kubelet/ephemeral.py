"""Ephemeral containers (``kubectl debug``): the kubelet starts each one added to a pod.

Owns the lifecycle of a pod's ``spec.ephemeralContainers`` on its node. The apiserver's
``ephemeralcontainers`` subresource only ever adds to that list, so a pod event whose head
counts more of them than the record knows (``PodHead.ephemeral``) is the one signal to
read the pod in full. Each new one runs by the pod's ``kubemu.io/`` annotations, as every
container of the pod does: it starts ``start-seconds`` after it was seen, and with
``run-seconds`` it exits that long after its start with ``exit-code``; it is never
restarted. Its status (``status.ephemeralContainerStatuses``, rendered by ``pods.py``)
is waiting (ContainerCreating), running, or terminated; one still running when the pod's
containers end is shown killed with them. A pod that already finished, was refused or is
being deleted starts none.

| input                                   | run                | output |
|-----------------------------------------|--------------------|--------|
| a head counting more ephemeral containers | new (each new one) | status; timer start @ t+start-seconds, or started at once |
| timer start                             | running            | status; timer exit @ t+run-seconds (if set) |
| timer exit                              | terminated (exit-code) | status |

Mixed into ``Kubelet``; timers are tokens ``(node, "ephemeral", uid, index)`` in the
host's queue, dropped when they come due for a pod that is gone or finished.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .pods import STOPPING, TERMINAL, EphemeralRun, PodRecord

if TYPE_CHECKING:
    from .kubeletself import KubeletSelf

EPHEMERAL = "ephemeral"


class EphemeralMixin:
    """The ephemeral-container part of ``Kubelet``; see the module docstring."""

    __slots__ = ()

    def _ephemeral_added(self: KubeletSelf, rec: PodRecord, pod: dict, now: float) -> None:
        """The pod lists ephemeral containers the record does not know yet: start them."""
        if rec.state in TERMINAL or rec.state == STOPPING or rec.deleting:
            return
        known = {run.name for run in rec.ephemeral}
        added = []
        for c in (pod.get("spec") or {}).get("ephemeralContainers") or ():
            if isinstance(c, dict) and c.get("name") not in known:
                added.append(EphemeralRun(str(c.get("name", "")), str(c.get("image", ""))))
        if not added:
            return
        first = len(rec.ephemeral)
        rec.ephemeral = (*rec.ephemeral, *added)
        for i in range(first, len(rec.ephemeral)):
            self._ephemeral_next(rec, i, now)
        self._write(rec)

    def _ephemeral_next(self: KubeletSelf, rec: PodRecord, i: int, t: float) -> None:
        """Take run ``i`` as far as it goes at ``t``; a later step gets a timer."""
        run, emu = rec.ephemeral[i], rec.emu
        if run.started is None:
            if emu.start_seconds > 0:
                self._ephemeral_at(rec, i, t + emu.start_seconds)
                return
            run.started = t
        if emu.run_seconds is None or run.finished is not None:
            return
        if emu.run_seconds > 0 and run.started + emu.run_seconds > t:
            self._ephemeral_at(rec, i, run.started + emu.run_seconds)
            return
        run.finished, run.exit_code = run.started + emu.run_seconds, emu.exit_code

    def _ephemeral_at(self: KubeletSelf, rec: PodRecord, i: int, due: float) -> None:
        run = rec.ephemeral[i]
        run.due = due
        run.timer = self._timers.schedule(due, (self.name, EPHEMERAL, rec.uid, i))

    def _on_ephemeral(self: KubeletSelf, rec: PodRecord, i: int) -> None:
        """Run ``i``'s timer came due: its start, or its exit, at the scheduled time."""
        if i >= len(rec.ephemeral):
            return
        run = rec.ephemeral[i]
        run.timer = None
        if rec.state in TERMINAL:
            return  # the pod's containers are gone: it went with them
        if run.started is None:
            run.started = run.due
        self._ephemeral_next(rec, i, run.due)
        self._write(rec)

    def _cancel_ephemeral(self: KubeletSelf, rec: PodRecord) -> None:
        for run in rec.ephemeral:
            self._timers.cancel(run.timer)
            run.timer = None
