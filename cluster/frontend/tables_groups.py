"""Table cells of the networking, registration, admission and node kinds: Ingress,
IngressClass, NetworkPolicy, APIService, the webhook configurations, ValidatingAdmissionPolicy
and its bindings, RuntimeClass, after upstream's printers (printIngress, printIngressClass,
printNetworkPolicy, printMutatingWebhook, printValidatingWebhook,
printValidatingAdmissionPolicy(Binding), printRuntimeClass; the aggregator's APIService
table). ``tables.py`` owns the columns; cells never raise on a sparse object.
"""

from __future__ import annotations

from typing import Any

from ..api.gostrings import label_selector
from .tables_kinds import NONE, _age, _d, _l, _name, _s, _spec, _status, format_selector

LOAD_BALANCER_WIDTH = 16  # the ADDRESS column, cut to this many characters unless -o wide
UNSET = "<unset>"


def _hosts(rules: list[Any]) -> str:
    """formatHosts: the hosts of the rules until three are listed, then ``+ N more...``
    (N counts every rule past three, as upstream); ``*`` for none."""
    hosts: list[str] = []
    more = False
    for rule in rules:
        if len(hosts) == 3:
            more = True
        host = _s(_d(rule).get("host"))
        if not more and host:
            hosts.append(host)
    if not hosts:
        return "*"
    return f"{','.join(hosts)} + {len(rules) - 3} more..." if more else ",".join(hosts)


def _address(status: dict[str, Any]) -> str:
    found = set()
    for ing in _l(_d(status.get("loadBalancer")).get("ingress")):
        value = _s(_d(ing).get("ip")) or _s(_d(ing).get("hostname"))
        if value:
            found.add(value)
    text = ",".join(sorted(found))
    return text[: LOAD_BALANCER_WIDTH - 3] + "..." if len(text) > LOAD_BALANCER_WIDTH else text


def ingress_cells(ing: dict[str, Any], now: float) -> list[Any]:
    spec = _spec(ing)
    klass = spec.get("ingressClassName")
    ports = "80, 443" if _l(spec.get("tls")) else "80"
    return [
        _name(ing),
        klass if isinstance(klass, str) else NONE,
        _hosts(_l(spec.get("rules"))),
        _address(_status(ing)),
        ports,
        _age(ing, now),
    ]


def ingressclass_cells(ic: dict[str, Any], now: float) -> list[Any]:
    spec = _spec(ic)
    params = spec.get("parameters")
    shown = NONE
    if isinstance(params, dict):
        shown = _s(params.get("kind"))
        if isinstance(params.get("apiGroup"), str):
            shown += "." + params["apiGroup"]
        shown += "/" + _s(params.get("name"))
    return [_name(ic), _s(spec.get("controller")), shown, _age(ic, now)]


def networkpolicy_cells(np: dict[str, Any], now: float) -> list[Any]:
    return [_name(np), format_selector(_spec(np).get("podSelector")), _age(np, now)]


def apiservice_cells(svc: dict[str, Any], now: float) -> list[Any]:
    ref = _spec(svc).get("service")
    service = f"{_s(ref.get('namespace'))}/{_s(ref.get('name'))}" if isinstance(ref, dict) else "Local"
    available = "Unknown"
    for c in _l(_status(svc).get("conditions")):
        c = _d(c)
        if c.get("type") == "Available":
            status, reason = _s(c.get("status")), _s(c.get("reason"))
            available = status if status == "True" or not reason else f"{status} ({reason})"
            break
    return [_name(svc), service, available, _age(svc, now)]


def webhooks_cells(config: dict[str, Any], now: float) -> list[Any]:
    return [_name(config), len(_l(config.get("webhooks"))), _age(config, now)]


def admissionpolicy_cells(policy: dict[str, Any], now: float) -> list[Any]:
    spec = _spec(policy)
    kind = spec.get("paramKind")
    param = f"{_s(kind.get('apiVersion'))}/{_s(kind.get('kind'))}" if isinstance(kind, dict) else UNSET
    return [_name(policy), len(_l(spec.get("validations"))), param, _age(policy, now)]


def admissionbinding_cells(binding: dict[str, Any], now: float) -> list[Any]:
    spec = _spec(binding)
    ref = spec.get("paramRef")
    param = UNSET
    if isinstance(ref, dict):
        if _s(ref.get("name")):
            param = f"{_s(ref.get('namespace')) or '*'}/{_s(ref.get('name'))}"
        elif isinstance(ref.get("selector"), dict):
            param = label_selector(ref["selector"])
    return [_name(binding), _s(spec.get("policyName")), param, _age(binding, now)]


def runtimeclass_cells(rc: dict[str, Any], now: float) -> list[Any]:
    return [_name(rc), _s(rc.get("handler")), _age(rc, now)]
