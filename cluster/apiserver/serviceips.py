"""Service ClusterIPs and NodePorts: the apiserver's two allocators.

Owns the service CIDR (``--service-cluster-ip-range``, 10.96.0.0/12 by default) and the
NodePort range (30000-32767), what a Service gets from them at create and update
(``clusterIP``/``clusterIPs``, ``ports[].nodePort``, ``healthCheckNodePort``), and the
refusals upstream gives for a taken or out-of-range value (422 Invalid naming the field
and value) or a full range (500). The apiserver (``apiserver.py``) calls ``assign`` for
every Service it creates or updates, right before storing it, and ``committed`` after.

Nothing is kept that the stored Services do not say: the allocator's tables are rebuilt
from them whenever a write the allocator did not make changed a Service (a delete, a
namespace emptied, a recovered store after a restart), so an address or port is free again
once its Service is gone, and a restarted apiserver knows every address in use.

Where upstream draws a free value at random, kubemu takes the lowest free one of the
dynamic band (above upstream's static offset), then the lowest of the static band: the
same rule upstream's split follows, made deterministic.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from ..api.errors import Cause, InternalError, Invalid

DEFAULT_SERVICE_CIDR = "10.96.0.0/12"
DEFAULT_NODE_PORTS = (30000, 32767)
IPV6_MAX_ADDRESSES = 65536  # upstream caps an IPv6 range's bitmap
Owner = tuple[str, str]  # (namespace, name) of the Service holding a value


def ip_offset(cidr_size: int) -> int:
    """The static band of an IP range: min(max(16, size/16), 256), 0 for 16 or fewer."""
    if cidr_size <= 16:
        return 0
    return min(max(16, cidr_size // 16), 256)


def port_offset(size: int) -> int:
    """The static band of the NodePort range: min(max(16, size/32), 128), 0 for 16 or fewer."""
    if size <= 16:
        return 0
    return min(max(16, size // 32), 128)


class Band:
    """``size`` values from ``base`` with the static band ``[0, offset)``; lowest free first
    in the dynamic band, then in the static one."""

    def __init__(self, base: int, size: int, offset: int) -> None:
        self.base, self.size, self.offset = base, max(0, size), offset

    def contains(self, value: int) -> bool:
        return 0 <= value - self.base < self.size

    def next_free(self, taken: dict[int, Owner]) -> int | None:
        for lo, hi in ((self.offset, self.size), (0, self.offset)):
            for i in range(lo, hi):
                if self.base + i not in taken:
                    return self.base + i
        return None


MAX_CIDR_BITS = 20  # upstream refuses a service range of more than 2^20 addresses


def parse_cidr(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """The network ``text`` names (host bits masked off, as Go's ParseCIDR does), at most
    2^20 addresses as upstream's flag check wants; ValueError with a one-line reason."""
    if "/" not in text:
        raise ValueError(f"{text!r} is not a CIDR (no /prefix length)")
    try:
        net = ipaddress.ip_network(text, strict=False)
    except ValueError as e:
        raise ValueError(f"{text!r} is not a CIDR ({e})") from None
    if net.max_prefixlen - net.prefixlen > MAX_CIDR_BITS:
        bits = net.max_prefixlen
        raise ValueError(f"{text!r} is too large; for {bits}-bit addresses, the mask must be >= {bits - MAX_CIDR_BITS}")
    return net


class ServiceIPs:
    """The ClusterIP and NodePort tables of one apiserver (see the module)."""

    def __init__(self, cidr: str = DEFAULT_SERVICE_CIDR, node_ports: tuple[int, int] = DEFAULT_NODE_PORTS) -> None:
        self.configure(cidr, node_ports)

    def configure(self, cidr: str, node_ports: tuple[int, int] = DEFAULT_NODE_PORTS) -> None:
        net = parse_cidr(cidr)
        size = net.num_addresses
        usable = min(size, IPV6_MAX_ADDRESSES) - 1 if net.version == 6 else size - 2
        self.cidr = str(net)
        self.family = "IPv6" if net.version == 6 else "IPv4"
        self.ips = Band(int(net.network_address) + 1, usable, ip_offset(size))
        lo, hi = node_ports
        self.port_range = f"{lo}-{hi}"
        self.ports = Band(lo, hi - lo + 1, port_offset(hi - lo + 1))
        self._ips: dict[int, Owner] = {}
        self._ports: dict[int, Owner] = {}
        self._rev = -1  # the Service revision the tables match; -1: rebuild before use
        self._before = -1

    def first_ip(self) -> str:
        """The first address of the range: the ``kubernetes`` Service's."""
        return str(ipaddress.ip_address(self.ips.base))

    # -- keeping the tables true to the store ------------------------------------------------
    def _sync(self, store: Any) -> None:
        rev = store.kind_revision("Service")
        self._before = rev
        if rev == self._rev:
            return
        self._ips, self._ports = {}, {}
        for svc in store.peek_all("Service"):
            m, spec = svc.get("metadata") or {}, svc.get("spec") or {}
            owner = (m.get("namespace", ""), m.get("name", ""))
            for ip in _cluster_ips(spec):
                n = _ip_int(ip)
                if n is not None and self.ips.contains(n):
                    self._ips[n] = owner
            for port in _node_ports(spec):
                self._ports[port] = owner
        self._rev = rev

    def committed(self, store: Any) -> None:
        """The Service ``assign`` saw was stored: the tables match the new revision (a write
        that stored nothing, a dry run's, leaves them to be rebuilt)."""
        rev = store.kind_revision("Service")
        self._rev = rev if rev != self._before else -1

    # -- assigning ---------------------------------------------------------------------------
    def assign(self, svc: dict[str, Any], store: Any, old: dict[str, Any] | None = None) -> None:
        """Give ``svc`` (defaulted; ``old`` its stored version on an update) its ClusterIPs
        and NodePorts, or raise the Invalid or InternalError upstream answers."""
        self._sync(store)
        m, spec = svc.get("metadata") or {}, svc.get("spec")
        if not isinstance(spec, dict):
            return
        owner = (m.get("namespace", ""), m.get("name", ""))
        was = (old or {}).get("spec") or {}
        dry = type(store).__name__ == "DryRunStore"  # upstream's dry run checks range, not use
        self._assign_ip(spec, was, owner, old is not None, dry)
        self._assign_ports(spec, was, owner, dry)

    def _assign_ip(self, spec: dict, was: dict, owner: Owner, updating: bool, dry: bool) -> None:
        svc_type = spec.get("type") or "ClusterIP"
        if svc_type == "ExternalName":
            if updating and _cluster_ips(was) and spec.get("clusterIP") in (None, "", was.get("clusterIP")):
                for field in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
                    spec.pop(field, None)  # upstream drops them when the type becomes ExternalName
            self._release(self._ips, owner)
            return
        if spec.get("ipFamilyPolicy") == "RequireDualStack" and spec.get("clusterIP") != "None":
            raise _invalid(
                "spec.ipFamilyPolicy",
                '"RequireDualStack"',
                "this cluster is not configured for dual-stack services",
            )
        requested = _requested_ip(spec) or (_requested_ip(was) if updating else "")
        if requested == "None":
            spec["clusterIP"], spec["clusterIPs"] = "None", ["None"]
            return
        if updating and _requested_ip(was) and requested != _requested_ip(was):
            raise _invalid("spec.clusterIPs[0]", f'"{requested}"', "may not change once set")
        if requested:
            n = _ip_int(requested)
            if n is None or not self.ips.contains(n):
                raise _invalid(
                    "spec.clusterIPs",
                    f'[]string{{"{requested}"}}',
                    f"failed to allocate IP {requested}: the provided IP ({requested}) is not in the valid "
                    f"range. The range of valid IPs is {self.cidr}",
                )
            holder = self._ips.get(n)
            if holder is not None and holder != owner and not dry:
                raise _invalid(
                    "spec.clusterIPs",
                    f'[]string{{"{requested}"}}',
                    f"failed to allocate IP {requested}: provided IP is already allocated",
                )
        else:
            free = self.ips.next_free(self._ips)
            if free is None:
                raise InternalError("Internal error occurred: failed to allocate a serviceIP: range is full")
            n = free
            requested = str(ipaddress.ip_address(n))
        self._release(self._ips, owner)
        self._ips[n] = owner
        spec["clusterIP"], spec["clusterIPs"] = requested, [requested]

    def _assign_ports(self, spec: dict, was: dict, owner: Owner, dry: bool) -> None:
        ports = [p for p in spec.get("ports") or () if isinstance(p, dict)]
        if not _needs_node_ports(spec):
            if _needs_node_ports(was):  # the type changed: upstream drops the ports it gave
                for p in ports:
                    p.pop("nodePort", None)
                spec.pop("healthCheckNodePort", None)
            self._release(self._ports, owner)
            return
        old_by_port = {
            (p.get("port"), p.get("protocol")): p.get("nodePort")
            for p in was.get("ports") or ()
            if isinstance(p, dict) and p.get("nodePort")
        }
        self._release(self._ports, owner)
        by_number: dict[Any, int] = {}  # ports with one number share a NodePort
        for i, p in enumerate(ports):
            wanted = p.get("nodePort") or old_by_port.get((p.get("port"), p.get("protocol")))
            if wanted:
                self._take_port(int(wanted), f"spec.ports[{i}].nodePort", owner, dry)
            elif p.get("port") in by_number:
                wanted = by_number[p.get("port")]
            else:
                wanted = self._next_port(owner)
            p["nodePort"] = int(wanted)
            by_number.setdefault(p.get("port"), int(wanted))
        if spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local":
            wanted = spec.get("healthCheckNodePort") or was.get("healthCheckNodePort")
            if wanted:
                self._take_port(int(wanted), "spec.healthCheckNodePort", owner, dry)
            else:
                wanted = self._next_port(owner)
            spec["healthCheckNodePort"] = int(wanted)

    def _take_port(self, port: int, field: str, owner: Owner, dry: bool) -> None:
        if not self.ports.contains(port):
            raise _invalid(
                field,
                str(port),
                f"provided port is not in the valid range. The range of valid ports is {self.port_range}",
            )
        holder = self._ports.get(port)
        if holder is not None and holder != owner and not dry:
            raise _invalid(field, str(port), "provided port is already allocated")
        self._ports[port] = owner

    def _next_port(self, owner: Owner) -> int:
        free = self.ports.next_free(self._ports)
        if free is None:
            raise InternalError("Internal error occurred: failed to allocate a nodePort: range is full")
        self._ports[free] = owner
        return free

    @staticmethod
    def _release(table: dict[int, Owner], owner: Owner) -> None:
        for value in [v for v, o in table.items() if o == owner]:
            del table[value]


def _invalid(field: str, value: str, detail: str) -> Invalid:
    """``<field>: Invalid value: <value>: <detail>``, as the front end names the Service."""
    return Invalid(f"{field}: Invalid value: {value}: {detail}", (Cause("FieldValueInvalid", detail, field),))


def _requested_ip(spec: dict) -> str:
    ips = spec.get("clusterIPs")
    first = ips[0] if isinstance(ips, list) and ips else ""
    return str(first or spec.get("clusterIP") or "")


def _cluster_ips(spec: dict) -> list[str]:
    ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    return [str(ip) for ip in ips if ip and ip != "None"]


def _node_ports(spec: dict) -> list[int]:
    out = [p.get("nodePort") for p in spec.get("ports") or () if isinstance(p, dict)]
    out.append(spec.get("healthCheckNodePort"))
    return [int(p) for p in out if isinstance(p, int) and p]


def _needs_node_ports(spec: dict) -> bool:
    svc_type = spec.get("type") or "ClusterIP"
    if svc_type == "NodePort":
        return True
    return svc_type == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is not False


def _ip_int(text: str) -> int | None:
    try:
        return int(ipaddress.ip_address(text))
    except ValueError:
        return None
