"""A StatefulSet's claims: ``volumeClaimTemplates`` made into one claim per ordinal.

Owns upstream's ``stateful_set_utils.go`` claim rules for the StatefulSet controller
(``statefulset.py`` calls the two hooks below):

- ``add_claims`` (a pod is about to be created): for each template ``t`` the claim
  ``<t>-<set>-<ordinal>`` in the set's namespace, labelled with the template's labels and
  the set's ``selector.matchLabels``, is created before the pod (a claim that exists
  already is refused with AlreadyExists, which the controller ignores, as upstream's
  lister check would have skipped it), and the pod's volume named ``t`` points at it.
- ``persistentVolumeClaimRetentionPolicy``: ``whenDeleted: Delete`` gives each claim an
  ownerReference to the set (the garbage collector deletes it with the set);
  ``whenScaled: Delete`` gives the claims of an ordinal being scaled away an
  ownerReference to its pod (``release_claims``, sent with the pod's delete), so they go
  with it. ``Retain`` (the default) leaves claims alone.
"""

from __future__ import annotations

from typing import Any

from ..api.requests import Patch, Request
from ..api.volumespatch import VolumeMerge

Obj = dict[str, Any]


def claim_name(template: str, set_name: str, ordinal: int) -> str:
    return f"{template}-{set_name}-{ordinal}"


def _templates(sts: Obj) -> list[Obj]:
    return [t for t in (sts.get("spec") or {}).get("volumeClaimTemplates") or () if isinstance(t, dict)]


def _policy(sts: Obj) -> Obj:
    return (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}


def _ref(obj: Obj, api_version: str, kind: str) -> Obj:
    m = obj.get("metadata") or {}
    return {"apiVersion": api_version, "kind": kind, "name": m.get("name", ""), "uid": m.get("uid", "")}


def claims_for(sts: Obj, ordinal: int) -> list[Obj]:
    """The claims of ``ordinal`` (upstream getPersistentVolumeClaims)."""
    m, spec = sts.get("metadata") or {}, sts.get("spec") or {}
    match = (spec.get("selector") or {}).get("matchLabels") or {}
    owners = [_ref(sts, "apps/v1", "StatefulSet")] if _policy(sts).get("whenDeleted") == "Delete" else []
    out = []
    for t in _templates(sts):
        tm = t.get("metadata") or {}
        meta: Obj = {
            "name": claim_name(tm.get("name", ""), m.get("name", ""), ordinal),
            "namespace": m.get("namespace", ""),
            "labels": {**(tm.get("labels") or {}), **match},
        }
        if tm.get("annotations"):
            meta["annotations"] = dict(tm["annotations"])
        if owners:
            meta["ownerReferences"] = list(owners)
        out.append(
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": dict(t.get("spec") or {})}
        )
    return out


def add_claims(sts: Obj, pod: Obj, ordinal: int, creates: list[Any]) -> None:
    """Queue the ordinal's claims ahead of ``pod`` and point its volumes at them
    (upstream createPersistentVolumeClaims and updateStorage)."""
    templates = _templates(sts)
    if not templates:
        return
    creates += claims_for(sts, ordinal)
    set_name = (sts.get("metadata") or {}).get("name", "")
    spec = pod.setdefault("spec", {})
    names = {(t.get("metadata") or {}).get("name", "") for t in templates}
    volumes = [v for v in spec.get("volumes") or () if v.get("name") not in names]
    for t in templates:
        name = (t.get("metadata") or {}).get("name", "")
        volumes.append({"name": name, "persistentVolumeClaim": {"claimName": claim_name(name, set_name, ordinal)}})
    spec["volumes"] = volumes


def release_claims(sts: Obj, pod: Obj | None, ordinal: int, requests: list[Request]) -> None:
    """``whenScaled: Delete``: the claims of a condemned ordinal become its pod's."""
    if pod is None or _policy(sts).get("whenScaled") != "Delete":
        return
    owners = [_ref(pod, "v1", "Pod")]
    if _policy(sts).get("whenDeleted") == "Delete":
        owners.insert(0, _ref(sts, "apps/v1", "StatefulSet"))
    for claim in claims_for(sts, ordinal):
        m = claim["metadata"]
        op = VolumeMerge("", {"metadata": {"ownerReferences": owners}})
        requests.append(Patch("PersistentVolumeClaim", m["namespace"], m["name"], "", op))
