"""YuniKorn's configuration: the text of ``queues.yaml`` parsed, checked and typed.

Owns ``parse`` (text to ``Config``: partitions, the queue tree with resources and
properties, placement rules, the preemption switches and the node sort policy; any error
is one ``ConfigError`` line naming the queue and the field), ``DEFAULT`` (upstream's
configuration when there is no ConfigMap), property inheritance and the typed readers of
properties (an unparsable value reads as the default, as upstream), and the checks across
queues (guarantees against maxes and against the children's sums). Called by the core
(``core.py``) when the ConfigMap changes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from .resources import quantity

CONFIGMAP = ("yunikorn", "yunikorn-configs")  # (namespace, name) of the ConfigMap it is read from
CONFIG_KEY = "queues.yaml"


class ConfigError(ValueError):
    """One line: ``queue root.a: resources.guaranteed.vcore: "2x" is not a quantity``."""


@dataclass(frozen=True)
class Template:
    properties: dict[str, str]
    guaranteed: dict[str, int]
    max: dict[str, int]
    max_applications: int


@dataclass(frozen=True)
class QueueConfig:
    name: str
    path: str
    parent: bool
    guaranteed: dict[str, int]
    max: dict[str, int]
    properties: dict[str, str]  # its own, as written
    effective: dict[str, str]  # after inheritance
    max_applications: int
    submit_acl: str | None
    admin_acl: str | None
    template: Template | None
    children: tuple[QueueConfig, ...]


@dataclass(frozen=True)
class Rule:
    name: str
    create: bool
    value: str
    parent: Rule | None
    filter: dict[str, Any]


@dataclass(frozen=True)
class Partition:
    name: str
    root: QueueConfig
    rules: tuple[Rule, ...]
    preemption_enabled: bool
    quota_preemption_enabled: bool
    node_sort_policy: str
    resource_weights: dict[str, float]


@dataclass(frozen=True)
class Config:
    partitions: tuple[Partition, ...]
    checksum: str

    def partition(self, name: str = "default") -> Partition:
        for p in self.partitions:
            if p.name == name:
                return p
        raise ConfigError(f"queues.yaml: partition {name!r} is not configured")


PROPERTIES = (
    "preemption.policy",
    "preemption.delay",
    "priority.offset",
    "priority.policy",
    "application.sort.policy",
    "application.sort.priority",
    "quota.preemption.delay",
)
NOT_INHERITED = ("priority.policy", "priority.offset", "quota.preemption.delay")
QUEUE_KEYS = (
    "name",
    "parent",
    "resources",
    "maxapplications",
    "properties",
    "submitacl",
    "adminacl",
    "childtemplate",
    "limits",
    "queues",
)
PARTITION_KEYS = ("name", "queues", "placementrules", "preemption", "nodesortpolicy", "limits", "statedump")
RULE_NAMES = ("provided", "tag", "fixed", "user", "group")
_NAME = re.compile(r"^[a-zA-Z0-9_:#/@-]{1,64}$")
DEFAULT_WEIGHTS = {"vcore": 1.0, "memory": 1.0}


# ---- properties ---------------------------------------------------------------------------


def effective_properties(parent_effective: Mapping[str, str] | None, own: Mapping[str, str]) -> dict[str, str]:
    """A configured child's properties: its parent's, minus those that never pass down
    (priority ones, quota delay) and ``preemption.policy`` unless it is ``disabled``,
    overridden by its own."""
    out = {}
    for k, v in (parent_effective or {}).items():
        if k in NOT_INHERITED:
            continue
        if k == "preemption.policy" and v.lower() != "disabled":
            continue
        out[k] = v
    out.update(own)
    return out


_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_GO_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(s: str) -> float:
    """Go's ``time.ParseDuration`` in seconds: ``30s``, ``1m30s``, ``500ms``, ``-1.5h``, ``0``."""
    text = s.strip()
    sign = -1.0 if text.startswith("-") else 1.0
    text = text.lstrip("+-")
    if text == "0":
        return 0.0
    pos, total = 0, 0.0
    for m in _GO_PART.finditer(text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _GO_UNITS[m.group(2)]
        pos = m.end()
    if pos == 0 or pos != len(text):
        raise ValueError(f"{s!r} is not a duration")
    return sign * total


def preemption_policy(props: Mapping[str, str]) -> str:
    v = props.get("preemption.policy", "").lower()
    return v if v in ("default", "fence", "disabled") else "default"


def preemption_delay(props: Mapping[str, str]) -> float:
    try:
        d = parse_go_duration(props.get("preemption.delay", "30s"))
    except ValueError:
        return 30.0
    return d if d > 0 else 30.0


def priority_offset(props: Mapping[str, str]) -> int:
    try:
        v = int(props.get("priority.offset", "0"))
    except ValueError:
        return 0
    return v if -(2**31) <= v < 2**31 else 0


def priority_policy(props: Mapping[str, str]) -> str:
    return "fence" if props.get("priority.policy", "").lower() == "fence" else "default"


def app_sort_policy(props: Mapping[str, str]) -> str:
    return "fair" if props.get("application.sort.policy", "").lower() == "fair" else "fifo"


def app_sort_priority(props: Mapping[str, str]) -> bool:
    return props.get("application.sort.priority", "").lower() != "disabled"


def quota_preemption_delay(props: Mapping[str, str]) -> float:
    try:
        d = parse_go_duration(props.get("quota.preemption.delay", "0"))
    except ValueError:
        return 0.0
    return max(d, 0.0)


# ---- parsing --------------------------------------------------------------------------------


def _mapping(value: Any, where: str, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: {field}: must be a mapping, not {type(value).__name__}")
    return value


def _unknown(raw: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    for k in raw:
        if k not in known:
            raise ConfigError(f"{where}: {k}: unknown field")


def _resources(raw: Any, where: str, field: str) -> dict[str, int]:
    out = {}
    for k, v in _mapping(raw, where, field).items():
        try:
            out[str(k)] = quantity(str(k), v)
        except ValueError as e:
            raise ConfigError(f"{where}: {field}.{k}: {e}") from None
    return out


def _properties(raw: Any, where: str, field: str = "properties") -> dict[str, str]:
    out = {}
    for k, v in _mapping(raw, where, field).items():
        if k not in PROPERTIES:
            raise ConfigError(f"{where}: {field}.{k}: unknown property")
        out[str(k)] = str(v).lower() if isinstance(v, bool) else str(v)
    return out


def _count(raw: Any, where: str, field: str) -> int:
    if raw is None:
        return 0
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise ConfigError(f"{where}: {field}: {raw!r} must be a non-negative integer")
    return raw


def _template(raw: Any, where: str) -> Template | None:
    if raw is None:
        return None
    t = _mapping(raw, where, "childtemplate")
    _unknown(t, ("properties", "resources", "maxapplications"), f"{where}: childtemplate")
    res = _mapping(t.get("resources"), where, "childtemplate.resources")
    _unknown(res, ("guaranteed", "max"), f"{where}: childtemplate.resources")
    guaranteed = _resources(res.get("guaranteed"), where, "childtemplate.resources.guaranteed")
    return Template(
        properties=_properties(t.get("properties"), where, "childtemplate.properties"),
        guaranteed={} if all(v == 0 for v in guaranteed.values()) else guaranteed,
        max=_resources(res.get("max"), where, "childtemplate.resources.max"),
        max_applications=_count(t.get("maxapplications"), where, "childtemplate.maxapplications"),
    )


def _queue(raw: Any, parent_path: str, parent_effective: dict[str, str] | None) -> QueueConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"queue under {parent_path or 'partition'}: must be a mapping")
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        where = f"queue under {parent_path}" if parent_path else "partition queues"
        raise ConfigError(f"{where}: name: {name!r} is not a valid queue name (1-64 of letters, digits, _:#/@-)")
    path = f"{parent_path}.{name}" if parent_path else name.lower()
    where = f"queue {path}"
    _unknown(raw, QUEUE_KEYS, where)
    if not parent_path and path != "root":
        raise ConfigError(f"{where}: name: the top queue must be named root")
    res = _mapping(raw.get("resources"), where, "resources")
    _unknown(res, ("guaranteed", "max"), f"{where}: resources")
    if res and not parent_path:
        raise ConfigError(f"{where}: resources: root may not have resources (its max is the cluster)")
    guaranteed = _resources(res.get("guaranteed"), where, "resources.guaranteed")
    own = _properties(raw.get("properties"), where)
    effective = effective_properties(parent_effective, own)
    kids = raw.get("queues") or []
    if not isinstance(kids, list):
        raise ConfigError(f"{where}: queues: must be a list")
    flag = raw.get("parent")
    if flag is not None and not isinstance(flag, bool):
        raise ConfigError(f"{where}: parent: {flag!r} must be true or false")
    if flag is False and kids:
        raise ConfigError(f"{where}: queues: a leaf queue (parent: false) cannot have child queues")
    children = tuple(_queue(k, path, effective) for k in kids)
    seen: set[str] = set()
    for c in children:
        if c.name.lower() in seen:
            raise ConfigError(f"queue {c.path}: name: {c.name!r} is used twice under {path}")
        seen.add(c.name.lower())
    return QueueConfig(
        name="root" if not parent_path else name,
        path=path,
        parent=bool(children) or bool(flag) or not parent_path,
        guaranteed={} if all(v == 0 for v in guaranteed.values()) else guaranteed,
        max=_resources(res.get("max"), where, "resources.max"),
        properties=own,
        effective=effective,
        max_applications=_count(raw.get("maxapplications"), where, "maxapplications"),
        submit_acl=None if raw.get("submitacl") is None else str(raw.get("submitacl")),
        admin_acl=None if raw.get("adminacl") is None else str(raw.get("adminacl")),
        template=_template(raw.get("childtemplate"), where),
        children=children,
    )


def _rule(raw: Any, where: str) -> Rule:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: must be a mapping")
    _unknown(raw, ("name", "create", "value", "parent", "filter"), where)
    name = raw.get("name")
    if name not in RULE_NAMES:
        raise ConfigError(f"{where}.name: {name!r} is not one of {', '.join(RULE_NAMES)}")
    create = raw.get("create", False)
    if not isinstance(create, bool):
        raise ConfigError(f"{where}.create: {create!r} must be true or false")
    value = raw.get("value")
    if name in ("tag", "fixed") and not value:
        raise ConfigError(f"{where}.value: a {name} rule needs a value")
    parent = raw.get("parent")
    return Rule(
        name=name,
        create=create,
        value="" if value is None else str(value),
        parent=None if parent is None else _rule(parent, f"{where}.parent"),
        filter=_mapping(raw.get("filter"), where, "filter"),
    )


def _flag(raw: dict[str, Any], key: str, default: bool, where: str) -> bool:
    v = raw.get(key, default)
    if not isinstance(v, bool):
        raise ConfigError(f"{where}.{key}: {v!r} must be true or false")
    return v


def _partition(raw: Any, i: int) -> Partition:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw.get("name"):
        raise ConfigError(f"queues.yaml: partitions[{i}].name: Required value")
    name = raw["name"].lower()
    where = f"partition {name}"
    _unknown(raw, PARTITION_KEYS, where)
    queues = raw.get("queues")
    if not isinstance(queues, list) or len(queues) != 1:
        raise ConfigError(f"{where}: queues: must hold exactly one top queue, root")
    root = _queue(queues[0], "", None)
    rules_raw = raw.get("placementrules") or []
    if not isinstance(rules_raw, list):
        raise ConfigError(f"{where}: placementrules: must be a list")
    rules = tuple(_rule(r, f"{where}: placementrules[{j}]") for j, r in enumerate(rules_raw))
    pre = _mapping(raw.get("preemption"), where, "preemption")
    _unknown(pre, ("enabled", "quotapreemptionenabled"), f"{where}: preemption")
    sort = _mapping(raw.get("nodesortpolicy"), where, "nodesortpolicy")
    _unknown(sort, ("type", "resourceweights"), f"{where}: nodesortpolicy")
    policy = str(sort.get("type") or "fair").lower()
    if policy not in ("fair", "binpacking"):
        raise ConfigError(f"{where}: nodesortpolicy.type: {policy!r} is not one of fair, binpacking")
    return Partition(
        name=name,
        root=root,
        rules=rules or (Rule("provided", False, "", None, {}),),
        preemption_enabled=_flag(pre, "enabled", True, f"{where}: preemption"),
        quota_preemption_enabled=_flag(pre, "quotapreemptionenabled", False, f"{where}: preemption"),
        node_sort_policy=policy,
        resource_weights=_weights(sort.get("resourceweights"), where),
    )


def _weights(raw: Any, where: str) -> dict[str, float]:
    if raw is None:
        return dict(DEFAULT_WEIGHTS)
    out = {}
    for k, v in _mapping(raw, where, "nodesortpolicy.resourceweights").items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            raise ConfigError(f"{where}: nodesortpolicy.resourceweights.{k}: {v!r} must be a number >= 0")
        out[str(k)] = float(v)
    return out


def parse(text: str) -> Config:
    """The configuration in ``text``; raises ConfigError (one line) for anything wrong."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"queues.yaml: not valid YAML: {str(e).splitlines()[0]}") from None
    if not isinstance(raw, dict):
        raise ConfigError("queues.yaml: must be a mapping with partitions")
    _unknown(raw, ("partitions",), "queues.yaml")
    parts = raw.get("partitions")
    if not isinstance(parts, list) or not parts:
        raise ConfigError("queues.yaml: partitions: at least one partition is required")
    partitions = tuple(_partition(p, i) for i, p in enumerate(parts))
    names = [p.name for p in partitions]
    for n in names:
        if names.count(n) > 1:
            raise ConfigError(f"partition {n}: name: used twice")
    for p in partitions:
        check(p.root)
    return Config(partitions, hashlib.sha256(text.encode()).hexdigest())


def check(q: QueueConfig, parent_emax: dict[str, int] | None = None) -> dict[str, int]:
    """The checks across queues, depth first; returns what the queue's guarantee claims of
    its parent: its own guarantee, or without one its children's sum passed up."""
    where = f"queue {q.path}"
    for k, v in q.guaranteed.items():
        if k in q.max and v > q.max[k]:
            raise ConfigError(f"{where}: resources.guaranteed.{k}: {v} is above resources.max.{k} {q.max[k]}")
    if parent_emax:
        for k, v in q.max.items():
            if k in parent_emax and v > parent_emax[k]:
                raise ConfigError(f"{where}: resources.max.{k}: {v} is above the parent's max {parent_emax[k]}")
    emax = dict(parent_emax or {})
    for k, v in q.max.items():
        emax[k] = min(v, emax[k]) if k in emax else v
    summed: dict[str, int] = {}
    for child in q.children:
        for k, v in check(child, emax).items():
            summed[k] = summed.get(k, 0) + v
    for k, v in summed.items():
        limit = q.guaranteed.get(k) if q.guaranteed else None
        if limit is not None and v > limit:
            raise ConfigError(f"{where}: resources.guaranteed.{k}: the children's guaranteed sum {v} is above {limit}")
        if k in emax and v > emax[k]:
            raise ConfigError(
                f"{where}: resources.max.{k}: the children's guaranteed sum {v} is above the max {emax[k]}"
            )
    return dict(q.guaranteed) if q.guaranteed else summed


DEFAULT_TEXT = """partitions:
  - name: default
    placementrules:
      - name: tag
        value: namespace
        create: true
    queues:
      - name: root
        submitacl: '*'
"""
DEFAULT = parse(DEFAULT_TEXT)
