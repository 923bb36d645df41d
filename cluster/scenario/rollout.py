"""The ``scale`` and ``rollback`` timeline actions, as kubectl performs them.

Owns the client-side logic of ``kubectl scale`` (a new ``spec.replicas``; a Job's
``spec.parallelism``) and ``kubectl rollout undo [--to-revision=N]``,
as pure functions from the objects read to the object to write
or a refusal. The driver (``driver.Timeline``) reads the objects (the ReplicaSets from its
watch), calls these and sends the update; a refusal is logged and the run goes on.

``rollout undo``, in kubectl's order:

1. The ReplicaSets the Deployment controls (ownerReference ``controller: true`` with its
   uid), in list order (namespace, name). Their revision is the
   ``deployment.kubernetes.io/revision`` annotation: 0 when missing, and a ReplicaSet
   whose annotation is not an integer is passed over.
2. ``toRevision`` N > 0: the first one at revision N, else ``unable to find specified
   revision N in history``. N = 0: the second-newest revision, else ``no rollout history
   found for deployment "NAME"``.
3. A paused Deployment is refused (after the revision is found, as kubectl does).
4. A template already equal to that ReplicaSet's (the ``pod-template-hash`` label aside)
   is skipped: ``skipped rollback (current template already matches revision N)``, with
   N as asked (0 for the previous one), as kubectl prints it.
5. Otherwise the Deployment gets the ReplicaSet's template minus ``pod-template-hash``,
   and its annotations become the ReplicaSet's, except the controller's own and
   last-applied-configuration, which keep the Deployment's values (kubectl's
   ``annotationsToSkip``).
"""

from __future__ import annotations

import copy

from ..controllers.deploymentutil import NOT_COPIED, REVISION, without_hash

# kubectl's annotationsToSkip: the controller's bookkeeping (and the legacy rollback
# request), kept from the Deployment rather than copied from the ReplicaSet.
ANNOTATIONS_TO_SKIP = NOT_COPIED | {"deprecated.deployment.rollback.to"}


class Refused(ValueError):
    pass


def scaled(obj: dict, replicas: int) -> dict:
    """``obj`` with its new size (a Job's parallelism, every other kind's replicas)."""
    new = copy.deepcopy(obj)
    field = "parallelism" if obj.get("kind") == "Job" else "replicas"
    new.setdefault("spec", {})[field] = replicas
    return new


def _revision(rs: dict) -> int | None:
    """The ReplicaSet's revision as kubectl reads it: 0 when unset, None when unreadable."""
    value = ((rs.get("metadata") or {}).get("annotations") or {}).get(REVISION)
    if value is None:
        return 0
    try:
        return int(value)
    except ValueError:
        return None


def _controlled_by(obj: dict, uid: str | None) -> bool:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return uid is not None and any(r.get("controller") and r.get("uid") == uid for r in refs)


def revision_to_restore(deployment: dict, replicasets: list[dict], to_revision: int = 0) -> dict:
    """The ReplicaSet ``kubectl rollout undo --to-revision=to_revision`` restores; raises
    ``Refused`` with kubectl's message when there is none."""
    uid = (deployment.get("metadata") or {}).get("uid")
    owned = sorted(
        (rs for rs in replicasets if _controlled_by(rs, uid)),
        key=lambda rs: (rs["metadata"].get("namespace", ""), rs["metadata"].get("name", "")),
    )
    latest = previous = -1
    latest_rs: dict | None = None
    previous_rs: dict | None = None
    for rs in owned:
        v = _revision(rs)
        if v is None:
            continue
        if to_revision > 0:
            if v == to_revision:
                return rs
        elif v > latest:
            previous, previous_rs, latest, latest_rs = latest, latest_rs, v, rs
        elif v > previous:
            previous, previous_rs = v, rs
    if to_revision > 0:
        raise Refused(f"unable to find specified revision {to_revision} in history")
    if previous_rs is None:
        name = deployment["metadata"]["name"]
        raise Refused(f'no rollout history found for deployment "{name}"')
    return previous_rs


def rolled_back(deployment: dict, replicasets: list[dict], to_revision: int = 0) -> dict:
    """The Deployment as ``kubectl rollout undo`` writes it; raises ``Refused`` with
    kubectl's message when it would not write."""
    target = revision_to_restore(deployment, replicasets, to_revision)
    spec = deployment.get("spec") or {}
    if spec.get("paused"):
        name = deployment["metadata"]["name"]
        raise Refused(
            f"you cannot rollback a paused deployment; resume it first with "
            f"'kubectl rollout resume deployment/{name}' and try again"
        )
    template = without_hash(copy.deepcopy((target.get("spec") or {}).get("template") or {}))
    if template == without_hash(spec.get("template") or {}):
        raise Refused(f"skipped rollback (current template already matches revision {to_revision})")
    new = copy.deepcopy(deployment)
    new.setdefault("spec", {})["template"] = template
    kept = (deployment["metadata"].get("annotations") or {}).items()
    copied = ((target.get("metadata") or {}).get("annotations") or {}).items()
    new["metadata"]["annotations"] = {
        **{k: v for k, v in kept if k in ANNOTATIONS_TO_SKIP},
        **{k: v for k, v in copied if k not in ANNOTATIONS_TO_SKIP},
    }
    new.pop("status", None)
    return new


__all__ = ["ANNOTATIONS_TO_SKIP", "Refused", "revision_to_restore", "rolled_back", "scaled"]
