"""Chaos actions in a scenario's timeline: their fields, and checks against the cluster.

Owns ``ChaosSpec`` (one model for every action, with the fields each action takes), the
whole-scenario checks of a chaos step (the node it names exists, the device it names is a
device of that node, quantities parse) and the conversions the driver needs (the usage a
``pressure`` action adds, as integers). Called by ``schema.py`` while loading a scenario
and by the driver when a step is due. Every error is one line naming the field and value.

Actions:
- ``{action: killNode, node: N}``: the node's kubelet stops (no heartbeats, pods frozen).
- ``{action: pressure, node: N, memory: 3Gi, disk: 10Gi, inodes: 100000, pids: 1000,
  duration: 60s}``: node-level usage on top of the pods' (at least one of the four; a
  later ``pressure`` on the same node replaces it; without ``duration`` it stays).
- ``{action: deviceHealth, node: N, resource: nvidia.com/gpu, device: 3, healthy: false}``:
  the node's device plugin reports the device (an index, or a device ID such as
  ``node-0-gpu-3``) with the new health.
- ``{action: devicePlugin, node: N, resource: nvidia.com/gpu, running: false}``: the
  node's device plugin for the resource goes away (``running: true``: it comes back and
  registers again).
- ``{action: killHost, node: N}``: the node-host process holding N is killed, with every
  node in it (like a rack losing power).
- ``{action: partition, node: N, duration: 60s}``: the node's heartbeats (Lease renewals and
  node status) stop while its pods keep running; after ``duration`` they resume (without
  it, they never do).
- ``{action: restart, component: apiserver | scheduler | controller-manager}``: the
  component's actor process dies and Ray starts it again; it recovers (the apiserver from
  its durable log, the others by relisting). ``{action: restart, component: host, node:
  N}`` restarts the node-host process holding N: its kubelets re-list and reconcile their
  pods (running ones keep running).
- ``{action: killRayNode, rayNode: I}``: Ray node I (1 .. spec.cluster.rayNodes - 1; node 0
  holds the control plane) stops, with its raylet and every host on it.
- ``{action: random, rate: 0.05, seed: 7, targets: [killNode, killHost, partition],
  duration: 600s, partitionDuration: 60s}``: faults at random, ``rate`` per emulated second
  on average (a Poisson process), each a target action on a node picked at random among
  the live ones (``randomchaos.py``).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from ..api.durations import parse_duration
from ..api.quantity import QuantityError, parse
from ..api.resources import is_extended

CHAOS_ACTIONS = (
    "killNode",
    "killHost",
    "partition",
    "restart",
    "killRayNode",
    "random",
    "pressure",
    "deviceHealth",
    "devicePlugin",
)
COMPONENTS = ("apiserver", "scheduler", "yunikorn", "controller-manager", "host")
RANDOM_TARGETS = ("killNode", "killHost", "partition")
NEEDS_PROCESSES = ("killHost", "killRayNode")  # the local runtime refuses these
PRESSURE_FIELDS = ("memory", "disk", "inodes", "pids")
_ALL_FIELDS = (
    "node",
    *PRESSURE_FIELDS,
    "duration",
    "resource",
    "device",
    "healthy",
    "running",
    "component",
    "rayNode",
    "rate",
    "seed",
    "targets",
    "partitionDuration",
)
# Fields each action takes, beyond ``action``; the first group is required.
_FIELDS = {
    "killNode": (("node",), ()),
    "killHost": (("node",), ()),
    "partition": (("node",), ("duration",)),
    "restart": (("component",), ("node",)),
    "killRayNode": (("rayNode",), ()),
    "random": (("rate", "targets", "duration"), ("seed", "partitionDuration")),
    "pressure": (("node",), (*PRESSURE_FIELDS, "duration")),
    "deviceHealth": (("node", "resource", "device", "healthy"), ()),
    "devicePlugin": (("node", "resource", "running"), ()),
}


class ChaosError(ValueError):
    """A chaos step that cannot run; the message is ``<field>: <detail>`` (one line)."""


class ChaosSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: str
    node: str | None = None
    memory: Any = None
    disk: Any = None
    inodes: Any = None
    pids: Any = None
    duration: Any = None
    resource: str | None = None
    device: int | str | None = None
    healthy: bool | None = None
    running: bool | None = None
    component: str | None = None
    rayNode: int | None = None
    rate: float | None = None
    seed: int | None = None
    targets: list[str] | None = None
    partitionDuration: Any = None

    @field_validator("device", mode="before")
    @classmethod
    def _device(cls, v):
        if v is None or isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool)):
            return v
        raise ValueError("is not a device index (0, 1, ...) or a device ID")

    @field_validator("action")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in CHAOS_ACTIONS:
            raise ValueError(f"is not a chaos action this version runs (supported: {', '.join(CHAOS_ACTIONS)})")
        return v

    def extra_usage(self) -> dict[str, int]:
        """A pressure action's usage: memory and disk in bytes, inodes and pids as counts."""
        return {f: _amount(f, getattr(self, f)) for f in PRESSURE_FIELDS if getattr(self, f) is not None}

    def duration_seconds(self) -> float | None:
        return None if self.duration is None else parse_duration(self.duration)

    def partition_seconds(self) -> float:
        """How long each partition of a random action lasts (60 s unless given)."""
        return DEFAULT_PARTITION if self.partitionDuration is None else parse_duration(self.partitionDuration)


DEFAULT_PARTITION = 60.0


def _amount(field: str, raw) -> int:
    try:
        value = parse(raw if isinstance(raw, str) else str(raw))
    except QuantityError:
        raise ChaosError(f"{field}: {json.dumps(raw)} is not a quantity") from None
    if value < 0:
        raise ChaosError(f"{field}: {json.dumps(raw)} must be greater than or equal to 0")
    if field in ("inodes", "pids") and value.denominator != 1:
        raise ChaosError(f"{field}: {json.dumps(raw)} must be a whole number")
    return int(value)


def check(chaos: ChaosSpec, nodes: dict[str, dict[str, str]], ray_nodes: int = 0, runtime: str = "ray") -> None:
    """Raise ChaosError unless the action's fields are complete, name a real target, and the
    runtime can carry it out.

    ``nodes`` maps every node name the scenario creates to its capacity; ``ray_nodes`` is
    ``spec.cluster.rayNodes``; ``runtime`` is ``spec.runtime``."""
    required, optional = _FIELDS[chaos.action]
    for f in _ALL_FIELDS:
        given = getattr(chaos, f) is not None
        if given and f not in required and f not in optional:
            raise ChaosError(f"{f}: not a field of {chaos.action} (it takes {', '.join(required + optional)})")
        if not given and f in required:
            raise ChaosError(f"{f}: Required value for {chaos.action}")
    needs = [a for a in (chaos.action, *(chaos.targets or ())) if a in NEEDS_PROCESSES]
    if runtime == "local" and needs:
        field = "action" if chaos.action in NEEDS_PROCESSES else "targets"
        raise ChaosError(
            f"{field}: {needs[0]} needs the ray runtime (it stops processes); the local runtime runs "
            "every component in one process (set spec.runtime: ray)"
        )
    if chaos.action == "restart" and (chaos.component == "host") != (chaos.node is not None):
        raise ChaosError(
            "node: Required value for restart of a host (the host holding that node)"
            if chaos.node is None
            else f"node: not a field of restart of the {chaos.component} (only a host restart takes it)"
        )
    if ("node" in required or chaos.node is not None) and chaos.node not in nodes:
        shown = ", ".join(sorted(nodes)[:5]) + (", ..." if len(nodes) > 5 else "")
        raise ChaosError(f"node: {json.dumps(chaos.node)} is not a node of this scenario (nodes: {shown or 'none'})")
    for f in ("duration", "partitionDuration"):
        _check_duration(chaos, f)
    if chaos.action == "pressure":
        _check_pressure(chaos)
    elif chaos.action == "restart" and chaos.component not in COMPONENTS:
        raise ChaosError(
            f"component: {json.dumps(chaos.component)} is not a component kubemu restarts "
            f"(supported: {', '.join(COMPONENTS)})"
        )
    elif chaos.action == "killRayNode":
        _check_ray_node(chaos.rayNode, ray_nodes)
    elif chaos.action == "random":
        _check_random(chaos)
    elif chaos.action == "deviceHealth":
        assert chaos.node is not None  # required, and checked to be a node above
        _check_device(chaos, nodes[chaos.node])
    elif chaos.action == "devicePlugin":
        assert chaos.node is not None  # required, and checked to be a node above
        _check_resource(chaos, nodes[chaos.node])


def _check_pressure(chaos: ChaosSpec) -> None:
    if not any(getattr(chaos, f) is not None for f in PRESSURE_FIELDS):
        raise ChaosError(f"memory: Required value: pressure needs at least one of {', '.join(PRESSURE_FIELDS)}")
    chaos.extra_usage()


def _check_duration(chaos: ChaosSpec, field: str) -> None:
    raw = getattr(chaos, field)
    if raw is None:
        return
    try:
        seconds = parse_duration(raw)
    except ValueError as e:
        detail = str(e).split(" is ", 1)[-1]
        raise ChaosError(f"{field}: {json.dumps(raw)} is {detail}") from None
    if seconds <= 0 and chaos.action != "pressure":
        raise ChaosError(f"{field}: {json.dumps(raw)} must be greater than 0")


def _check_ray_node(index, ray_nodes: int) -> None:
    if ray_nodes < 2:
        raise ChaosError(f"rayNode: killRayNode needs spec.cluster.rayNodes of 2 or more (it is {ray_nodes})")
    if isinstance(index, bool) or not 1 <= index < ray_nodes:
        raise ChaosError(
            f"rayNode: {json.dumps(index)} is not a Ray node kubemu may stop "
            f"(1..{ray_nodes - 1}; node 0 holds the control plane)"
        )


def _check_random(chaos: ChaosSpec) -> None:
    assert chaos.rate is not None  # required for random: check() has raised otherwise
    if not chaos.rate > 0:
        raise ChaosError(f"rate: {json.dumps(chaos.rate)} must be greater than 0 (faults per emulated second)")
    if not chaos.targets:
        raise ChaosError(f"targets: Required value: at least one of {', '.join(RANDOM_TARGETS)}")
    for i, t in enumerate(chaos.targets):
        if t not in RANDOM_TARGETS:
            raise ChaosError(
                f"targets[{i}]: {json.dumps(t)} is not an action random chaos runs "
                f"(supported: {', '.join(RANDOM_TARGETS)})"
            )


def _check_resource(chaos: ChaosSpec, capacity: dict[str, str]) -> None:
    res = chaos.resource
    if res not in capacity or not is_extended(res):
        known = ", ".join(sorted(n for n in capacity if is_extended(n))) or "none"
        raise ChaosError(f"resource: {json.dumps(res)} is not an extended resource of {chaos.node} (it has: {known})")


def _check_device(chaos: ChaosSpec, capacity: dict[str, str]) -> None:
    _check_resource(chaos, capacity)
    res = chaos.resource
    assert res is not None  # _check_resource raised unless it is a key of capacity
    count = int(parse(str(capacity[res])))
    kind = res.rpartition("/")[2]
    ids = [f"{chaos.node}-{kind}-{i}" for i in range(count)]  # deviceplugin.py's naming rule
    device = chaos.device
    if isinstance(device, int):
        if not 0 <= device < count:
            raise ChaosError(f"device: {device} is out of range for {res} on {chaos.node} (0..{count - 1})")
    elif device not in ids:
        span = f"{ids[0]} .. {ids[-1]}" if ids else "none"
        raise ChaosError(
            f"device: {json.dumps(device)} is not a device of {res} on {chaos.node} (an index, or an ID: {span})"
        )
