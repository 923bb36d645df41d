"""The KubeletConfiguration keys kubemu reads, and the check of one node's configuration.

Owns the list of keys a node pool's ``kubelet`` mapping may use (upstream's field names)
and ``check_kubelet``, which builds everything a ``Kubelet`` builds from its
configuration (eviction thresholds, CPU manager, device plugins) so that a scenario with
a bad setting is refused at load, with one line naming the field and value, instead of
breaking a node host later. Called by the scenario loader for every node pool.
"""

from __future__ import annotations

from .allocation import NodeAllocation
from .evictionconfig import EvictionConfigError, parse_eviction_config
from .images import unpullable_patterns
from .node import NodeConfig

KNOWN_KEYS = (
    "evictionHard",
    "evictionSoft",
    "evictionSoftGracePeriod",
    "evictionMinimumReclaim",
    "evictionMaxPodGracePeriod",
    "evictionPressureTransitionPeriod",
    "enforceNodeAllocatable",
    "cpuManagerPolicy",
    "reservedSystemCPUs",
    "devicePlugins",
    "unpullableImages",  # kubemu's own: the images the node cannot pull (``images.py``)
)


def check_kubelet(config: NodeConfig) -> str | None:
    """None when a kubelet can run with ``config``; else an error line whose field path is
    relative to the node pool (``kubelet.evictionHard.memory.available: ...``)."""
    kubelet = config.kubelet or {}
    for key in kubelet:
        if key not in KNOWN_KEYS:
            return f"kubelet.{key}: unknown field (kubemu reads: {', '.join(KNOWN_KEYS)})"
    try:
        unpullable_patterns(kubelet)
    except ValueError as e:
        return f"kubelet.{e}"
    try:
        parse_eviction_config(kubelet)
    except EvictionConfigError as e:
        return str(e)
    try:
        NodeAllocation(config)
    except ValueError as e:
        text = str(e).split("; retrying does not help")[0]
        return text if text.startswith(("reserved.", "capacity.")) else f"kubelet.{text}"
    return None
