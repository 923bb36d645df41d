"""Create-time rules of a pod's volumes and of each container's own fields, in upstream's words.

Owns what upstream's pod validation checks of one container beyond its name, resources
and ports (its image, pull policy, termination message policy, volume mounts, env, probes,
lifecycle handlers, security context, port names) and of the pod's volumes (names, one
type each, hostPath types). ``validation.validate_pod_spec`` calls ``check_volumes`` and
``check_container`` for every pod and every pod template, so a Deployment's template is
judged as its pods will be. Each check reports all its container's errors together.
"""

from __future__ import annotations

import re
from typing import Any

from .validationfields import (
    NO_VALUE,
    Errors,
    ValidationError,
    _at,
    _enum,
    _int,
    _is_int,
    _items,
    _map,
    check_name,
    shown,
    unsupported,
)

PROTOCOLS = ("SCTP", "TCP", "UDP")  # upstream lists them sorted
PULL_POLICIES = ("Always", "IfNotPresent", "Never")  # upstream's sorted list
TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
FIELD_PATHS = (  # what an env var's fieldRef may name (sorted, as upstream lists them)
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
)
_SUBSCRIPTED = re.compile(r"metadata\.(labels|annotations)\['[^']*'\]")
HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket")
# The volume sources upstream knows: a volume must name exactly one.
VOLUME_TYPES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs",
    "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker",
    "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk",
    "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral",
)  # fmt: skip
HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_PORT_NAME_CHARS = re.compile(r"[-a-z0-9]+")
_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
_ENV_NAME_RULE = (
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', "
    "and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', "
    "regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')"
)


def port_name_problems(name: str) -> list[str]:
    """upstream's IsValidPortName (an IANA_SVC_NAME): every rule the name breaks."""
    problems = []
    if len(name) > 15:
        problems.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARS.fullmatch(name):
        problems.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", name):
        problems.append("must contain at least one letter (a-z)")
    if "--" in name:
        problems.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        problems.append("must not begin or end with a hyphen")
    return problems


def check_port_or_name(value: Any, path: str, errors: Errors) -> None:
    """upstream's ValidatePortNumOrName: a port number in range, or a valid port name."""
    if _is_int(value):
        if not 1 <= value <= 65535:
            errors.found.append(ValidationError(path, value, "must be between 1 and 65535, inclusive"))
    elif isinstance(value, str):
        errors.found.extend(ValidationError(path, value, p) for p in port_name_problems(value))
    else:
        errors.found.append(ValidationError(path, value, "must be an integer or a port name"))


# ---- volumes ---------------------------------------------------------------------------


def check_volumes(spec: dict[str, Any], path: str, errors: Errors) -> set[str]:
    """The pod's volumes; returns the names of the valid ones (what mounts may name)."""
    names: set[str] = set()
    for vpath, vol in _items(spec, "volumes", path):
        found = len(errors.found)
        with errors.each():
            _check_volume_source(vol, vpath, errors)
        name, npath = vol.get("name"), _at(vpath, "name")
        if name in (None, ""):
            errors.add(npath, "Required value")
        else:
            with errors.each():
                check_name(name, npath, label=True)
        if name in names:
            errors.found.append(ValidationError(npath, NO_VALUE, f"Duplicate value: {shown(name)}"))
        if len(errors.found) == found and isinstance(name, str):
            names.add(name)
    return names


def _check_volume_source(vol: dict[str, Any], vpath: str, errors: Errors) -> None:
    # No type at all is not an error here: the apiserver defaults it to an emptyDir
    # before upstream would judge it (kubemu validates before defaulting).
    given = [t for t in VOLUME_TYPES if vol.get(t) is not None]
    for extra in given[1:]:
        errors.add(_at(vpath, extra), "Forbidden: may not specify more than 1 volume type")
    host = _map(vol, "hostPath", vpath)
    if vol.get("hostPath") is not None:
        hpath = _at(vpath, "hostPath")
        if not host.get("path"):
            errors.add(_at(hpath, "path"), "Required value")
        kind = host.get("type")
        if kind is not None and kind not in HOST_PATH_TYPES:
            errors.found.append(unsupported(_at(hpath, "type"), kind, HOST_PATH_TYPES))


# ---- one container ---------------------------------------------------------------------


def check_container(c: dict[str, Any], cpath: str, volumes: set[str], init: bool, errors: Errors) -> None:
    """One container's own fields (its name, resources and ports are checked by the caller)."""
    if not c.get("image"):
        errors.add(_at(cpath, "image"), "Required value")
    policy = c.get("terminationMessagePolicy")
    if policy is not None and policy not in TERMINATION_MESSAGE_POLICIES:
        errors.found.append(unsupported(_at(cpath, "terminationMessagePolicy"), policy, TERMINATION_MESSAGE_POLICIES))
    _check_ports(c, cpath, errors)
    for epath, env in _items(c, "env", cpath):
        _check_env(env, epath, errors)
    _check_mounts(c, cpath, volumes, errors)
    pull = c.get("imagePullPolicy")
    if pull is not None and pull not in PULL_POLICIES:
        errors.found.append(unsupported(_at(cpath, "imagePullPolicy"), pull, PULL_POLICIES))
    security = _map(c, "securityContext", cpath)
    with errors.each():
        _int(security, "runAsUser", _at(cpath, "securityContext"), 0, 2**31 - 1)
    if init:
        return  # upstream forbids probes on most init containers; kubemu leaves them be
    lifecycle, lpath = _map(c, "lifecycle", cpath), _at(cpath, "lifecycle")
    for hook in ("postStart", "preStop"):
        if lifecycle.get(hook) is not None:
            _check_handler(_map(lifecycle, hook, lpath), _at(lpath, hook), errors)
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if c.get(probe) is not None:
            _check_probe(probe, _map(c, probe, cpath), _at(cpath, probe), errors)


def _check_ports(c: dict[str, Any], cpath: str, errors: Errors) -> None:
    seen: set[str] = set()
    for ppath, port in _items(c, "ports", cpath):
        with errors.each():
            _int(port, "containerPort", ppath, 1, 65535, required=True)
        if port.get("hostPort") not in (None, 0):
            with errors.each():
                _int(port, "hostPort", ppath, 1, 65535)
        with errors.each():
            _enum(port, "protocol", ppath, PROTOCOLS)
        name, npath = port.get("name"), _at(ppath, "name")
        if not name:
            continue
        problems = port_name_problems(str(name))
        errors.found.extend(ValidationError(npath, name, p) for p in problems)
        if not problems and name in seen:
            errors.add(npath, f"Duplicate value: {shown(name)}")
        seen.add(name)


def _check_env(env: dict[str, Any], epath: str, errors: Errors) -> None:
    name, npath = env.get("name"), _at(epath, "name")
    if name in (None, ""):
        errors.add(npath, "Required value")
    elif not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
        errors.found.append(ValidationError(npath, name, _ENV_NAME_RULE))
    source = env.get("valueFrom")
    if source is None:
        return
    vpath = _at(epath, "valueFrom")
    given = [
        f
        for f in ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef")
        if _map(env, "valueFrom", epath).get(f) is not None
    ]
    if not given:
        errors.found.append(
            ValidationError(
                vpath, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"
            )
        )
        return
    if env.get("value"):
        errors.found.append(ValidationError(vpath, "", "may not be specified when `value` is not empty"))
    if len(given) > 1:
        errors.found.append(ValidationError(vpath, "", "may not have more than one field specified at a time"))
    if "fieldRef" in given:
        _check_field_ref(_map(source, "fieldRef", vpath), _at(vpath, "fieldRef"), errors)


def _check_field_ref(ref: dict[str, Any], fpath: str, errors: Errors) -> None:
    # apiVersion defaults to v1 before upstream validates; kubemu validates first.
    field_path = ref.get("fieldPath")
    if not field_path:
        errors.add(_at(fpath, "fieldPath"), "Required value")
    elif not _SUBSCRIPTED.fullmatch(str(field_path)) and field_path not in FIELD_PATHS:
        errors.found.append(unsupported(_at(fpath, "fieldPath"), field_path, FIELD_PATHS))


def _check_mounts(c: dict[str, Any], cpath: str, volumes: set[str], errors: Errors) -> None:
    paths: set[Any] = set()
    for mpath, mount in _items(c, "volumeMounts", cpath):
        name, where = mount.get("name"), mount.get("mountPath")
        if not name:
            errors.add(_at(mpath, "name"), "Required value")
        if name not in volumes:
            errors.add(_at(mpath, "name"), f"Not found: {shown(name or '')}")
        if not where:
            errors.add(_at(mpath, "mountPath"), "Required value")
        if where in paths:
            errors.found.append(ValidationError(_at(mpath, "mountPath"), where, "must be unique"))
        paths.add(where)


def _check_handler(handler: dict[str, Any], hpath: str, errors: Errors) -> None:
    """upstream's validateHandler: exactly one handler type, its port valid."""
    given = [h for h in HANDLERS if handler.get(h) is not None]
    if not given:
        errors.add(hpath, "Required value: must specify a handler type")
    for extra in given[1:]:
        errors.add(_at(hpath, extra), "Forbidden: may not specify more than 1 handler type")
    for kind in given[:1]:
        action = _map(handler, kind, hpath)
        if kind in ("httpGet", "tcpSocket", "grpc") and action.get("port") is not None:
            check_port_or_name(action["port"], _at(_at(hpath, kind), "port"), errors)


def _check_probe(which: str, probe: dict[str, Any], ppath: str, errors: Errors) -> None:
    _check_handler(probe, ppath, errors)
    for field in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        with errors.each():
            _int(probe, field, ppath, lo=0)
    success = probe.get("successThreshold")
    if which != "readinessProbe" and _is_int(success) and success != 1:
        errors.found.append(ValidationError(_at(ppath, "successThreshold"), success, "must be 1"))


# ---- node affinity ---------------------------------------------------------------------

_VALUES_RULES = {
    "In": (True, "must be specified when `operator` is 'In' or 'NotIn'"),
    "NotIn": (True, "must be specified when `operator` is 'In' or 'NotIn'"),
    "Exists": (False, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
    "DoesNotExist": (False, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
    "Gt": (True, "must be specified single value when `operator` is 'Lt' or 'Gt'"),
    "Lt": (True, "must be specified single value when `operator` is 'Lt' or 'Gt'"),
}


def check_node_affinity(affinity: dict[str, Any], path: str) -> None:
    """Every node selector requirement of ``affinity.nodeAffinity``: a known operator and
    the values it needs (upstream's ValidateNodeSelectorRequirement)."""
    node, npath = _map(affinity, "nodeAffinity", path), _at(path, "nodeAffinity")
    required_terms = _map(node, "requiredDuringSchedulingIgnoredDuringExecution", npath)
    rpath = _at(npath, "requiredDuringSchedulingIgnoredDuringExecution")
    terms = [(p, t) for p, t in _items(required_terms, "nodeSelectorTerms", rpath)]
    for ppath, pref in _items(node, "preferredDuringSchedulingIgnoredDuringExecution", npath):
        terms.append((_at(ppath, "preference"), _map(pref, "preference", ppath)))
    errors = Errors()
    for tpath, term in terms:
        for field in ("matchExpressions", "matchFields"):
            for epath, req in _items(term, field, tpath):
                _check_requirement(req, epath, errors)
    errors.raise_any()


def _check_requirement(req: dict[str, Any], epath: str, errors: Errors) -> None:
    op, values = req.get("operator"), req.get("values") or []
    rule = _VALUES_RULES.get(op) if isinstance(op, str) else None
    if rule is None:
        errors.found.append(
            ValidationError(_at(epath, "operator"), op if op is not None else "", "not a valid selector operator")
        )
        return
    needs, why = rule
    if op in ("Gt", "Lt") and len(values) != 1:
        errors.add(_at(epath, "values"), f"Required value: {why}")
    elif needs and not values:
        errors.add(_at(epath, "values"), f"Required value: {why}")
    elif not needs and values:
        errors.add(_at(epath, "values"), f"Forbidden: {why}")
