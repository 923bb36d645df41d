"""Resident memory of a Ray session's processes, grouped by what each process is.

Owns the benches' memory figures (``bench density``): which processes belong to the run
(this driver, every process it started, recursively: Ray's gcs_server, raylet, dashboard,
log monitor and agents, and the worker processes the raylet starts for the actors; plus
the actors' own processes by pid, for a Ray cluster joined through ``RAY_ADDRESS`` whose
system processes are not ours to see), how each is grouped (``KINDS``: the apiserver, the
scheduler, the controller manager, the node hosts summed, the driver, and ``ray`` for
everything else in the session: Ray's system processes and its idle workers), and a
sampler thread that reads every process's RSS (psutil) once a second and keeps the peak of
each group and of the sum. RSS counts a shared page once per process that maps it, so the
sum slightly overstates what the machine gives up; it is what ``ps`` and the OOM killer see.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any

KINDS = ("apiserver", "scheduler", "controller-manager", "hosts", "driver", "ray")
ROLE_KIND = {"apiserver": "apiserver", "scheduler": "scheduler", "controller-manager": "controller-manager"}
SAMPLE_SECONDS = 1.0


def _psutil() -> Any:
    """psutil, which Ray ships (importing ray puts it on ``sys.path``)."""
    import ray  # noqa: F401

    return importlib.import_module("psutil")  # after ray, which puts it on the path


def alive(pid: int) -> bool:
    return bool(_psutil().pid_exists(pid))


def kind_of(role: str | None, is_driver: bool) -> str:
    """The group of one process: its actor role's (any node host: ``hosts``), the driver, or
    ``ray`` (a process of the session that runs no kubemu actor)."""
    if is_driver:
        return "driver"
    if role is None:
        return "ray"
    return ROLE_KIND.get(role, "hosts")


def group(rss: Iterable[tuple[int, int]], roles: Mapping[int, str], driver: int) -> dict[str, int]:
    """RSS bytes summed per kind, every kind present (0 when none ran): ``rss`` is (pid,
    bytes) for each process, ``roles`` the kubemu actor role of each actor process."""
    out = dict.fromkeys(KINDS, 0)
    for pid, size in rss:
        out[kind_of(roles.get(pid), pid == driver)] += size
    return out


class Peaks:
    """The highest value each kind reached, and the highest sum, over the samples given."""

    def __init__(self) -> None:
        self.by_kind = dict.fromkeys(KINDS, 0)
        self.total = 0
        self.samples = 0

    def add(self, sample: Mapping[str, int]) -> None:
        for k, v in sample.items():
            self.by_kind[k] = max(self.by_kind.get(k, 0), v)
        self.total = max(self.total, sum(sample.values()))
        self.samples += 1


def _pid(actor_self) -> int:
    """Run inside an actor (``__ray_call__``): its process id."""
    return os.getpid()


async def actor_pids(actors: Iterable[tuple[str, object]]) -> dict[int, str]:
    """pid -> role of each (role, actor handle)."""
    pairs = list(actors)
    pids = await asyncio.gather(*[a.__ray_call__.remote(_pid) for _, a in pairs])  # type: ignore[attr-defined]
    return {pid: role for (role, _), pid in zip(pairs, pids)}


class Sampler:
    """Samples every process of the session each ``every`` seconds in a thread, keeping the
    peaks; ``set_roles`` tells it which processes are kubemu's actors (call it again when
    the actors change; with none known, readings are not counted in the peaks)."""

    def __init__(self, every: float = SAMPLE_SECONDS):
        self.every = every
        self.driver = os.getpid()
        self.peaks = Peaks()
        self._roles: dict[int, str] = {}
        self._procs: dict[int, Any] = {}  # pid -> psutil.Process
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kubemu-rss", daemon=True)

    def set_roles(self, roles: Mapping[int, str]) -> None:
        with self._lock:
            self._roles = dict(roles)

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def sample(self) -> dict[str, int]:
        """One reading now, per kind; counted in the peaks only while the actors' processes
        are known (between two clusters, new actor processes would count as Ray's)."""
        with self._lock:
            roles = dict(self._roles)
            out = group(self._read(roles), roles, self.driver)
            if roles:
                self.peaks.add(out)
        return out

    def _read(self, roles: Mapping[int, str]) -> list[tuple[int, int]]:
        psutil = _psutil()
        try:
            me = self._procs.get(self.driver) or psutil.Process(self.driver)
            procs = {self.driver: me, **{p.pid: p for p in me.children(recursive=True)}}
        except psutil.Error:
            procs = {}
        for pid in roles:
            if pid not in procs:
                try:
                    procs[pid] = self._procs.get(pid) or psutil.Process(pid)
                except psutil.Error:  # gone, or on another machine of the Ray cluster
                    pass
        # Keep the Process objects (psutil checks a reused pid against the start time).
        self._procs = {pid: self._procs.get(pid, p) for pid, p in procs.items()}
        out = []
        for pid, p in self._procs.items():
            try:
                out.append((pid, p.memory_info().rss))
            except psutil.Error:  # exited between the listing and the reading
                pass
        return out

    async def mean(self, readings: int = 3, every: float = 1.0) -> dict[str, int]:
        """The average of ``readings`` readings ``every`` seconds apart, per kind (a steady
        state's figure, less at the mercy of one reading)."""
        got = []
        for i in range(readings):
            if i:
                await asyncio.sleep(every)
            got.append(self.sample())
        return {k: round(sum(g[k] for g in got) / len(got)) for k in KINDS}
