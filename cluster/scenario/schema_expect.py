"""The ``expect`` entries of a scenario file: their models and the checks at load.

Owns what one expectation may say (its mode, the one subject it observes and the fields
and comparators that fit that subject) and the list of invariants one can name. ``schema.py``
builds ``ScenarioSpec.expect`` from ``Expectation`` and raises ``expectation_problem``'s
line as its ``ScenarioError``; ``expectations.py`` and ``runner.py`` check them at run time.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import field_validator

from ..api.durations import parse_duration
from ..api.quantity import QuantityError, parse
from ..api.selectors import LabelSelector, SelectorError
from ..kubelet.cpumanager import CpusetError, parse_cpuset
from .schema_workloads import WORKLOAD_INVARIANTS, ObjectRef, number, object_problem
from .strict import Strict

_CORE_INVARIANTS = ("noOvercommit", "noDoubleBinding", "cpusetsExclusive", "devicesExclusive", "noLostPods")
INVARIANTS = _CORE_INVARIANTS + WORKLOAD_INVARIANTS


class PodRef(Strict):
    namespace: str = "default"
    name: str | None = None
    labelSelector: str | None = None


class Comparator(Strict):
    equals: int | None = None
    atLeast: int | None = None
    atMost: int | None = None


class EventOrder(Strict):
    reason: str
    objects: list[str]  # Kind/namespace/name (Kind/name when cluster-scoped), in order


class CountSpec(Strict):
    kind: Literal["Pod", "Node", "Event"] = "Pod"
    phase: str | None = None
    labelSelector: str | None = None
    nodeName: str | None = None
    namespace: str | None = None
    terminating: bool | None = None  # Pods: only those being deleted (true) or not (false)
    ready: bool | None = None  # Nodes: only those whose Ready condition is True (true) or not


class Expectation(Strict):
    within: float | None = None
    always: bool | None = None
    until: float | None = None  # holds at every observation up to this time
    at: Literal["end"] | None = None
    # what is observed
    pod: PodRef | None = None
    node: str | None = None
    event: dict[str, str] | None = None
    eventOrder: EventOrder | None = None
    count: CountSpec | None = None
    invariant: str | None = None
    object: ObjectRef | None = None  # with field and a comparator (objectexpect.py)
    field: str | None = None
    exists: bool | None = None
    # pod fields
    phase: str | None = None
    nodeName: str | None = None
    nominatedNodeName: str | None = None
    reason: str | None = None
    message: str | None = None  # a substring of status.message
    qosClass: str | None = None
    terminating: bool | None = None
    absent: bool | None = None
    restartCount: Comparator | None = None
    terminationReason: str | None = None  # some container's state or lastState terminated reason
    waitingReason: str | None = None  # some container's state.waiting.reason
    cpuset: str | None = None  # exact, as the kubelet reports it
    devices: dict[str, int] | None = None  # resource -> how many devices the pod holds
    env: dict[str, str] | None = None  # device-plugin env; "*" = set to anything
    cpuThrottled: bool | None = None
    # node fields
    ready: bool | None = None
    condition: dict[str, str] | None = None
    taint: dict[str, str] | None = None
    noTaint: dict[str, str] | None = None
    allocatable: dict[str, Any] | None = None
    capacity: dict[str, Any] | None = None
    # comparators for count and event (and object, where equals takes any value)
    equals: Any = None
    atLeast: Any = None  # a number for object, a whole one otherwise (schema_workloads.py)
    atMost: Any = None

    _within = field_validator("within", mode="before")(lambda cls, v: None if v is None else parse_duration(v))
    _until = field_validator("until", mode="before")(lambda cls, v: None if v is None else parse_duration(v))
    _bounds = field_validator("atLeast", "atMost")(lambda cls, v: number(v))

    @field_validator("invariant")
    @classmethod
    def _inv(cls, v):
        if v is not None and v not in INVARIANTS:
            raise ValueError(f"is not an invariant (known: {', '.join(INVARIANTS)})")
        return v

    def mode(self) -> str:
        if self.within is not None:
            return "within"
        if self.until is not None:
            return "until"
        return "always" if self.always else "end"

    def needs_pod_resources(self) -> bool:
        """Whether checking it needs the kubelets' PodResources view (cpusets, devices, usage)."""
        return self.invariant in ("cpusetsExclusive", "devicesExclusive") or any(
            v is not None for v in (self.cpuset, self.devices, self.env, self.cpuThrottled)
        )


def expectation_problem(e: Expectation, path: str) -> str | None:
    """What is wrong with expectation ``e`` (at ``path``) as one line naming the field and
    value, or None. May fix ``e.object``'s namespace (``object_problem``)."""
    modes = [m for m in ("within", "always", "until", "at") if getattr(e, m) not in (None, False)]
    if len(modes) != 1:
        return f"{path}: needs exactly one of within, always, until, at: end (got {modes or 'none'})"
    subjects = [f for f in SUBJECTS if getattr(e, f) is not None]
    if len(subjects) != 1:
        return f"{path}: needs exactly one of {', '.join(SUBJECTS)} (got {subjects or 'none'})"
    problem = _fields_problem(e, path, subjects[0]) or object_problem(e, path)
    if problem:
        return problem
    if e.pod is not None and (e.pod.name is None) == (e.pod.labelSelector is None):
        return f"{path}.pod: needs exactly one of name, labelSelector"
    if e.count is not None or e.event is not None:
        if sum(x is not None for x in (e.equals, e.atLeast, e.atMost)) == 0:
            return f"{path}: a count or event expectation needs equals, atLeast or atMost"
    if e.count is not None:
        for field, kind in (("terminating", "Pod"), ("ready", "Node")):
            if getattr(e.count, field) is not None and e.count.kind != kind:
                return f"{path}.count.{field}: only a {kind} count takes it (kind is {e.count.kind})"
    for field, holder in (("pod", e.pod), ("count", e.count)):
        sel = getattr(holder, "labelSelector", None)
        if sel is not None:
            try:
                LabelSelector.parse(sel)
            except SelectorError as err:
                return f"{path}.{field}.labelSelector: {json.dumps(sel)} {err.detail}"
    if e.event is not None:
        unknown = set(e.event) - {"reason", "object", "type", "message"}
        if unknown:
            return f"{path}.event.{sorted(unknown)[0]}: unknown field"
    return None


SUBJECTS = ("pod", "node", "event", "eventOrder", "count", "invariant", "object")


_POD_FIELDS = (
    "phase",
    "nodeName",
    "nominatedNodeName",
    "reason",
    "message",
    "qosClass",
    "terminating",
    "restartCount",
    "terminationReason",
    "waitingReason",
    "cpuset",
    "devices",
    "env",
    "cpuThrottled",
)
_NODE_FIELDS = ("ready", "condition", "taint", "noTaint", "allocatable", "capacity")


def _fields_problem(e: Expectation, path: str, subject: str) -> str | None:
    """Pod fields only with ``pod``, node fields only with ``node``; quantities parse."""
    for fields, owner in ((_POD_FIELDS, "pod"), (_NODE_FIELDS, "node")):
        for f in fields:
            if getattr(e, f) is not None and subject != owner:
                return f"{path}.{f}: a {owner} field, but this expectation observes {subject}"
    if e.restartCount is not None and all(v is None for v in e.restartCount.model_dump().values()):
        return f"{path}.restartCount: needs equals, atLeast or atMost"
    for f in ("allocatable", "capacity"):
        for name, q in (getattr(e, f) or {}).items():
            try:
                parse(str(q))
            except QuantityError:
                return f"{path}.{f}.{name}: {json.dumps(q)} is not a quantity"
    if e.cpuset is not None:
        try:
            parse_cpuset(e.cpuset)
        except CpusetError:
            return f'{path}.cpuset: {json.dumps(e.cpuset)} is not a cpuset (use e.g. "0-3,5")'
    for name, n in (e.devices or {}).items():
        if n < 0:
            return f"{path}.devices.{name}: {n} must be greater than or equal to 0"
    return None
