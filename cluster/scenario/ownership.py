"""The ``noLostPods`` invariant: every pod a controller owns is accounted for.

Owns, from watch events alone, each ReplicaSet's wanted size, the set of its pods that
still count (neither terminal nor terminating, as the ReplicaSet controller counts them:
Running or Pending on a node that may be dead but not yet evicted) and the most it ever
had (its high-water mark, capped at its size). A pod that is deleted, fails or starts
terminating is accounted for once its controller has replaced it, so the invariant is
broken only when a ReplicaSet stays below its high-water mark for longer than
``LOST_GRACE`` emulated seconds: its controller has had ample time to notice and create a
replacement and has not. A ReplicaSet still scaling up has lost nothing, however slowly it
grows. The Mirror feeds it events and calls ``check`` on every observation.

| owner state | event (held = min(high-water mark, replicas))  | next     | effect                |
|-------------|------------------------------------------------|----------|-----------------------|
| WHOLE       | active < held                                  | SHORT(t) | remember since when   |
| SHORT(t)    | active >= held                                 | WHOLE    | none                  |
| SHORT(t)    | ``check`` at now - t > LOST_GRACE, once        | LOST     | one violation line    |
| LOST        | active >= held                                 | WHOLE    | none (line stays)     |

A ReplicaSet being deleted (``deletionTimestamp`` set) is no longer judged.
DaemonSets are not judged here: how many pods a DaemonSet wants depends on which nodes
it may run on, which scenarios check with ``count`` expectations instead.
"""

from __future__ import annotations

from ..api.objects import is_terminal, is_terminating
from ..controllers.ownedpods import controller_ref

LOST_GRACE = 60.0  # emulated seconds a ReplicaSet may stay short before pods count as lost


def controller_uid(pod: dict) -> str | None:
    """The uid of the ReplicaSet controlling ``pod``, if one does."""
    ref = controller_ref(pod)
    return ref.get("uid") if ref is not None and ref.get("kind") == "ReplicaSet" else None


class OwnedPods:
    def __init__(self, grace: float = LOST_GRACE):
        self.grace = grace
        self._sets: dict[str, tuple[str, int]] = {}  # RS uid -> ("ns/name", replicas)
        self._active: dict[str, set[str]] = {}  # RS uid -> uids of its pods that count
        self._owner_of: dict[str, str] = {}  # pod uid -> RS uid
        self._high: dict[str, int] = {}  # RS uid -> the most active pods it has had
        self._short_since: dict[str, float] = {}
        self._reported: set[str] = set()

    def on_replicaset(self, etype: str, rs: dict) -> None:
        m = rs.get("metadata") or {}
        uid = m.get("uid", "")
        if etype == "DELETED" or m.get("deletionTimestamp"):
            # Gone, or being deleted (a foreground deletion takes its pods first): it no
            # longer wants replicas, so the pods it loses are not lost.
            self._sets.pop(uid, None)
            self._short_since.pop(uid, None)
            self._high.pop(uid, None)
            return
        replicas = (rs.get("spec") or {}).get("replicas", 1)
        self._sets[uid] = (f"{m.get('namespace', '')}/{m.get('name', '')}", int(replicas))

    def on_pod(self, etype: str, pod: dict) -> None:
        uid = (pod.get("metadata") or {}).get("uid", "")
        owner = self._owner_of.get(uid) or controller_uid(pod)
        if owner is None:
            return
        self._owner_of[uid] = owner
        counts = etype != "DELETED" and not is_terminal(pod) and not is_terminating(pod)
        active = self._active.setdefault(owner, set())
        if counts:
            active.add(uid)
            self._high[owner] = max(self._high.get(owner, 0), len(active))
        else:
            active.discard(uid)
            if etype == "DELETED":
                del self._owner_of[uid]

    def wanted(self) -> int:
        """Replicas every ReplicaSet seen asks for, summed."""
        return sum(replicas for _, replicas in self._sets.values())

    def active(self, rs_uid: str) -> int:
        return len(self._active.get(rs_uid, ()))

    def held(self, rs_uid: str) -> int:
        """How many active pods the ReplicaSet has had and should still have."""
        return min(self._high.get(rs_uid, 0), self._sets[rs_uid][1])

    def shortfall(self) -> dict[str, int]:
        """ "ns/name" -> pods lost and not yet replaced, for every ReplicaSet short now."""
        out = {}
        for uid, (ref, _) in self._sets.items():
            missing = self.held(uid) - self.active(uid)
            if missing > 0:
                out[ref] = missing
        return out

    def check(self, now: float) -> list[str]:
        """New violation lines: ReplicaSets short of their pods for longer than the grace."""
        out = []
        for uid, (ref, replicas) in sorted(self._sets.items(), key=lambda kv: kv[1][0]):
            have, held = self.active(uid), self.held(uid)
            if have >= held:
                self._short_since.pop(uid, None)
                self._reported.discard(uid)
                continue
            since = self._short_since.setdefault(uid, now)
            if now - since > self.grace and uid not in self._reported:
                self._reported.add(uid)
                out.append(
                    f"at {now:.1f}s ReplicaSet {ref}: {have} of {replicas} pods active "
                    f"since {since:.1f}s ({held - have} lost, not replaced)"
                )
        return out
