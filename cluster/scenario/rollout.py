"""The ``scale`` and ``rollback`` timeline actions, as kubectl performs them.

Owns the client-side logic of ``kubectl scale`` (a new ``spec.replicas``; a Job's
``spec.parallelism``) and ``kubectl rollout undo [--to-revision=N]`` (the Deployment's
template and annotations replaced by those of the ReplicaSet holding that revision, with
kubectl's refusals), as pure functions from the objects read to the object to write or a
refusal. The driver (``driver.Timeline``) reads the objects, calls these and sends the
update; a refusal is logged and the run goes on.
"""

from __future__ import annotations

import copy

from ..controllers.deploymentutil import HASH_LABEL, NOT_COPIED, REVISION, revision

SCALABLE = ("Deployment", "ReplicaSet", "StatefulSet", "Job")


class Refused(ValueError):
    pass


def scaled(obj: dict, replicas: int) -> dict:
    """``obj`` with its new size (a Job's parallelism, every other kind's replicas)."""
    new = copy.deepcopy(obj)
    field = "parallelism" if obj.get("kind") == "Job" else "replicas"
    new.setdefault("spec", {})[field] = replicas
    return new


def rolled_back(deployment: dict, replicasets: list[dict], to_revision: int = 0) -> dict:
    """The Deployment as ``kubectl rollout undo`` writes it; raises ``Refused`` with
    kubectl's message when it would not."""
    name = deployment["metadata"]["name"]
    uid = deployment["metadata"].get("uid")
    owned = [rs for rs in replicasets if _controlled_by(rs, uid)]
    if (deployment.get("spec") or {}).get("paused"):
        raise Refused(
            f"you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume "
            f"deployment/{name}' and try again"
        )
    by_revision = {revision(rs): rs for rs in owned if revision(rs) > 0}
    if to_revision == 0:
        if len(by_revision) < 2:
            raise Refused(f'no rollout history found for deployment "{name}"')
        to_revision = sorted(by_revision)[-2]
    target = by_revision.get(to_revision)
    if target is None:
        raise Refused(f"unable to find specified revision {to_revision} in history")
    template = copy.deepcopy((target.get("spec") or {}).get("template") or {})
    (template.get("metadata") or {}).get("labels", {}).pop(HASH_LABEL, None)
    if template == (deployment.get("spec") or {}).get("template"):
        raise Refused(f"skipped rollback (current template already matches revision {to_revision})")
    new = copy.deepcopy(deployment)
    new["spec"]["template"] = template
    # As kubectl: the annotations are replaced by the ReplicaSet's, less the controller's own.
    annotations = target["metadata"].get("annotations") or {}
    new["metadata"]["annotations"] = {k: v for k, v in annotations.items() if k not in NOT_COPIED}
    new.pop("status", None)
    return new


def _controlled_by(obj: dict, uid: str | None) -> bool:
    return any(
        r.get("controller") and r.get("uid") == uid for r in (obj.get("metadata") or {}).get("ownerReferences") or ()
    )


__all__ = ["REVISION", "SCALABLE", "Refused", "rolled_back", "scaled"]
