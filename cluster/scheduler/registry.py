"""The plugin registry and profile configuration: which plugins exist and which a profile runs.

Owns ``Registry`` (plugin name -> factory; registering a name twice is an error),
``PluginSpec`` (one enabled plugin with its weight and args) and ``ProfileConfig`` (a
scheduler profile: its name, its plugins and their order per extension point). Built by
``plugins.default_registry`` and ``config.build_config``; read by ``Framework``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..api.objects import DEFAULT_SCHEDULER

if TYPE_CHECKING:
    from .framework import Plugin

# ---- registry and profiles -------------------------------------------------------------

# A Plugin subclass, called as factory(args, framework handle) -> plugin; config.py checks
# which extension points it implements with issubclass.
PluginFactory = type["Plugin"]


class Registry:
    """Plugin name -> factory(args, handle). Registering a name twice is an error."""

    def __init__(self, factories: dict[str, PluginFactory] | None = None):
        self._factories: dict[str, PluginFactory] = {}
        for name, factory in (factories or {}).items():
            self.register(name, factory)

    def register(self, name: str, factory: PluginFactory) -> None:
        if name in self._factories:
            raise ValueError(f"a plugin named {name!r} is already registered")
        self._factories[name] = factory

    def merge(self, other: Registry) -> None:
        for name, factory in other._factories.items():
            self.register(name, factory)

    def get(self, name: str) -> PluginFactory:
        try:
            return self._factories[name]
        except KeyError:
            raise ValueError(f"plugin {name!r} is not registered") from None

    def __contains__(self, name: str) -> bool:
        return name in self._factories

    def names(self) -> list[str]:
        return sorted(self._factories)


@dataclass(frozen=True)
class PluginSpec:
    """A plugin enabled at every extension point it implements (upstream's MultiPoint)."""

    name: str
    weight: int = 1  # Score weight; 0 is defaulted to 1 as upstream does
    args: dict[str, Any] | None = None


@dataclass(frozen=True)
class ProfileConfig:
    scheduler_name: str = DEFAULT_SCHEDULER
    plugins: tuple[PluginSpec, ...] | None = None  # None: the default plugin set
    percentage_of_nodes_to_score: int | None = None  # None: the scheduler-wide value
    # Per extension point, the plugin names in the order they run there (config.py derives
    # it from KubeSchedulerConfiguration). None: every plugin at every point it implements,
    # in ``plugins`` order.
    order: tuple[tuple[str, tuple[str, ...]], ...] | None = None
