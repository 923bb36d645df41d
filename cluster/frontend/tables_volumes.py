"""Server-side printing of PersistentVolumes, PersistentVolumeClaims and StorageClasses.

Owns the columns upstream's printers give the three storage kinds (1.28's
``pkg/printers/internalversion``: access modes as RWO/ROX/RWX/RWOP, the default class
marked ``(default)``) and the cells of one row, as ``(name, type, description,
priority)`` tuples and a cell function per kind in ``PRINTERS``; ``tables.py`` turns them
into its printers. NAME leads and AGE ends each row as in the other printers.
"""

from __future__ import annotations

from typing import Any

from ..api import volumes as vol
from .tables_kinds import since

_SHORT = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}


def _modes(modes: Any) -> str:
    got = set(modes or ())
    return ",".join(_SHORT[m] for m in _SHORT if m in got)


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return _d(obj.get("metadata"))


def _age(obj: dict[str, Any], now: float) -> str:
    return since(_meta(obj).get("creationTimestamp"), now)


def pv_cells(pv: dict[str, Any], now: float) -> list[Any]:
    spec, status = _d(pv.get("spec")), _d(pv.get("status"))
    ref = vol.claim_ref(pv)
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else ""
    return [
        _meta(pv).get("name", ""),
        str(_d(spec.get("capacity")).get("storage", "")),
        _modes(spec.get("accessModes")),
        spec.get("persistentVolumeReclaimPolicy") or "",
        status.get("phase") or "",
        claim,
        vol.volume_class(pv),
        status.get("reason") or "",
        _age(pv, now),
        spec.get("volumeMode") or "",
    ]


def pvc_cells(claim: dict[str, Any], now: float) -> list[Any]:
    spec, status = _d(claim.get("spec")), _d(claim.get("status"))
    bound = bool(spec.get("volumeName"))
    return [
        _meta(claim).get("name", ""),
        status.get("phase") or "",
        spec.get("volumeName") or "",
        str(_d(status.get("capacity")).get("storage", "")) if bound else "",
        _modes(status.get("accessModes")) if bound else "",
        vol.claim_class(claim),
        _age(claim, now),
        spec.get("volumeMode") or "",
    ]


def storageclass_cells(sc: dict[str, Any], now: float) -> list[Any]:
    name = _meta(sc).get("name", "")
    return [
        f"{name} (default)" if vol.is_default(sc) else name,
        sc.get("provisioner") or "",
        sc.get("reclaimPolicy") or "Delete",
        vol.binding_mode(sc),
        bool(sc.get("allowVolumeExpansion")),
        _age(sc, now),
    ]


_PV = (
    ("Capacity", "string", "The storage capacity of the volume.", 0),
    ("Access Modes", "string", "The access modes the volume can be mounted with.", 0),
    ("Reclaim Policy", "string", "What happens to the volume when its claim is released.", 0),
    ("Status", "string", "The phase of the volume.", 0),
    ("Claim", "string", "The claim bound to the volume.", 0),
    ("StorageClass", "string", "The StorageClass the volume belongs to.", 0),
    ("Reason", "string", "Why the volume is in its phase.", 0),
    ("Age", "string", "Time since the object was created.", 0),
    ("VolumeMode", "string", "Whether the volume is a filesystem or a raw block device.", 1),
)
_PVC = (
    ("Status", "string", "The phase of the claim.", 0),
    ("Volume", "string", "The volume bound to the claim.", 0),
    ("Capacity", "string", "The storage capacity of the bound volume.", 0),
    ("Access Modes", "string", "The access modes of the bound volume.", 0),
    ("StorageClass", "string", "The StorageClass the claim asks for.", 0),
    ("Age", "string", "Time since the object was created.", 0),
    ("VolumeMode", "string", "Whether the claim wants a filesystem or a raw block device.", 1),
)
_SC = (
    ("Provisioner", "string", "The provisioner that makes the class's volumes.", 0),
    ("ReclaimPolicy", "string", "The reclaim policy of the class's volumes.", 0),
    ("VolumeBindingMode", "string", "When the class's claims are bound.", 0),
    ("AllowVolumeExpansion", "boolean", "Whether the class's volumes may grow.", 0),
    ("Age", "string", "Time since the object was created.", 0),
)
# kind -> (columns after NAME, the row's cells)
PRINTERS = {
    "PersistentVolume": (_PV, pv_cells),
    "PersistentVolumeClaim": (_PVC, pvc_cells),
    "StorageClass": (_SC, storageclass_cells),
}
