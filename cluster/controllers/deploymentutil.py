"""The Deployment controller's arithmetic, as pure functions over plain ReplicaSet dicts.

Owns what upstream's ``deployment/util`` decides:
the pod-template hash, which ReplicaSet is "new", maxSurge/maxUnavailable resolved with
upstream's rounding, the size of the new ReplicaSet at each step (``new_rs_replicas``),
the old ReplicaSets' scale-down plan of a rolling update (``old_scale_down``), the
proportional scaling of a rollout in flight (``proportional_sizes``) and the status
counters. ``deployment.DeploymentController`` calls them; tests drive them with tables.
Every function takes ReplicaSets as dicts and returns numbers or new sizes, never writes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..api.workloadvalidation import resolve_percent
from ..clock import parse_timestamp
from .reconciler import Obj

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
NOT_COPIED = frozenset({REVISION, REVISION_HISTORY, DESIRED, MAX_REPLICAS, LAST_APPLIED})
MAX_INT32 = 2**31 - 1
_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # upstream's alphabet for generated names


# ---- small readers ---------------------------------------------------------------------


def replicas(rs: Obj) -> int:
    v = (rs.get("spec") or {}).get("replicas")
    return 1 if v is None else int(v)


def available(rs: Obj) -> int:
    return int((rs.get("status") or {}).get("availableReplicas") or 0)


def status_replicas(rs: Obj) -> int:
    return int((rs.get("status") or {}).get("replicas") or 0)


def revision(rs: Obj) -> int:
    try:
        return int(((rs.get("metadata") or {}).get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def created_key(rs: Obj) -> tuple[float, str]:
    """Oldest first: creation time, then name (upstream ReplicaSetsByCreationTimestamp)."""
    m = rs.get("metadata") or {}
    stamp = m.get("creationTimestamp")
    return (parse_timestamp(stamp) or 0.0) if stamp else 0.0, m.get("name", "")


def is_active(rs: Obj) -> bool:
    return replicas(rs) > 0


# ---- template identity -----------------------------------------------------------------


def template_hash(template: Obj, collisions: int = 0) -> str:
    """A 32-bit FNV-1a of the template (and the collision count when set), in the safe
    alphabet: stable for equal templates, different when the template changes."""
    h = 0x811C9DC5
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collisions:
        data += str(collisions).encode()
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_SAFE[ord(c) % len(_SAFE)] for c in str(h))


def without_hash(template: Obj) -> Obj:
    """``template`` minus the pod-template-hash label (a copy when it had one)."""
    labels = (template.get("metadata") or {}).get("labels") or {}
    if HASH_LABEL not in labels:
        return template
    rest = {k: v for k, v in labels.items() if k != HASH_LABEL}
    return {**template, "metadata": {**template["metadata"], "labels": rest}}


def find_new(deployment_template: Obj, owned: Sequence[Obj]) -> Obj | None:
    """The oldest owned ReplicaSet whose template equals the Deployment's, hash aside."""
    for rs in sorted(owned, key=created_key):
        if without_hash((rs.get("spec") or {}).get("template") or {}) == deployment_template:
            return rs
    return None


# ---- surge and unavailability ----------------------------------------------------------


def fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """(surge, unavailable) against ``desired``: surge rounds up, unavailable down, and
    both 0 makes unavailable 1 so a rollout cannot wedge (upstream ResolveFenceposts)."""
    surge = resolve_percent(max_surge, desired, round_up=True)
    unavailable = resolve_percent(max_unavailable, desired, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _rolling(spec: Obj) -> Obj | None:
    strategy = spec.get("strategy") or {}
    if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
        return None
    return strategy.get("rollingUpdate") or {}


def max_surge(spec: Obj) -> int:
    rolling = _rolling(spec)
    if rolling is None:
        return 0
    return fenceposts(rolling.get("maxSurge", "25%"), rolling.get("maxUnavailable", "25%"), spec_replicas(spec))[0]


def max_unavailable(spec: Obj) -> int:
    rolling = _rolling(spec)
    want = spec_replicas(spec)
    if rolling is None or want == 0:
        return 0
    unavailable = fenceposts(rolling.get("maxSurge", "25%"), rolling.get("maxUnavailable", "25%"), want)[1]
    return min(unavailable, want)


def spec_replicas(spec: Obj) -> int:
    v = spec.get("replicas")
    return 1 if v is None else int(v)


# ---- the rolling update ----------------------------------------------------------------


def new_rs_replicas(spec: Obj, all_rs: Sequence[Obj], new_size: int) -> int:
    """The new ReplicaSet's next size (upstream NewRSNewReplicas)."""
    want = spec_replicas(spec)
    if _rolling(spec) is None:
        return want
    current = sum(replicas(rs) for rs in all_rs)
    max_total = want + max_surge(spec)
    if current >= max_total:
        return new_size
    return new_size + min(max_total - current, want - new_size)


def old_scale_down(spec: Obj, old: Sequence[Obj], new: Obj) -> dict[str, int]:
    """The old ReplicaSets' new sizes, by name, for one rolling step (only those that
    change): unhealthy replicas first, then down to the minimum availability. ``old`` is
    every old ReplicaSet: those at 0 still count for what is available."""
    sizes = {rs["metadata"]["name"]: replicas(rs) for rs in old}
    if not any(sizes.values()):
        return {}
    want = spec_replicas(spec)
    min_available = want - max_unavailable(spec)
    total = sum(sizes.values()) + replicas(new)
    budget = total - min_available - (replicas(new) - available(new))
    if budget <= 0:
        return {}
    ordered = sorted(old, key=created_key)
    done = 0
    for rs in ordered:  # a. replicas that are not available go first
        name = rs["metadata"]["name"]
        if done >= budget:
            break
        unhealthy = sizes[name] - available(rs)
        if sizes[name] == 0 or unhealthy <= 0:
            continue
        cut = min(budget - done, unhealthy)
        sizes[name] -= cut
        done += cut
    # A ReplicaSet just scaled down may not have reported it yet: it cannot have more
    # available replicas than it is asked for, so a stale status never lets too many go.
    avail = sum(min(available(rs), replicas(rs)) for rs in old) + min(available(new), replicas(new))
    if avail > min_available:  # b. then what availability allows
        left = avail - min_available
        for rs in ordered:
            name = rs["metadata"]["name"]
            if left <= 0:
                break
            cut = min(sizes[name], left)
            sizes[name] -= cut
            left -= cut
    return {
        rs["metadata"]["name"]: sizes[rs["metadata"]["name"]]
        for rs in old
        if sizes[rs["metadata"]["name"]] != replicas(rs)
    }


# ---- proportional scaling --------------------------------------------------------------


def _round_half_away(x: float) -> int:
    return int(x + 0.5) if x >= 0 else -int(-x + 0.5)


def _fraction(rs: Obj, want: int, surge: int, status_total: int) -> int:
    if want == 0:
        return -replicas(rs)
    allowed = want + surge
    annotated = ((rs.get("metadata") or {}).get("annotations") or {}).get(MAX_REPLICAS)
    try:
        base = int(annotated) if annotated is not None else status_total
    except ValueError:
        base = status_total
    if base == 0:
        return 0
    return _round_half_away(replicas(rs) * allowed / base) - replicas(rs)


def proportional_sizes(spec: Obj, active: Sequence[Obj], status_total: int) -> tuple[dict[str, int], str]:
    """The active ReplicaSets' sizes after a scale of a RollingUpdate Deployment in the
    middle of a rollout, and "up" / "down" / "" (upstream DeploymentController.scale)."""
    want = spec_replicas(spec)
    surge = max_surge(spec)
    allowed = want + surge if want > 0 else 0
    to_add = allowed - sum(replicas(rs) for rs in active)
    if to_add > 0:
        order = sorted(active, key=lambda rs: (replicas(rs), created_key(rs)), reverse=True)  # newer first
    else:
        order = sorted(active, key=lambda rs: (-replicas(rs), created_key(rs)))
    sizes, added = {}, 0
    for rs in order:
        proportion = 0
        if to_add != 0 and replicas(rs) != 0 and to_add != added:
            fraction, room = _fraction(rs, want, surge, status_total), to_add - added
            proportion = min(fraction, room) if to_add > 0 else max(fraction, room)
        sizes[rs["metadata"]["name"]] = replicas(rs) + proportion
        added += proportion
    if order and to_add != 0:
        first = order[0]["metadata"]["name"]
        sizes[first] = max(0, sizes[first] + to_add - added)
    return sizes, ("up" if to_add > 0 else "down" if to_add < 0 else "")


def is_saturated(spec: Obj, rs: Obj | None) -> bool:
    if rs is None:
        return False
    want = spec_replicas(spec)
    desired = ((rs.get("metadata") or {}).get("annotations") or {}).get(DESIRED)
    return desired == str(want) and replicas(rs) == want and available(rs) == want


def active_or_latest(new: Obj | None, old: Sequence[Obj]) -> Obj | None:
    """The one active ReplicaSet, or the newest when none is active, or None when several are."""
    everything = [rs for rs in [*old, new] if rs is not None]
    active = [rs for rs in everything if is_active(rs)]
    if len(active) == 1:
        return active[0]
    if active:
        return None
    if new is not None:
        return new
    return max(old, key=created_key) if old else None
