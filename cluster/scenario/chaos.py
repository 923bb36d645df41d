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
"""
from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from ..api.quantity import QuantityError, parse
from ..api.resources import is_extended
from .durations import parse_duration

CHAOS_ACTIONS = ("killNode", "pressure", "deviceHealth", "devicePlugin")
PRESSURE_FIELDS = ("memory", "disk", "inodes", "pids")
# Fields each action takes, beyond ``action``; the first group is required.
_FIELDS = {
    "killNode": (("node",), ()),
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


def check(chaos: ChaosSpec, nodes: dict[str, dict[str, str]]) -> None:
    """Raise ChaosError unless the action's fields are complete and name a real target.

    ``nodes`` maps every node name the scenario creates to its capacity."""
    required, optional = _FIELDS[chaos.action]
    for f in ("node", *PRESSURE_FIELDS, "duration", "resource", "device", "healthy", "running"):
        given = getattr(chaos, f) is not None
        if given and f not in required and f not in optional:
            raise ChaosError(f"{f}: not a field of {chaos.action} (it takes {', '.join(required + optional)})")
        if not given and f in required:
            raise ChaosError(f"{f}: Required value for {chaos.action}")
    if chaos.node not in nodes:
        shown = ", ".join(sorted(nodes)[:5]) + (", ..." if len(nodes) > 5 else "")
        raise ChaosError(f"node: {json.dumps(chaos.node)} is not a node of this scenario (nodes: {shown or 'none'})")
    if chaos.action == "pressure":
        _check_pressure(chaos)
    elif chaos.action == "deviceHealth":
        _check_device(chaos, nodes[chaos.node])
    elif chaos.action == "devicePlugin":
        _check_resource(chaos, nodes[chaos.node])


def _check_pressure(chaos: ChaosSpec) -> None:
    if not any(getattr(chaos, f) is not None for f in PRESSURE_FIELDS):
        raise ChaosError(f"memory: Required value: pressure needs at least one of {', '.join(PRESSURE_FIELDS)}")
    chaos.extra_usage()
    if chaos.duration is not None:
        try:
            chaos.duration_seconds()
        except ValueError as e:
            detail = str(e).split(" is ", 1)[-1]
            raise ChaosError(f"duration: {json.dumps(chaos.duration)} is {detail}") from None


def _check_resource(chaos: ChaosSpec, capacity: dict[str, str]) -> None:
    res = chaos.resource
    if res not in capacity or not is_extended(res):
        known = ", ".join(sorted(n for n in capacity if is_extended(n))) or "none"
        raise ChaosError(f"resource: {json.dumps(res)} is not an extended resource of {chaos.node} "
                         f"(it has: {known})")


def _check_device(chaos: ChaosSpec, capacity: dict[str, str]) -> None:
    _check_resource(chaos, capacity)
    res = chaos.resource
    count = int(parse(str(capacity[res])))
    kind = res.rpartition("/")[2]
    ids = [f"{chaos.node}-{kind}-{i}" for i in range(count)]  # deviceplugin.py's naming rule
    device = chaos.device
    if isinstance(device, int):
        if not 0 <= device < count:
            raise ChaosError(f"device: {device} is out of range for {res} on {chaos.node} (0..{count - 1})")
    elif device not in ids:
        span = f"{ids[0]} .. {ids[-1]}" if ids else "none"
        raise ChaosError(f"device: {json.dumps(device)} is not a device of {res} on {chaos.node} "
                         f"(an index, or an ID: {span})")
