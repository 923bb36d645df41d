"""Short descriptions of the fields most manifests use, for the OpenAPI documents.

Owns the text ``kubectl explain`` prints under a field: kubemu's own words, one or two
sentences, for the fields every object has (``apiVersion``, ``kind``, ``metadata`` and the
object metadata's fields) and the common fields of pods and workloads. A field named here is
described wherever it appears, unless its struct has a text of its own (``BY_STRUCT``);
``spec`` and ``status`` only where they hold an object.
``openapi_schemas.py`` adds them to the built-in models and to every custom resource's root.
"""

from __future__ import annotations

API_VERSION = (
    "APIVersion defines which versioned schema of its group the object is written in "
    "(group/version, or v1 for the core group); the server converts it to the version a client asks for."
)
KIND = "Kind is the CamelCase name of the object's type (Pod, Deployment, ...); the URL of its resource implies it too."
METADATA = (
    "Standard object's metadata: its name and namespace, labels and annotations, owners, finalizers, "
    "and what the server records about it (uid, resourceVersion, timestamps)."
)

FIELDS: dict[str, str] = {
    "apiVersion": API_VERSION,
    "kind": KIND,
    "metadata": METADATA,
    "replicas": "How many pods are wanted.",
    "template": "The pod every replica is created from.",
    "containers": "The containers of the pod; kubemu emulates them (their start, run time and exit).",
    "initContainers": "Containers run one after another, each to completion, before the others start.",
    "image": "The container image; kubemu pulls nothing.",
    "command": "The entrypoint, replacing the image's.",
    "args": "Arguments to the entrypoint.",
    "env": "Environment variables of the container.",
    "resources": "Compute resources the container requests (for scheduling) and may not exceed (limits).",
    "requests": "The amount of each resource that is reserved for it; the scheduler places it by these.",
    "limits": "The most of each resource it may use.",
    "nodeName": "The node the pod is bound to; set by the scheduler.",
    "nodeSelector": "Labels a node must have for the pod to be placed there.",
    "tolerations": "The node taints the pod tolerates.",
    "affinity": "Rules for placing the pod near or away from nodes and other pods.",
    "priorityClassName": "The PriorityClass that gives the pod its priority.",
    "restartPolicy": "Whether the kubelet restarts the pod's containers when they exit: Always, OnFailure or Never.",
    "conditions": "The latest observations of the object's state, one per type.",
}
# Only where the field holds an object (a Condition's ``status`` is a string of its own).
OBJECT_FIELDS: dict[str, str] = {
    "spec": "The desired state, as the user writes it.",
    "status": "The observed state, written by the server and its controllers; read-only to most clients.",
}
_META = "meta.v1.ObjectMeta"
BY_STRUCT: dict[tuple[str, str], str] = {
    (_META, "name"): "The name, unique among objects of its kind (in its namespace, for a namespaced kind).",
    (_META, "namespace"): "The namespace the object lives in; empty for cluster-scoped kinds.",
    (_META, "labels"): "String keys and values used to select the object (label selectors, services, controllers).",
    (_META, "annotations"): "String keys and values for tools and people; not used to select objects.",
    (_META, "uid"): "A unique id the server gives the object when it is created; it never changes.",
    (_META, "resourceVersion"): (
        "An opaque version the server changes on every write; sent back on an update it makes the update "
        "fail if the object changed meanwhile."
    ),
    (_META, "generation"): "A number the server raises each time the desired state (spec) changes.",
    (_META, "creationTimestamp"): (
        "CreationTimestamp is a timestamp the server sets when the object is created (RFC 3339, UTC); "
        "clients cannot set it."
    ),
    (_META, "deletionTimestamp"): (
        "When the object will be gone: set by the server when a delete is asked and the object waits "
        "for its finalizers or its grace period."
    ),
    (_META, "deletionGracePeriodSeconds"): "Seconds the object is given to stop once deletionTimestamp is set.",
    (_META, "generateName"): "A prefix from which the server makes a unique name when no name is given.",
    (_META, "ownerReferences"): (
        "The objects this one depends on; the garbage collector deletes it once they are all gone."
    ),
    (_META, "finalizers"): "Names of what must happen before the object is removed; each is removed by whoever did it.",
    (_META, "managedFields"): "Which manager set which field (server-side apply); kept by the server.",
    ("core.v1.Container", "name"): "The container's name, unique within the pod.",
}


def field_description(struct: str, field: str, holds_object: bool) -> str | None:
    """The text for ``field`` of the struct keyed ``struct`` (``holds_object``: its value is
    an object, not a scalar or a list), if there is one."""
    found = BY_STRUCT.get((struct, field)) or FIELDS.get(field)
    return found or (OBJECT_FIELDS.get(field) if holds_object else None)
