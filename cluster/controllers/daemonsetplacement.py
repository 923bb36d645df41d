"""Where a DaemonSet's pods may run, and the pod-spec edits that put them there, pure.

Owns the placement half of upstream's ``pkg/controller/daemon`` (``util`` and
``NodeShouldRunDaemonPod``): the daemon tolerations every daemon pod gets
(``add_daemon_tolerations``), pinning a pod to its node through a ``matchFields``
required node affinity (``replace_node_affinity``) and reading that node back
(``target_node``), the should-run / may-continue check of a pod template against a node
(``Placement``, ``node_should_run``), and the slim copy of a node the controller keeps
(``placement_node``, ``placement_view``).

Who calls it: ``daemonset.DaemonSetController``, which compiles one ``Placement`` per
DaemonSet template and re-exports the public names; tests import them from ``daemonset``.
Everything here is a function of plain dicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..api.nodeaffinity import REQUIRED, RequiredNodeAffinity
from ..api.objects import labels_of, name_of, node_name_of
from ..api.taints import NO_EXECUTE, NO_SCHEDULE, find_untolerated_taint
from .reconciler import Obj

__all__ = [
    "DAEMON_TOLERATIONS",
    "NETWORK_UNAVAILABLE",
    "NODE_NAME_FIELD",
    "Placement",
    "add_daemon_tolerations",
    "daemon_spec",
    "node_should_run",
    "placement_node",
    "placement_view",
    "replace_node_affinity",
    "target_node",
]

DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", NO_EXECUTE),
    ("node.kubernetes.io/unreachable", NO_EXECUTE),
    ("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/unschedulable", NO_SCHEDULE),
)
NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"
NODE_NAME_FIELD = "metadata.name"


def add_daemon_tolerations(spec: Obj) -> None:
    """Add (or replace with) the daemon tolerations in a pod spec, in place."""
    wanted = list(DAEMON_TOLERATIONS) + ([(NETWORK_UNAVAILABLE, NO_SCHEDULE)] if spec.get("hostNetwork") else [])
    for key, effect in wanted:
        _add_or_update_toleration(spec, {"key": key, "operator": "Exists", "effect": effect})


def _add_or_update_toleration(spec: Obj, tol: Obj) -> None:
    # Upstream AddOrUpdateTolerationInPodSpec: a toleration with the same key, operator,
    # value and effect is replaced (dropping its tolerationSeconds); otherwise appended.
    same = (tol["key"], tol["operator"], "", tol["effect"])
    out, updated = [], False
    for t in spec.get("tolerations") or ():
        if (t.get("key") or "", t.get("operator") or "", t.get("value") or "", t.get("effect") or "") == same:
            if t == tol:
                return
            out.append(dict(tol))
            updated = True
        else:
            out.append(t)
    if not updated:
        out.append(dict(tol))
    spec["tolerations"] = out


def replace_node_affinity(spec: Obj, node: str) -> None:
    """Pin a pod spec to ``node`` (upstream ReplaceDaemonSetPodNodeNameNodeAffinity), in
    place: the required node affinity becomes one ``matchFields`` term for the node; the
    preferred terms and pod (anti-)affinity are kept."""
    term = {"matchFields": [{"key": NODE_NAME_FIELD, "operator": "In", "values": [node]}]}
    affinity = spec.get("affinity")
    if not affinity:
        spec["affinity"] = {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [term]}}}
        return
    node_affinity = affinity.get("nodeAffinity")
    if not node_affinity:
        affinity["nodeAffinity"] = {REQUIRED: {"nodeSelectorTerms": [term]}}
    elif node_affinity.get(REQUIRED) is None:
        node_affinity[REQUIRED] = {"nodeSelectorTerms": [term]}
    else:
        node_affinity[REQUIRED]["nodeSelectorTerms"] = [term]


def target_node(pod: Obj) -> str | None:
    """The node a daemon pod is for: spec.nodeName, else the first ``metadata.name In``
    matchFields requirement with one value (upstream GetTargetNodeName), else None."""
    name = node_name_of(pod)
    if name:
        return name
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    for term in (affinity.get(REQUIRED) or {}).get("nodeSelectorTerms") or ():
        for req in term.get("matchFields") or ():
            if req.get("key") == NODE_NAME_FIELD and req.get("operator") == "In":
                values: Sequence[str] = req.get("values") or ()
                return values[0] if len(values) == 1 else None
    return None


class Placement:
    """The parts of a daemon pod that decide where it may run, compiled once per template."""

    __slots__ = ("node_name", "affinity", "tolerations")

    def __init__(self, spec: Obj):
        self.node_name = spec.get("nodeName") or ""
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(REQUIRED)
        self.affinity = RequiredNodeAffinity(spec.get("nodeSelector") or None, required)
        self.tolerations = tuple(spec.get("tolerations") or ())

    def check(self, node: Obj) -> tuple[bool, bool]:
        """(should run, may continue running) on ``node`` (upstream NodeShouldRunDaemonPod)."""
        if self.node_name and self.node_name != name_of(node):
            return False, False
        if not self.affinity.matches(node):
            return False, False
        taints = (node.get("spec") or {}).get("taints")
        if find_untolerated_taint(taints, self.tolerations) is None:
            return True, True
        return False, find_untolerated_taint(taints, self.tolerations, (NO_EXECUTE,)) is None


def daemon_spec(ds: Obj) -> Obj:
    """A copy of the DaemonSet's pod template spec with the daemon tolerations added."""
    spec = dict(((ds.get("spec") or {}).get("template") or {}).get("spec") or {})
    add_daemon_tolerations(spec)
    return spec


def node_should_run(ds: Obj, node: Obj) -> tuple[bool, bool]:
    """(should run, may continue running) for DaemonSet ``ds`` on ``node``."""
    return Placement(daemon_spec(ds)).check(node)


def placement_node(node: Obj) -> Obj:
    """The node as placement reads it (name, labels, taints), which is what the controller
    keeps of each node: the whole decoded node is about ten times as large, and a cluster
    keeps every node here whether or not it runs DaemonSets."""
    m = node.get("metadata") or {}
    return {
        "kind": "Node",
        "metadata": {"name": m.get("name", ""), "labels": m.get("labels") or {}},
        "spec": {"taints": (node.get("spec") or {}).get("taints")},
    }


def placement_view(node: Obj) -> tuple[dict[str, Any], list[Obj] | None]:
    """What of a node decides daemon placement: its labels and taints."""
    return labels_of(node), (node.get("spec") or {}).get("taints")
