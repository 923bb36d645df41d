"""Server-side printing: ``meta.k8s.io/v1`` Table objects, which ``kubectl get`` asks for
(``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``).

Each kind has the columns upstream's printers give it (pkg/printers/internalversion), in
``PRINTERS``: a kind maps to its column definitions and a function computing one row's
cells (``tables_kinds.py``); adding a kind is one entry. A kind without an entry prints NAME
and AGE. As in the apiserver, rows carry every cell, ``-o wide`` (priority 1) ones too, and
kubectl shows the columns it wants; ``len(cells) == len(columnDefinitions)`` always.

Rules kubectl depends on: the Table and every ``rows[].object`` carry ``kind`` and
``apiVersion``; ``metadata.resourceVersion`` is set (``get -w`` watches from it); the object
is ``PartialObjectMetadata`` by default, the full object for ``includeObject=Object`` (what
``--sort-by`` sends) and absent for ``None``. In a watch, every event is a one-row Table and
only the first carries ``columnDefinitions`` (§4.5): pass ``with_columns=False`` after it.

Times: ``now`` is emulated seconds on the same timeline as the objects' RFC 3339 timestamps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..api import kindspec
from ..api.objects import KINDS
from . import tables_endpoints as endpoint_cells
from . import tables_explain as explain_cells
from . import tables_groups as group_cells
from . import tables_kinds as cells
from . import tables_volumes as volume_cells
from . import tables_workloads as workload_cells
from .tables_kinds import human_duration

__all__ = ["Column", "KindPrinter", "PRINTERS", "INCLUDE_OBJECT", "column_definitions", "human_duration", "table"]

TABLE_API_VERSION = "meta.k8s.io/v1"
INCLUDE_OBJECT = ("Metadata", "Object", "None")  # ?includeObject=; "" means Metadata


@dataclass(frozen=True)
class Column:
    name: str  # as upstream spells it; kubectl prints it upper-cased
    type: str = "string"  # "string", "integer", "boolean"
    description: str = ""
    priority: int = 0  # 1: shown only with -o wide
    format: str = ""  # "name" on the NAME column

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


@dataclass(frozen=True)
class KindPrinter:
    columns: tuple[Column, ...]
    cells: Callable[[dict[str, Any], float], list[Any]]  # (object, now) -> one cell per column
    # Row conditions (upstream marks a finished pod's row Completed); None for most kinds.
    conditions: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None


def _col(name: str, description: str, type: str = "string", priority: int = 0) -> Column:
    return Column(name, type, description, priority)


def _wide(name: str, description: str) -> Column:
    return Column(name, "string", description, 1)


NAME = Column("Name", "string", "Name of the object, unique within its namespace.", 0, "name")
AGE = _col("Age", "Time since the object was created.")
TEMPLATE = (
    _wide("Containers", "Names of each container in the template."),
    _wide("Images", "Images referenced by each container in the template."),
    _wide("Selector", "Label query over the pods the controller manages."),
)

POD = KindPrinter(
    (
        NAME,
        _col("Ready", "Ready containers of all containers (restartable init containers included)."),
        _col("Status", "The aggregate status of the pod's containers."),
        _col("Restarts", "Container restarts, and how long ago the last one was."),
        AGE,
        _wide("IP", "The pod's IP address."),
        _wide("Node", "The node the pod is bound to."),
        _wide("Nominated Node", "The node preemption made room on for the pod."),
        _wide("Readiness Gates", "Readiness gates whose condition is True, of all."),
    ),
    cells.pod_cells,
    cells.pod_conditions,
)
NODE = KindPrinter(
    (
        NAME,
        _col("Status", "The status of the node."),
        _col("Roles", "The roles of the node."),
        AGE,
        _col("Version", "Kubelet version."),
        _wide("Internal-IP", "The node's first InternalIP address."),
        _wide("External-IP", "The node's first ExternalIP address."),
        _wide("OS-Image", "OS image reported by the node."),
        _wide("Kernel-Version", "Kernel version reported by the node."),
        _wide("Container-Runtime", "Container runtime and version reported by the node."),
    ),
    cells.node_cells,
)
EVENT = KindPrinter(
    (
        _col("Last Seen", "Time since the event was last observed."),
        _col("Type", "Type of the event (Normal, Warning)."),
        _col("Reason", "Why the action was taken."),
        _col("Object", "The object the event is about."),
        _wide("Subobject", "Field of the object the event is about."),
        _wide("Source", "Component (and host) that reported the event."),
        _col("Message", "Human-readable description of the event."),
        _wide("First Seen", "Time since the event was first observed."),
        _wide("Count", "Times the event has occurred."),
        Column("Name", "string", NAME.description, 1, "name"),
    ),
    cells.event_cells,
)
REPLICASET = KindPrinter(
    (
        NAME,
        _col("Desired", "Replicas wanted (spec.replicas).", "integer"),
        _col("Current", "Replicas that exist (status.replicas).", "integer"),
        _col("Ready", "Replicas that are ready.", "integer"),
        AGE,
        *TEMPLATE,
    ),
    cells.replicaset_cells,
)
DAEMONSET = KindPrinter(
    (
        NAME,
        _col("Desired", "Nodes that should run the daemon pod.", "integer"),
        _col("Current", "Nodes running a daemon pod that should.", "integer"),
        _col("Ready", "Nodes whose daemon pod is ready.", "integer"),
        _col("Up-to-date", "Nodes running the current template's pod.", "integer"),
        _col("Available", "Nodes whose daemon pod is available.", "integer"),
        _col("Node Selector", "The pod template's node selector."),
        AGE,
        *TEMPLATE,
    ),
    cells.daemonset_cells,
)
DEPLOYMENT = KindPrinter(
    (
        NAME,
        _col("Ready", "Ready pods of the pods wanted."),
        _col("Up-to-date", "Pods running the current template."),
        _col("Available", "Pods available to serve."),
        AGE,
        *TEMPLATE,
    ),
    cells.deployment_cells,
)
SERVICE = KindPrinter(
    (
        NAME,
        _col("Type", "How the service is exposed."),
        _col("Cluster-IP", "The service's cluster IP."),
        _col("External-IP", "External IPs or load-balancer ingress of the service."),
        _col("Port(s)", "The service's ports (port[:nodePort]/protocol)."),
        AGE,
        _wide("Selector", "Label query over the pods that back the service."),
    ),
    cells.service_cells,
)
PRIORITY_CLASS = KindPrinter(
    (
        NAME,
        _col("Value", "Priority of the pods that use this class.", "integer"),
        _col("Global-Default", "Whether pods without a class get this one.", "boolean"),
        AGE,
        _col("PreemptionPolicy", "Whether pods of this class may preempt lower-priority pods."),
    ),
    cells.priorityclass_cells,
)
PDB = KindPrinter(
    (
        NAME,
        _col("Min Available", "The minimum number of pods that must be available."),
        _col("Max Unavailable", "The maximum number of pods that may be unavailable."),
        _col("Allowed Disruptions", "Pods that may be disrupted at this time.", "integer"),
        AGE,
    ),
    cells.pdb_cells,
)
STATEFULSET = KindPrinter(
    (NAME, _col("Ready", "Ready pods of the pods wanted."), AGE, *TEMPLATE[:2]), workload_cells.statefulset_cells
)
JOB = KindPrinter(
    (
        NAME,
        _col("Status", "The job's state: Running, Complete, Failed, Suspended, ..."),
        _col("Completions", "Succeeded pods of the completions wanted."),
        _col("Duration", "How long the job ran (or has been running)."),
        AGE,
        *TEMPLATE,
    ),
    workload_cells.job_cells,
)
CRONJOB = KindPrinter(
    (
        NAME,
        _col("Schedule", "The cron schedule."),
        _col("Timezone", "The time zone the schedule is read in."),
        _col("Suspend", "Whether new runs are suspended."),
        _col("Active", "Jobs running now.", "integer"),
        _col("Last Schedule", "Time since the last run was scheduled."),
        AGE,
        *TEMPLATE,
    ),
    workload_cells.cronjob_cells,
)
HPA = KindPrinter(
    (
        NAME,
        _col("Reference", "The scaled object (kind/name)."),
        _col("Targets", "Current and target value of each metric."),
        _col("MinPods", "The fewest replicas it scales to."),
        _col("MaxPods", "The most replicas it scales to.", "integer"),
        _col("Replicas", "Replicas the target has now.", "integer"),
        AGE,
    ),
    workload_cells.hpa_cells,
)
WEBHOOKS = KindPrinter(
    (NAME, _col("Webhooks", "The number of webhooks registered in this configuration.", "integer"), AGE),
    group_cells.webhooks_cells,
)
GROUP_PRINTERS: dict[str, KindPrinter] = {
    "Ingress": KindPrinter(
        (
            NAME,
            _col("Class", "The name of the IngressClass resource that should be used for additional configuration"),
            _col("Hosts", "Hosts that incoming requests are matched against before the ingress rule"),
            _col("Address", "Address is a list containing ingress points for the load-balancer"),
            _col("Ports", "Ports of TLS configurations that open"),
            AGE,
        ),
        group_cells.ingress_cells,
    ),
    "IngressClass": KindPrinter(
        (
            NAME,
            _col("Controller", "Controller that is responsible for handling this class"),
            _col("Parameters", "A reference to a resource with additional parameters"),
            AGE,
        ),
        group_cells.ingressclass_cells,
    ),
    "NetworkPolicy": KindPrinter(
        (NAME, _col("Pod-Selector", "The pods the policy applies to."), AGE), group_cells.networkpolicy_cells
    ),
    "APIService": KindPrinter(
        (
            NAME,
            _col("Service", "The service that serves the group-version (Local: the apiserver)."),
            _col("Available", "Whether the group-version is served."),
            AGE,
        ),
        group_cells.apiservice_cells,
    ),
    "MutatingWebhookConfiguration": WEBHOOKS,
    "ValidatingWebhookConfiguration": WEBHOOKS,
    "ValidatingAdmissionPolicy": KindPrinter(
        (
            NAME,
            _col("Validations", "The number of validation rules defined in this configuration.", "integer"),
            _col("ParamKind", "The kind of resources used to parameterize this policy."),
            AGE,
        ),
        group_cells.admissionpolicy_cells,
    ),
    "ValidatingAdmissionPolicyBinding": KindPrinter(
        (
            NAME,
            _col("PolicyName", "The policy the binding binds."),
            _col("ParamRef", "The param resource that configures the policy."),
            AGE,
        ),
        group_cells.admissionbinding_cells,
    ),
    "RuntimeClass": KindPrinter(
        (NAME, _col("Handler", "The CRI handler of the class."), AGE), group_cells.runtimeclass_cells
    ),
}
DEFAULT = KindPrinter((NAME, AGE), cells.default_cells)

PRINTERS: dict[str, KindPrinter] = {
    "Pod": POD,
    "Node": NODE,
    "Event": EVENT,
    "Namespace": KindPrinter((NAME, _col("Status", "The status of the namespace."), AGE), cells.namespace_cells),
    "ReplicaSet": REPLICASET,
    "ReplicationController": KindPrinter(REPLICASET.columns, cells.replicationcontroller_cells),
    "DaemonSet": DAEMONSET,
    "Deployment": DEPLOYMENT,
    "StatefulSet": STATEFULSET,
    "Job": JOB,
    "CronJob": CRONJOB,
    "HorizontalPodAutoscaler": HPA,
    "PriorityClass": PRIORITY_CLASS,
    "PodDisruptionBudget": PDB,
    "Lease": KindPrinter((NAME, _col("Holder", "Identity of the lease's holder."), AGE), cells.lease_cells),
    "ConfigMap": KindPrinter((NAME, _col("Data", "Number of data and binaryData keys."), AGE), cells.configmap_cells),
    "Secret": KindPrinter(
        (NAME, _col("Type", "Type of the secret."), _col("Data", "Number of data keys."), AGE), cells.secret_cells
    ),
    "Service": SERVICE,
    **GROUP_PRINTERS,
    **{k: KindPrinter((NAME, *(Column(*c) for c in cols)), fn) for k, (cols, fn) in volume_cells.PRINTERS.items()},
    **{k: KindPrinter((NAME, *(Column(*c) for c in cols)), fn) for k, (cols, fn) in endpoint_cells.PRINTERS.items()},
    "SchedulingResult": KindPrinter(
        (NAME, *(Column(n, t, d, p) for n, t, d, p in explain_cells.COLUMNS)), explain_cells.scheduling_result_cells
    ),
}


def printer_for(kind: str) -> KindPrinter:
    """The kind's printer, else the columns its spec gives as data (``kindspec``), else
    NAME and AGE."""
    printer = PRINTERS.get(kind)
    if printer is not None:
        return printer
    spec = kindspec.get(kind)
    return _spec_printer(spec.columns) if spec is not None and spec.columns else DEFAULT


def _spec_printer(columns: tuple[kindspec.PrintColumn, ...]) -> KindPrinter:
    """NAME, then a spec's columns as a custom resource's additionalPrinterColumns print."""

    def row(obj: dict[str, Any], now: float) -> list[Any]:
        values = [kindspec.cell(obj, c.json_path) for c in columns]
        out = [cells.since(v, now) if c.type == "date" and v is not None else v for c, v in zip(columns, values)]
        return [(obj.get("metadata") or {}).get("name", ""), *out]

    defs = (Column(c.name, c.type, c.description, c.priority) for c in columns)
    return KindPrinter((NAME, *defs), row)


def column_definitions(kind: str) -> list[dict[str, Any]]:
    return [c.to_dict() for c in printer_for(kind).columns]


def table(
    kind: str,
    objects: list[dict[str, Any]],
    now: float,
    *,
    include_object: str = "Metadata",
    resource_version: str = "",
    continue_token: str = "",
    with_columns: bool = True,
) -> dict[str, Any]:
    """A Table of ``objects`` (all of ``kind``), one row each, in the order given.

    ``include_object`` is the request's ``includeObject`` (``Metadata``, ``Object`` or
    ``None``; empty means ``Metadata``); any other value raises ValueError, which the
    caller answers with 400 BadRequest as upstream does.
    """
    mode = include_object or "Metadata"
    if mode not in INCLUDE_OBJECT:
        raise ValueError(
            f"includeObject: unsupported value {include_object!r}: supported values are Metadata, Object, None"
        )
    printer = printer_for(kind)
    metadata: dict[str, Any] = {"resourceVersion": resource_version}
    if continue_token:
        metadata["continue"] = continue_token
    return {
        "kind": "Table",
        "apiVersion": TABLE_API_VERSION,
        "metadata": metadata,
        "columnDefinitions": [c.to_dict() for c in printer.columns] if with_columns else [],
        "rows": [_row(printer, kind, obj, now, mode) for obj in objects],
    }


def _row(printer: KindPrinter, kind: str, obj: dict[str, Any], now: float, mode: str) -> dict[str, Any]:
    row: dict[str, Any] = {"cells": printer.cells(obj, now)}
    conditions = printer.conditions(obj) if printer.conditions is not None else []
    if conditions:
        row["conditions"] = conditions
    if mode == "Metadata":
        metadata = obj.get("metadata")
        partial = dict(metadata) if isinstance(metadata, dict) else {}
        row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": TABLE_API_VERSION, "metadata": partial}
    elif mode == "Object":
        row["object"] = _with_type(kind, obj)
    return row


def _with_type(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The object itself, or a shallow copy given the ``kind``/``apiVersion`` it lacks
    (kubectl prints a row whose object has none as one blank unknown object)."""
    if obj.get("kind") and obj.get("apiVersion"):
        return obj
    api_version = KINDS.get(kind, ("v1", True))[0]
    return {**obj, "kind": obj.get("kind") or kind, "apiVersion": obj.get("apiVersion") or api_version}
