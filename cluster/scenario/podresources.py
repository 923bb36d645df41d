"""The invariants over what the kubelets say pods hold: ``cpusetsExclusive`` and
``devicesExclusive``.

Owns the two checks, written over report-shaped data so they can run both on the
mirror's latest PodResources view during a run and on a finished report:

- cpusetsExclusive: on every node, the CPUs a pod holds exclusively (as the kubelet
  reports them, or else its cpuset minus the node's shared pool) appear in no other pod's
  cpuset on that node, nor in the shared pool;
- devicesExclusive: no device ID is held by two pods (device IDs name their node, so this
  is a cluster-wide check).

Each returns one line per violation, naming the pods and the CPUs or device.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..kubelet.cpumanager import format_cpuset, parse_cpuset

# (pod ref "ns/name", node, cpuset or None[, its exclusive CPUs as the kubelet reports them])
CpusetEntry = tuple


def cpuset_violations(pods: Iterable[CpusetEntry], shared: dict[str, str | None]) -> list[str]:
    """``shared`` maps a node to its shared CPU pool (None: no static CPU manager)."""
    by_node: dict[str, list[tuple[str, frozenset[int], frozenset[int] | None]]] = {}
    for ref, node, cpuset, *reported in pods:
        if cpuset:
            exclusive = parse_cpuset(reported[0]) if reported and reported[0] is not None else None
            by_node.setdefault(node, []).append((ref, parse_cpuset(cpuset), exclusive))
    out = []
    for node, entries in sorted(by_node.items()):
        pool = parse_cpuset(shared.get(node) or "")
        for i, (ref, cpus, pinned) in enumerate(entries):
            exclusive = cpus - pool if pinned is None else pinned
            if not exclusive:
                continue
            leaked = exclusive & pool
            if leaked:
                out.append(
                    f"node {node}: CPUs {format_cpuset(leaked)} of pod {ref} (exclusive) are also in the shared pool"
                )
            for j, (other, other_cpus, _) in enumerate(entries):
                both = exclusive & other_cpus
                if j != i and both:
                    out.append(
                        f"node {node}: CPUs {format_cpuset(both)} of pod {ref} (exclusive) "
                        f"are also in the cpuset of pod {other}"
                    )
    return out


def device_violations(pods: Iterable[tuple[str, dict[str, list[str]] | None]]) -> list[str]:
    """``pods``: (pod ref, {resource: [device IDs]}) each."""
    holder: dict[tuple[str, str], str] = {}
    out = []
    for ref, devices in pods:
        for res, ids in sorted((devices or {}).items()):
            for d in ids:
                first = holder.setdefault((res, d), ref)
                if first != ref:
                    out.append(f"device {d} ({res}) is held by pods {first} and {ref}")
    return out
