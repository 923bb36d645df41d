"""Which Ray cluster kubemu runs on, and where each actor goes in it.

Owns joining or starting Ray: the cluster named by ``RAY_ADDRESS``; an embedded one-node
Ray; or, for ``spec.cluster.rayNodes`` of 2 or more without ``RAY_ADDRESS``, a local
multi-node Ray cluster on this machine (one raylet per Ray node, as Ray's own tests run
it), whose worker nodes ``kill_ray_node`` can stop. Also owns placement (docs/architecture.md §7): the
control-plane actors are pinned to Ray node 0 (the head), node hosts are dealt round-robin
over the live Ray nodes, so with N hosts and M Ray nodes every Ray node gets hosts once
N >= M. Called by ``actors/cluster.py``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

MARK = "kubemu-ray-node-"
_local = None  # the ray.cluster_utils.Cluster this process started, if any
_workers: list = []  # its worker nodes, Ray node 1.. in order

# Ray puts any call argument or reply over 100 KB in its shared-memory object store, and
# kubemu's messages often pass that (a watch reply of a few hundred pods, a batch of pod
# creates). Every page of that store a process has touched stays in its RSS, and both the
# writer's and the reader's (at 10,000 nodes about 12 KB per node summed over the
# processes, measured in /proc/PID/status RssShmem), for messages that live for one call.
# Up to this size they travel inside the call instead and are freed with it; larger ones
# (a list page of big objects) still go through the store.
INLINE_BYTES = 64 * 1024 * 1024
SYSTEM_CONFIG = {"max_direct_call_object_size": INLINE_BYTES, "task_rpc_inlined_bytes_limit": INLINE_BYTES}


class RayClusterError(ValueError):
    """The Ray cluster cannot do what the scenario asks; retrying does not help."""


def init_ray(ray_nodes: int = 0) -> None:
    """Join RAY_ADDRESS, reuse this process's Ray, or start one (multi-node when asked)."""
    global _local
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS") or None
        if address is None and ray_nodes >= 2:
            _local = _start_local(ray_nodes)
            address = _local.address
        ray.init(
            # "local": start a Ray of our own, never attach to another one on the machine
            # (a second run's, or another user's), which would refuse our system config.
            address=address or "local",
            include_dashboard=False,
            # Only a Ray this process starts takes a system config (a joined cluster has its
            # own); Ray adds to the dict it is given, so it gets a copy.
            _system_config=dict(SYSTEM_CONFIG) if address is None else None,
            logging_level=logging.ERROR,
            log_to_driver=True,
            configure_logging=True,
        )
        if _local is not None:
            _local.wait_for_nodes()
    have = len(node_ids())
    if ray_nodes >= 2 and have < ray_nodes:
        raise RayClusterError(
            f"spec.cluster.rayNodes: {ray_nodes} Ray nodes asked for, the Ray cluster has {have} "
            "(run without RAY_ADDRESS in a fresh process to start a local one)"
        )


def _start_local(ray_nodes: int):
    from ray.cluster_utils import Cluster

    # A marker resource per Ray node numbers them, whatever order Ray lists them in.
    cpus = max(1, (os.cpu_count() or 1) // ray_nodes)
    local = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": cpus,
            "include_dashboard": False,
            "resources": {f"{MARK}0": 1},
            "_system_config": dict(SYSTEM_CONFIG),  # Ray adds to the dict it is given
        },
    )
    for i in range(1, ray_nodes):
        _workers.append(local.add_node(num_cpus=cpus, resources={f"{MARK}{i}": 1}))
    return local


def shutdown() -> None:
    """Stop the local multi-node cluster this process started (a no-op otherwise)."""
    global _local
    if _local is not None:
        ray.shutdown()
        _local.shutdown()
        _local = None
        _workers.clear()


def node_ids() -> list[str]:
    """Live Ray nodes in index order: by kubemu's marker resource when it started them,
    else the driver's node (the head) first and the rest by ID."""
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    head = ray.get_runtime_context().get_node_id()

    def index(n) -> tuple:
        marks = [int(r[len(MARK) :]) for r in n.get("Resources", {}) if r.startswith(MARK)]
        return (marks[0] if marks else 1 << 30, n["NodeID"] != head, n["NodeID"])

    return [n["NodeID"] for n in sorted(nodes, key=index)]


def deal(host: int, ray_nodes: int) -> int:
    """The Ray node host number ``host`` goes to: round-robin, so every Ray node gets hosts
    once there are as many hosts as Ray nodes."""
    return host % ray_nodes


def placement(ray_node_of: dict[int, int], nodes: Sequence[Sequence[str]]) -> dict[str, list[str]]:
    """The nodes on each Ray node, from the Ray node of each host and the nodes of each."""
    out: dict[str, list[str]] = {}
    for i, r in ray_node_of.items():
        out.setdefault(str(r), []).extend(nodes[i])
    return out


def pinned(node_id: str) -> dict:
    """Actor options that place an actor on exactly that Ray node."""
    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id, soft=False)}


def can_kill_ray_nodes() -> bool:
    return _local is not None


def kill_ray_node(index: int) -> None:
    """Stop Ray node ``index`` (1-based among the workers: the head is 0) with its raylet."""
    if _local is None:
        raise RayClusterError(
            "rayNode: killRayNode needs the local Ray cluster kubemu starts itself "
            "(spec.cluster.rayNodes >= 2 and no RAY_ADDRESS)"
        )
    if not 1 <= index <= len(_workers):
        raise RayClusterError(f"rayNode: {index} is not a worker Ray node (1..{len(_workers)})")
    _local.remove_node(_workers[index - 1])
