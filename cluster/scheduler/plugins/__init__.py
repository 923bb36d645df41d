"""The in-tree plugins and the default plugin set.

Owns which plugins exist (``default_registry``) and which a profile enables when its
config names none (``DEFAULT_PLUGINS``): upstream's default MultiPoint list, in its order
(filters run in this order, so a node is blamed on the first of them that rejects it) and
with its score weights. Of the volume plugins, VolumeBinding alone. Called by
``Scheduler`` and by ``config.build_config``.
"""

from __future__ import annotations

from ..framework import PluginSpec, Registry
from .balancedallocation import NodeResourcesBalancedAllocation
from .defaultbinder import DefaultBinder
from .defaultpreemption import DefaultPreemption
from .imagelocality import ImageLocality
from .interpodaffinity import InterPodAffinity
from .nodeaffinity import NodeAffinity
from .nodename import NodeName
from .nodeports import NodePorts
from .noderesources import NodeResourcesFit
from .nodeunschedulable import NodeUnschedulable
from .podtopologyspread import PodTopologySpread
from .queuesort import PrioritySort
from .schedulinggates import SchedulingGates
from .tainttoleration import TaintToleration
from .volumebinding import VolumeBinding

DEFAULT_PLUGINS: tuple[PluginSpec, ...] = (
    PluginSpec(SchedulingGates.NAME),
    PluginSpec(PrioritySort.NAME),
    PluginSpec(NodeUnschedulable.NAME),
    PluginSpec(NodeName.NAME),
    PluginSpec(TaintToleration.NAME, weight=3),
    PluginSpec(NodeAffinity.NAME, weight=2),
    PluginSpec(NodePorts.NAME),
    PluginSpec(NodeResourcesFit.NAME, weight=1),
    PluginSpec(VolumeBinding.NAME),
    PluginSpec(PodTopologySpread.NAME, weight=2),
    PluginSpec(InterPodAffinity.NAME, weight=2),
    PluginSpec(DefaultPreemption.NAME),
    PluginSpec(NodeResourcesBalancedAllocation.NAME, weight=1),
    PluginSpec(ImageLocality.NAME, weight=1),
    PluginSpec(DefaultBinder.NAME),
)

_IN_TREE = (
    SchedulingGates,
    PrioritySort,
    NodeUnschedulable,
    NodeName,
    TaintToleration,
    NodeAffinity,
    NodePorts,
    NodeResourcesFit,
    VolumeBinding,
    PodTopologySpread,
    InterPodAffinity,
    DefaultPreemption,
    NodeResourcesBalancedAllocation,
    ImageLocality,
    DefaultBinder,
)


def default_registry() -> Registry:
    return Registry({cls.NAME: cls for cls in _IN_TREE})


__all__ = ["DEFAULT_PLUGINS", "default_registry"] + [cls.__name__ for cls in _IN_TREE]
