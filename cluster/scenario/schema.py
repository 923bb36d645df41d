"""The scenario file format (docs/architecture.md §9): its schema, defaults and whole-file validation.

Owns turning a YAML document (plus ``--set`` overrides) into a checked ``Scenario``, or
one ``ScenarioError`` line naming the field path and the bad value. Everything is checked
before anything runs, so a bad scenario creates nothing. Called by the CLI and by tests.
The ``expect`` entries and their checks live in ``schema_expect.py``, the workload fields
in ``schema_workloads.py``; this module puts the whole file together.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

import yaml
from pydantic import Field, field_validator
from pydantic import ValidationError as PydanticError

from ..api.durations import parse_duration
from ..api.quantity import QuantityError, parse
from ..api.resources import is_extended
from ..api.validation import SYSTEM_PRIORITY_CLASSES, ValidationError, validate
from ..apiserver.admission import BUILTIN_NAMESPACES
from ..kubelet.adopt import NotAdoptable, node_config
from ..kubelet.kubeletconfig import check_kubelet
from ..kubelet.node import DEFAULT_CAPACITY, NodeConfig
from ..runtime.nodeclaim import wanted
from ..scheduler.config import ConfigError, build_config
from ..yunikorn import config as yk_config
from . import defaults as pod_defaults
from .chaos import CHAOS_ACTIONS, ChaosError, ChaosSpec
from .chaos import check as check_chaos
from .patchstep import PatchSpec
from .schema_expect import INVARIANTS, Expectation, expectation_problem
from .schema_workloads import AnyScale, PoolScale, RollbackSpec
from .strict import Strict

__all__ = ["CHAOS_ACTIONS", "DEFAULT_CAPACITY", "INVARIANTS", "Scenario", "ScenarioError", "load", "load_file"]


class ScenarioError(ValueError):
    """A scenario that cannot run; the message is one line naming the field and value."""


class NodePool(Strict):
    namePrefix: str = "node"
    count: int = Field(default=1, ge=0)
    capacity: dict[str, Any] = Field(default_factory=dict)
    reserved: dict[str, Any] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[dict[str, Any]] = Field(default_factory=list)
    kubelet: dict[str, Any] = Field(default_factory=dict)


SchedulerName = Literal["default-scheduler", "yunikorn"]


def _default_schedulers() -> list[SchedulerName]:
    return ["default-scheduler"]


class ClusterSpec(Strict):
    nodesPerHost: int = Field(default=0, ge=0)
    # Ray nodes to spread the node hosts over; 0: whatever Ray cluster the driver joins.
    # Without RAY_ADDRESS, 2 or more starts a local multi-node Ray cluster on this machine.
    rayNodes: int = Field(default=0, ge=0, le=16)
    nodes: list[NodePool] = Field(default_factory=list)
    # The schedulers to run: the default one, YuniKorn mode (pods with schedulerName:
    # yunikorn, docs/yunikorn.md), or both sharing the nodes.
    schedulers: list[SchedulerName] = Field(default_factory=_default_schedulers, min_length=1)
    # How long a Job's pod runs (then exits 0) when its template sets no kubemu.io/run-seconds.
    jobRunSeconds: float = Field(default=5.0, ge=0)
    # Which Nodes created through the API get a kubelet (cluster/runtime/nodeclaim.py).
    manageNodes: Literal["all", "annotated", "none"] = "all"


class DeleteSpec(Strict):
    kind: str = "Pod"
    namespace: str = "default"
    name: str
    gracePeriodSeconds: int | None = None


class RemoveNodes(Strict):
    names: list[str] = Field(min_length=1)


class Step(Strict):
    at: float
    create: list[dict[str, Any]] = Field(default_factory=list)
    delete: DeleteSpec | list[DeleteSpec] | None = None
    chaos: ChaosSpec | None = None
    addNodes: NodePool | None = None  # a pool; a shared namePrefix continues its numbering
    removeNodes: RemoveNodes | None = None  # the Node objects are deleted
    createNode: dict[str, Any] | list[dict[str, Any]] | None = None  # Node manifests, created as kubectl would
    deleteNode: str | list[str] | None = None  # Node names, deleted through the API as kubectl would
    patch: PatchSpec | list[PatchSpec] | None = None  # applied in order (patchstep.py)
    scale: AnyScale | None = None  # kubectl scale (rollout.py), or a node pool's count
    rollback: RollbackSpec | None = None  # kubectl rollout undo (rollout.py)

    _at = field_validator("at", mode="before")(lambda cls, v: parse_duration(v))

    def patches(self) -> list[PatchSpec]:
        if self.patch is None:
            return []
        return self.patch if isinstance(self.patch, list) else [self.patch]

    def node_creates(self) -> list[dict[str, Any]]:
        if self.createNode is None:
            return []
        return self.createNode if isinstance(self.createNode, list) else [self.createNode]

    def node_deletes(self) -> list[str]:
        if self.deleteNode is None:
            return []
        return self.deleteNode if isinstance(self.deleteNode, list) else [self.deleteNode]

    def deletes(self) -> list[DeleteSpec]:
        if self.delete is None:
            return []
        return self.delete if isinstance(self.delete, list) else [self.delete]


class ScenarioSpec(Strict):
    runtime: Literal["ray", "local"] = "ray"  # where the components run (docs/architecture.md §6)
    seed: int = 1
    timeScale: float = Field(default=1.0, gt=0)  # given: the Ray runtime's pace at most (``pace``)
    duration: float = 300.0
    cluster: ClusterSpec = Field(default_factory=ClusterSpec)
    objects: list[dict[str, Any]] = Field(default_factory=list)
    timeline: list[Step] = Field(default_factory=list)
    expect: list[Expectation] = Field(default_factory=list)
    defaults: list[pod_defaults.PodDefaults] = Field(default_factory=list)  # see defaults.py
    # KubeSchedulerConfiguration: profiles, plugins, pluginConfig, backoff, percentageOfNodesToScore.
    scheduler: dict[str, Any] | None = None

    _duration_v = field_validator("duration", mode="before")(lambda cls, v: parse_duration(v))

    def pace(self) -> float | None:
        """How many emulated seconds per real second the Ray runtime may run at most: the
        ``timeScale`` the file (or ``--set``) gives, or None when it gives none: as fast as
        the cluster keeps up (``cluster/runtime/stepper.py``). The local runtime ignores it."""
        return self.timeScale if "timeScale" in self.model_fields_set else None


class Metadata(Strict):
    name: str
    description: str = ""


class Scenario(Strict):
    apiVersion: Literal["kubemu.io/v1alpha1"]
    kind: Literal["Scenario"]
    metadata: Metadata
    spec: ScenarioSpec


def load_file(path: str, overrides: Sequence[str] = ()) -> Scenario:
    try:
        with open(path) as f:
            raw = yaml.safe_load(f)
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read scenario: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise ScenarioError(f"{path}: not valid YAML: {str(e).splitlines()[0]}") from None
    return load(raw, overrides)


def load(raw: Any, overrides: Sequence[str] = ()) -> Scenario:
    """Check a scenario document completely; raises ScenarioError with one line."""
    if not isinstance(raw, dict):
        raise ScenarioError("scenario: the document must be a mapping with apiVersion, kind, metadata and spec")
    for item in overrides:
        apply_override(raw, item)
    try:
        scenario = Scenario.model_validate(raw)
    except PydanticError as e:
        raise ScenarioError(_pydantic_line(e)) from None
    _check_semantics(scenario)
    return scenario


def apply_override(raw: dict, item: str) -> None:
    """``--set spec.timeScale=50``: set a dotted path (list indexes allowed) to a YAML value."""
    if "=" not in item:
        raise ScenarioError(f"--set: {json.dumps(item)} is not of the form key=value")
    path, value = item.split("=", 1)
    parts = path.split(".")
    node: Any = raw
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        key: Any = int(part) if isinstance(node, list) and part.isdigit() else part
        if isinstance(node, list) and (not isinstance(key, int) or key >= len(node)):
            raise ScenarioError(f"--set: {json.dumps(path)} has no element {part}")
        if last:
            node[key] = yaml.safe_load(value)
        else:
            if isinstance(node, dict) and key not in node:
                node[key] = {}
            node = node[key]
            if not isinstance(node, (dict, list)):
                raise ScenarioError(f"--set: {json.dumps(path)} goes through a value that is not a mapping")


def _pydantic_line(e: PydanticError) -> str:
    err = e.errors()[0]
    path = ""
    for part in err["loc"]:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part[:1].isupper() or "[" in part:
            continue  # a union member's type name, not a field (schema fields are camelCase)
        else:
            path += ("." if path else "") + str(part)
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "missing":
        return f"{path}: Required value"
    if err["type"] == "extra_forbidden":
        return f"{path}: unknown field"
    return f"{path}: {json.dumps(err.get('input'), default=str)} {msg}"


def check_repeats(items: list[dict], path: str) -> list[tuple[str, dict]]:
    """Check each ``{repeat: N, template: MANIFEST}`` (``repeat.py`` expands it as the run
    sends it); returns (path, manifest) pairs to validate: each template once."""
    to_check = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or "repeat" not in item:
            to_check.append((f"{path}[{i}]", item))
            continue
        extra = set(item) - {"repeat", "template"}
        if extra:
            raise ScenarioError(f"{path}[{i}].{sorted(extra)[0]}: unknown field (a repeat has repeat and template)")
        n, template = item.get("repeat"), item.get("template")
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ScenarioError(f"{path}[{i}].repeat: {json.dumps(n)} must be an integer >= 1")
        if not isinstance(template, dict):
            raise ScenarioError(f"{path}[{i}].template: Required value: the manifest to repeat")
        to_check.append((f"{path}[{i}].template", template))
    return to_check


def scheduler_config(s: Scenario):
    """The scheduler's configuration, built from ``spec.scheduler`` (checked at load)."""
    return build_config(s.spec.scheduler)


def _check_semantics(s: Scenario) -> None:
    spec = s.spec
    if spec.runtime == "local" and spec.cluster.rayNodes:
        raise ScenarioError(
            f"spec.cluster.rayNodes: {spec.cluster.rayNodes} needs the ray runtime; the local runtime runs "
            "every component in one process (set spec.runtime: ray)"
        )
    try:
        build_config(spec.scheduler)
    except ConfigError as e:
        raise ScenarioError(str(e)) from None
    for i, pool in enumerate(spec.cluster.nodes):
        _check_pool(pool, f"spec.cluster.nodes[{i}]")
    manifests = check_repeats(spec.objects, "spec.objects")
    for j, step in enumerate(spec.timeline):
        if step.addNodes is not None:
            _check_pool(step.addNodes, f"spec.timeline[{j}].addNodes")
        manifests += check_repeats(step.create, f"spec.timeline[{j}].create")
        manifests += _node_manifests(step, f"spec.timeline[{j}].createNode")
    _check_pool_scales(spec)
    _check_chaos(spec)
    _apply_defaults(spec)
    _check_manifests(spec, manifests)
    for i, exp in enumerate(spec.expect):
        problem = expectation_problem(exp, f"spec.expect[{i}]")
        if problem:
            raise ScenarioError(problem)


def _check_manifests(spec: Any, manifests: list[tuple[str, dict]]) -> None:
    """Every manifest valid, and what each names (PriorityClasses, namespaces) exists."""
    classes = set(SYSTEM_PRIORITY_CLASSES)
    namespaces = set(BUILTIN_NAMESPACES)
    for path, obj in manifests:
        try:
            validate(obj, path)
        except ValidationError as e:
            raise ScenarioError(str(e)) from None
        problem = pod_defaults.check_usage(path, obj) or _yunikorn_config_problem(path, obj)
        if problem:
            raise ScenarioError(problem)
        if obj.get("kind") == "PriorityClass":
            classes.add(obj["metadata"]["name"])
        if obj.get("kind") == "Namespace":
            namespaces.add(obj["metadata"]["name"])
    for path, obj in manifests:
        _check_references(path, obj, classes, namespaces)
        if path.split(".")[-1].startswith("createNode") and wanted(spec.cluster.manageNodes, _annotations(obj)):
            try:
                node_config(obj)  # what the kubelet taking it over would refuse
            except NotAdoptable as e:
                raise ScenarioError(f"{path}.{e}") from None


def _yunikorn_config_problem(path: str, obj: dict) -> str | None:
    """YuniKorn mode's ConfigMap is checked at load, as the scheduler would read it: a bad
    queues.yaml in a scenario is a bad scenario, not a Warning event at run time."""
    meta = obj.get("metadata") or {}
    text = (obj.get("data") or {}).get(yk_config.CONFIG_KEY)
    if obj.get("kind") != "ConfigMap" or (meta.get("namespace"), meta.get("name")) != yk_config.CONFIGMAP:
        return None
    if text is None:
        return None
    try:
        yk_config.parse(text)
    except yk_config.ConfigError as e:
        return f"{path}.data.{yk_config.CONFIG_KEY}: {e}"
    return None


def _apply_defaults(spec: ScenarioSpec) -> None:
    problem = pod_defaults.check_selectors(spec.defaults)
    if problem:
        raise ScenarioError(problem)
    # A repeat's template gets them, so every copy made from it has them.
    pod_defaults.apply(spec.defaults, spec.objects)
    for step in spec.timeline:
        pod_defaults.apply(spec.defaults, step.create)


def _node_manifests(step: Step, path: str) -> list[tuple[str, dict]]:
    """A ``createNode`` step's manifests to validate; ``kind: Node`` and ``apiVersion: v1``
    are filled in when left out, any other kind is refused."""
    items = step.node_creates()
    out = []
    for i, obj in enumerate(items):
        p = f"{path}[{i}]" if isinstance(step.createNode, list) else path
        kind = obj.setdefault("kind", "Node")
        if kind != "Node":
            raise ScenarioError(f"{p}.kind: {json.dumps(kind)} must be Node (create other kinds with create)")
        obj.setdefault("apiVersion", "v1")
        out.append((p, obj))
    return out


def _annotations(obj: dict) -> dict[str, str] | None:
    annotations = (obj.get("metadata") or {}).get("annotations")
    return annotations if isinstance(annotations, dict) else None


def _check_pool_scales(spec: ScenarioSpec) -> None:
    pools = {p.namePrefix for p in spec.cluster.nodes} | {s.addNodes.namePrefix for s in spec.timeline if s.addNodes}
    for j, step in enumerate(spec.timeline):
        if isinstance(step.scale, PoolScale) and step.scale.pool not in pools:
            raise ScenarioError(
                f"spec.timeline[{j}].scale.pool: {json.dumps(step.scale.pool)} is not a node pool of this scenario "
                "(a namePrefix under spec.cluster.nodes or an addNodes step)"
            )


def _node_capacities(spec: ScenarioSpec) -> dict[str, dict[str, str]]:
    """Every node the scenario may have (pools, addNodes steps, pools scaled up, Nodes
    created through the API), with its capacity."""
    taken: dict[str, int] = {}
    live: dict[str, list[str]] = {}  # namePrefix -> its nodes, oldest first
    pools: dict[str, NodePool] = {}
    out = {}

    def add(pool: NodePool, count: int) -> None:
        pools.setdefault(pool.namePrefix, pool)
        for _ in range(count):
            i = taken.get(pool.namePrefix, 0)
            taken[pool.namePrefix] = i + 1
            name = f"{pool.namePrefix}-{i}"
            live.setdefault(pool.namePrefix, []).append(name)
            out[name] = {**DEFAULT_CAPACITY, **{k: str(v) for k, v in pool.capacity.items()}}

    for pool in spec.cluster.nodes:
        add(pool, pool.count)
    for obj in spec.objects:
        _add_api_node(out, obj)
    for step in spec.timeline:
        if step.addNodes is not None:
            add(step.addNodes, step.addNodes.count)
        if isinstance(step.scale, PoolScale) and step.scale.pool in pools:
            members = live.get(step.scale.pool, [])
            add(pools[step.scale.pool], max(0, step.scale.count - len(members)))
            del members[step.scale.count :]
        for obj in step.create + step.node_creates():
            _add_api_node(out, obj)
    return out


def _add_api_node(out: dict[str, dict[str, str]], obj: Any) -> None:
    """A Node manifest's name and the capacity its kubelet would have (none: not adoptable)."""
    if not isinstance(obj, dict) or obj.get("kind") != "Node":
        return
    try:
        out[str((obj.get("metadata") or {}).get("name"))] = node_config(obj).capacity
    except NotAdoptable:
        out[str((obj.get("metadata") or {}).get("name"))] = {}


def _check_chaos(spec: ScenarioSpec) -> None:
    steps = [
        (j, s)
        for j, s in enumerate(spec.timeline)
        if s.chaos is not None or s.removeNodes is not None or s.deleteNode is not None
    ]
    if not steps:
        return
    nodes = _node_capacities(spec)
    for j, step in steps:
        for i, name in enumerate(step.removeNodes.names if step.removeNodes else ()):
            if name not in nodes:
                raise ScenarioError(
                    f"spec.timeline[{j}].removeNodes.names[{i}]: {json.dumps(name)} is not a node of this scenario"
                )
        for i, name in enumerate(step.node_deletes()):
            if name not in nodes:
                where = f"[{i}]" if isinstance(step.deleteNode, list) else ""
                raise ScenarioError(
                    f"spec.timeline[{j}].deleteNode{where}: {json.dumps(name)} is not a node of this scenario"
                )
        try:
            if step.chaos is not None:
                check_chaos(step.chaos, nodes, spec.cluster.rayNodes, spec.runtime)
        except ChaosError as e:
            raise ScenarioError(f"spec.timeline[{j}].chaos.{e}") from None


def _check_pool(pool: NodePool, path: str) -> None:
    for field in ("capacity", "reserved"):
        for name, q in getattr(pool, field).items():
            try:
                value = parse(q)
            except QuantityError:
                raise ScenarioError(f"{path}.{field}.{name}: {json.dumps(q)} is not a quantity") from None
            if value < 0:
                raise ScenarioError(f"{path}.{field}.{name}: {json.dumps(q)} must be greater than or equal to 0")
            if is_extended(name) and value.denominator != 1:  # devices come in whole units
                raise ScenarioError(f"{path}.{field}.{name}: {json.dumps(q)} must be an integer")
    for name in ("cpu", "memory"):
        if name not in pool.capacity:
            raise ScenarioError(f"{path}.capacity.{name}: Required value: a node pool needs cpu and memory capacity")
    config = NodeConfig(
        name=f"{pool.namePrefix}-0",
        capacity={**DEFAULT_CAPACITY, **{k: str(v) for k, v in pool.capacity.items()}},
        reserved={k: str(v) for k, v in pool.reserved.items()},
        kubelet=dict(pool.kubelet),
    )
    problem = check_kubelet(config)
    if problem:
        raise ScenarioError(f"{path}.{problem}")


def _check_references(path: str, obj: dict, classes: set[str], namespaces: set[str]) -> None:
    kind = obj.get("kind")
    ns = (obj.get("metadata") or {}).get("namespace")
    if ns and kind not in ("Node", "Namespace", "PriorityClass") and ns not in namespaces:
        raise ScenarioError(f'{path}.metadata.namespace: namespaces "{ns}" not found')
    specs = []
    if kind == "Pod":
        specs.append((f"{path}.spec", obj.get("spec") or {}))
    elif kind in ("ReplicaSet", "DaemonSet"):
        specs.append((f"{path}.spec.template.spec", ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}))
    for spath, pspec in specs:
        name = pspec.get("priorityClassName")
        if name and name not in classes:
            raise ScenarioError(f"{spath}.priorityClassName: no PriorityClass with name {name} was found")
