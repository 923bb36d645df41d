"""DefaultStorageClass admission, and the check of kubemu's provisioning-delay annotation.

Owns upstream's ``plugin/pkg/admission/storage/storageclass/setdefault`` on claim create: a
PersistentVolumeClaim with no class at all (neither ``spec.storageClassName`` nor the beta
annotation; an explicit ``""`` is left alone) gets the default StorageClass's name (the
newest of those annotated ``storageclass.kubernetes.io/is-default-class: "true"``, ties by
name; ``cluster/api/volumes.py`` picks it). And, on StorageClass create, a
``kubemu.io/provision-seconds`` annotation that is not a non-negative number is refused
(422), so the PV controller never meets one. Called by ``admission.Admission.admit_create``.
"""

from __future__ import annotations

import math
from typing import Any

from ..api import volumes as vol
from ..api.errors import Cause, Invalid


def admit_default_storage_class(store: Any, claim: dict) -> None:
    """DefaultStorageClass admission of a claim being created."""
    if not vol.claim_has_no_class(claim):
        return
    default = vol.default_class(store.peek_all("StorageClass"))
    if default is not None:
        claim.setdefault("spec", {})["storageClassName"] = default["metadata"]["name"]


def admit_storage_class(sc: dict) -> None:
    """Refuse a provisioning delay kubemu cannot read."""
    given = vol.annotations_of(sc).get(vol.PROVISION_SECONDS)
    if given is None:
        return
    try:
        seconds = float(given)
    except (TypeError, ValueError):
        seconds = -1.0
    if not math.isfinite(seconds) or seconds < 0:
        field = f"metadata.annotations[{vol.PROVISION_SECONDS}]"
        name = (sc.get("metadata") or {}).get("name", "")
        message = f'{field}: Invalid value: "{given}": must be a non-negative number of seconds'
        raise Invalid(
            f'StorageClass.storage.k8s.io "{name}" is invalid: {message}',
            (Cause("FieldValueInvalid", f'Invalid value: "{given}": must be a non-negative number of seconds', field),),
        )
