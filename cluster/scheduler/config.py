"""KubeSchedulerConfiguration (the ``spec.scheduler`` of a scenario) -> ``SchedulerConfig``.

Owns reading the upstream configuration shape: top-level ``percentageOfNodesToScore``,
``podInitialBackoffSeconds``, ``podMaxBackoffSeconds``, ``profiles`` each with
``schedulerName``, ``percentageOfNodesToScore``, ``plugins`` (per extension point, and
``multiPoint``, with ``enabled``/``disabled`` lists and score ``weight``s) and
``pluginConfig`` (args by plugin name), and kubemu's own ``accelerate`` (``accel.Accelerate``:
``true``, ``false`` or the accelerators by name). Called by scenario validation (so a bad config
stops the run before anything starts) and by the driver, which hands the result to the
scheduler actor. Every error is a ``ConfigError`` whose message names the field path.

Merging follows upstream: the default plugins are a ``multiPoint`` set, merged with the
profile's ``multiPoint`` (a default re-listed there is replaced in place, ``disabled``
removes defaults, ``*`` all of them). Each extension point then runs, in order, the
plugins re-listed at that point that are also multiPoint plugins, the other multiPoint
plugins that implement it and are not disabled there, and the point's own other plugins;
``disabled: [*]`` at a point leaves only the point's own list. A score weight comes from
the ``score`` list if the plugin is there (0 or none reads as 1), else from multiPoint.
"""

from __future__ import annotations

import json
from typing import Any

from ..api.objects import DEFAULT_SCHEDULER
from .accel import Accelerate
from .explain import MODES as EXPLAIN_MODES
from .framework import EXTENSION_POINTS, POINT_CLASSES, PluginSpec, ProfileConfig
from .plugins import DEFAULT_PLUGINS, default_registry
from .scheduler import Scheduler, SchedulerConfig

_TOP = {
    "apiVersion",
    "kind",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "profiles",
    "parallelism",
    "accelerate",
    "explain",
}
_PROFILE = {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"}
_POINTS = ("multiPoint",) + EXTENSION_POINTS


class ConfigError(ValueError):
    """A scheduler configuration that cannot be used; one line naming the field."""


def _fail(path: str, value: Any, detail: str) -> ConfigError:
    return ConfigError(f"{path}: {json.dumps(value, default=str)} {detail}")


def _int(raw: dict[str, Any], key: str, path: str, lo: int, hi: int | None = None) -> int | None:
    v = raw.get(key)
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or v < lo or (hi is not None and v > hi):
        bound = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
        raise _fail(f"{path}.{key}", v, f"must be an integer {bound}")
    return v


def _unknown(raw: dict[str, Any], allowed: set[str], path: str) -> None:
    extra = sorted(set(raw) - allowed)
    if extra:
        raise ConfigError(f"{path}.{extra[0]}: unknown field")


def build_config(raw: dict[str, Any] | None, path: str = "spec.scheduler") -> SchedulerConfig:
    """Parse, merge with the defaults and try the result (plugins are built once, so bad
    plugin args fail here rather than in the scheduler actor)."""
    raw = {} if raw is None else raw
    if not isinstance(raw, dict):
        raise _fail(path, raw, "must be a mapping (KubeSchedulerConfiguration)")
    _unknown(raw, _TOP, path)
    pct = _int(raw, "percentageOfNodesToScore", path, 0, 100)
    initial = _int(raw, "podInitialBackoffSeconds", path, 1)
    maximum = _int(raw, "podMaxBackoffSeconds", path, 1)
    initial = 1 if initial is None else initial
    maximum = 10 if maximum is None else maximum
    if maximum < initial:
        raise _fail(f"{path}.podMaxBackoffSeconds", maximum, f"must be >= podInitialBackoffSeconds ({initial})")
    profiles_raw = raw.get("profiles") or [{}]
    if not isinstance(profiles_raw, list):
        raise _fail(f"{path}.profiles", profiles_raw, "must be a list")
    profiles = tuple(_profile(p, f"{path}.profiles[{i}]") for i, p in enumerate(profiles_raw))
    try:
        accelerate = Accelerate.parse(raw.get("accelerate"), f"{path}.accelerate")
    except ValueError as e:
        raise ConfigError(str(e)) from None
    explain = raw.get("explain", "failed")
    if explain not in EXPLAIN_MODES:  # kubemu's SchedulingResult recording (explain.py)
        raise _fail(f"{path}.explain", explain, f"must be one of {', '.join(EXPLAIN_MODES)}")
    config = SchedulerConfig(
        explain=explain,
        accelerate=accelerate,
        profiles=profiles,
        percentage_of_nodes_to_score=pct or 0,
        pod_initial_backoff_seconds=float(initial),
        pod_max_backoff_seconds=float(maximum),
    )
    try:
        Scheduler(config)
    except ValueError as e:
        raise ConfigError(f"{path}: {e}") from None
    return config


def _profile(raw: Any, path: str) -> ProfileConfig:
    if not isinstance(raw, dict):
        raise _fail(path, raw, "must be a mapping (a scheduler profile)")
    _unknown(raw, _PROFILE, path)
    name = raw.get("schedulerName") or DEFAULT_SCHEDULER
    pct = _int(raw, "percentageOfNodesToScore", path, 0, 100)
    args = _plugin_args(raw.get("pluginConfig") or [], f"{path}.pluginConfig")
    specs, order = _merge_plugins(raw.get("plugins") or {}, f"{path}.plugins", args)
    return ProfileConfig(scheduler_name=name, plugins=specs, percentage_of_nodes_to_score=pct, order=order)


def _plugin_args(raw: Any, path: str) -> dict[str, dict[str, Any]]:
    if not isinstance(raw, list):
        raise _fail(path, raw, "must be a list of {name, args}")
    out: dict[str, dict[str, Any]] = {}
    registry = default_registry()
    for i, entry in enumerate(raw):
        p = f"{path}[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise _fail(p, entry, "must be a mapping with a plugin name and args")
        _unknown(entry, {"name", "args"}, p)
        name = entry["name"]
        if name not in registry:
            raise _fail(f"{p}.name", name, "is not a known plugin")
        if name in out:
            raise _fail(f"{p}.name", name, "is configured twice")
        args = entry.get("args") or {}
        if not isinstance(args, dict):
            raise _fail(f"{p}.args", args, "must be a mapping")
        out[name] = args
    return out


def _point_lists(raw: dict[str, Any], point: str, path: str) -> tuple[list[dict[str, Any]], list[str]]:
    section = raw.get(point) or {}
    if not isinstance(section, dict):
        raise _fail(f"{path}.{point}", section, "must be a mapping with enabled and/or disabled")
    _unknown(section, {"enabled", "disabled"}, f"{path}.{point}")
    registry = default_registry()
    enabled: list[dict[str, Any]] = []
    disabled: list[str] = []
    lists: tuple[tuple[str, list[Any]], ...] = (("enabled", enabled), ("disabled", disabled))
    for which, out in lists:
        items = section.get(which) or []
        if not isinstance(items, list):
            raise _fail(f"{path}.{point}.{which}", items, "must be a list of {name, weight}")
        for i, item in enumerate(items):
            p = f"{path}.{point}.{which}[{i}]"
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise _fail(p, item, "must be a mapping with a plugin name")
            _unknown(item, {"name", "weight"}, p)
            name = item["name"]
            if name != "*" and name not in registry:
                raise _fail(f"{p}.name", name, "is not a known plugin")
            if which == "enabled":
                if name == "*":
                    raise _fail(f"{p}.name", name, "can only be disabled")
                _int(item, "weight", p, 0, 100)
                out.append(item)
            else:
                out.append(name)
    return enabled, disabled


def _merge_set(
    defaults: list[dict[str, Any]], enabled: list[dict[str, Any]], disabled: list[str]
) -> list[dict[str, Any]]:
    """Upstream's mergePluginSet: defaults minus the disabled ones (all of them for
    ``*``), a default re-listed in ``enabled`` replaced in place, then the rest of
    ``enabled`` appended."""
    custom = {item["name"]: i for i, item in enumerate(enabled)}
    out, replaced = [], set()
    if "*" not in disabled:
        for item in defaults:
            if item["name"] in disabled:
                continue
            if item["name"] in custom:
                replaced.add(custom[item["name"]])
                item = enabled[custom[item["name"]]]
            out.append(item)
    out += [item for i, item in enumerate(enabled) if i not in replaced]
    return out


def _expand(
    point: str, multipoint: list[str], enabled: list[str], disabled: list[str], classes: dict[str, Any]
) -> list[str]:
    """Upstream's MultiPoint expansion for one extension point: plugins both re-listed
    here and in multiPoint first (in this point's order), then multiPoint-only ones, then
    this point's own; with ``*`` disabled here, only this point's own list."""
    if "*" in disabled:
        return list(enabled)
    implements = POINT_CLASSES[point]
    from_multi = [n for n in multipoint if issubclass(classes[n], implements) and n not in disabled]
    overrides = [n for n in enabled if n in from_multi]
    return overrides + [n for n in from_multi if n not in enabled] + [n for n in enabled if n not in from_multi]


def _merge_plugins(
    raw: Any, path: str, args: dict[str, dict[str, Any]]
) -> tuple[tuple[PluginSpec, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    if not isinstance(raw, dict):
        raise _fail(path, raw, "must be a mapping of extension points")
    _unknown(raw, set(_POINTS), path)
    registry = default_registry()
    classes = {name: registry.get(name) for name in registry.names()}
    lists = {point: _point_lists(raw, point, path) for point in _POINTS}
    defaults = [{"name": s.name, "weight": s.weight} for s in DEFAULT_PLUGINS]
    multipoint = _merge_set(defaults, *lists["multiPoint"])
    multi_names = [item["name"] for item in multipoint]
    order = []
    for point in EXTENSION_POINTS:
        enabled, disabled = lists[point]
        names = [item["name"] for item in enabled]
        for i, name in enumerate(names):
            if not issubclass(classes[name], POINT_CLASSES[point]):
                raise _fail(f"{path}.{point}.enabled[{i}].name", name, f"is not a {point} plugin")
        order.append((point, tuple(_expand(point, multi_names, names, disabled, classes))))
    # Score weights as upstream's getScoreWeights: score's own list first, then multiPoint;
    # a weight of 0 or none reads as 1.
    weights: dict[str, int] = {}
    for item in lists["score"][0] + multipoint:
        weights.setdefault(item["name"], item.get("weight") or 1)
    used = [name for name in multi_names] + [n for _, names in order for n in names if n not in multi_names]
    specs = tuple(PluginSpec(name, weight=weights.get(name, 1), args=args.get(name)) for name in dict.fromkeys(used))
    return specs, tuple(order)
