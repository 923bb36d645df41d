"""Server-side printing of Endpoints and EndpointSlices.

Owns the columns upstream's printers (1.28's ``pkg/printers/internalversion``) give the
two kinds and the cells of one row: Endpoints print ``ip:port`` pairs (every address of a
subset for each of its ports; a subset without ports prints bare addresses; the not-ready
addresses are left out), EndpointSlices their ports (the number, else the name, else
``*``) and addresses; each list stops at three and says ``+ N more...``, and an empty slice
list reads ``<unset>``. As ``tables_volumes.py``: ``(name, type, description, priority)``
tuples and a cell function per kind in ``PRINTERS``, which ``tables.py`` turns into its
printers (NAME first).
"""

from __future__ import annotations

from typing import Any

from .tables_kinds import since

SHOWN = 3  # upstream prints at most three entries of a list, then how many more


def _dicts(v: Any) -> list[dict[str, Any]]:
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []


def _more(items: list[str], count: int, empty: str) -> str:
    text = ",".join(items)
    if count > len(items):
        return f"{text} + {count - len(items)} more..."
    return text or empty


def _host_port(ip: str, port: Any) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"  # Go's net.JoinHostPort


def endpoints_text(subsets: Any) -> str:
    """What upstream's ENDPOINTS column says of an Endpoints' ``subsets``."""
    if not _dicts(subsets):
        return "<none>"
    shown: list[str] = []
    count = 0
    for ss in _dicts(subsets):
        addresses = [str(a.get("ip", "")) for a in _dicts(ss.get("addresses"))]
        ports = _dicts(ss.get("ports"))
        pairs = [addresses] if not ports else [[_host_port(ip, p.get("port", 0)) for ip in addresses] for p in ports]
        for pair in pairs:  # every port counts its addresses, shown or not
            count += len(pair)
            shown.extend(pair[: max(0, SHOWN - len(shown))])
    return _more(shown, count, "")


def slice_ports_text(ports: Any) -> str:
    names = []
    for p in _dicts(ports):
        port, name = p.get("port"), p.get("name")
        names.append(str(port) if port is not None else str(name) if name is not None else "*")
    return _more(names[:SHOWN], len(names), "<unset>")


def slice_endpoints_text(endpoints: Any) -> str:
    addresses = [str(a) for e in _dicts(endpoints) for a in e.get("addresses") or () if isinstance(a, str)]
    return _more(addresses[:SHOWN], len(addresses), "<unset>")


def _age(obj: dict[str, Any], now: float) -> str:
    return since((obj.get("metadata") or {}).get("creationTimestamp"), now)


def endpoints_cells(ep: dict[str, Any], now: float) -> list[Any]:
    return [(ep.get("metadata") or {}).get("name", ""), endpoints_text(ep.get("subsets")), _age(ep, now)]


def endpointslice_cells(sl: dict[str, Any], now: float) -> list[Any]:
    return [
        (sl.get("metadata") or {}).get("name", ""),
        str(sl.get("addressType") or ""),
        slice_ports_text(sl.get("ports")),
        slice_endpoints_text(sl.get("endpoints")),
        _age(sl, now),
    ]


_AGE = ("Age", "string", "Time since the object was created.", 0)
PRINTERS = {
    "Endpoints": (
        (("Endpoints", "string", "The addresses and ports of the endpoints (up to three shown).", 0), _AGE),
        endpoints_cells,
    ),
    "EndpointSlice": (
        (
            ("AddressType", "string", "The type of address the slice carries (IPv4, IPv6, FQDN).", 0),
            ("Ports", "string", "The ports of the slice's endpoints (up to three shown).", 0),
            ("Endpoints", "string", "The addresses of the slice's endpoints (up to three shown).", 0),
            _AGE,
        ),
        endpointslice_cells,
    ),
}
