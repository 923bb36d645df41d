"""Create-time rules of Endpoints, Ingresses and NetworkPolicies, in upstream's words.

Owns the share of upstream's ValidateEndpoints (each subset has addresses; every address
a usable IP: not unspecified, loopback or link-local; hostnames and node names as names;
ports named when several, in range, with a supported protocol), ValidateIngressCreate
(rules or a default backend; hosts as DNS names, wildcards only as ``*.``; each path's type
and its absolute, clean form; a backend names a service by a DNS-1035 name and one port,
or a resource; TLS hosts and secret names; the class annotation agreeing with
``ingressClassName``) and ValidateNetworkPolicy (selectors, ports and end ports, one kind
of peer, CIDR blocks whose exceptions are strict subsets, the policy types). ``validation``
attaches the three checks to their kinds; all of an object's errors are reported together,
as upstream does. Validation runs before defaulting: an absent protocol is judged as TCP
and an absent path type as ImplementationSpecific, the defaults they get.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from .containervalidation import PROTOCOLS, port_name_problems
from .validationfields import (
    Errors,
    Shown,
    ValidationError,
    _at,
    _is_int,
    _items,
    _map,
    check_name,
    compile_selector,
    unsupported,
)

_IP_RULE = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
_PORT_RANGE = "must be between 1 and 65535, inclusive"
_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS1035_RULE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
_WILDCARD = re.compile(r"\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
WILDCARD_RULE = (
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must "
    "consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character "
    "(e.g. '*.example.com', regex used for validation is "
    "'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")  # sorted, as upstream lists them
_BAD_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_BAD_SUFFIXES = ("/..", "/.")
POLICY_TYPES = ("Ingress", "Egress")
CLASS_ANNOTATION = "kubernetes.io/ingress.class"


def parse_ip(text: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An IP as Go's ParseIPSloppy reads it (IPv4 octets may carry leading zeros); else None."""
    if not isinstance(text, str):
        return None
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        parts = text.split(".")
        if len(parts) == 4 and all(p.isdigit() and len(p) <= 3 for p in parts):
            try:
                return ipaddress.ip_address(".".join(str(int(p)) for p in parts))
            except ValueError:
                return None
        return None


# ---- Endpoints -------------------------------------------------------------------------


def check_endpoints(obj: dict[str, Any], path: str) -> None:
    errors = Errors()
    for spath, subset in _items(obj, "subsets", path):
        if not subset.get("addresses") and not subset.get("notReadyAddresses"):
            errors.add(spath, "Required value: must specify `addresses` or `notReadyAddresses`")
        for field in ("addresses", "notReadyAddresses"):
            for apath, address in _items(subset, field, spath):
                _address(address, apath, errors)
        ports = list(_items(subset, "ports", spath))
        for ppath, port in ports:
            _endpoint_port(port, ppath, len(ports) > 1, errors)
    errors.raise_any()


def _address(address: dict[str, Any], apath: str, errors: Errors) -> None:
    ip, ipath = address.get("ip", ""), _at(apath, "ip")
    parsed = parse_ip(ip)
    if parsed is None:
        errors.found.append(ValidationError(ipath, ip, _IP_RULE))
        errors.found.append(ValidationError(ipath, ip, "must be a valid IP address"))
    else:
        _special_ip(parsed, ip, ipath, errors)
    if address.get("hostname"):
        with errors.each():
            check_name(address["hostname"], _at(apath, "hostname"), label=True)
    if address.get("nodeName") is not None:
        with errors.each():
            check_name(address["nodeName"], _at(apath, "nodeName"), label=False)


def _special_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, text: str, at: str, errors: Errors) -> None:
    """upstream's ValidateNonSpecialIP: addresses no endpoint may have."""
    if ip.is_unspecified:
        errors.found.append(ValidationError(at, text, f"may not be unspecified ({text})"))
    if ip.is_loopback:
        errors.found.append(ValidationError(at, text, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
    if ip.is_link_local:
        errors.found.append(ValidationError(at, text, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
    if ip in ipaddress.ip_network("224.0.0.0/24") or ip in ipaddress.ip_network("ff02::/16"):
        errors.found.append(
            ValidationError(at, text, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")
        )


def _endpoint_port(port: dict[str, Any], ppath: str, need_name: bool, errors: Errors) -> None:
    name = port.get("name")
    if need_name and not name:
        errors.add(_at(ppath, "name"), "Required value")
    elif name:
        with errors.each():
            check_name(name, _at(ppath, "name"), label=True)
    number = port.get("port", 0)
    if not _is_int(number) or not 1 <= number <= 65535:
        errors.found.append(ValidationError(_at(ppath, "port"), number, _PORT_RANGE))
    protocol = port.get("protocol") or "TCP"
    if protocol not in PROTOCOLS:
        errors.found.append(unsupported(_at(ppath, "protocol"), protocol, PROTOCOLS))


# ---- Ingress ---------------------------------------------------------------------------


def check_ingress(obj: dict[str, Any], path: str) -> None:
    spec, spath = _map(obj, "spec", path), _at(path, "spec")
    errors = Errors()
    rules = spec.get("rules") or []
    if not rules and spec.get("defaultBackend") is None:
        given = "[]networking.IngressRule{}" if isinstance(spec.get("rules"), list) else "[]networking.IngressRule(nil)"
        errors.found.append(
            ValidationError(spath, Shown(given), "either `defaultBackend` or `rules` must be specified")
        )
    if isinstance(spec.get("defaultBackend"), dict):
        _backend(spec["defaultBackend"], _at(spath, "defaultBackend"), errors)
    for rpath, rule in _items(spec, "rules", spath):
        _rule(rule, rpath, errors)
    for tpath, tls in _items(spec, "tls", spath):
        for i, host in enumerate(tls.get("hosts") or []):
            _host(host, _at(tpath, f"hosts[{i}]"), errors)
        if tls.get("secretName"):
            with errors.each():
                check_name(tls["secretName"], _at(tpath, "secretName"), label=False)
    name = spec.get("ingressClassName")
    if name is not None:
        with errors.each():
            check_name(name, _at(spath, "ingressClassName"), label=False)
    annotation = ((obj.get("metadata") or {}).get("annotations") or {}).get(CLASS_ANNOTATION)
    if annotation is not None and name is not None and annotation != name:
        at = _at("annotations", CLASS_ANNOTATION)
        errors.found.append(ValidationError(at, annotation, "must match `ingressClassName` when both are specified"))
    errors.raise_any()


def _host(host: Any, at: str, errors: Errors) -> None:
    if not isinstance(host, str):
        errors.found.append(ValidationError(at, host, "must be a string"))
    elif "*" in host:
        if len(host) > 253:
            errors.found.append(ValidationError(at, host, "must be no more than 253 characters"))
        if not _WILDCARD.fullmatch(host):
            errors.found.append(ValidationError(at, host, WILDCARD_RULE))
    else:
        with errors.each():
            check_name(host, at, label=False)


def _rule(rule: dict[str, Any], rpath: str, errors: Errors) -> None:
    host = rule.get("host")
    if host:
        if parse_ip(host) is not None:
            errors.found.append(ValidationError(_at(rpath, "host"), host, "must be a DNS name, not an IP address"))
        _host(host, _at(rpath, "host"), errors)
    http = rule.get("http")
    if not isinstance(http, dict):
        return
    hpath = _at(rpath, "http")
    if not http.get("paths"):
        errors.add(_at(hpath, "paths"), "Required value")
    for ppath, entry in _items(http, "paths", hpath):
        _path(entry, ppath, errors)


def _path(entry: dict[str, Any], ppath: str, errors: Errors) -> None:
    kind, text, at = entry.get("pathType") or "ImplementationSpecific", entry.get("path") or "", _at(ppath, "path")
    if kind in ("Exact", "Prefix"):
        if not text.startswith("/"):
            errors.found.append(ValidationError(at, text, "must be an absolute path"))
        for bad in _BAD_SEQUENCES:
            if bad in text:
                errors.found.append(ValidationError(at, text, f"must not contain '{bad}'"))
        for bad in _BAD_SUFFIXES:
            if text.endswith(bad):
                errors.found.append(ValidationError(at, text, f"cannot end with '{bad}'"))
    elif kind == "ImplementationSpecific":
        if text and not text.startswith("/"):
            errors.found.append(ValidationError(at, text, "must be an absolute path"))
    else:
        errors.found.append(unsupported(_at(ppath, "pathType"), kind, PATH_TYPES))
    _backend(_map(entry, "backend", ppath), _at(ppath, "backend"), errors)


def _backend(backend: dict[str, Any], bpath: str, errors: Errors) -> None:
    service, resource = backend.get("service"), backend.get("resource")
    if service is not None and resource is not None:
        errors.found.append(ValidationError(bpath, "", "cannot set both resource and service backends"))
    elif isinstance(resource, dict):
        for field in ("kind", "name"):
            if not resource.get(field):
                errors.add(_at(_at(bpath, "resource"), field), "Required value")
    elif isinstance(service, dict):
        _service_backend(service, bpath, errors)
    else:
        errors.found.append(ValidationError(bpath, "", "resource or service backend is required"))


def _service_backend(service: dict[str, Any], bpath: str, errors: Errors) -> None:
    name, npath = service.get("name") or "", _at(bpath, "service.name")
    if not name:
        errors.add(npath, "Required value")
    elif not (len(name) <= 63 and _DNS1035.fullmatch(name)):
        errors.found.append(ValidationError(npath, name, DNS1035_RULE))
    port = service.get("port") or {}
    port_name, number = port.get("name") or "", port.get("number") or 0
    if port_name and number:
        errors.found.append(ValidationError(bpath, "", "cannot set both port name & port number"))
    elif port_name:
        at = _at(bpath, "service.port.name")
        errors.found.extend(ValidationError(at, port_name, p) for p in port_name_problems(port_name))
    elif number:
        if not _is_int(number) or not 1 <= number <= 65535:
            errors.found.append(ValidationError(_at(bpath, "service.port.number"), number, _PORT_RANGE))
    else:
        errors.add(bpath, "Required value: port name or number is required")


# ---- NetworkPolicy ---------------------------------------------------------------------


def check_network_policy(obj: dict[str, Any], path: str) -> None:
    spec, spath = _map(obj, "spec", path), _at(path, "spec")
    errors = Errors()
    with errors.each():
        compile_selector(spec.get("podSelector") or {}, _at(spath, "podSelector"))
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for rpath, rule in _items(spec, direction, spath):
            for ppath, port in _items(rule, "ports", rpath):
                _policy_port(port, ppath, errors)
            for ppath, peer in _items(rule, peers, rpath):
                _peer(peer, ppath, errors)
    types, tpath = spec.get("policyTypes") or [], _at(spath, "policyTypes")
    if len(types) > len(POLICY_TYPES):
        errors.found.append(ValidationError(tpath, types, "may not specify more than two policyTypes"))
    else:
        for i, kind in enumerate(types):
            if kind not in POLICY_TYPES:
                errors.found.append(unsupported(f"{tpath}[{i}]", kind, POLICY_TYPES))
    errors.raise_any()


def _policy_port(port: dict[str, Any], ppath: str, errors: Errors) -> None:
    protocol = port.get("protocol")
    if protocol is not None and protocol not in ("TCP", "UDP", "SCTP"):
        errors.found.append(unsupported(_at(ppath, "protocol"), protocol, ("TCP", "UDP", "SCTP")))
    number, end = port.get("port"), port.get("endPort")
    if number is None:
        if end is not None:
            errors.found.append(
                ValidationError(_at(ppath, "endPort"), end, "may not be specified when `port` is not specified")
            )
    elif _is_int(number):
        if not 1 <= number <= 65535:
            errors.found.append(ValidationError(_at(ppath, "port"), number, _PORT_RANGE))
        if end is not None:
            if _is_int(end) and end < number:
                errors.found.append(
                    ValidationError(_at(ppath, "endPort"), number, "must be greater than or equal to `port`")
                )
            if not _is_int(end) or not 1 <= end <= 65535:
                errors.found.append(ValidationError(_at(ppath, "endPort"), end, _PORT_RANGE))
    else:
        if end is not None:
            errors.found.append(
                ValidationError(_at(ppath, "endPort"), end, "may not be specified when `port` is non-numeric")
            )
        errors.found.extend(ValidationError(_at(ppath, "port"), number, p) for p in port_name_problems(str(number)))


def _peer(peer: dict[str, Any], ppath: str, errors: Errors) -> None:
    given = [f for f in ("podSelector", "namespaceSelector", "ipBlock") if peer.get(f) is not None]
    for field in given:
        if field != "ipBlock":
            with errors.each():
                compile_selector(peer[field], _at(ppath, field))
    if "ipBlock" in given:
        _ip_block(_map(peer, "ipBlock", ppath), _at(ppath, "ipBlock"), errors)
    if not given:
        errors.add(ppath, "Required value: must specify a peer")
    elif len(given) > 1 and "ipBlock" in given:
        errors.add(ppath, "Forbidden: may not specify both ipBlock and another peer")


def _ip_block(block: dict[str, Any], bpath: str, errors: Errors) -> None:
    cidr = block.get("cidr") or ""
    if not cidr:
        errors.add(_at(bpath, "cidr"), "Required value")
        return
    network = _network(cidr)
    if network is None:
        errors.found.append(ValidationError(_at(bpath, "cidr"), cidr, "not a valid CIDR"))
        return
    for i, text in enumerate(block.get("except") or []):
        at, inner = f"{_at(bpath, 'except')}[{i}]", _network(text)
        if inner is None:
            errors.found.append(ValidationError(at, text, "not a valid CIDR"))
            return
        if inner.version != network.version or not inner.subnet_of(network) or inner.prefixlen <= network.prefixlen:  # type: ignore[arg-type]
            errors.found.append(ValidationError(at, text, "must be a strict subset of `cidr`"))


def _network(text: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    if not isinstance(text, str) or "/" not in text:
        return None
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        return None


__all__ = ["check_endpoints", "check_ingress", "check_network_policy", "parse_ip"]
