"""The status conditions of a namespace being deleted, as upstream's namespace deleter writes them.

Owns the five condition types, their healthy reasons and messages, and how a pass of the
namespace controller (``namespace.py``, the only caller) turns what is left in the
namespace and the deletes refused into conditions:

| type | True (reason: message) | False (reason: message) |
|---|---|---|
| NamespaceDeletionDiscoveryFailure | never (discovery cannot fail in one process) | ResourcesDiscovered: All resources successfully discovered |
| NamespaceDeletionGroupVersionParsingFailure | never | ParsedGroupVersions: All legacy kube types successfully parsed |
| NamespaceDeletionContentFailure | ContentDeletionFailed: Failed to delete all resource types, N remaining: <errors> | ContentDeleted: All content successfully deleted, may be waiting on finalization |
| NamespaceContentRemaining | SomeResourcesRemain: Some resources are remaining: pods. has 2 resource instances, ... | ContentRemoved: All content successfully removed |
| NamespaceFinalizersRemaining | (not written: see below) | ContentHasNoFinalizers: All content-preserving finalizers finished |

A condition keeps its lastTransitionTime while its status stays; ``conditions`` answers
None when nothing would change, so an unchanged pass writes nothing. Deviation from
upstream, on purpose: the controller keeps only the names of what a namespace holds
(at scale a pod's finalizers are not worth keeping for this), so it cannot say which
remaining objects wait on finalizers, and NamespaceFinalizersRemaining stays False.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..api.kinds import BY_KIND
from ..clock import rfc3339

DISCOVERY = "NamespaceDeletionDiscoveryFailure"
GROUP_VERSIONS = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING = "NamespaceContentRemaining"
FINALIZERS_REMAINING = "NamespaceFinalizersRemaining"

# Upstream's order, and each type's (reason, message) while nothing is wrong.
HEALTHY = {
    DISCOVERY: ("ResourcesDiscovered", "All resources successfully discovered"),
    GROUP_VERSIONS: ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    CONTENT_FAILURE: ("ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
    CONTENT_REMAINING: ("ContentRemoved", "All content successfully removed"),
    FINALIZERS_REMAINING: ("ContentHasNoFinalizers", "All content-preserving finalizers finished"),
}


def remaining_message(kinds: Iterable[str]) -> str | None:
    """ContentRemaining's message for the objects left (one kind per object); None when none."""
    counts: dict[str, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    if not counts:
        return None
    parts = sorted(f"{_resource(kind)} has {n} resource instances" for kind, n in counts.items())
    return "Some resources are remaining: " + ", ".join(parts)


def _resource(kind: str) -> str:
    """``<plural>.<group>`` as upstream prints a GroupVersionResource (core: "pods.")."""
    r = BY_KIND.get(kind)
    return f"{r.plural}.{r.group}" if r is not None else f"{kind.lower()}."


def failure_message(errors: list[str]) -> str | None:
    """ContentFailure's message for the refused deletes' errors; None when none."""
    if not errors:
        return None
    return f"Failed to delete all resource types, {len(errors)} remaining: {', '.join(sorted(errors))}"


def conditions(kinds: Iterable[str], errors: list[str], old: Any, now: float) -> list[dict[str, Any]] | None:
    """The namespace's conditions after a pass that left objects of ``kinds`` and had the
    deletes of ``errors`` refused; None when they equal ``old`` (the stored ones)."""
    wrong = {
        CONTENT_FAILURE: ("ContentDeletionFailed", failure_message(errors)),
        CONTENT_REMAINING: ("SomeResourcesRemain", remaining_message(kinds)),
    }
    before = {c.get("type"): c for c in old if isinstance(c, dict)} if isinstance(old, list) else {}
    out, changed = [], False
    for ctype, (ok_reason, ok_message) in HEALTHY.items():
        reason, message = wrong.get(ctype, ("", None))
        status = "True" if message is not None else "False"
        if message is None:
            reason, message = ok_reason, ok_message
        prev = before.get(ctype) or {}
        since = prev.get("lastTransitionTime") if prev.get("status") == status else None
        cond = {"type": ctype, "status": status, "lastTransitionTime": since or rfc3339(now)}
        cond.update(reason=reason, message=message)
        changed = changed or since is None or (prev.get("reason"), prev.get("message")) != (reason, message)
        out.append(cond)
    return out if changed else None
