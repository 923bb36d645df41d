"""PersistentVolume binding rules shared by the PV controller and the scheduler.

Owns what both sides of upstream's volume binding read the same way: a claim's and a
volume's storage class (the beta annotation before the field), requested and offered
size, access modes and volume mode; whether a volume satisfies a claim it names
(``mismatch``, with upstream's reasons); which volume an unbound claim gets
(``best_match``: access-mode sets smallest first, then the smallest volume that fits,
pre-bound volumes first); a volume's node affinity against a node; a class's binding mode,
provisioner and the default class. Called by ``cluster/controllers/persistentvolume.py``,
``cluster/scheduler/plugins/volumebinding.py``, the DefaultStorageClass admission and the
StatefulSet claim templates.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from ..clock import parse_timestamp
from .quantity import QuantityError, parse
from .selectors import LabelSelector, SelectorError, node_selector_matches

Obj = dict[str, Any]

BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
# kubemu's own: emulated seconds a class's provisioner takes to create a volume.
PROVISION_SECONDS = "kubemu.io/provision-seconds"
HOSTNAME_LABEL = "kubernetes.io/hostname"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

# The order upstream spells an access-mode set in (GetAccessModesAsString).
_MODE_ORDER = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")


def annotations_of(obj: Obj) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def claim_class(claim: Obj) -> str:
    """upstream GetPersistentVolumeClaimClass: the beta annotation, else the field, else ""."""
    ann = annotations_of(claim)
    if BETA_CLASS in ann:
        return str(ann[BETA_CLASS])
    return str((claim.get("spec") or {}).get("storageClassName") or "")


def claim_has_no_class(claim: Obj) -> bool:
    """Neither the field nor the beta annotation: the default class may fill it (an
    explicit "" may not)."""
    return BETA_CLASS not in annotations_of(claim) and (claim.get("spec") or {}).get("storageClassName") is None


def volume_class(pv: Obj) -> str:
    ann = annotations_of(pv)
    if BETA_CLASS in ann:
        return str(ann[BETA_CLASS])
    return str((pv.get("spec") or {}).get("storageClassName") or "")


def _storage(resources: Any) -> Fraction:
    try:
        return parse((resources or {}).get("storage") or 0)
    except (QuantityError, AttributeError, TypeError):
        return Fraction(0)


def requested(claim: Obj) -> Fraction:
    return _storage(((claim.get("spec") or {}).get("resources") or {}).get("requests"))


def capacity(pv: Obj) -> Fraction:
    return _storage((pv.get("spec") or {}).get("capacity"))


def modes(obj: Obj) -> frozenset[str]:
    return frozenset((obj.get("spec") or {}).get("accessModes") or ())


def modes_string(ms: Iterable[str]) -> str:
    s = set(ms)
    return ",".join(m for m in _MODE_ORDER if m in s) + "".join(sorted(f",{m}" for m in s - set(_MODE_ORDER)))


def _volume_mode(obj: Obj) -> str:
    return (obj.get("spec") or {}).get("volumeMode") or "Filesystem"


def claim_ref(pv: Obj) -> Obj | None:
    ref = (pv.get("spec") or {}).get("claimRef")
    return ref if isinstance(ref, dict) else None


def reference_to(claim: Obj) -> Obj:
    """The claimRef a binder writes into a volume for ``claim`` (upstream's GetReference)."""
    cm = claim.get("metadata") or {}
    return {
        "kind": "PersistentVolumeClaim",
        "namespace": cm.get("namespace", ""),
        "name": cm.get("name", ""),
        "uid": cm.get("uid", ""),
        "apiVersion": "v1",
        "resourceVersion": cm.get("resourceVersion", ""),
    }


def bound_to(pv: Obj, claim: Obj) -> bool:
    """upstream IsVolumeBoundToClaim: the claimRef names the claim (and its uid, if any)."""
    ref = claim_ref(pv)
    if ref is None:
        return False
    m = claim.get("metadata") or {}
    if ref.get("name") != m.get("name") or ref.get("namespace") != m.get("namespace"):
        return False
    return not ref.get("uid") or ref.get("uid") == m.get("uid")


def deleting(obj: Obj) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def phase(obj: Obj) -> str:
    return (obj.get("status") or {}).get("phase") or ""


def mismatch(pv: Obj, claim: Obj) -> str | None:
    """Why ``pv`` cannot serve a claim naming it (upstream checkVolumeSatisfyClaim), or None."""
    if deleting(pv):
        return f'the volume is marked for deletion "{(pv.get("metadata") or {}).get("name", "")}"'
    if capacity(pv) < requested(claim):
        return "requested PV is too small"
    if volume_class(pv) != claim_class(claim):
        return "storageClassName does not match"
    if _volume_mode(pv) != _volume_mode(claim):
        return "incompatible volumeMode"
    if not modes(claim) <= modes(pv):
        return "incompatible accessMode"
    return None


def node_affinity_matches(pv: Obj, labels: dict[str, str] | None, node_name: str = "") -> bool:
    """upstream CheckNodeAffinity: a volume without required node affinity fits every node."""
    required = ((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required")
    if not isinstance(required, dict):
        return True
    return node_selector_matches(required, labels, node_name)


def _selector(claim: Obj) -> LabelSelector | None:
    sel = (claim.get("spec") or {}).get("selector")
    if sel is None:
        return None
    try:
        return LabelSelector.from_dict(sel)
    except SelectorError:
        return LabelSelector.nothing()


def _find(
    claim: Obj,
    volumes: list[Obj],
    node: tuple[dict[str, str], str] | None,
    excluded: frozenset[str] | set[str],
    delayed: bool,
) -> Obj | None:
    """upstream FindMatchingVolume over one access-mode group (``volumes`` in name order)."""
    want, cls, mode, selector = requested(claim), claim_class(claim), _volume_mode(claim), _selector(claim)
    best: Obj | None = None
    for pv in volumes:
        name = (pv.get("metadata") or {}).get("name", "")
        if name in excluded or (claim_ref(pv) is not None and not bound_to(pv, claim)):
            continue
        if capacity(pv) < want or _volume_mode(pv) != mode or deleting(pv):
            continue
        fits_node = node is None or node_affinity_matches(pv, node[0], node[1])
        if bound_to(pv, claim):
            return pv if fits_node else None  # pre-bound: this one or none
        if node is None and delayed:
            continue  # the scheduler, which knows the node, picks for a delayed claim
        if phase(pv) != "Available" or (selector is not None and not selector.matches(pv_labels(pv))):
            continue
        if volume_class(pv) != cls or not fits_node:
            continue
        if node is not None and not modes(claim) <= modes(pv):
            continue
        if best is None or capacity(pv) < capacity(best):
            best = pv
    return best


def pv_labels(pv: Obj) -> dict[str, str]:
    return (pv.get("metadata") or {}).get("labels") or {}


def best_match(
    claim: Obj,
    volumes: Iterable[Obj],
    *,
    node: tuple[dict[str, str], str] | None = None,
    excluded: frozenset[str] | set[str] = frozenset(),
    delayed: bool = False,
) -> Obj | None:
    """The volume an unbound claim gets (upstream findBestMatchForClaim): volumes grouped
    by their access-mode set, the sets holding every mode the claim asks for tried
    smallest first (equal sizes in upstream's spelling order), the first group with a
    match giving it. ``node`` (labels, name) is the scheduler's path: volume node affinity
    must match it. ``delayed``: the PV controller leaves unbound volumes to the scheduler."""
    groups: dict[frozenset[str], list[Obj]] = {}
    for pv in volumes:
        groups.setdefault(modes(pv), []).append(pv)
    wanted = modes(claim)
    order = sorted((g for g in groups if wanted <= g), key=lambda g: (len(g), modes_string(g)))
    for g in order:
        found = _find(claim, sorted(groups[g], key=_name), node, excluded, delayed)
        if found is not None:
            return found
    return None


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


# -- storage classes -----------------------------------------------------------------------


def binding_mode(sc: Obj | None) -> str:
    return ((sc or {}).get("volumeBindingMode")) or "Immediate"


def provisioner(sc: Obj | None) -> str:
    return str((sc or {}).get("provisioner") or "")


def can_provision(sc: Obj | None) -> bool:
    return bool(provisioner(sc)) and provisioner(sc) != NO_PROVISIONER


def is_default(sc: Obj) -> bool:
    ann = annotations_of(sc)
    return ann.get(DEFAULT_CLASS) == "true" or ann.get(BETA_DEFAULT_CLASS) == "true"


def default_class(classes: Iterable[Obj]) -> Obj | None:
    """The class DefaultStorageClass gives a claim with none: of those annotated default,
    the newest by creation time, ties by name."""
    defaults = sorted((c for c in classes if is_default(c)), key=_name)
    if not defaults:
        return None
    return max(defaults, key=lambda c: parse_timestamp((c.get("metadata") or {}).get("creationTimestamp") or "") or 0.0)


def allowed_on(sc: Obj | None, labels: dict[str, str] | None, node_name: str = "") -> bool:
    """A class's ``allowedTopologies`` (terms of label requirements, ORed) admit the node;
    none admits every node."""
    terms = (sc or {}).get("allowedTopologies") or []
    if not terms:
        return True
    for term in terms:
        exprs = [
            {"key": e.get("key"), "operator": "In", "values": e.get("values") or []}
            for e in term.get("matchLabelExpressions") or ()
        ]
        if node_selector_matches({"nodeSelectorTerms": [{"matchExpressions": exprs}]}, labels, node_name):
            return True
    return False


def pod_claim_names(pod: Obj) -> list[str]:
    """The claims a pod's volumes name, in volume order, once each."""
    out: list[str] = []
    for v in (pod.get("spec") or {}).get("volumes") or ():
        name = ((v or {}).get("persistentVolumeClaim") or {}).get("claimName")
        if name and name not in out:
            out.append(name)
    return out
