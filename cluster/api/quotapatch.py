"""The typed patch that writes a ResourceQuota's ``status``, guarded by its resourceVersion.

Owns ``QuotaStatus``: the status the caller computed from the quota at
``resource_version``; a quota written since (admission charged a create meanwhile) is a
Conflict, as upstream's quota status updates are, so a controller working from an older
copy never lowers ``status.used`` under a charge it has not seen. Sent by the resource
quota controller (``cluster/controllers/resourcequota.py``) and the apiserver's quota
admission; applied by the apiserver as every ``patches.PatchOp`` is.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .errors import Conflict


class QuotaStatus(NamedTuple):
    resource_version: str
    status: dict[str, Any]

    def apply(self, current: dict[str, Any]) -> bool:
        meta = current.get("metadata") or {}
        if self.resource_version and meta.get("resourceVersion") != self.resource_version:
            raise Conflict(
                f'Operation cannot be fulfilled on resourcequotas "{meta.get("name", "")}": the object has been '
                "modified; please apply your changes to the latest version and try again"
            )
        if current.get("status") == self.status:
            return False
        current["status"] = dict(self.status)
        return True
