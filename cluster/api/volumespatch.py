"""The typed patch the volume binders write: a JSON merge patch guarded by a resourceVersion.

Owns ``VolumeMerge``: the changes the PV controller (``cluster/controllers/persistentvolume.py``)
or the scheduler's VolumeBinding plugin computed from a claim or volume at
``resource_version`` (annotations, ``spec.claimRef`` or ``spec.volumeName``, the status
phase), applied in one write. An object written since is a Conflict, as upstream's
updates of claims and volumes are, so a binder working from an older copy never
overwrites a binding it has not seen; an empty ``resource_version`` applies to whatever
stands (the scheduler's selected-node annotation). Applied by the apiserver as every
``patches.PatchOp`` is; unlike ``Apply`` it never creates a missing object.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .errors import Conflict
from .kinds import BY_KIND


class VolumeMerge(NamedTuple):
    resource_version: str
    patch: dict[str, Any]

    def apply(self, current: dict[str, Any]) -> bool:
        from .patches import merge_patch  # patches.py lists this op among its own

        meta = current.get("metadata") or {}
        if self.resource_version and meta.get("resourceVersion") != self.resource_version:
            resource = BY_KIND[current.get("kind", "")].plural if current.get("kind") in BY_KIND else "objects"
            raise Conflict(
                f'Operation cannot be fulfilled on {resource} "{meta.get("name", "")}": the object has been '
                "modified; please apply your changes to the latest version and try again"
            )
        return merge_patch(current, self.patch)
