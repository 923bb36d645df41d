"""What the apiserver asks a node's kubelet about one of its containers: an exec and an
HTTP GET (the pod proxy).

Owns the two typed calls. Upstream's apiserver dials the kubelet of the pod's node for
``exec`` and reaches the pod's IP for ``proxy``; kubemu's front end hands these to the
cluster as commands aimed at the node (``Cluster.command``), so they reach the node host
running that kubelet on either runtime, and the answer comes back as the command's
result: an ``emulatedshell.ExecResult`` or a ``containerfiles.HTTPAnswer`` (None when
nothing known listens on the port). Built by ``cluster/frontend/connect.py``; answered by
``cluster/kubelet/containerfiles.py``.
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
