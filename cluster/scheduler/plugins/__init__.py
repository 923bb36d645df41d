"""The in-tree plugins and the default plugin set.

Owns which plugins exist (``default_registry``) and which a profile enables when its
config names none (``DEFAULT_PLUGINS``, with upstream's score weights). Called by
``Scheduler`` when it builds its frameworks. This issue ships PrioritySort and
NodeResourcesFit; the remaining default plugins are registered here as they arrive.
"""
from __future__ import annotations

from ..framework import PluginSpec, Registry
from .noderesources import NodeResourcesFit
from .queuesort import PrioritySort

DEFAULT_PLUGINS: tuple[PluginSpec, ...] = (
    PluginSpec(PrioritySort.NAME),
    PluginSpec(NodeResourcesFit.NAME, weight=1),
)


def default_registry() -> Registry:
    return Registry({
        PrioritySort.NAME: PrioritySort,
        NodeResourcesFit.NAME: NodeResourcesFit,
    })


__all__ = ["DEFAULT_PLUGINS", "default_registry", "NodeResourcesFit", "PrioritySort"]
