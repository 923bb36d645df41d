"""What the apiserver asks a node's kubelet about one of its containers: an exec, an
HTTP GET (the pod proxy) and a run's log.

Owns the three typed calls. Upstream's apiserver dials the kubelet of the pod's node for
``exec`` and reaches the pod's IP for ``proxy``; kubemu's front end hands these to the
cluster as commands aimed at the node (``Cluster.command``), so they reach the node host
running that kubelet on either runtime, and the answer comes back as the command's
result: an ``emulatedshell.ExecResult``, a ``containerfiles.HTTPAnswer`` (None when
nothing known listens on the port) or a log's text (None when the kubelet has no output
of that run). Built by ``cluster/frontend/connect.py`` and ``podlog.py``; answered by
``cluster/kubelet/containerfiles.py`` and ``commandrun.py``.
"""

from __future__ import annotations

from typing import NamedTuple


class ContainerExec(NamedTuple):
    """Run ``argv`` in the container; ``env`` is its environment (from the pod's spec)."""

    node: str
    namespace: str
    pod: str
    uid: str
    container: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()


class ContainerGet(NamedTuple):
    """``GET path`` on ``port`` of the container (run with ``args``), as the pod proxy asks."""

    node: str
    namespace: str
    pod: str
    uid: str
    container: str
    port: str
    path: str
    args: tuple[str, ...] = ()
    hostname: str = ""


class ContainerLogs(NamedTuple):
    """What the container's run that started at ``started`` (emulated seconds) printed."""

    node: str
    namespace: str
    pod: str
    uid: str
    container: str
    started: float


KubeletCall = ContainerExec | ContainerGet | ContainerLogs
