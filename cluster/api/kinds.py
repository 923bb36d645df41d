"""The kinds kubemu serves: one table of every resource, modelled or only stored.

Owns what the apiserver, validation and the HTTP front end must agree on about a kind: its
group and version, its URL name (plural), whether it lives in a namespace, its short names
and categories (``kubectl get po``, ``kubectl get all``) and its subresources. Kinds marked
``modeled`` are ones kubemu acts on (validated field by field, scheduled, run, controlled);
every other kind is stored, versioned, listed and watched like them, with only its
metadata checked, so a user's ConfigMaps, Services and RBAC objects apply unchanged.
``objects.KINDS`` is derived from this table. See docs/architecture.md §5.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class Resource:
    kind: str
    group: str  # "" for the core group
    version: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    modeled: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()


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
) -> Resource:
    group, _, version = gv.rpartition("/")
    return Resource(kind, group, version, plural, namespaced, short_names, categories, subresources, modeled)


ALL = ("all",)
RESOURCES: tuple[Resource, ...] = (
    # Modelled: kubemu's components act on these.
    _r(
        "Pod",
        "v1",
        "pods",
        short_names=("po",),
        categories=ALL,
        subresources=("binding", "eviction", "status", "log"),
        modeled=True,
    ),
    _r("Node", "v1", "nodes", False, short_names=("no",), subresources=("status",), modeled=True),
    _r("Namespace", "v1", "namespaces", False, short_names=("ns",), subresources=("status",), modeled=True),
    _r("Event", "v1", "events", short_names=("ev",), modeled=True),
    _r("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", False, short_names=("pc",), modeled=True),
    _r(
        "PodDisruptionBudget",
        "policy/v1",
        "poddisruptionbudgets",
        short_names=("pdb",),
        subresources=("status",),
        modeled=True,
    ),
    _r(
        "ReplicaSet",
        "apps/v1",
        "replicasets",
        short_names=("rs",),
        categories=ALL,
        subresources=("status", "scale"),
        modeled=True,
    ),
    _r(
        "DaemonSet",
        "apps/v1",
        "daemonsets",
        short_names=("ds",),
        categories=ALL,
        subresources=("status",),
        modeled=True,
    ),
    _r("Lease", "coordination.k8s.io/v1", "leases", modeled=True),
    # Stored: versioned, listed and watched; kubemu does not act on them (yet).
    _r("ConfigMap", "v1", "configmaps", short_names=("cm",)),
    _r("Secret", "v1", "secrets"),
    _r("Service", "v1", "services", short_names=("svc",), categories=ALL, subresources=("status",)),
    _r("ServiceAccount", "v1", "serviceaccounts", short_names=("sa",)),
    _r("Endpoints", "v1", "endpoints", short_names=("ep",)),
    _r("PersistentVolume", "v1", "persistentvolumes", False, short_names=("pv",), subresources=("status",)),
    _r("PersistentVolumeClaim", "v1", "persistentvolumeclaims", short_names=("pvc",), subresources=("status",)),
    _r("ResourceQuota", "v1", "resourcequotas", short_names=("quota",), subresources=("status",)),
    _r("LimitRange", "v1", "limitranges", short_names=("limits",)),
    _r("PodTemplate", "v1", "podtemplates"),
    _r(
        "ReplicationController",
        "v1",
        "replicationcontrollers",
        short_names=("rc",),
        categories=ALL,
        subresources=("status", "scale"),
    ),
    _r(
        "Deployment",
        "apps/v1",
        "deployments",
        short_names=("deploy",),
        categories=ALL,
        subresources=("status", "scale"),
        modeled=True,
    ),
    _r(
        "StatefulSet",
        "apps/v1",
        "statefulsets",
        short_names=("sts",),
        categories=ALL,
        subresources=("status", "scale"),
        modeled=True,
    ),
    _r("ControllerRevision", "apps/v1", "controllerrevisions", modeled=True),
    _r("Job", "batch/v1", "jobs", categories=ALL, subresources=("status",), modeled=True),
    _r("CronJob", "batch/v1", "cronjobs", short_names=("cj",), categories=ALL, subresources=("status",), modeled=True),
    _r(
        "HorizontalPodAutoscaler",
        "autoscaling/v2",
        "horizontalpodautoscalers",
        short_names=("hpa",),
        categories=ALL,
        subresources=("status",),
        modeled=True,
    ),
    _r("EndpointSlice", "discovery.k8s.io/v1", "endpointslices"),
    _r("StorageClass", "storage.k8s.io/v1", "storageclasses", False, short_names=("sc",)),
    # kube-scheduler lists these before it schedules anything (reference k8s-http-api.md §8b).
    _r("CSINode", "storage.k8s.io/v1", "csinodes", False),
    _r("CSIDriver", "storage.k8s.io/v1", "csidrivers", False),
    _r("CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities"),
    _r("VolumeAttachment", "storage.k8s.io/v1", "volumeattachments", False, subresources=("status",)),
    _r("Role", "rbac.authorization.k8s.io/v1", "roles"),
    _r("RoleBinding", "rbac.authorization.k8s.io/v1", "rolebindings"),
    _r("ClusterRole", "rbac.authorization.k8s.io/v1", "clusterroles", False),
    _r("ClusterRoleBinding", "rbac.authorization.k8s.io/v1", "clusterrolebindings", False),
    _r(
        "CustomResourceDefinition",
        "apiextensions.k8s.io/v1",
        "customresourcedefinitions",
        False,
        short_names=("crd", "crds"),
        subresources=("status",),
    ),
)

BY_KIND: dict[str, Resource] = {r.kind: r for r in RESOURCES}
BY_PLURAL: dict[tuple[str, str], Resource] = {(r.group, r.plural): r for r in RESOURCES}
assert len(BY_KIND) == len(RESOURCES) and len(BY_PLURAL) == len(RESOURCES), "a kind or plural appears twice"


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
    ``Status`` naming it by its resource (plural) and uid (k8s-api-fidelity.md §4.2)."""
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
# process's: the apiserver registers what its stored CRDs define (``custom_from``), and
# whoever reads the table in the same process (validation, the local runtime's HTTP front
# end) sees it. ``served()`` is every kind: the built-in ones, then the custom ones.
CUSTOM: dict[str, Resource] = {}


def served() -> list[Resource]:
    return [*RESOURCES, *CUSTOM.values()]


def custom_from(crd: dict[str, Any]) -> Resource | None:
    """The kind a CustomResourceDefinition defines (its storage version), or None when the
    definition lacks what a kind needs (validation then refused it)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("served", True)]
    stored = next((v for v in versions if v.get("storage")), versions[0] if versions else None)
    group, kind, plural = spec.get("group"), names.get("kind"), names.get("plural")
    if not (isinstance(group, str) and group and isinstance(kind, str) and kind and isinstance(plural, str) and stored):
        return None
    return Resource(
        kind,
        group,
        str(stored.get("name") or "v1"),
        plural,
        spec.get("scope", "Namespaced") != "Cluster",
        tuple(names.get("shortNames") or ()),
        tuple(names.get("categories") or ()),
        tuple(s for s in ("status", "scale") if s in (stored.get("subresources") or {})),
    )


def register(r: Resource) -> None:
    """Serve ``r`` (a custom kind); a built-in kind or plural is never replaced."""
    if r.kind in BY_KIND and BY_KIND[r.kind] in RESOURCES:
        return
    CUSTOM[r.kind] = r
    BY_KIND[r.kind] = r
    BY_PLURAL[(r.group, r.plural)] = r
    _on_change(r.kind, r)


def unregister(kind: str) -> None:
    r = CUSTOM.pop(kind, None)
    if r is not None:
        BY_KIND.pop(kind, None)
        BY_PLURAL.pop((r.group, r.plural), None)
        _on_change(kind, None)


LISTENERS: list[Any] = []  # called with (kind, Resource | None) when a custom kind comes or goes


def _on_change(kind: str, r: Resource | None) -> None:
    for listener in LISTENERS:
        listener(kind, r)
