"""The files inside a kubelet's emulated containers, and the calls that read and change them.

Owns ``ContainerFiles``, one per ``Kubelet`` (its ``files``): a ``FileTable``
(``cluster/api/containerfiles.py``) per container run, made from the image's data table
the first time something looks at it and made afresh when the container restarts (a new
container starts from its image, as upstream's does). Kept in the kubelet because the
kubelet owns the containers: the apiserver's calls (``cluster/api/kubeletcalls.py``) reach
it as commands aimed at the node (``component.py``), so ``kubectl exec`` and the pod proxy
work the same on both runtimes, and the container's httpGet probes (``probes.py``) read
the same files. A kubelet restart starts with fresh tables (kubemu keeps no container
state across one). Entries of pods the kubelet no longer runs are dropped whenever a new
table is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..api.containerfiles import FileTable, HTTPAnswer, http_get, seed, serves
from ..api.emulatedshell import NOT_RUNNING, ExecResult, run
from ..api.kubeletcalls import ContainerExec, ContainerGet
from .pods import RUNNING, PodRecord

if TYPE_CHECKING:
    from .kubeletself import KubeletSelf

STOPPED = "OCI runtime exec failed: exec failed: cannot exec in a stopped container: unknown\n"


class ContainerFiles:
    __slots__ = ("_tables",)

    def __init__(self) -> None:
        self._tables: dict[tuple[str, str], tuple[int, FileTable]] = {}  # (uid, container) -> (run, files)

    def table(self, rec: PodRecord, container: str, image: str, live: set[str] | dict) -> FileTable:
        """The files of ``container``'s current run (``live``: the uids the kubelet runs)."""
        key = (rec.uid, container)
        got = self._tables.get(key)
        if got is not None and got[0] == rec.runs:
            return got[1]
        for stale in [k for k in self._tables if k[0] not in live]:
            del self._tables[stale]
        files = seed(image, rec.name, rec.pod_ip or "")
        self._tables[key] = (rec.runs, files)
        return files

    def __len__(self) -> int:
        return len(self._tables)


def image_of(rec: PodRecord, container: str) -> str | None:
    """The image of the pod's running container ``container`` (a sidecar counts); None for
    one that is not running (a completed init container, or no such container)."""
    for name, image in rec.containers:
        if name == container:
            return str(image)
    for name, image, sidecar in rec.init:
        if name == container and sidecar:
            return str(image)
    return None


def container_exec(k: KubeletSelf, rec: PodRecord | None, call: ContainerExec, now: float) -> ExecResult:
    """Run ``call.argv`` in the container: exit 126 unless it is running."""
    image = None if rec is None or rec.state != RUNNING else image_of(rec, call.container)
    if rec is None or image is None:
        return ExecResult("", STOPPED, NOT_RUNNING)
    files = k.files.table(rec, call.container, image, k._pods)
    return run(call.argv, files, dict(call.env), now)


def container_get(k: KubeletSelf, rec: PodRecord | None, call: ContainerGet) -> HTTPAnswer | None:
    """What the running container answers to ``GET call.path`` on ``call.port``; None when
    nothing known listens there (or the container does not run)."""
    image = None if rec is None or rec.state != RUNNING else image_of(rec, call.container)
    if rec is None or image is None:
        return None
    files = k.files.table(rec, call.container, image, k._pods)
    return http_get(image, call.args, files, call.hostname or rec.name, call.port, call.path)


def probe_get(k: KubeletSelf, rec: PodRecord, container: str, port: str, path: str) -> HTTPAnswer | None:
    """What an httpGet probe of the container gets, for the images the table knows as
    static servers; None for every other (its declared outcome answers)."""
    image = image_of(rec, container)
    if image is None or not serves(image, (), port):
        return None  # (agnhost's answer needs its arguments, which the kubelet does not keep)
    files = k.files.table(rec, container, image, k._pods)
    return http_get(image, (), files, rec.name, port, path)
