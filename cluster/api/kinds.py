"""The kinds kubemu serves: one table of every resource, modelled or only stored.

Owns what the apiserver, validation and the HTTP front end must agree on about a kind: its
group and version, its URL name (plural), whether it lives in a namespace, its short names
and categories (``kubectl get po``, ``kubectl get all``) and its subresources. Kinds marked
``modeled`` are ones kubemu acts on (validated field by field, scheduled, run, controlled);
every other kind is stored, versioned, listed and watched like them, with only its
metadata checked, so a user's ConfigMaps, Services and RBAC objects apply unchanged.
``objects.KINDS`` is derived from this table. See docs/architecture.md §5.

Two more tables name what is served without a storage of its own: ``VIEWS``, a stored kind
at a second group-version (autoscaling/v1 HorizontalPodAutoscaler, events.k8s.io/v1 Event;
converted by ``conversion.py``), and ``REVIEWS``, the create-only review kinds. Discovery
lists all three (``discoverable``), each group's versions in upstream's order (``version_order``).
"""

from __future__ import annotations

import re
from typing import Any

from . import kindspec
from .kindspec import VERBS as VERBS
from .kindspec import KindSpec
from .kindspec import Resource as Resource  # re-exported: callers import it from here

_VERSION = re.compile(r"v([0-9]+)(?:(alpha|beta)([0-9]+))?")
READ_ONLY = ("get", "list", "watch")  # kinds only a component writes
# kubemu's own group: its kinds' schema is written by hand (schema_kubemu.py); they have no
# protobuf message and are served as JSON only, as upstream serves custom resources.
OWN_GROUP = "kubemu.io"


def _r(
    kind: str,
    gv: str,
    plural: str,
    namespaced: bool = True,
    *,
    short_names: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    subresources: tuple[str, ...] = (),
    modeled: bool = False,
    verbs: tuple[str, ...] = VERBS,
) -> Resource:
    group, _, version = gv.rpartition("/")
    return Resource(kind, group, version, plural, namespaced, short_names, categories, subresources, modeled, verbs)


def _k(
    kind: str,
    gv: str,
    plural: str,
    namespaced: bool = True,
    *,
    list_order: int | None = None,
    mirror_order: int | None = None,
    **facts: Any,
) -> KindSpec:
    """A built-in kind's spec: its ``Resource`` row and where the controller manager and the
    scenario driver list it; kubemu's own group has no protobuf message."""
    r = _r(kind, gv, plural, namespaced, **facts)
    return KindSpec(r, protobuf=r.group != OWN_GROUP, list_order=list_order, mirror_order=mirror_order)


def _registered(specs: tuple[KindSpec, ...]) -> list[KindSpec]:
    kindspec.add_builtin(specs)
    return kindspec.builtin()


ALL = ("all",)
API_EXTENSIONS = ("api-extensions",)
_BUILTIN_SPECS: tuple[KindSpec, ...] = (
    # Modelled: kubemu's components act on these.
    _k(
        "Pod",
        "v1",
        "pods",
        short_names=("po",),
        categories=ALL,
        subresources=(
            "attach",
            "binding",
            "ephemeralcontainers",
            "eviction",
            "exec",
            "log",
            "portforward",
            "proxy",
            "status",
        ),
        modeled=True,
        list_order=9,
        mirror_order=1,
    ),
    _k(
        "Node",
        "v1",
        "nodes",
        False,
        short_names=("no",),
        subresources=("status",),
        modeled=True,
        list_order=0,
        mirror_order=0,
    ),
    _k(
        "Namespace",
        "v1",
        "namespaces",
        False,
        short_names=("ns",),
        subresources=("finalize", "status"),
        modeled=True,
        verbs=tuple(v for v in VERBS if v != "deletecollection"),  # upstream has no namespace deletecollection
    ),
    _k("Event", "v1", "events", short_names=("ev",), modeled=True, mirror_order=2),
    _k("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", False, short_names=("pc",), modeled=True),
    _k(
        "PodDisruptionBudget",
        "policy/v1",
        "poddisruptionbudgets",
        short_names=("pdb",),
        subresources=("status",),
        modeled=True,
        list_order=2,
        mirror_order=10,
    ),
    _k(
        "ReplicaSet",
        "apps/v1",
        "replicasets",
        short_names=("rs",),
        categories=ALL,
        subresources=("status", "scale"),
        modeled=True,
        list_order=4,
        mirror_order=3,
    ),
    _k(
        "DaemonSet",
        "apps/v1",
        "daemonsets",
        short_names=("ds",),
        categories=ALL,
        subresources=("status",),
        modeled=True,
        list_order=5,
    ),
    _k("Lease", "coordination.k8s.io/v1", "leases", modeled=True, list_order=1),
    # Stored: versioned, listed and watched; kubemu does not act on them (yet).
    _k("ConfigMap", "v1", "configmaps", short_names=("cm",)),
    _k("Secret", "v1", "secrets"),
    _k("Service", "v1", "services", short_names=("svc",), categories=ALL, subresources=("status",)),
    _k("ServiceAccount", "v1", "serviceaccounts", short_names=("sa",), subresources=("token",)),
    _k("Endpoints", "v1", "endpoints", short_names=("ep",)),
    _k("PersistentVolume", "v1", "persistentvolumes", False, short_names=("pv",), subresources=("status",)),
    _k("PersistentVolumeClaim", "v1", "persistentvolumeclaims", short_names=("pvc",), subresources=("status",)),
    _k("ResourceQuota", "v1", "resourcequotas", short_names=("quota",), subresources=("status",)),
    _k("LimitRange", "v1", "limitranges", short_names=("limits",)),
    _k("PodTemplate", "v1", "podtemplates"),
    _k(
        "ReplicationController",
        "v1",
        "replicationcontrollers",
        short_names=("rc",),
        categories=ALL,
        subresources=("status", "scale"),
    ),
    _k(
        "Deployment",
        "apps/v1",
        "deployments",
        short_names=("deploy",),
        categories=ALL,
        subresources=("status", "scale"),
        modeled=True,
        list_order=3,
        mirror_order=4,
    ),
    _k(
        "StatefulSet",
        "apps/v1",
        "statefulsets",
        short_names=("sts",),
        categories=ALL,
        subresources=("status", "scale"),
        modeled=True,
        list_order=6,
        mirror_order=5,
    ),
    _k("ControllerRevision", "apps/v1", "controllerrevisions", modeled=True, mirror_order=6),
    _k("Job", "batch/v1", "jobs", categories=ALL, subresources=("status",), modeled=True, list_order=8, mirror_order=7),
    _k(
        "CronJob",
        "batch/v1",
        "cronjobs",
        short_names=("cj",),
        categories=ALL,
        subresources=("status",),
        modeled=True,
        list_order=7,
        mirror_order=8,
    ),
    _k(
        "HorizontalPodAutoscaler",
        "autoscaling/v2",
        "horizontalpodautoscalers",
        short_names=("hpa",),
        categories=ALL,
        subresources=("status",),
        modeled=True,
        mirror_order=9,
    ),
    _k("EndpointSlice", "discovery.k8s.io/v1", "endpointslices"),
    _k("StorageClass", "storage.k8s.io/v1", "storageclasses", False, short_names=("sc",)),
    # kube-scheduler lists these before it schedules anything (its informers' WaitForCacheSync).
    _k("CSINode", "storage.k8s.io/v1", "csinodes", False),
    _k("CSIDriver", "storage.k8s.io/v1", "csidrivers", False),
    _k("CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities"),
    _k("VolumeAttachment", "storage.k8s.io/v1", "volumeattachments", False, subresources=("status",)),
    _k("Role", "rbac.authorization.k8s.io/v1", "roles"),
    _k("RoleBinding", "rbac.authorization.k8s.io/v1", "rolebindings"),
    _k("ClusterRole", "rbac.authorization.k8s.io/v1", "clusterroles", False),
    _k("ClusterRoleBinding", "rbac.authorization.k8s.io/v1", "clusterrolebindings", False),
    _k(
        "CustomResourceDefinition",
        "apiextensions.k8s.io/v1",
        "customresourcedefinitions",
        False,
        short_names=("crd", "crds"),
        subresources=("status",),
    ),
    _k("Ingress", "networking.k8s.io/v1", "ingresses", short_names=("ing",), subresources=("status",)),
    _k("IngressClass", "networking.k8s.io/v1", "ingressclasses", False),
    _k("NetworkPolicy", "networking.k8s.io/v1", "networkpolicies", short_names=("netpol",)),
    # The built-in group-versions are listed as local APIServices by the front end
    # (cluster/frontend/apiservices.py); stored ones are the user's.
    _k(
        "APIService",
        "apiregistration.k8s.io/v1",
        "apiservices",
        False,
        categories=API_EXTENSIONS,
        subresources=("status",),
    ),
    # Stored and validated; webhooks given by url are called (frontend/webhookcall.py), no policy is evaluated.
    _k(
        "MutatingWebhookConfiguration",
        "admissionregistration.k8s.io/v1",
        "mutatingwebhookconfigurations",
        False,
        categories=API_EXTENSIONS,
    ),
    _k(
        "ValidatingWebhookConfiguration",
        "admissionregistration.k8s.io/v1",
        "validatingwebhookconfigurations",
        False,
        categories=API_EXTENSIONS,
    ),
    _k(
        "ValidatingAdmissionPolicy",
        "admissionregistration.k8s.io/v1",
        "validatingadmissionpolicies",
        False,
        categories=API_EXTENSIONS,
        subresources=("status",),
    ),
    _k(
        "ValidatingAdmissionPolicyBinding",
        "admissionregistration.k8s.io/v1",
        "validatingadmissionpolicybindings",
        False,
        categories=API_EXTENSIONS,
    ),
    # Stored; kubemu runs no signer, so a request is never approved or issued by itself.
    _k(
        "CertificateSigningRequest",
        "certificates.k8s.io/v1",
        "certificatesigningrequests",
        False,
        short_names=("csr",),
        subresources=("approval", "status"),
    ),
    # A pod's runtimeClassName is admitted against these (cluster/apiserver/admission.py).
    _k("RuntimeClass", "node.k8s.io/v1", "runtimeclasses", False),
    # Written by the scheduler only (cluster/scheduler/explain.py): clients read, never write.
    _k(
        "SchedulingResult",
        "kubemu.io/v1alpha1",
        "schedulingresults",
        short_names=("sr",),
        verbs=READ_ONLY,
        mirror_order=11,
    ),
)

RESOURCES: tuple[Resource, ...] = tuple(s.resource for s in _registered(_BUILTIN_SPECS))

BY_KIND: dict[str, Resource] = {r.kind: r for r in RESOURCES}
BY_PLURAL: dict[tuple[str, str], Resource] = {(r.group, r.plural): r for r in RESOURCES}
assert len(BY_KIND) == len(RESOURCES) and len(BY_PLURAL) == len(RESOURCES), "a kind or plural appears twice"

# ---- one kind, more versions; kinds only created --------------------------------------------
# A view serves a stored kind (``BY_KIND[view.kind]``) at a second group-version, converted
# both ways as upstream converts between versions of one storage:
# ``cluster/api/conversion.py`` holds the converters, ``cluster/frontend/views.py`` serves them.
VIEWS: tuple[Resource, ...] = (
    _r(
        "HorizontalPodAutoscaler",
        "autoscaling/v1",
        "horizontalpodautoscalers",
        short_names=("hpa",),
        categories=ALL,
        subresources=("status",),
    ),
    _r("Event", "events.k8s.io/v1", "events", short_names=("ev",)),
)
# Reviews are answered and never stored (cluster/frontend/reviews.py).
CREATE_ONLY = ("create",)
REVIEWS: tuple[Resource, ...] = (
    _r("SelfSubjectReview", "authentication.k8s.io/v1", "selfsubjectreviews", False, verbs=CREATE_ONLY),
    _r("TokenReview", "authentication.k8s.io/v1", "tokenreviews", False, verbs=CREATE_ONLY),
    _r("LocalSubjectAccessReview", "authorization.k8s.io/v1", "localsubjectaccessreviews", verbs=CREATE_ONLY),
    _r("SelfSubjectAccessReview", "authorization.k8s.io/v1", "selfsubjectaccessreviews", False, verbs=CREATE_ONLY),
    _r("SelfSubjectRulesReview", "authorization.k8s.io/v1", "selfsubjectrulesreviews", False, verbs=CREATE_ONLY),
    _r("SubjectAccessReview", "authorization.k8s.io/v1", "subjectaccessreviews", False, verbs=CREATE_ONLY),
)
assert all(
    v.kind in BY_KIND and (v.group, v.version) != (BY_KIND[v.kind].group, BY_KIND[v.kind].version) for v in VIEWS
)


_AT = {(r.group, r.version, r.plural): r for r in (*VIEWS, *REVIEWS)}


def served_at(group: str, version: str, plural: str) -> Resource | None:
    """The view or review kind ``/apis/{group}/{version}/{plural}`` names, if one does."""
    return _AT.get((group, version, plural))


def schema_key(r: Resource) -> str:
    """The schema table's key of a view or review (``schema_table.VERSIONED``): its
    apiVersion and kind, ``autoscaling/v1 HorizontalPodAutoscaler``."""
    return f"{r.api_version} {r.kind}"


def version_order(version: str) -> tuple[int, int, int, str]:
    """A sort key putting versions in upstream's priority: GA before beta before alpha, the
    higher number first (v2, v1, v2beta1, v1beta2, v1beta1, v1alpha1), others last by name."""
    m = _VERSION.fullmatch(version)
    if m is None:
        return (3, 0, 0, version)
    level = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (level, -int(m.group(1)), -int(m.group(3) or 0), "")


def discoverable() -> list[Resource]:
    """Every resource discovery lists: the stored kinds (``served()``), the views, the reviews."""
    return [*served(), *VIEWS, *REVIEWS]


# The resources whose DELETE answers with the removed object; every other resource answers
# a removal with a success ``Status`` (upstream's ReturnDeletedObject, as of 1.28).
RETURNS_DELETED_OBJECT = frozenset(
    {
        ("", "pods"),
        ("", "services"),
        ("", "namespaces"),
        ("", "persistentvolumes"),
        ("", "persistentvolumeclaims"),
        ("", "serviceaccounts"),
        ("", "resourcequotas"),
        ("", "podtemplates"),
        ("storage.k8s.io", "storageclasses"),
        ("storage.k8s.io", "csidrivers"),
        ("storage.k8s.io", "csinodes"),
        ("storage.k8s.io", "volumeattachments"),
    }
)


def deleted_answer(obj: dict[str, Any]) -> dict[str, Any]:
    """What a DELETE that removed ``obj`` answers: the object itself, or a success
    ``Status`` naming it by its resource (plural) and uid."""
    r = BY_KIND.get(obj.get("kind", "")) or CUSTOM.get(obj.get("kind", ""))
    if r is None or (r.group, r.plural) in RETURNS_DELETED_OBJECT:
        return obj
    m = obj.get("metadata") or {}
    details: dict[str, Any] = {"name": m.get("name", "")}
    if r.group:
        details["group"] = r.group
    details.update(kind=r.plural, uid=m.get("uid", ""))
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


# ---- custom resources -------------------------------------------------------------------
# A CustomResourceDefinition adds a kind while the apiserver runs. The registry is this
# process's: the apiserver registers what its stored CRDs define (``custom_from``,
# ``custom_versions``), and whoever reads the table in the same process (validation, the
# local runtime's HTTP front end) sees it. A custom kind is stored at one version
# (``CUSTOM``, ``BY_KIND``, ``objects.KINDS``: the apiVersion its objects are stored with)
# and served at each ``served`` version of its definition (``CUSTOM_VERSIONS``, preferred
# first). ``served()`` is every kind at every version it is served at: the built-in ones,
# then the custom ones.
CUSTOM: dict[str, Resource] = {}  # kind -> the kind at its storage version
CUSTOM_VERSIONS: dict[str, tuple[Resource, ...]] = {}  # kind -> one per served version, preferred first


def served() -> list[Resource]:
    return [*RESOURCES, *(v for kind in CUSTOM for v in CUSTOM_VERSIONS.get(kind, ()))]


def json_only(kind: str) -> bool:
    """Whether objects of ``kind`` have no protobuf form: a custom kind, or one whose spec
    names no message (kubemu's own, a registered kind)."""
    spec = kindspec.get(kind)
    return spec.protobuf is False if spec is not None else kind in CUSTOM


def at_version(group: str, version: str, plural: str) -> Resource | None:
    """The kind ``/apis/{group}/{version}/{plural}`` (``/api/{version}/...`` for the core
    group) serves from the kinds table or a CustomResourceDefinition; None if none does."""
    r = BY_PLURAL.get((group, plural))
    if r is not None and r.kind in CUSTOM:
        return next((v for v in CUSTOM_VERSIONS.get(r.kind, ()) if v.version == version), None)
    return r if r is not None and r.version == version else None


def _crd_versions(crd: dict[str, Any]) -> list[dict[str, Any]]:
    spec = crd.get("spec") or {}
    return [v for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("name")]


def custom_from(crd: dict[str, Any]) -> Resource | None:
    """The kind a CustomResourceDefinition defines, at its storage version (the one marked
    ``storage``, else the first), or None when the definition lacks what a kind needs
    (validation then refused it)."""
    versions = _crd_versions(crd)
    stored = next((v for v in versions if v.get("storage")), versions[0] if versions else None)
    return None if stored is None else _custom_at(crd, stored)


def custom_versions(crd: dict[str, Any]) -> tuple[Resource, ...]:
    """The kind a CustomResourceDefinition defines at each version it serves, in upstream's
    version priority (the first is the preferred version discovery names)."""
    found = [_custom_at(crd, v) for v in _crd_versions(crd) if v.get("served", True)]
    return tuple(sorted((r for r in found if r is not None), key=lambda r: version_order(r.version)))


def _custom_at(crd: dict[str, Any], version: dict[str, Any]) -> Resource | None:
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, kind, plural = spec.get("group"), names.get("kind"), names.get("plural")
    if not (isinstance(group, str) and group and isinstance(kind, str) and kind and isinstance(plural, str)):
        return None
    return Resource(
        kind,
        group,
        str(version["name"]),
        plural,
        spec.get("scope", "Namespaced") != "Cluster",
        tuple(names.get("shortNames") or ()),
        tuple(names.get("categories") or ()),
        tuple(s for s in ("status", "scale") if s in (version.get("subresources") or {})),
    )


def register(r: Resource, versions: tuple[Resource, ...] | None = None) -> None:
    """Serve ``r`` (a custom kind at its storage version) at ``versions`` (default: ``r``'s
    own); a built-in kind or plural is never replaced."""
    if r.kind in BY_KIND and BY_KIND[r.kind] in RESOURCES:
        return
    old = CUSTOM.get(r.kind)
    if old is not None and (old.group, old.plural) != (r.group, r.plural):
        BY_PLURAL.pop((old.group, old.plural), None)
    CUSTOM[r.kind] = r
    CUSTOM_VERSIONS[r.kind] = (r,) if versions is None else tuple(versions)
    BY_KIND[r.kind] = r
    BY_PLURAL[(r.group, r.plural)] = r
    _on_change(r.kind, r)


def unregister(kind: str) -> None:
    r = CUSTOM.pop(kind, None)
    CUSTOM_VERSIONS.pop(kind, None)
    if r is not None:
        BY_KIND.pop(kind, None)
        BY_PLURAL.pop((r.group, r.plural), None)
        _on_change(kind, None)


LISTENERS: list[Any] = []  # called with (kind, Resource | None) when a custom kind comes or goes


def _on_change(kind: str, r: Resource | None) -> None:
    for listener in LISTENERS:
        listener(kind, r)
