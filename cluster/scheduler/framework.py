"""The scheduling framework: one profile's plugins, run at each extension point.

Owns ``Framework``, which instantiates a profile's plugins from a ``Registry``, sorts
them by extension point, and runs them (``Framework.run_*``), turning their verdicts into
one ``Status`` per point and, for Filter, a ``FilterOutcome`` whose rejections are merged
only when a message is asked for. The ``Scheduler`` builds one ``Framework`` per profile
and drives the cycle; plugins live in ``plugins/`` and are found by name through a
``Registry``.

The plugin contract (the extension-point interfaces, the values they exchange, the
vectorised Filter/Score rules and ``PluginError``) lives in ``interfaces.py``; the
registry and profile types live in ``registry.py``. Both are re-exported here, so
plugins, the scheduler and tests import them from this module.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .cache import PodInfo, Snapshot
from .interfaces import (  # noqa: F401 (re-exported: the framework's API)
    EXTENSION_POINTS,
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    POINT_CLASSES,
    BindPlugin,
    ClusterEvent,
    CycleState,
    FilterPlugin,
    FilterResult,
    PermitPlugin,
    Plugin,
    PluginError,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreemptionHost,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    slice_result,
)
from .registry import PluginSpec, ProfileConfig, Registry  # noqa: F401 (re-exported: the framework's API)
from .status import SUCCESS, Code, Diagnosis, Rejection, Status

__all__ = [  # the framework's API: its own names and the plugin contract's, re-exported
    "EXTENSION_POINTS",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "POINT_CLASSES",
    "BindPlugin",
    "ClusterEvent",
    "CycleState",
    "FilterOutcome",
    "FilterPlugin",
    "FilterResult",
    "Framework",
    "PendingRejections",
    "PermitPlugin",
    "Plugin",
    "PluginError",
    "PluginSpec",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "PreemptionHost",
    "ProfileConfig",
    "QueueSortPlugin",
    "Registry",
    "ReservePlugin",
    "ScorePart",
    "ScorePlugin",
    "slice_result",
]

# ---- running a profile -----------------------------------------------------------------

# The points whose plugins sit in a plain list attribute; ``_enable`` handles queueSort
# (one plugin) and score (weighted, with its NormalizeScore flag) itself.
_BUCKETS = {
    "preEnqueue": "pre_enqueue_plugins",
    "preFilter": "pre_filter_plugins",
    "filter": "filter_plugins",
    "postFilter": "post_filter_plugins",
    "preScore": "pre_score_plugins",
    "reserve": "reserve_plugins",
    "permit": "permit_plugins",
    "preBind": "pre_bind_plugins",
    "bind": "bind_plugins",
}

# (plugin name, its FilterResult.failures, the nodes it was the first to reject)
PendingRejections = tuple[str, list[tuple[Code, str, np.ndarray]], np.ndarray]
# (plugin name, weight, raw scores, normalised scores) of one Score plugin over candidates
ScorePart = tuple[str, int, np.ndarray, np.ndarray]


class FilterOutcome:
    """Feasible nodes after all Filter plugins, with rejections kept unmerged until needed.

    ``pending`` holds, per plugin, its failure masks and the nodes it was the first to
    reject; turning them into per-reason masks costs a few vector ops, which a cycle that
    found a node never pays.
    """

    __slots__ = ("feasible", "status", "_pending")

    def __init__(self, feasible: np.ndarray | None, status: Status, pending: list[PendingRejections]):
        self.feasible = feasible
        self.status = status
        self._pending = pending

    def rejections(self) -> list[Rejection]:
        out: list[Rejection] = []
        for plugin, failures, first_rejected in self._pending:
            for code, reason, mask in failures:
                m = mask & first_rejected
                if m.any():
                    out.append(Rejection(plugin, code, reason, m))
        return out


class Framework:
    """One profile: its plugins instantiated and sorted by extension point."""

    def __init__(self, profile: ProfileConfig, specs: tuple[PluginSpec, ...], registry: Registry):
        self.profile_name = profile.scheduler_name
        self.host: PreemptionHost | None = None  # set by the Scheduler that runs this profile
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        self.plugins: dict[str, Plugin] = {}
        self.queue_sort: QueueSortPlugin | None = None
        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = []
        self.pre_bind_plugins: list[PreBindPlugin] = []
        self.pre_filter_plugins: list[PreFilterPlugin] = []
        self.filter_plugins: list[FilterPlugin] = []
        self.post_filter_plugins: list[PostFilterPlugin] = []
        self.pre_score_plugins: list[PreScorePlugin] = []
        self.score_plugins: list[tuple[ScorePlugin, int, bool]] = []  # (plugin, weight, normalizes)
        self.reserve_plugins: list[ReservePlugin] = []
        self.permit_plugins: list[PermitPlugin] = []
        self.bind_plugins: list[BindPlugin] = []
        for spec in specs:
            self._build(spec, registry)
        order = dict(profile.order) if profile.order is not None else None
        weights = {spec.name: spec.weight or 1 for spec in specs}  # a weight of 0 reads as 1, as upstream
        for point, cls in POINT_CLASSES.items():
            names = order.get(point, ()) if order is not None else [spec.name for spec in specs]
            for name in names:
                plugin = self.plugins[name]
                if isinstance(plugin, cls):
                    self._enable(point, plugin, weights[name])
        if self.queue_sort is None:
            raise ValueError(f"profile {self.profile_name!r}: no QueueSort plugin is enabled")
        if not self.bind_plugins:
            raise ValueError(f"profile {self.profile_name!r}: no Bind plugin is enabled")

    def _build(self, spec: PluginSpec, registry: Registry) -> None:
        if spec.name in self.plugins:
            raise ValueError(f"profile {self.profile_name!r}: plugin {spec.name!r} is enabled twice")
        plugin = registry.get(spec.name)(dict(spec.args or {}), self)
        if plugin.NAME != spec.name:
            raise ValueError(f"factory for {spec.name!r} built a plugin named {plugin.NAME!r}")
        self.plugins[spec.name] = plugin

    def _enable(self, point: str, plugin: Plugin, weight: int) -> None:
        if point == "queueSort":
            if self.queue_sort is not None:
                raise ValueError(f"profile {self.profile_name!r}: only one QueueSort plugin may be enabled")
            assert isinstance(plugin, QueueSortPlugin)  # the caller checked POINT_CLASSES[point]
            self.queue_sort = plugin
        elif point == "score":
            assert isinstance(plugin, ScorePlugin)  # the caller checked POINT_CLASSES[point]
            normalizes = type(plugin).normalize is not ScorePlugin.normalize
            self.score_plugins.append((plugin, weight, normalizes))
        else:
            getattr(self, _BUCKETS[point]).append(plugin)

    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter_plugins)

    def cluster_events(self) -> dict[str, set[str]]:
        """Event -> names of the plugins that registered interest (EnqueueExtensions)."""
        out: dict[str, set[str]] = {}
        for name, plugin in self.plugins.items():
            for ev in plugin.EVENTS:
                out.setdefault(ev, set()).add(name)
        return out

    def run_pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> tuple[Status, np.ndarray | None]:
        """Returns the first non-success status, or success with the allowed-node mask (None = all)."""
        names: frozenset[str] | None = None
        narrowing: list[str] = []
        for p in self.pre_filter_plugins:
            try:
                status, result = p.pre_filter(state, pod, snap)
            except PluginError as exc:
                return Status.error(f'running PreFilter plugin "{p.NAME}": {exc}', p.NAME), None
            if status.is_skip():
                state.skip_filter.add(p.NAME)
                continue
            if not status.is_success():
                return status.with_plugin(p.NAME), None
            if result is None or result.node_names is None:
                continue
            narrowing.append(p.NAME)
            state.narrowed_by.append(p.NAME)
            names = result.node_names if names is None else names & result.node_names
            if not names:
                msg = (
                    f"node(s) didn't satisfy plugin {narrowing[0]}"
                    if len(narrowing) == 1
                    else f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}] simultaneously"
                )
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,), p.NAME), None
        if names is None:
            return SUCCESS, None
        mask = np.zeros(snap.num_nodes, dtype=bool)
        for name in names:
            i = snap.index_of(name)
            if i is not None:  # a PreFilterResult may name nodes that do not exist
                mask[i] = True
        return SUCCESS, mask

    def run_filter(
        self,
        state: CycleState,
        pod: PodInfo,
        snap: Snapshot,
        allowed: np.ndarray | None = None,
        rows: np.ndarray | slice | None = None,
    ) -> FilterOutcome:
        """Every Filter plugin over all nodes, or only over ``rows`` (node indices or a
        slice of them; the outcome's arrays then follow ``rows``)."""

        def judge(p: FilterPlugin) -> FilterResult:
            return p.filter(state, pod, snap) if rows is None else p.filter_rows(state, pod, snap, rows)

        return self.fold_filters(state, snap, allowed, rows, judge)

    def fold_filters(
        self,
        state: CycleState,
        snap: Snapshot,
        allowed: np.ndarray | None,
        rows: np.ndarray | slice | None,
        judge: Callable[[FilterPlugin], FilterResult],
    ) -> FilterOutcome:
        """The verdicts ``judge`` gives per Filter plugin (skipped ones left out), in
        order: a node is feasible where every one passes, and blamed on the first that
        rejects it."""
        feasible = allowed if rows is None or allowed is None else allowed[rows]
        pending: list[PendingRejections] = []
        for p in self.filter_plugins:
            if p.NAME in state.skip_filter:
                continue
            try:
                res = judge(p)
            except PluginError as exc:
                return FilterOutcome(None, Status.error(f'running "{p.NAME}" filter plugin: {exc}', p.NAME), pending)
            if feasible is None:
                first_rejected, feasible = ~res.feasible, res.feasible
            else:
                first_rejected, feasible = feasible & ~res.feasible, feasible & res.feasible
            if res.failures:
                pending.append((p.NAME, res.failures, first_rejected))
        if feasible is None:
            feasible = np.ones(snap.num_nodes, dtype=bool)
            feasible = feasible if rows is None else feasible[rows]
        return FilterOutcome(feasible, SUCCESS, pending)

    def run_post_filter(
        self, state: CycleState, pod: PodInfo, snap: Snapshot, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]:
        """The first plugin that succeeds decides; an unresolvable verdict stops the chain;
        a plain rejection's result is kept (so "clear the nomination" survives) while the
        next plugin gets its turn, as upstream."""
        reasons: list[str] = []
        kept: PostFilterResult | None = None
        for p in self.post_filter_plugins:
            try:
                result, status = p.post_filter(state, pod, snap, diagnosis)
            except PluginError as exc:
                return None, Status.error(f'running PostFilter plugin "{p.NAME}": {exc}', p.NAME)
            if status.is_success() or status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return result, status.with_plugin(p.NAME)
            if not status.is_rejected():
                return None, status.with_plugin(p.NAME)
            if result is not None:
                kept = result
            reasons.extend(status.reasons)
        return kept, Status(Code.UNSCHEDULABLE, tuple(reasons))

    def run_score(
        self,
        state: CycleState,
        pod: PodInfo,
        snap: Snapshot,
        candidates: np.ndarray,
        parts: list[ScorePart] | None = None,
    ) -> tuple[np.ndarray | None, Status]:
        """PreScore, Score and NormalizeScore; returns the weighted total per candidate
        (``parts``: see ``score_candidates``)."""
        status = self.run_pre_score(state, pod, snap, candidates)
        if not status.is_success():
            return None, status
        return self.score_candidates(state, pod, snap, candidates, parts=parts)

    def run_pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> Status:
        """Every PreScore plugin; a Skip disables that plugin's Score for this cycle."""
        p: PreScorePlugin | None = None
        try:
            for p in self.pre_score_plugins:
                status = p.pre_score(state, pod, snap, candidates)
                if status.is_skip():
                    state.skip_score.add(p.NAME)
                elif not status.is_success():
                    return status.with_plugin(p.NAME)
        except PluginError as exc:
            assert p is not None  # only a plugin raises PluginError
            return Status.error(f'running plugin "{p.NAME}": {exc}', p.NAME)
        return SUCCESS

    def score_candidates(
        self,
        state: CycleState,
        pod: PodInfo,
        snap: Snapshot,
        candidates: np.ndarray,
        only: frozenset[str] | None = None,
        skip: frozenset[str] = frozenset(),
        parts: list[ScorePart] | None = None,
    ) -> tuple[np.ndarray | None, Status]:
        """Score and NormalizeScore after PreScore: the weighted total per candidate, of
        the plugins in ``only`` (None: all) but not in ``skip``. ``parts``, when given,
        receives each plugin's (name, weight, raw scores, normalised scores), for the
        scheduling explanation."""
        p: ScorePlugin | None = None
        try:
            total = np.zeros(len(candidates), dtype=np.int64)
            for p, weight, normalizes in self.score_plugins:
                if p.NAME in state.skip_score or p.NAME in skip or (only is not None and p.NAME not in only):
                    continue
                scores = p.score(state, pod, snap, candidates)
                raw = scores.copy() if parts is not None and normalizes else scores
                if normalizes:
                    p.normalize(state, pod, scores)
                if parts is not None:
                    parts.append((p.NAME, weight, raw, scores))
                lo, hi = int(scores[scores.argmin()]), int(scores[scores.argmax()])
                if lo < MIN_NODE_SCORE or hi > MAX_NODE_SCORE:
                    bad = lo if lo < MIN_NODE_SCORE else hi
                    return None, Status.error(
                        f"plugin {p.NAME!r} returns an invalid score {bad}, it should in the range of "
                        f"[{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                        p.NAME,
                    )
                total += scores * weight if weight != 1 else scores
        except PluginError as exc:
            assert p is not None  # only a plugin raises PluginError
            return None, Status.error(f'running plugin "{p.NAME}": {exc}', p.NAME)
        return total, SUCCESS

    def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        for i, p in enumerate(self.reserve_plugins):
            status = p.reserve(state, pod, node_name)
            if not status.is_success():
                self.run_unreserve(state, pod, node_name, upto=i + 1)
                return status.with_plugin(p.NAME)
        return SUCCESS

    def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str, upto: int | None = None) -> None:
        plugins = self.reserve_plugins if upto is None else self.reserve_plugins[:upto]
        for p in reversed(plugins):  # undo in reverse order, as upstream
            p.unreserve(state, pod, node_name)

    def run_permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        for p in self.permit_plugins:
            status = p.permit(state, pod, node_name)
            if not status.is_success():
                return status.with_plugin(p.NAME)
        return SUCCESS

    def run_pre_enqueue(self, pod: PodInfo) -> Status:
        for p in self.pre_enqueue_plugins:
            status = p.pre_enqueue(pod)
            if not status.is_success():
                return status.with_plugin(p.NAME)
        return SUCCESS

    def run_pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        for p in self.pre_bind_plugins:
            status = p.pre_bind(state, pod, node_name)
            if not status.is_success():
                return status.with_plugin(p.NAME)
        return SUCCESS

    def run_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, bool]:
        """The first binder's verdict that is not Skip, and whether that binder leaves the
        API call to the actor's batch. Every binder skipping is an error, as upstream."""
        for p in self.bind_plugins:
            status = p.bind(state, pod, node_name)
            if not status.is_skip():
                return status.with_plugin(p.NAME), p.BATCHED and status.is_success()
        return Status.error("all bind plugins skipped the pod"), False
