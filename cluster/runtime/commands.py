"""Chaos commands aimed at one emulated node: what a runtime hands the node host running it.

Owns the typed commands (each names its ``node``, so a runtime routes it to the host
holding that node without knowing what it means). The scenario driver builds them from the
timeline's chaos steps; the node host component (``cluster/kubelet/component.py``) carries
them out. Killing or restarting whole processes is the runtime's own business and is not a
command.
"""

from __future__ import annotations

from typing import NamedTuple

from ..api.kubeletcalls import ContainerExec, ContainerGet, ContainerLogs


class KillNode(NamedTuple):
    """The node's kubelet stops: no heartbeats, no status, its pods frozen."""

    node: str


class Partition(NamedTuple):
    """The node's heartbeats stop reaching the apiserver for ``duration`` (None: for good)
    while its pods keep running."""

    node: str
    duration: float | None = None


class Pressure(NamedTuple):
    """Node-level usage on top of the pods': memory and disk in bytes, inodes and pids as
    counts; replaces an earlier one; lasts ``duration`` (None: until replaced)."""

    node: str
    usage: dict[str, int]
    duration: float | None = None


class DeviceHealth(NamedTuple):
    """The node's device plugin reports a device (an index or an ID) with a new health."""

    node: str
    resource: str
    device: int | str
    healthy: bool


class DevicePlugin(NamedTuple):
    """The node's device plugin for ``resource`` goes away (``running`` False) or comes back."""

    node: str
    resource: str
    running: bool


# The last three are the apiserver's calls to a kubelet (``cluster/api/kubeletcalls.py``).
Command = KillNode | Partition | Pressure | DeviceHealth | DevicePlugin | ContainerExec | ContainerGet | ContainerLogs
