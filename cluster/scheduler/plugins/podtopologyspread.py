"""PodTopologySpread: spread a workload's pods evenly over topology domains.

Owns the plugin the framework runs at PreFilter, Filter (DoNotSchedule constraints: the
skew check), PreScore and Score with NormalizeScore (ScheduleAnyway constraints: prefer
the emptier domains), its arguments (upstream's PodTopologySpreadArgs), the choice of
constraints for a pod (its own, else the default ones), and ``assigned_pod_may_help``,
the queueing hint the scheduling queue asks when a bound pod appears or changes. Built by
the registry; the work is in ``podtopologyspread_filter`` and ``podtopologyspread_score``.

Arguments:

    defaultingType: System | List        System (the default): the two system defaults,
                                         hostname maxSkew 3 and zone maxSkew 5, both
                                         ScheduleAnyway; List: ``defaultConstraints``
    defaultConstraints: [constraint...]  List only; no labelSelector (it is derived per pod)

Default constraints apply to a pod without constraints of its own. Upstream derives their
selector from the Services, ReplicationControllers, ReplicaSets and StatefulSets selecting
the pod; kubemu's scheduler watches none of those, so the selector is the pod's own
labels, minus the ones a StatefulSet adds per revision or per pod
(controller-revision-hash, the pod name and index), which its selector never holds, and
only for pods whose controller ownerReference is a ReplicaSet, StatefulSet or
ReplicationController. ``pod-template-hash`` stays: a Deployment's ReplicaSet selects by
it, so during a rollout each revision spreads on its own, as upstream. Pods only a Service
selects get no default spreading.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...api.selectors import LabelSelector, SelectorError, is_qualified_name
from ..cache import PodInfo, Snapshot
from ..framework import (
    ClusterEvent,
    CycleState,
    FilterPlugin,
    FilterResult,
    PluginError,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from ..status import SKIP, SUCCESS, Status
from .podtopologyspread_filter import (
    ERR_CONSTRAINTS_NOT_MATCH,
    ERR_NODE_LABEL_NOT_MATCH,
    HOSTNAME_KEY,
    INCLUSION_POLICIES,
    SCHEDULE_ANYWAY,
    WHEN_UNSATISFIABLE,
    ZONE_KEY,
    Constraint,
    NodeEligibility,
    RowsMemo,
    build_hard_state,
    constraint_template,
    pod_constraints,
    spread_filter,
)
from .podtopologyspread_score import normalize_spread, soft_scores

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
SYSTEM_DEFAULT_CONSTRAINTS = (
    {"maxSkew": 3, "topologyKey": HOSTNAME_KEY, "whenUnsatisfiable": SCHEDULE_ANYWAY},
    {"maxSkew": 5, "topologyKey": ZONE_KEY, "whenUnsatisfiable": SCHEDULE_ANYWAY},
)
# Labels a StatefulSet adds per revision or per pod; they are not part of its selector.
CONTROLLER_ADDED_LABELS = frozenset(
    {
        "controller-revision-hash",
        "statefulset.kubernetes.io/pod-name",
        "apps.kubernetes.io/pod-index",
    }
)
DEFAULTED_OWNER_KINDS = frozenset({"ReplicaSet", "StatefulSet", "ReplicationController"})
_CONSTRAINT_FIELDS = frozenset(
    {
        "maxSkew",
        "topologyKey",
        "whenUnsatisfiable",
        "labelSelector",
        "minDomains",
        "nodeAffinityPolicy",
        "nodeTaintsPolicy",
        "matchLabelKeys",
    }
)
_PRE_FILTER_KEY = "PreFilterPodTopologySpread"
_PRE_SCORE_KEY = "PreScorePodTopologySpread"
_ROWS_KEY = "PodTopologySpreadRows"

__all__ = ["PodTopologySpread", "assigned_pod_may_help", "ERR_CONSTRAINTS_NOT_MATCH", "ERR_NODE_LABEL_NOT_MATCH"]


def _validate_default(i: int, c: object, seen: set[tuple[str, str]]) -> None:
    """Upstream's ValidatePodTopologySpreadArgs for one default constraint."""
    path = f"defaultConstraints[{i}]"
    if not isinstance(c, dict):
        raise ValueError(f"{path}: must be a map")
    unknown = sorted(set(c) - _CONSTRAINT_FIELDS)
    if unknown:
        raise ValueError(f"{path}: unknown fields {unknown}")
    skew = c.get("maxSkew")
    if not isinstance(skew, int) or isinstance(skew, bool) or skew <= 0:
        raise ValueError(f"{path}.maxSkew: Invalid value: {skew!r}: not in valid range (0, inf)")
    key = c.get("topologyKey")
    if not key:
        raise ValueError(f"{path}.topologyKey: Required value: can not be empty")
    if not is_qualified_name(key):
        raise ValueError(f"{path}.topologyKey: Invalid value: {key!r}: not a valid label key")
    when = c.get("whenUnsatisfiable")
    if not when:
        raise ValueError(f"{path}.whenUnsatisfiable: Required value: can not be empty")
    if when not in WHEN_UNSATISFIABLE:
        raise ValueError(
            f"{path}.whenUnsatisfiable: Unsupported value: {when!r}: supported values: "
            f"{', '.join(repr(w) for w in sorted(WHEN_UNSATISFIABLE))}"
        )
    if c.get("labelSelector") is not None:
        raise ValueError(
            f"{path}.labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod"
        )
    min_domains = c.get("minDomains")
    if min_domains is not None and (
        not isinstance(min_domains, int) or isinstance(min_domains, bool) or min_domains <= 0
    ):
        raise ValueError(f"{path}.minDomains: Invalid value: {min_domains!r}: must be greater than 0")
    for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        if c.get(policy) is not None and c[policy] not in INCLUSION_POLICIES:
            raise ValueError(f"{path}.{policy}: Unsupported value: {c[policy]!r}: supported values: 'Honor', 'Ignore'")
    if (key, when) in seen:
        raise ValueError(f"{path}: Duplicate value: {{{key}, {when}}}")
    seen.add((key, when))


def _parse_args(args: dict[str, Any] | None) -> tuple[str, tuple[dict[str, Any], ...]]:
    args = dict(args or {})
    defaulting = args.pop("defaultingType", None) or SYSTEM_DEFAULTING
    constraints = args.pop("defaultConstraints", None) or []
    if args:
        raise ValueError(f"PodTopologySpread: unknown arguments {sorted(args)}")
    if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        raise ValueError(
            f"PodTopologySpread: defaultingType: Unsupported value: {defaulting!r}: supported values: 'List', 'System'"
        )
    if not isinstance(constraints, (list, tuple)):
        raise ValueError("PodTopologySpread: defaultConstraints: must be a list")
    if defaulting == SYSTEM_DEFAULTING and constraints:
        raise ValueError(
            "PodTopologySpread: defaultingType: Invalid value: 'System': when .defaultConstraints are not empty"
        )
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(constraints):
        try:
            _validate_default(i, c, seen)
        except ValueError as exc:
            raise ValueError(f"PodTopologySpread: {exc}") from None
    return defaulting, tuple(constraints)


def _has_explicit(pod: dict[str, Any]) -> bool:
    return bool((pod.get("spec") or {}).get("topologySpreadConstraints"))


def _explicit_constraints(pinfo: PodInfo) -> tuple[Constraint, ...]:
    try:
        return pod_constraints(pinfo.pod, pinfo.labels)
    except (SelectorError, ValueError, TypeError) as exc:
        raise PluginError(f"obtaining pod's topology spread constraints: {exc}") from None


def _defaulted_owner(pod: dict[str, Any]) -> bool:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller") and ref.get("kind") in DEFAULTED_OWNER_KINDS:
            return True
    return False


class PodTopologySpread(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin):
    NAME = "PodTopologySpread"
    # Matching pods appearing, changing or leaving change domain counts; node changes
    # change the domains themselves and which nodes the inclusion policies admit.
    EVENTS = frozenset(
        {
            ClusterEvent.ASSIGNED_POD_ADD,
            ClusterEvent.ASSIGNED_POD_UPDATE,
            ClusterEvent.ASSIGNED_POD_DELETE,
            ClusterEvent.NODE_ADD,
            ClusterEvent.NODE_DELETE,
            ClusterEvent.NODE_LABEL,
            ClusterEvent.NODE_TAINT,
        }
    )

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        defaulting, raw = _parse_args(args)
        self.system_defaulted = defaulting == SYSTEM_DEFAULTING
        raw = SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else raw
        self.default_constraints = tuple(constraint_template(c) for c in raw)
        self._hard_defaults = any(c.hard for c in self.default_constraints)
        self._soft_defaults = any(not c.hard for c in self.default_constraints)
        self._default_memo: dict[tuple[tuple[str, str], ...], tuple[Constraint, ...]] = {}
        self.eligibility = NodeEligibility()

    def sign(self, pod: PodInfo, state: CycleState) -> tuple[Any, ...] | None:
        # Skipped at PreFilter: no hard constraint (its soft ones, if any, are scored with
        # normalizing, afresh per pod). With hard constraints the verdict reads counts over
        # the domain, which each placed pod of the kind moves.
        if self.NAME not in state.skip_filter:
            return None
        pod_obj = pod.pod
        refs = (pod_obj.get("metadata") or {}).get("ownerReferences")
        return (pod.namespace, pod.labels, (pod_obj.get("spec") or {}).get("topologySpreadConstraints"), refs)

    # ---- which constraints ----------------------------------------------------------

    def _defaults_for(self, pinfo: PodInfo) -> tuple[Constraint, ...]:
        if not self.default_constraints or not _defaulted_owner(pinfo.pod):
            return ()
        key = tuple(sorted((k, v) for k, v in pinfo.labels.items() if k not in CONTROLLER_ADDED_LABELS))
        if not key:
            return ()  # an empty selector: upstream builds no default constraints
        hit = self._default_memo.get(key)
        if hit is None:
            try:
                selector = LabelSelector.from_dict({"matchLabels": dict(key)})
            except SelectorError as exc:
                raise PluginError(f"setting default topology spread constraints: {exc}") from None
            hit = tuple(c.with_selector(selector) for c in self.default_constraints)
            if len(self._default_memo) > 4096:
                self._default_memo.clear()
            self._default_memo[key] = hit
        return hit

    def constraints(self, pinfo: PodInfo) -> tuple[tuple[Constraint, ...], bool]:
        """(the pod's constraints, whether they are its own rather than defaults)."""
        if _has_explicit(pinfo.pod):
            return _explicit_constraints(pinfo), True
        return self._defaults_for(pinfo), False

    # ---- PreFilter / Filter ---------------------------------------------------------

    @staticmethod
    def _rows_memo(state: CycleState) -> RowsMemo:
        """Matching-pod rows per selector, shared by PreFilter and PreScore of one cycle."""
        memo: RowsMemo | None = state.read(_ROWS_KEY)
        if memo is None:
            memo = {}
            state.write(_ROWS_KEY, memo)
        return memo

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> tuple[Status, PreFilterResult | None]:
        if not self._hard_defaults and not _has_explicit(pod.pod):
            return SKIP, None
        constraints, _ = self.constraints(pod)
        hard = [c for c in constraints if c.hard]
        if not hard:
            return SKIP, None
        state.write(_PRE_FILTER_KEY, build_hard_state(snap, pod, hard, self.eligibility, self._rows_memo(state)))
        return SUCCESS, None

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> FilterResult:
        states = state.read(_PRE_FILTER_KEY)
        if states is None:
            raise PluginError(f'reading "{_PRE_FILTER_KEY}" from cycleState: not found')
        return spread_filter(snap.num_nodes, states)

    # ---- PreScore / Score -----------------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> Status:
        explicit = _has_explicit(pod.pod)
        if (not explicit and not self._soft_defaults) or snap.num_nodes == 0:
            return SKIP
        constraints, explicit = self.constraints(pod)
        soft = [c for c in constraints if not c.hard]
        if not soft:
            return SKIP
        # Only the system defaults let a node without a zone label be scored by hostname.
        require_all = explicit or not self.system_defaulted
        raw, ignored = soft_scores(snap, pod, soft, candidates, require_all, self.eligibility, self._rows_memo(state))
        state.write(_PRE_SCORE_KEY, (raw, ignored))
        return SUCCESS

    def _pre_score_state(self, state: CycleState, n: int) -> tuple[np.ndarray, np.ndarray | None]:
        st: tuple[np.ndarray, np.ndarray | None] | None = state.read(_PRE_SCORE_KEY)
        if st is None:
            raise PluginError(f'reading "{_PRE_SCORE_KEY}" from cycleState: not found')
        if len(st[0]) != n:
            raise PluginError(f"scored {n} candidates, PreScore saw {len(st[0])}")
        return st

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> np.ndarray:
        return self._pre_score_state(state, len(candidates))[0].copy()

    def normalize(self, state: CycleState, pod: PodInfo, scores: np.ndarray) -> None:
        normalize_spread(scores, self._pre_score_state(state, len(scores))[1])

    # ---- queueing hint --------------------------------------------------------------

    def assigned_pod_may_help(self, pending: PodInfo, assigned: PodInfo, namespace_labels: object = None) -> bool:
        """Like the module function, but also through this profile's default constraints."""
        if _has_explicit(pending.pod):
            return assigned_pod_may_help(pending, assigned)
        if assigned.namespace != pending.namespace:
            return False
        # _defaults_for fills every template's selector (Constraint.selector is None only in templates).
        defaults = self._defaults_for(pending)
        return any(c.hard and c.selector.matches(assigned.labels) for c in defaults)  # type: ignore[union-attr]


def assigned_pod_may_help(pending: PodInfo, assigned: PodInfo) -> bool:
    """Might a bound pod appearing, changing or leaving make ``pending`` fit again?

    True when the pending pod has DoNotSchedule constraints of its own (the only kind that
    rejects) and ``assigned`` is in its namespace and matches one of their selectors.
    ScheduleAnyway constraints never reject a pod, so they never call for a retry. A pod
    whose constraints cannot be parsed is always retried.
    """
    if assigned.namespace != pending.namespace or not _has_explicit(pending.pod):
        return False
    try:
        constraints = pod_constraints(pending.pod, pending.labels)
    except (SelectorError, ValueError, TypeError):
        return True
    # Parsed constraints always carry a selector (Constraint.selector is None only in templates).
    return any(c.hard and c.selector.matches(assigned.labels) for c in constraints)  # type: ignore[union-attr]
