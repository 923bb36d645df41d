"""The workload invariants: ``rolloutBounds`` and ``statefulSetIdentity``.

Owns two checks over what the runner's watch shows. ``Mirror`` feeds both every pod
event (``on_pod``, with the copy it held before) and calls ``RolloutBounds.check`` at
every observation while Deployments exist; violations are one line each, the first one
per Deployment rollout or per pod.

``rolloutBounds``: a RollingUpdate Deployment that is rolling out keeps at least
``replicas - maxUnavailable`` of its pods available and at most ``replicas + maxSurge``
of them existing (upstream's rounding: surge up, unavailability down, both 0 makes
unavailability 1). Its pods are those a ReplicaSet it controls controls; available means
Ready for ``minReadySeconds`` and not terminating; existing means neither terminal nor
terminating.

- Rolling out: from the observation where its ``spec.template`` differs from the last
  one seen until its status says complete (updated, current and available replicas all
  ``spec.replicas``, ``observedGeneration >= generation``), and also whenever two of its
  ReplicaSets are active (spec or status replicas above 0), which covers a rollout under
  way when the Deployment is first seen.
- Skipped observations: the first one of a rollout (the controller has not acted on the
  new template yet) and one where ``spec.replicas`` changed (a scale). After a scale the
  loosest bounds of the sizes seen during the rollout apply: the lowest floor, the
  highest ceiling (a scale-up cannot make pods available at once, nor a scale-down
  delete them).
- Node failures: a pod on a node that is not Ready, or whose node is gone, counts as
  neither available nor existing. Such a pod is *lost* if it still reports Ready or was
  available at the previous observation; so is an available pod that vanished or stopped
  being available between two observations while its node failed. The floor is lowered by
  the pods lost since the rollout began (the controller could not plan for them), less
  those available again (their node came back).

| Deployment state | event (at an observation)                       | next     |
|------------------|-------------------------------------------------|----------|
| (unseen)         | first seen                                      | STEADY   |
| STEADY           | template changed, or two active ReplicaSets     | ROLLING  |
| ROLLING          | complete and at most one active ReplicaSet      | STEADY   |
| ROLLING          | template changed again                          | ROLLING (a new rollout) |

``statefulSetIdentity``: a pod a StatefulSet controls is named ``<set>-<ordinal>``; no
two pods that are not terminal (terminating ones included) hold the same ordinal of one
set. As the store keys pods by name, two pods named ``<set>-<i>`` at once can only show
as a watch ``ADDED`` for a name whose older pod (another uid) the mirror still holds
without having seen it deleted or finish. (A relist reports a replaced pod as
``MODIFIED``, having missed the deletion: that is not a violation.)
"""

from __future__ import annotations

import re

from ..api.objects import condition, is_terminal, is_terminating, node_name_of
from ..clock import parse_timestamp
from ..controllers.deploymentutil import max_surge, max_unavailable, spec_replicas
from ..controllers.ownedpods import controller_ref

Key = tuple[str, str]


def _key(obj: dict) -> Key:
    m = obj.get("metadata") or {}
    return m.get("namespace", ""), m.get("name", "")


def _uid(obj: dict | None) -> str:
    return ((obj or {}).get("metadata") or {}).get("uid", "")


def _available(pod: dict, min_ready: float, now: float) -> bool:
    cond = condition(pod, "Ready")
    if cond is None or cond.get("status") != "True" or is_terminating(pod) or is_terminal(pod):
        return False
    since = parse_timestamp(cond.get("lastTransitionTime") or "") or 0.0
    return since + min_ready <= now  # timestamps are whole seconds: never later than upstream


def _reports_ready(pod: dict) -> bool:
    return (condition(pod, "Ready") or {}).get("status") == "True"


def _node_ready(nodes: dict, name: str) -> bool:
    if not name:
        return True  # not scheduled: on no failed node
    node = nodes.get(name)
    return node is not None and (condition(node, "Ready") or {}).get("status") == "True"


def _complete(d: dict, want: int) -> bool:
    status = d.get("status") or {}
    generation = (d.get("metadata") or {}).get("generation") or 0
    return (
        all((status.get(f) or 0) == want for f in ("updatedReplicas", "replicas", "availableReplicas"))
        and (status.get("observedGeneration") or 0) >= generation
    )


class _Deployment:
    """What one Deployment's rollout check remembers between observations."""

    def __init__(self, uid: str, template: object, replicas: int):
        self.uid, self.template, self.replicas = uid, template, replicas
        self.template_rollout = False  # the template changed and the rollout is not complete
        self.rolling = False
        self.reported = False
        self.sizes: set[int] = {replicas}  # spec.replicas values seen during this rollout
        self.lost: set[str] = set()  # uids of its pods lost to node failures this rollout
        self.was_available: dict[str, str] = {}  # uid -> node, at the previous observation

    def begin(self) -> None:
        self.rolling, self.reported = True, False
        self.sizes, self.lost = {self.replicas}, set()


class RolloutBounds:
    def __init__(self) -> None:
        self.violations: list[str] = []
        self._state: dict[Key, _Deployment] = {}
        self._pods: dict[str, dict[Key, dict]] = {}  # ReplicaSet uid -> its pods not terminal
        self._rs_of: dict[Key, str] = {}

    def on_pod(self, etype: str, pod: dict, held: dict | None) -> None:
        """Index pods by the ReplicaSet controlling them (``held``: the previous copy)."""
        key = _key(pod)
        old = self._rs_of.pop(key, None)
        if old is not None:
            self._pods[old].pop(key, None)
            if not self._pods[old]:
                del self._pods[old]
        ref = controller_ref(pod)
        if etype == "DELETED" or ref is None or ref.get("kind") != "ReplicaSet" or is_terminal(pod):
            return
        self._rs_of[key] = ref.get("uid", "")
        self._pods.setdefault(self._rs_of[key], {})[key] = pod

    def check(self, now: float, deployments: dict, replicasets: dict, nodes: dict) -> None:
        owned: dict[str, list[dict]] = {}
        for rs in replicasets.values():
            ref = controller_ref(rs)
            if ref is not None and ref.get("kind") == "Deployment":
                owned.setdefault(ref.get("uid", ""), []).append(rs)
        for key in [k for k in self._state if k not in deployments]:
            del self._state[key]
        for key in sorted(deployments):
            self._one(key, deployments[key], owned.get(_uid(deployments[key]), []), nodes, now)

    def _one(self, key: Key, d: dict, owned: list[dict], nodes: dict, now: float) -> None:
        spec = d.get("spec") or {}
        if ((spec.get("strategy") or {}).get("type") or "RollingUpdate") != "RollingUpdate":
            self._state.pop(key, None)
            return
        want, template = spec_replicas(spec), spec.get("template")
        st = self._state.get(key)
        skip = st is None or st.uid != _uid(d)  # first seen (or recreated): nothing to compare
        if st is None or skip:
            st = self._state[key] = _Deployment(_uid(d), template, want)
        if template != st.template:
            st.template, st.template_rollout, skip = template, True, True
            st.begin()
        if want != st.replicas:
            st.replicas, skip = want, True
            st.sizes.add(want)
        if st.template_rollout and _complete(d, want):
            st.template_rollout = False
        active = sum(1 for rs in owned if _active(rs))
        if not st.template_rollout and active < 2:
            st.rolling, st.was_available = False, {}
            return
        if not st.rolling:
            st.begin()
            skip = True
        pods = [p for rs in owned for p in self._pods.get(_uid(rs), {}).values()]
        available, live = self._count(st, spec, pods, nodes, now)
        if skip or st.reported:
            return
        floor = min(s - max_unavailable({**spec, "replicas": s}) for s in st.sizes) - len(st.lost)
        ceiling = max(s + max_surge({**spec, "replicas": s}) for s in st.sizes)
        if available < floor or live > ceiling:
            st.reported = True
            lost = f"; {len(st.lost)} lost with their nodes" if st.lost else ""
            self.violations.append(
                f"at {now:.1f}s Deployment {key[0]}/{key[1]}: {available} available (at least {floor} wanted), "
                f"{live} pods (at most {ceiling}){lost}"
            )

    @staticmethod
    def _count(st: _Deployment, spec: dict, pods: list[dict], nodes: dict, now: float) -> tuple[int, int]:
        """(available, existing) pods, node failures aside; records the pods lost to them."""
        min_ready = float(spec.get("minReadySeconds") or 0)
        available: dict[str, str] = {}
        live = 0
        for pod in pods:
            uid, node = _uid(pod), node_name_of(pod)
            if not _node_ready(nodes, node):
                if _reports_ready(pod) or uid in st.was_available:
                    st.lost.add(uid)
                continue
            if not is_terminating(pod):
                live += 1
            if _available(pod, min_ready, now):
                available[uid] = node
                st.lost.discard(uid)  # back with its node (a partition healed): counted again
        for uid, node in st.was_available.items():
            if uid not in available and not _node_ready(nodes, node):
                st.lost.add(uid)  # gone or unavailable with its node between two looks
        st.was_available = available
        return len(available), live


def _active(rs: dict) -> bool:
    spec_n = (rs.get("spec") or {}).get("replicas")
    return (1 if spec_n is None else int(spec_n)) > 0 or int((rs.get("status") or {}).get("replicas") or 0) > 0


_ORDINAL = re.compile(r"(.+)-([0-9]+)")


class StatefulSetIdentity:
    def __init__(self) -> None:
        self.violations: list[str] = []
        self._reported: set[tuple[str, ...]] = set()
        self._slots: dict[tuple[str, str, int], dict[str, str]] = {}  # (ns, set, ordinal) -> pod name -> uid
        self._slot_of: dict[Key, tuple[str, str, int]] = {}

    def on_pod(self, etype: str, pod: dict, held: dict | None, now: float) -> None:
        """One pod event; ``held`` is the mirror's copy of that name before it."""
        (ns, name), uid = _key(pod), _uid(pod)
        ref = controller_ref(pod) or controller_ref(held or {})
        owner = ref.get("name", "") if ref is not None and ref.get("kind") == "StatefulSet" else None
        replaced = held is not None and _uid(held) not in ("", uid) and not is_terminal(held)
        if etype == "ADDED" and owner is not None and replaced:
            self._report(
                (ns, name, uid),
                f"at {now:.1f}s StatefulSet {ns}/{owner}: pod {name} appeared as {uid} while "
                f"{_uid(held)} of that name was still there",
            )
        slot = self._slot_of.pop((ns, name), None)
        if slot is not None:
            self._slots[slot].pop(name, None)
        if etype == "DELETED" or owner is None or is_terminal(pod):
            return
        m = _ORDINAL.fullmatch(name)
        if m is None or m.group(1) != owner:
            self._report((ns, owner, name), f"at {now:.1f}s pod {ns}/{name} of StatefulSet {owner} has no ordinal name")
            return
        slot = (ns, owner, int(m.group(2)))
        holders = self._slots.setdefault(slot, {})
        if holders:
            other = min(holders)
            self._report(
                (ns, owner, name), f"at {now:.1f}s StatefulSet {ns}/{owner}: {other} and {name} hold ordinal {slot[2]}"
            )
        holders[name] = uid
        self._slot_of[(ns, name)] = slot

    def _report(self, key: tuple[str, ...], line: str) -> None:
        if key not in self._reported:
            self._reported.add(key)
            self.violations.append(line)
