"""Kubelet emulation: one ``Kubelet`` per emulated node, many per ``NodeHost``.

Modules: ``node`` (NodeConfig, allocatable, the Node object), ``admission`` (the admit
checks and rejection reasons), ``qos`` and ``cgroups`` (upstream's QoS class and cgroup
values), ``pods`` (per-pod state and its API status), ``kubelet`` (the lifecycle),
``nodestatus`` (the Node, its Lease and status posts, node-level chaos),
``reconcile`` (taking over the pods a restarted kubelet finds bound to its node),
``allocation`` (what admitted pods hold: CPUs from ``cpumanager``, devices from
``devices`` and ``deviceplugin``, whose checkpoint format is ``devicecheckpoint``),
``pressure`` (usage from ``usage``, OOM kills, the loop
of the eviction manager in ``eviction`` with thresholds from ``evictionconfig``),
``probes`` (probes, init containers and lifecycle hooks of the pods whose ``podlife``
declares them), ``kubeletconfig`` (the configuration keys and their check), ``outbox`` (batched
outputs), ``host`` (routing inside one node-host actor). The node-host actor shell in
``actors/`` imports ``NodeHost`` and ``NodeConfig`` from here.
"""

from .host import NodeHost
from .kubelet import Kubelet
from .node import NodeConfig
from .outbox import Outbox

__all__ = ["Kubelet", "NodeConfig", "NodeHost", "Outbox"]
