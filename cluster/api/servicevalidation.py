"""Create-time rules of a Service's spec and a ResourceQuota's hard limits, in upstream's words.

Owns upstream's ValidateService share kubemu models (the type, each port's name, number,
protocol and target port, duplicate names and ports) and ValidateResourceQuota's check of
``spec.hard``. ``validation`` attaches ``check_service`` and ``check_resource_quota`` to
their kinds; all of an object's errors are reported together (``[e1, e2]``), as upstream
does. Validation runs before defaulting, so absent fields are judged as they will default.
"""

from __future__ import annotations

from typing import Any

from .containervalidation import PROTOCOLS, check_port_or_name
from .quantity import QuantityError
from .quantity import parse as parse_quantity
from .validationfields import Errors, ValidationError, _at, _items, _map, check_name, shown, unsupported

SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")  # sorted, as upstream lists them


def check_service(obj: dict[str, Any], path: str) -> None:
    spec, spath = _map(obj, "spec", path), _at(path, "spec")
    kind = spec.get("type") or "ClusterIP"
    errors = Errors()
    ports = list(_items(spec, "ports", spath))
    if not ports and spec.get("clusterIP") != "None" and kind != "ExternalName":
        errors.add(_at(spath, "ports"), "Required value")
    names: set[str] = set()
    for ppath, port in ports:
        _check_port(port, ppath, len(ports) > 1, names, errors)
    if kind not in SERVICE_TYPES:
        errors.found.append(unsupported(_at(spath, "type"), kind, SERVICE_TYPES))
    seen: set[tuple[Any, Any]] = set()
    for ppath, port in ports:
        key = (port.get("protocol") or "TCP", port.get("port"))
        if key in seen:
            shown_key = f"core.ServicePort{{Protocol:{shown(key[0])}, Port:{key[1]}}}"
            errors.add(ppath, f"Duplicate value: {shown_key}")
        seen.add(key)
    errors.raise_any()


def _check_port(port: dict[str, Any], ppath: str, need_name: bool, names: set[str], errors: Errors) -> None:
    name, npath = port.get("name"), _at(ppath, "name")
    if need_name and not name:
        errors.add(npath, "Required value")
    elif name:
        with errors.each():
            check_name(name, npath, label=True)
        if name in names:
            errors.add(npath, f"Duplicate value: {shown(name)}")
        names.add(name)
    number = port.get("port")
    check_port_or_name(number if number is not None else 0, _at(ppath, "port"), errors)
    protocol = port.get("protocol") or "TCP"
    if protocol not in PROTOCOLS:
        errors.found.append(unsupported(_at(ppath, "protocol"), protocol, PROTOCOLS))
    target = port.get("targetPort")
    if target is None or target in (0, ""):
        target = number  # the default: the port itself, judged again as upstream does
    if target is not None and not (isinstance(target, str) and number is None):
        check_port_or_name(target, _at(ppath, "targetPort"), errors)


def check_resource_quota(obj: dict[str, Any], path: str) -> None:
    """Every hard limit a quantity of at least 0 (upstream's ValidateResourceQuantityValue)."""
    spec, spath = _map(obj, "spec", path), _at(path, "spec")
    hpath = _at(spath, "hard")
    errors = Errors()
    for name, raw in _map(spec, "hard", spath).items():
        at = f"{hpath}[{name}]"
        try:
            amount = parse_quantity(raw)
        except (QuantityError, TypeError):
            errors.found.append(ValidationError(at, raw, "is not a quantity"))
            continue
        if amount < 0:
            errors.found.append(ValidationError(at, str(raw), "must be greater than or equal to 0"))
    errors.raise_any()
