"""What a pod's spec asks of one node, as the scheduler's filters and the kubelet's
GeneralPredicates both check it: host ports and the node name.

Owns the reading of a pod's host ports (``host_ports``), upstream's host-port conflict rule
(``ports_conflict``) and the two predicates' reason strings. Shared by the scheduler's
NodePorts and NodeName plugins, its pre-check and cache, and the kubelet's admission, so
the two sides cannot disagree about a pod.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

ERR_REASON_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"
ERR_REASON_NODE_NAME = "node(s) didn't match the requested node name"
DEFAULT_HOST_IP = "0.0.0.0"

HostPort = tuple[str, str, int]  # (hostIP, protocol, hostPort)


def host_ports(pod: dict[str, Any]) -> tuple[HostPort, ...]:
    """(hostIP, protocol, hostPort) for every container port with hostPort > 0, init
    containers included; an empty hostIP reads as 0.0.0.0 and an empty protocol as TCP."""
    spec = pod.get("spec") or {}
    out = []
    for group in ("initContainers", "containers"):
        for c in spec.get(group) or ():
            for p in c.get("ports") or ():
                port = p.get("hostPort") or 0
                if port > 0:
                    out.append((p.get("hostIP") or DEFAULT_HOST_IP, p.get("protocol") or "TCP", int(port)))
    return tuple(out)


def ports_conflict(wanted: tuple[HostPort, ...], used: Collection[HostPort]) -> bool:
    """Would any of ``wanted`` collide with ``used`` (one node's ports in use)? Upstream's
    ``HostPortInfo.CheckConflict``: 0.0.0.0 on either side collides with every IP of the
    same protocol and port."""
    for ip, protocol, port in wanted:
        if ip == DEFAULT_HOST_IP:
            # Binding every address collides with any address holding this protocol/port.
            for _, used_protocol, used_port in used:
                if used_port == port and used_protocol == protocol:
                    return True
        elif (ip, protocol, port) in used or (DEFAULT_HOST_IP, protocol, port) in used:
            return True
    return False
