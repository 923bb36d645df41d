"""Create-time rules of PersistentVolumes and PersistentVolumeClaims, in upstream's words.

Owns the share of upstream's ValidatePersistentVolumeSpec and
ValidatePersistentVolumeClaimSpec that a user meets: access modes (at least one, each
supported, ReadWriteOncePod alone), the claim's storage request (present and above zero),
the volume's capacity (storage only, above zero), exactly one volume source, a local
volume's node affinity, the reclaim policy, the volume mode, the class name, the claim's
selector and data sources. The claim rules are also the rules of a StatefulSet's
``volumeClaimTemplates``' specs, so one function serves both. ``validation`` attaches
``check_persistent_volume`` and ``check_persistent_volume_claim`` to their kinds; all of an
object's errors are reported together (``[e1, e2]``), as upstream does. Validation runs
before defaulting, so an absent volume mode or reclaim policy is judged as its default.
"""

from __future__ import annotations

from typing import Any

from .quantity import QuantityError
from .quantity import parse as parse_quantity
from .validationfields import (
    Errors,
    Shown,
    ValidationError,
    _at,
    _map,
    check_name,
    compile_selector,
    unsupported,
)

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")  # sorted, as listed
VOLUME_MODES = ("Block", "Filesystem")
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")

# Every persistent volume source a PersistentVolume may name (its spec field), in the
# order upstream checks them: the second one found is the field refused.
VOLUME_SOURCES = (
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "flocker",
    "nfs",
    "rbd",
    "quobyte",
    "cephfs",
    "iscsi",
    "cinder",
    "fc",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "local",
    "storageos",
    "csi",
)
_SHOWN_AS = {"cephfs": "cephFS"}  # the one source upstream's error names unlike its JSON field
_MORE_THAN_ONE = "Forbidden: may not specify more than 1 volume type"


def check_persistent_volume_claim(obj: dict[str, Any], path: str) -> None:
    errors = Errors()
    check_claim_spec(_map(obj, "spec", path), _at(path, "spec"), errors)
    errors.raise_any()


def check_persistent_volume(obj: dict[str, Any], path: str) -> None:
    spec, spath = _map(obj, "spec", path), _at(path, "spec")
    errors = Errors()
    _access_modes(spec, spath, errors, why="")
    _capacity(spec, spath, errors)
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy and policy not in RECLAIM_POLICIES:
        errors.found.append(unsupported(_at(spath, "persistentVolumeReclaimPolicy"), policy, RECLAIM_POLICIES))
    _one_source(spec, spath, errors)
    host = spec.get("hostPath")
    if isinstance(host, dict) and _is_root(host.get("path")) and policy == "Recycle":
        errors.add(
            _at(spath, "persistentVolumeReclaimPolicy"), "Forbidden: may not be 'recycle' for a hostPath mount of '/'"
        )
    _class_and_mode(spec, spath, errors)
    errors.raise_any()


def check_claim_spec(spec: dict[str, Any], spath: str, errors: Errors) -> None:
    """A claim's spec: a PersistentVolumeClaim's, or one of a StatefulSet's claim templates."""
    _access_modes(spec, spath, errors, why="at least 1 access mode is required")
    if spec.get("selector") is not None:
        with errors.each():
            compile_selector(spec["selector"], _at(spath, "selector"))
    requests = _map(_map(spec, "resources", spath), "requests", _at(spath, "resources"))
    at = f"{_at(spath, 'resources')}[storage]"
    if "storage" not in requests:
        errors.add(at, "Required value")
    else:
        _positive(requests["storage"], at, errors)
    _class_and_mode(spec, spath, errors)
    for field in ("dataSource", "dataSourceRef"):
        source = spec.get(field)
        if isinstance(source, dict):
            _data_source(source, _at(spath, field), errors)
    _data_source_pair(spec, spath, errors)


def _access_modes(spec: dict[str, Any], spath: str, errors: Errors, why: str) -> None:
    modes, at = spec.get("accessModes") or [], _at(spath, "accessModes")
    if not modes:
        errors.add(at, f"Required value: {why}" if why else "Required value")
        return
    for mode in modes:
        if mode not in ACCESS_MODES:
            errors.found.append(unsupported(at, mode, ACCESS_MODES))
    if "ReadWriteOncePod" in modes and any(m != "ReadWriteOncePod" and m in ACCESS_MODES for m in modes):
        errors.add(at, "Forbidden: may not use ReadWriteOncePod with other access modes")


def _capacity(spec: dict[str, Any], spath: str, errors: Errors) -> None:
    capacity, at = _map(spec, "capacity", spath), _at(spath, "capacity")
    if not capacity:
        errors.add(at, "Required value")
    if "storage" not in capacity or len(capacity) > 1:
        errors.found.append(unsupported(at, _resource_list(capacity), ("storage",)))
    for name, raw in capacity.items():
        _positive(raw, f"{at}[{name}]", errors)


def _resource_list(capacity: dict[str, Any]) -> Shown:
    """A capacity map as upstream's NotSupported prints a core.ResourceList (Go's ``%#v``),
    its quantities shortened to their text: enough to see which names were given."""
    if not capacity:
        return Shown("core.ResourceList(nil)")
    inner = ", ".join(f'"{k}":"{v}"' for k, v in sorted(capacity.items()))
    return Shown(f"core.ResourceList{{{inner}}}")


def _positive(raw: Any, at: str, errors: Errors) -> None:
    try:
        amount = parse_quantity(raw)
    except (QuantityError, TypeError):
        errors.found.append(ValidationError(at, raw, "is not a quantity"))
        return
    if amount <= 0:
        errors.found.append(ValidationError(at, str(raw), "must be greater than zero"))


def _one_source(spec: dict[str, Any], spath: str, errors: Errors) -> None:
    counted = 0
    for field in VOLUME_SOURCES:
        if spec.get(field) is None:
            continue
        if field == "flexVolume":
            counted += 1  # counted, yet never refused as a second source (upstream's order)
        elif counted:
            errors.add(_at(spath, _SHOWN_AS.get(field, field)), _MORE_THAN_ONE)
        else:
            counted += 1
            if field == "local" and not spec.get("nodeAffinity"):
                errors.add(_at(spath, "nodeAffinity"), "Required value: Local volume requires node affinity")
    if not counted:
        errors.add(spath, "Required value: must specify a volume type")


def _is_root(path: Any) -> bool:
    return isinstance(path, str) and path.startswith("/") and not path.strip("/.")


def _class_and_mode(spec: dict[str, Any], spath: str, errors: Errors) -> None:
    name = spec.get("storageClassName")
    if name:
        with errors.each():
            check_name(name, _at(spath, "storageClassName"), label=False)
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errors.found.append(unsupported(_at(spath, "volumeMode"), mode, VOLUME_MODES))


def _data_source(source: dict[str, Any], at: str, errors: Errors) -> None:
    if not source.get("name"):
        errors.add(_at(at, "name"), "Required value")
    if not source.get("kind"):
        errors.add(_at(at, "kind"), "Required value")
    if not source.get("apiGroup") and source.get("kind") != "PersistentVolumeClaim":
        errors.found.append(
            ValidationError(
                at, source.get("kind", ""), "must be 'PersistentVolumeClaim' when referencing the default apiGroup"
            )
        )
    namespace = source.get("namespace")
    if namespace:
        with errors.each():
            check_name(namespace, _at(at, "namespace"), label=True)


def _data_source_pair(spec: dict[str, Any], spath: str, errors: Errors) -> None:
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if not isinstance(source, dict) or not isinstance(ref, dict):
        return
    shown = Shown(_at(spath, "dataSource"))  # upstream shows the field path as the value
    if ref.get("namespace"):
        errors.found.append(
            ValidationError(spath, shown, "may not be specified when dataSourceRef.namespace is specified")
        )
    elif any(source.get(k) != ref.get(k) for k in ("apiGroup", "kind", "name")):
        errors.found.append(ValidationError(spath, shown, "must match dataSourceRef"))
