"""The plugin contract: what a scheduler plugin implements at each extension point.

Owns the extension-point interfaces (``FilterPlugin``, ``ScorePlugin``, ...) and the
value types they exchange with the framework (``CycleState``, ``FilterResult``,
``PreFilterResult``, ``PostFilterResult``), the ``ClusterEvent`` names plugins register
for, ``PreemptionHost`` (what the scheduler offers a preemption plugin) and
``POINT_CLASSES``, which maps each extension point to its interface. Subclassed by
``plugins/``; run by ``framework.Framework``, which re-exports every name here, so
callers keep importing them from ``framework``; ``config.py`` checks plugins against
``POINT_CLASSES``.

Vectorised contract: Filter and Score plugins see every node at once. ``filter`` returns a
boolean mask of feasible nodes plus, per failure reason, the mask of nodes failing for
it; ``score`` returns an int64 array of scores for an array of candidate node indices.
The search judges only some rows at a time (``filter_rows``, a slice or index array):
plugins vectorised over the snapshot's rows override it to answer for those rows alone;
the others are judged over every node once per search and sliced. ``Plugin.sign`` gives
the plugin's fragment of the pod's one signature, which keys every memo of ``accel/``.
Per-node ``Status`` objects exist only when a message is asked for (``Diagnosis``).

A plugin signals an internal failure by raising ``PluginError``; the framework turns it
into an ``Error`` status carrying the plugin's name. Any other exception is a bug and
propagates.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .cache import PodInfo, Snapshot
from .status import Code, Diagnosis, Status

if TYPE_CHECKING:
    import random

    from .queue import QueuedPodInfo

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
# Upstream's extension-point names, as KubeSchedulerConfiguration spells them.
EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
)


class ClusterEvent:
    """Names of the cluster changes that may make an unschedulable pod schedulable."""

    NODE_ADD = "Node/Add"
    NODE_DELETE = "Node/Delete"
    NODE_ALLOCATABLE = "Node/UpdateNodeAllocatable"
    NODE_LABEL = "Node/UpdateNodeLabel"
    NODE_TAINT = "Node/UpdateNodeTaint"
    # Assigned (bound) pods; Add/Update wake only pods whose affinity or spread they may
    # satisfy (see SchedulingQueue.move_for_assigned_pod).
    ASSIGNED_POD_ADD = "Pod/Add"
    ASSIGNED_POD_UPDATE = "Pod/Update"
    ASSIGNED_POD_DELETE = "Pod/Delete"
    NAMESPACE_CHANGE = "Namespace/Change"
    UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"
    WILDCARD = "*"


class PluginError(Exception):
    """Raised by a plugin for an internal failure; the cycle ends with an Error status."""


class CycleState:
    """Scratch data plugins share within one scheduling cycle, keyed by plugin-chosen keys."""

    __slots__ = ("_data", "skip_filter", "skip_score", "narrowed_by")

    def __init__(self) -> None:
        self._data: dict[object, Any] = {}
        self.skip_filter: set[str] = set()  # plugins whose PreFilter returned Skip
        self.skip_score: set[str] = set()  # plugins whose PreScore returned Skip
        # PreFilter plugins whose PreFilterResult narrowed the nodes: if the pod then fits
        # nowhere they count among its rejectors, as upstream (events they registered for
        # may help it).
        self.narrowed_by: list[str] = []

    def read(self, key: object) -> Any:
        return self._data.get(key)

    def write(self, key: object, value: Any) -> None:
        self._data[key] = value

    def clone(self) -> CycleState:
        out = CycleState()
        out._data = dict(self._data)
        out.skip_filter = set(self.skip_filter)
        out.skip_score = set(self.skip_score)
        out.narrowed_by = list(self.narrowed_by)
        return out


# ---- extension points ------------------------------------------------------------------


class Plugin(ABC):  # noqa: B024 - the extension points below declare the abstract methods
    NAME: str = ""
    # Cluster events after which a pod this plugin rejected is worth retrying.
    EVENTS: frozenset[str] = frozenset()
    # Plugins that reason about other pods override this to narrow assigned-pod events:
    # could ``assigned`` (bound, changed or gone) make ``pending`` schedulable? None means
    # "no opinion", and the pod is not moved for that plugin's sake.
    assigned_pod_may_help: Callable[[PodInfo, PodInfo, Any], bool] | None = None

    def sign(self, pod: PodInfo, state: CycleState) -> Hashable | None:
        """This plugin's fragment of ``pod``'s signature (upstream's SignPod), asked after
        the pod's PreFilter filled ``state``: what the plugin reads of the pod, hashable.

        A fragment promises, for pods of one profile whose fragments all agree and whose
        PreFilter skipped the same plugins: this plugin's Filter verdict on a node, and its
        raw Score there unless it normalizes, depend on the fragment and on that node's
        own row and object alone (not on other nodes, other pods' terms or the candidate
        set); and its PreFilter and PreScore outcome stays as it was when such a pod is
        placed (a normalizing Score plugin that ran is exempt: its scores are computed
        afresh over each pod's candidates). A fragment reads no more than the pod's
        namespace, spec, labels and ownerReferences and which plugins PreFilter skipped:
        pods of one template share their signature. None makes no promise, and the pod is
        then unsignable: no memo serves it (``accel/signature.py``). Unknown plugins say None."""
        return None

    if TYPE_CHECKING:
        # Every plugin is built by its registry factory as ``cls(args, framework)``.
        def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None: ...


class PreEnqueuePlugin(Plugin):
    """Gate a pod before it may enter activeQ (upstream's SchedulingGates)."""

    @abstractmethod
    def pre_enqueue(self, pod: PodInfo) -> Status:
        """Success lets the pod in; a rejection keeps it parked until it is updated."""


class QueueSortPlugin(Plugin):
    @abstractmethod
    def sort_key(self, qpinfo: QueuedPodInfo) -> tuple[Any, ...]:
        """A key whose ascending order is the queue order (upstream's ``Less`` as a key)."""

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.sort_key(a) < self.sort_key(b)


@dataclass(frozen=True)
class PreFilterResult:
    node_names: frozenset[str] | None = None  # None: all nodes


class PreFilterPlugin(Plugin):
    @abstractmethod
    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> tuple[Status, PreFilterResult | None]:
        """Skip (no Filter needed), reject every node, or narrow the node set."""


@dataclass
class FilterResult:
    feasible: np.ndarray  # bool per snapshot node
    # (code, reason, mask of nodes failing for this reason); a node may be in several.
    failures: list[tuple[Code, str, np.ndarray]] = field(default_factory=list)


class FilterPlugin(Plugin):
    @abstractmethod
    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> FilterResult:
        """Judge every node of the snapshot at once."""

    # Plugins whose verdict is vectorised over the snapshot's node rows override
    # ``filter_rows``; the others are judged over every node once per search and sliced
    # (``accel/lazyfilter.py``), which gives the same verdicts.

    def filter_rows(self, state: CycleState, pod: PodInfo, snap: Snapshot, rows: np.ndarray | slice) -> FilterResult:
        """Judge only the nodes ``rows`` (indices in that order, or a slice): the result's
        arrays follow ``rows``."""
        return slice_result(self.filter(state, pod, snap), rows)


def slice_result(res: FilterResult, rows: np.ndarray | slice) -> FilterResult:
    """A full-length verdict restricted to ``rows``."""
    return FilterResult(res.feasible[rows], [(code, reason, mask[rows]) for code, reason, mask in res.failures])


@dataclass(frozen=True)
class PostFilterResult:
    """What a PostFilter decided. A result (even with an empty node name) replaces the
    pod's nomination (upstream's ModeOverride; "" clears it); no result leaves it alone.
    For preemption, ``victims`` are the pods to evict on the nominated node and
    ``clear_nominations`` the lower-priority pods nominated there that lose their
    nomination; the scheduler turns both into API writes (upstream's prepareCandidate)."""

    nominated_node_name: str = ""
    victims: tuple[PodInfo, ...] = ()
    clear_nominations: tuple[PodInfo, ...] = ()


class PreemptionHost(ABC):
    """What the scheduler offers a preemption PostFilter (set as ``Framework.host``)."""

    @abstractmethod
    def now(self) -> float: ...

    @abstractmethod
    def rng(self) -> random.Random: ...  # seeded: the candidate search's start offset

    @abstractmethod
    def nominated_pods(self, node_name: str) -> list[PodInfo]: ...  # nominated there, in order

    @abstractmethod
    def pdbs(self) -> list[dict[str, Any]]: ...  # every PodDisruptionBudget, with its status

    @abstractmethod
    def filter_on_node(self, state: CycleState, pod: PodInfo, node_index: int, removed: list[PodInfo]) -> Status:
        """The pod's Filter verdict on one node with the ``removed`` pods taken off it,
        nominated pods of equal or higher priority considered in two passes (§7.3)."""

    def fast_candidate(
        self, pod: PodInfo, potential: np.ndarray, offset: int, wanted: int, now: float
    ) -> tuple[int, list[PodInfo]] | None:
        """A hook for speed: (node index, victims) exactly as the dry run over
        ``potential`` from ``offset`` would choose, or None to run that dry run."""
        return None


class PostFilterPlugin(Plugin):
    """Runs after no node fitted (DefaultPreemption)."""

    @abstractmethod
    def post_filter(
        self, state: CycleState, pod: PodInfo, snap: Snapshot, diagnosis: Diagnosis
    ) -> tuple[PostFilterResult | None, Status]: ...


class PreScorePlugin(Plugin):
    @abstractmethod
    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> Status:
        """Prepare for scoring ``candidates`` (node indices); Skip disables this plugin's Score."""


class ScorePlugin(Plugin):
    @abstractmethod
    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> np.ndarray:
        """int64 scores aligned with ``candidates``; in [0, 100] after ``normalize``."""

    def normalize(self, state: CycleState, pod: PodInfo, scores: np.ndarray) -> None:
        """Optional NormalizeScore: rescale ``scores`` in place. Overridden only when needed."""


class ReservePlugin(Plugin):
    @abstractmethod
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...

    @abstractmethod
    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


class PermitPlugin(Plugin):
    """Approve or reject a placement. Waiting (upstream's ``Wait``) is not modelled yet."""

    @abstractmethod
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...


class PreBindPlugin(Plugin):
    """Work that must finish before the bind (volumes, in upstream); a failure unreserves."""

    @abstractmethod
    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...


class BindPlugin(Plugin):
    """Bind a pod. Skip passes to the next binder. A binder with ``BATCHED`` (DefaultBinder)
    accepts by returning Success and leaves the API call to the scheduler actor, which
    sends the binds of many cycles in one batch (``ScheduleOutput.binds``)."""

    BATCHED = False

    @abstractmethod
    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...


# Extension point -> the interface a plugin implements to run there.
POINT_CLASSES: dict[str, type[Plugin]] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
}
