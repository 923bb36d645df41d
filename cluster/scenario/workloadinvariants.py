"""The workload invariants: ``rolloutBounds`` and ``statefulSetIdentity``.

Owns two checks over what the runner's watch shows (``Mirror`` feeds them; the runner
reads ``check(now)``'s violations at every observation):

- ``rolloutBounds``: while a RollingUpdate Deployment rolls out (its pods belong to more
  than one of its ReplicaSets), its available pods (Ready for ``minReadySeconds``, not
  terminating) never drop below ``replicas - maxUnavailable`` and its pods that are not
  terminating never exceed ``replicas + maxSurge`` (upstream's rounding: surge up,
  unavailability down, both 0 makes unavailability 1). Node failures are allowed for: pods
  on a node that is not Ready do not count towards the total, and every pod of the
  Deployment seen on a node that is not Ready (or gone) since the rollout began lowers the
  availability floor by one, because the controller cannot have planned for it. An
  observation right after ``spec.replicas`` changed is skipped: the new bounds hold once
  the controller has seen the change.
- ``statefulSetIdentity``: a pod a StatefulSet controls is named ``<set>-<ordinal>``, and
  no two live pods of one set hold the same ordinal.
"""

from __future__ import annotations

import re

from ..api.objects import condition, is_terminal, is_terminating, node_name_of
from ..clock import parse_timestamp
from ..controllers.deploymentutil import max_surge, max_unavailable, spec_replicas

Key = tuple[str, str]


def _controller(obj: dict) -> dict | None:
    return next((r for r in (obj.get("metadata") or {}).get("ownerReferences") or () if r.get("controller")), None)


def _available(pod: dict, min_ready: float, now: float) -> bool:
    cond = condition(pod, "Ready")
    if cond is None or cond.get("status") != "True" or is_terminating(pod):
        return False
    since = parse_timestamp(cond.get("lastTransitionTime") or "") or 0.0
    return since + min_ready <= now


class _Rollout:
    __slots__ = ("replicas", "lost", "template")

    def __init__(self, replicas: int, template: object):
        self.replicas, self.template = replicas, template
        self.lost: set[str] = set()  # uids of its pods seen on a failed node


class RolloutBounds:
    def __init__(self) -> None:
        self.violations: list[str] = []
        self._reported: set[Key] = set()
        self._rolling: dict[Key, _Rollout] = {}

    def check(self, now: float, deployments: dict, replicasets: dict, pods: dict, nodes: dict) -> None:
        rs_owner = {}
        for rs in replicasets.values():
            ref = _controller(rs)
            if ref is not None and ref.get("kind") == "Deployment":
                rs_owner[(rs["metadata"].get("uid", ""))] = ref.get("uid", "")
        by_dep: dict[str, list[dict]] = {}
        for pod in pods.values():
            ref = _controller(pod)
            owner = rs_owner.get(ref.get("uid", "")) if ref is not None else None
            if owner is not None and not is_terminal(pod):
                by_dep.setdefault(owner, []).append(pod)
        for key, d in deployments.items():
            self._one(key, d, by_dep.get(d["metadata"].get("uid", ""), []), nodes, now)

    def _one(self, key: Key, d: dict, pods: list[dict], nodes: dict, now: float) -> None:
        spec = d.get("spec") or {}
        if ((spec.get("strategy") or {}).get("type") or "RollingUpdate") != "RollingUpdate":
            return
        revisions = {_controller(p).get("uid") for p in pods}  # type: ignore[union-attr]
        st = self._rolling.get(key)
        if len(revisions) <= 1:
            self._rolling.pop(key, None)
            return
        want = spec_replicas(spec)
        if st is None or st.replicas != want:
            self._rolling[key] = _Rollout(want, spec.get("template"))
            return  # the first look at a rollout, or a scale the controller may not have seen
        failed = [p for p in pods if not _node_ready(nodes.get(node_name_of(p)), node_name_of(p))]
        st.lost.update(p["metadata"].get("uid", "") for p in failed)
        live = [p for p in pods if not is_terminating(p) and p not in failed]
        min_ready = float(spec.get("minReadySeconds") or 0)
        available = sum(1 for p in live if _available(p, min_ready, now))
        floor = want - max_unavailable(spec) - len(st.lost)
        ceiling = want + max_surge(spec)
        if (available < floor or len(live) > ceiling) and key not in self._reported:
            self._reported.add(key)
            self.violations.append(
                f"at {now:.1f}s Deployment {key[0]}/{key[1]}: {available} available (at least {floor} wanted), "
                f"{len(live)} pods (at most {ceiling})"
            )


def _node_ready(node: dict | None, name: str) -> bool:
    if not name:
        return True  # not yet scheduled: not on a failed node
    if node is None:
        return False
    cond = condition(node, "Ready")
    return cond is not None and cond.get("status") == "True"


_ORDINAL = re.compile(r"(.+)-([0-9]+)")


class StatefulSetIdentity:
    def __init__(self) -> None:
        self.violations: list[str] = []
        self._reported: set[tuple[str, str, str]] = set()

    def check(self, now: float, pods: dict) -> None:
        held: dict[tuple[str, str, int], str] = {}
        for (ns, name), pod in pods.items():
            ref = _controller(pod)
            if ref is None or ref.get("kind") != "StatefulSet" or is_terminal(pod):
                continue
            owner = ref.get("name", "")
            m = _ORDINAL.fullmatch(name)
            if m is None or m.group(1) != owner:
                self._report(
                    ns, owner, name, f"at {now:.1f}s pod {ns}/{name} of StatefulSet {owner} has no ordinal name"
                )
                continue
            slot = (ns, owner, int(m.group(2)))
            if slot in held:
                self._report(
                    ns,
                    owner,
                    name,
                    f"at {now:.1f}s StatefulSet {ns}/{owner}: {held[slot]} and {name} hold ordinal {slot[2]}",
                )
            held[slot] = name

    def _report(self, ns: str, owner: str, name: str, message: str) -> None:
        if (ns, owner, name) not in self._reported:
            self._reported.add((ns, owner, name))
            self.violations.append(message)
