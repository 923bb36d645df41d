"""The cells of server-side Tables (``kubectl get``), kind by kind, after upstream's
printers (pkg/printers/internalversion): the same cell formats and the same pod STATUS
logic. ``tables.py`` owns the columns of each kind, the registry and the Table itself.

Like the apiserver, a row carries every cell, priority-1 (``-o wide``) ones included;
kubectl drops the columns it does not show. Cells are computed from plain dicts and never
raise on a sparse or malformed object: a missing field prints as upstream prints the zero
value of the field, or as the apiserver's default where the apiserver always sets one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..api.selectors import LabelSelector, SelectorError
from ..clock import parse_timestamp

NONE, UNKNOWN = "<none>", "<unknown>"
NODE_ROLE_PREFIX, NODE_ROLE_LABEL = "node-role.kubernetes.io/", "kubernetes.io/role"
NODE_LOST = "NodeLost"  # status.reason the node lifecycle controller gives pods of a lost node


# ---- formatting helpers ---------------------------------------------------------------------


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``: about two significant units."""
    s = int(seconds)  # truncates toward zero, as Go's int(d.Seconds())
    if s < -1:
        return "<invalid>"  # more than a second in the future: clock skew tolerated no further
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return _two(minutes, "m", s % 60, "s")
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return _two(hours, "h", minutes % 60, "m")
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if days < 8:
        return _two(days, "d", hours % 24, "h")
    if days < 365 * 2:
        return f"{days}d"
    if days < 365 * 8:
        return _two(days // 365, "y", days % 365, "d")
    return f"{days // 365}y"


def _two(major: int, major_unit: str, minor: int, minor_unit: str) -> str:
    return f"{major}{major_unit}" if minor == 0 else f"{major}{major_unit}{minor}{minor_unit}"


def since(timestamp: Any, now: float) -> str:
    """Time since an RFC 3339 timestamp as the AGE column prints it; ``<unknown>`` if none."""
    if not isinstance(timestamp, str) or not timestamp:
        return UNKNOWN
    t = parse_timestamp(timestamp)
    return UNKNOWN if t is None else human_duration(now - t)


def _d(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _i(v: Any, default: int = 0) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def _s(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _present(d: dict[str, Any], key: str) -> dict[str, Any] | None:
    """``d[key]`` when set (Go: a non-nil pointer), even if empty; None when absent or null."""
    v = d.get(key)
    return v if isinstance(v, dict) else None


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return _d(obj.get("metadata"))


def _name(obj: dict[str, Any]) -> str:
    return _s(_meta(obj).get("name"))


def _age(obj: dict[str, Any], now: float) -> str:
    return since(_meta(obj).get("creationTimestamp"), now)


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    return _d(obj.get("spec"))


def _status(obj: dict[str, Any]) -> dict[str, Any]:
    return _d(obj.get("status"))


def format_labels(labels: Any) -> str:
    """labels.FormatLabels: ``k=v`` sorted by key, comma-joined; ``<none>`` when empty."""
    items = sorted(_d(labels).items())
    return ",".join(f"{k}={v}" for k, v in items) or NONE


def selector_string(selector: Any) -> str:
    """A metav1.LabelSelector in its string form (``""`` for an empty or null one)."""
    try:
        return str(LabelSelector.from_dict(selector if isinstance(selector, dict) else None))
    except SelectorError:
        return "<invalid>"


def format_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector: the string form, ``<none>`` when it has no requirements."""
    s = selector_string(selector)
    return "<error>" if s == "<invalid>" else (s or NONE)


def _template_containers(obj: dict[str, Any]) -> list[str]:
    """CONTAINERS and IMAGES of a workload's pod template, comma-joined."""
    containers = [_d(c) for c in _l(_spec(_d(_spec(obj).get("template"))).get("containers"))]
    return [",".join(_s(c.get("name")) for c in containers), ",".join(_s(c.get("image")) for c in containers)]


def _int_or_string(v: Any) -> str:
    return "N/A" if v is None or isinstance(v, bool) else str(v)


# ---- Pod --------------------------------------------------------------------------------------


@dataclass
class _Restarts:
    """Restart count and the latest ``lastState.terminated.finishedAt`` of some containers."""

    count: int = 0
    last: float | None = None

    def add(self, cs: dict[str, Any]) -> None:
        self.count += _i(cs.get("restartCount"))
        finished = _d(_present(_d(cs.get("lastState")), "terminated")).get("finishedAt")
        t = parse_timestamp(finished) if isinstance(finished, str) and finished else None
        if t is not None and (self.last is None or t > self.last):
            self.last = t

    def cell(self, now: float) -> str:
        if self.count != 0 and self.last is not None:
            return f"{self.count} ({human_duration(now - self.last)} ago)"
        return str(self.count)


def _terminated_reason(term: dict[str, Any], prefix: str = "") -> str:
    if _s(term.get("reason")):
        return prefix + term["reason"]
    if _i(term.get("signal")):
        return f"{prefix}Signal:{term['signal']}"
    return f"{prefix}ExitCode:{_i(term.get('exitCode'))}"


def _is_sidecar(container: Any) -> bool:
    return _d(container).get("restartPolicy") == "Always"


@dataclass
class _InitState:
    reason: str | None  # "Init:..." while initializing, else None
    ready: int  # started sidecars that are ready
    all_seen: _Restarts  # every init container up to the one blocking
    sidecars: _Restarts  # restartable init containers only


def _init_state(pod: dict[str, Any]) -> _InitState:
    """Walk the init containers in order as upstream does, stopping at the first unfinished."""
    init_containers = _l(_spec(pod).get("initContainers"))
    specs = {_s(_d(c).get("name")): c for c in init_containers}
    state = _InitState(None, 0, _Restarts(), _Restarts())
    for i, cs in enumerate(_d(c) for c in _l(_status(pod).get("initContainerStatuses"))):
        sidecar = _is_sidecar(specs.get(_s(cs.get("name"))))
        state.all_seen.add(cs)
        if sidecar:
            state.sidecars.add(cs)
        st = _d(cs.get("state"))
        term, wait = _present(st, "terminated"), _present(st, "waiting")
        if term is not None and _i(term.get("exitCode")) == 0:
            continue
        if sidecar and cs.get("started") is True:
            state.ready += 1 if cs.get("ready") is True else 0
            continue
        if term is not None:
            state.reason = _terminated_reason(term, "Init:")
        elif wait is not None and _s(wait.get("reason")) and wait["reason"] != "PodInitializing":
            state.reason = "Init:" + wait["reason"]
        else:
            state.reason = f"Init:{i}/{len(init_containers)}"
        break
    return state


def _condition_true(pod: dict[str, Any], ctype: str) -> bool:
    for c in _l(_status(pod).get("conditions")):
        if _d(c).get("type") == ctype:
            return bool(c.get("status") == "True")
    return False


def _pod_status(pod: dict[str, Any]) -> tuple[str, int, _Restarts]:
    """(STATUS, ready containers, restarts) by upstream's printPod rules."""
    status = _status(pod)
    phase = _s(status.get("phase"))
    reason = _s(status.get("reason")) or phase
    for c in _l(status.get("conditions")):
        if _d(c).get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    init = _init_state(pod)
    reason, ready, restarts = init.reason or reason, init.ready, init.all_seen
    if init.reason is None or _condition_true(pod, "Initialized"):
        restarts = _Restarts(init.sidecars.count, init.sidecars.last)
        has_running = False
        for cs in reversed([_d(c) for c in _l(status.get("containerStatuses"))]):
            restarts.add(cs)
            st = _d(cs.get("state"))
            wait, term = _present(st, "waiting"), _present(st, "terminated")
            if wait is not None and _s(wait.get("reason")):
                reason = wait["reason"]
            elif term is not None:
                reason = _terminated_reason(term)
            elif cs.get("ready") is True and _present(st, "running") is not None:
                has_running, ready = True, ready + 1
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(pod, "Ready") else "NotReady"
    if _meta(pod).get("deletionTimestamp"):
        if status.get("reason") == NODE_LOST:
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"
    return reason, ready, restarts


def _readiness_gates(pod: dict[str, Any]) -> str:
    gates = [_s(_d(g).get("conditionType")) for g in _l(_spec(pod).get("readinessGates"))]
    if not gates:
        return NONE
    first: dict[str, Any] = {}  # upstream reads the first condition of each type
    for c in _l(_status(pod).get("conditions")):
        first.setdefault(_s(_d(c).get("type")), _d(c).get("status"))
    return f"{sum(1 for g in gates if first.get(g) == 'True')}/{len(gates)}"


def pod_cells(pod: dict[str, Any], now: float) -> list[Any]:
    spec, status = _spec(pod), _status(pod)
    reason, ready, restarts = _pod_status(pod)
    total = len(_l(spec.get("containers"))) + sum(1 for c in _l(spec.get("initContainers")) if _is_sidecar(c))
    ips = _l(status.get("podIPs"))
    ip = (_s(_d(ips[0]).get("ip")) if ips else "") or _s(status.get("podIP"))
    return [
        _name(pod),
        f"{ready}/{total}",
        reason,
        restarts.cell(now),
        _age(pod, now),
        ip or NONE,
        _s(spec.get("nodeName")) or NONE,
        _s(status.get("nominatedNodeName")) or NONE,
        _readiness_gates(pod),
    ]


def pod_conditions(pod: dict[str, Any]) -> list[dict[str, Any]]:
    """Upstream marks the row of a finished pod Completed (kubectl once hid such rows)."""
    phase = _s(_status(pod).get("phase"))
    if phase not in ("Succeeded", "Failed"):
        return []
    message = "The pod has completed successfully." if phase == "Succeeded" else "The pod failed."
    return [{"type": "Completed", "status": "True", "reason": phase, "message": message}]


# ---- Node -------------------------------------------------------------------------------------


def _node_status(node: dict[str, Any]) -> str:
    ready = None  # the last Ready condition, as upstream's map of conditions keeps it
    for c in _l(_status(node).get("conditions")):
        ready = _d(c) if _d(c).get("type") == "Ready" else ready
    parts = ["Unknown" if ready is None else "Ready" if ready.get("status") == "True" else "NotReady"]
    if _spec(node).get("unschedulable") is True:
        parts.append("SchedulingDisabled")
    return ",".join(parts)


def _node_roles(node: dict[str, Any]) -> str:
    roles = set()
    for key, value in _d(_meta(node).get("labels")).items():
        if key.startswith(NODE_ROLE_PREFIX) and len(key) > len(NODE_ROLE_PREFIX):
            roles.add(key[len(NODE_ROLE_PREFIX) :])
        elif key == NODE_ROLE_LABEL and value:
            roles.add(str(value))
    return ",".join(sorted(roles)) or NONE


def _node_address(node: dict[str, Any], kind: str) -> str:
    for a in _l(_status(node).get("addresses")):
        if _d(a).get("type") == kind:
            return _s(a.get("address"))
    return NONE


def node_cells(node: dict[str, Any], now: float) -> list[Any]:
    info = _d(_status(node).get("nodeInfo"))
    return [
        _name(node),
        _node_status(node),
        _node_roles(node),
        _age(node, now),
        _s(info.get("kubeletVersion")),
        _node_address(node, "InternalIP"),
        _node_address(node, "ExternalIP"),
        _s(info.get("osImage")) or UNKNOWN,
        _s(info.get("kernelVersion")) or UNKNOWN,
        _s(info.get("containerRuntimeVersion")) or UNKNOWN,
    ]


# ---- Event (core/v1) --------------------------------------------------------------------------


def _event_source(ev: dict[str, Any]) -> str:
    source = _d(ev.get("source"))
    component = _s(source.get("component")) or _s(ev.get("reportingComponent"))
    instance = _s(source.get("host")) or _s(ev.get("reportingInstance"))
    return f"{component}, {instance}" if instance else component


def event_cells(ev: dict[str, Any], now: float) -> list[Any]:
    first = since(ev.get("firstTimestamp") or ev.get("eventTime"), now)
    last = since(ev["lastTimestamp"], now) if ev.get("lastTimestamp") else first
    count, series = _i(ev.get("count")), _present(ev, "series")
    if series is not None:
        last, count = since(series.get("lastObservedTime"), now), _i(series.get("count"))
    elif count == 0:
        count = 1  # singleton events written through events.k8s.io carry no count
    io = _d(ev.get("involvedObject"))
    kind, name = _s(io.get("kind")).lower(), _s(io.get("name"))
    return [
        last,
        _s(ev.get("type")),
        _s(ev.get("reason")),
        f"{kind}/{name}" if name else kind,
        _s(io.get("fieldPath")),
        _event_source(ev),
        _s(ev.get("message")).strip(),
        first,
        count,
        _name(ev),
    ]


# ---- workloads --------------------------------------------------------------------------------


def replicaset_cells(rs: dict[str, Any], now: float) -> list[Any]:
    spec, status = _spec(rs), _status(rs)
    return [
        _name(rs),
        _i(spec.get("replicas"), 1),  # the apiserver defaults spec.replicas to 1
        _i(status.get("replicas")),
        _i(status.get("readyReplicas")),
        _age(rs, now),
        *_template_containers(rs),
        format_selector(spec.get("selector")),
    ]


def replicationcontroller_cells(rc: dict[str, Any], now: float) -> list[Any]:
    """A ReplicaSet's row; the selector is a plain map (``labels.FormatLabels``)."""
    row = replicaset_cells({**rc, "spec": {**_spec(rc), "selector": None}}, now)
    selector = _d(_spec(rc).get("selector"))
    row[-1] = ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or NONE
    return row


def daemonset_cells(ds: dict[str, Any], now: float) -> list[Any]:
    status = _status(ds)
    counts = (
        "desiredNumberScheduled",
        "currentNumberScheduled",
        "numberReady",
        "updatedNumberScheduled",
        "numberAvailable",
    )
    node_selector = _spec(_d(_spec(ds).get("template"))).get("nodeSelector")
    return [
        _name(ds),
        *(_i(status.get(c)) for c in counts),
        format_labels(node_selector),
        _age(ds, now),
        *_template_containers(ds),
        format_selector(_spec(ds).get("selector")),
    ]


def deployment_cells(d: dict[str, Any], now: float) -> list[Any]:
    spec, status = _spec(d), _status(d)
    return [
        _name(d),
        f"{_i(status.get('readyReplicas'))}/{_i(spec.get('replicas'), 1)}",
        _i(status.get("updatedReplicas")),
        _i(status.get("availableReplicas")),
        _age(d, now),
        *_template_containers(d),
        selector_string(spec.get("selector")),  # upstream prints it without a "<none>"
    ]


# ---- the other kinds kubemu models or stores ----------------------------------------------------


def namespace_cells(ns: dict[str, Any], now: float) -> list[Any]:
    # The apiserver sets phase Active at creation and the namespace controller Terminating.
    default = "Terminating" if _meta(ns).get("deletionTimestamp") else "Active"
    return [_name(ns), _s(_status(ns).get("phase")) or default, _age(ns, now)]


def priorityclass_cells(pc: dict[str, Any], now: float) -> list[Any]:
    policy = _s(pc.get("preemptionPolicy")) or "PreemptLowerPriority"  # the apiserver's default
    return [_name(pc), _i(pc.get("value")), pc.get("globalDefault") is True, _age(pc, now), policy]


def pdb_cells(pdb: dict[str, Any], now: float) -> list[Any]:
    spec = _spec(pdb)
    return [
        _name(pdb),
        _int_or_string(spec.get("minAvailable")),
        _int_or_string(spec.get("maxUnavailable")),
        _i(_status(pdb).get("disruptionsAllowed")),
        _age(pdb, now),
    ]


def lease_cells(lease: dict[str, Any], now: float) -> list[Any]:
    return [_name(lease), _s(_spec(lease).get("holderIdentity")), _age(lease, now)]


def configmap_cells(cm: dict[str, Any], now: float) -> list[Any]:
    return [_name(cm), len(_d(cm.get("data"))) + len(_d(cm.get("binaryData"))), _age(cm, now)]


def secret_cells(secret: dict[str, Any], now: float) -> list[Any]:
    kind = _s(secret.get("type")) or "Opaque"  # the apiserver's default
    return [_name(secret), kind, len(_d(secret.get("data"))), _age(secret, now)]


def _service_external_ip(spec: dict[str, Any], status: dict[str, Any]) -> str:
    svc_type, external = _s(spec.get("type")) or "ClusterIP", [_s(ip) for ip in _l(spec.get("externalIPs"))]
    if svc_type in ("ClusterIP", "NodePort"):
        return ",".join(external) or NONE
    if svc_type == "ExternalName":
        return _s(spec.get("externalName"))
    if svc_type != "LoadBalancer":
        return UNKNOWN
    ingress = {
        _s(_d(i).get("ip")) or _s(_d(i).get("hostname")) for i in _l(_d(status.get("loadBalancer")).get("ingress"))
    }
    lb = sorted(ingress - {""})
    return ",".join(lb + external) or "<pending>"


def _service_ports(spec: dict[str, Any]) -> str:
    pieces = []
    for p in (_d(p) for p in _l(spec.get("ports"))):
        protocol, node_port = _s(p.get("protocol")) or "TCP", _i(p.get("nodePort"))
        port = f"{p.get('port')}:{node_port}" if node_port > 0 else f"{p.get('port')}"
        pieces.append(f"{port}/{protocol}")
    return ",".join(pieces) or NONE


def service_cells(svc: dict[str, Any], now: float) -> list[Any]:
    spec, status = _spec(svc), _status(svc)
    ips = _l(spec.get("clusterIPs"))
    cluster_ip = (_s(ips[0]) if ips else "") or _s(spec.get("clusterIP")) or NONE
    return [
        _name(svc),
        _s(spec.get("type")) or "ClusterIP",
        cluster_ip,
        _service_external_ip(spec, status),
        _service_ports(spec),
        _age(svc, now),
        format_labels(spec.get("selector")),
    ]


def default_cells(obj: dict[str, Any], now: float) -> list[Any]:
    return [_name(obj), _age(obj, now)]
