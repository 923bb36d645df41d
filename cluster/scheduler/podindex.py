"""Indexes over the pods placed on known nodes, for the plugins that reason about pods.

Owns the lookups the cache keeps current as pods are attached to and detached from nodes:
pods by namespace, pods by (namespace, label key, label value), placed pods grouped by
identical inter-pod (anti-)affinity term, and, for the selectors PodTopologySpread asked
about lately, the node rows of the live pods each matches and their count per node. Read
by InterPodAffinity and PodTopologySpread through ``Snapshot.pods``; written only by
``Cache``.

Why: upstream walks every pod of every node for each affinity/spread pod. With 10,000
pods that is the slow part of a cycle in Python, so selectors are answered from the label
index (the smallest ``=``/``in`` bucket, then ``matches`` on those), and the terms of the
many replicas of one workload collapse into one group with a per-node count. A spread
selector's pods are kept as they come and go, so a cycle reads them without a scan, and
once they outnumber the nodes it reads their per-node counts instead of one row a pod.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from ..api.selectors import LabelSelector
from .podterms import AffinityTerm, NamespaceLabels

K = TypeVar("K", bound=Hashable)

if TYPE_CHECKING:
    from .podinfo import PodInfo


class TermGroup:
    """Placed pods that carry one identical term (of one kind)."""

    __slots__ = ("term", "pods")

    def __init__(self, term: AffinityTerm):
        self.term = term
        self.pods: dict[str, PodInfo] = {}  # uid -> PodInfo

    def node_counts(self, num_nodes: int) -> np.ndarray:
        return node_counts(self.pods.values(), num_nodes)


def node_counts(pods: Iterable[PodInfo], num_nodes: int) -> np.ndarray:
    """How many of ``pods`` sit on each node row (pods must be attached to a node)."""
    # p.node is Optional on PodInfo; callers only pass attached pods (no per-pod check here).
    rows = np.fromiter((p.node.index for p in pods), dtype=np.intp)  # type: ignore[union-attr]
    return np.bincount(rows, minlength=num_nodes)[:num_nodes]


def _live(pinfo: PodInfo) -> bool:
    return not pinfo.deleting


class _Rows:
    """The live (not terminating) pods one (namespace, selector) matches, kept as pods
    come and go so a spread cycle reads them without a scan: each pod's node row, and
    how many sit on each node row."""

    __slots__ = ("selector", "rows", "n", "uids", "at", "counts")

    def __init__(self, selector: LabelSelector, pods: Iterable[PodInfo]):
        self.selector = selector
        self.rows = np.empty(64, dtype=np.intp)
        self.n = 0
        self.uids: list[str] = []
        self.at: dict[str, int] = {}
        self.counts = np.zeros(64, dtype=np.int64)
        for p in pods:
            if _live(p):
                self.add(p)

    def add(self, p: PodInfo) -> None:
        if self.n == len(self.rows):
            self.rows = np.concatenate([self.rows, np.empty(len(self.rows), dtype=np.intp)])
        row = p.node.index  # type: ignore[union-attr]  # the index holds placed pods only
        if row >= len(self.counts):
            grown = np.zeros(max(2 * len(self.counts), row + 1), dtype=np.int64)
            grown[: len(self.counts)] = self.counts
            self.counts = grown
        self.counts[row] += 1
        self.at[p.uid] = self.n
        self.rows[self.n] = row
        self.uids.append(p.uid)
        self.n += 1

    def remove(self, uid: str) -> None:
        i = self.at.pop(uid, None)
        if i is None:
            return
        self.counts[self.rows[i]] -= 1
        last = self.n - 1
        if i != last:  # swap-remove: the last entry takes the freed slot
            self.rows[i], self.uids[i] = self.rows[last], self.uids[last]
            self.at[self.uids[i]] = i
        self.uids.pop()
        self.n = last

    def array(self) -> np.ndarray:
        return self.rows[: self.n].copy()  # a copy: later cycles change the buffer

    def per_node(self, num_nodes: int) -> np.ndarray:
        """Pods per node row, as a view for reading within one cycle (the buffer changes as
        pods come and go), or a padded copy while the buffer is shorter than the rows."""
        if len(self.counts) >= num_nodes:
            return self.counts[:num_nodes]
        out = np.zeros(num_nodes, dtype=np.int64)
        out[: len(self.counts)] = self.counts
        return out


class PodIndex:
    # Selectors whose rows are kept per namespace; the least recently asked goes first.
    TRACKED = 64

    def __init__(self) -> None:
        self._by_ns: dict[str, dict[str, PodInfo]] = {}
        self._by_label: dict[tuple[str, str, str], dict[str, PodInfo]] = {}
        # (kind, term) -> TermGroup; kinds are podterms.TERM_KINDS
        self._groups: dict[tuple[str, AffinityTerm], TermGroup] = {}
        self._groups_by_kind: dict[str, dict[AffinityTerm, TermGroup]] = {}
        self.version = 0  # bumped on every change; plugins may memoise on it
        self._tracked: dict[str, dict[LabelSelector, _Rows]] = {}  # namespace -> selector -> rows

    # ---- maintenance (Cache only) ------------------------------------------------------

    def add(self, pinfo: PodInfo) -> None:
        self.version += 1
        ns, uid = pinfo.namespace, pinfo.uid
        self._by_ns.setdefault(ns, {})[uid] = pinfo
        for k, v in pinfo.labels.items():
            self._by_label.setdefault((ns, k, v), {})[uid] = pinfo
        terms = pinfo.terms
        if terms:
            for kind, group in terms.by_kind():
                for term in group:
                    g = self._groups.get((kind, term))
                    if g is None:
                        g = self._groups[(kind, term)] = TermGroup(term)
                        self._groups_by_kind.setdefault(kind, {})[term] = g
                    g.pods[uid] = pinfo
        tracked = self._tracked.get(ns)
        if tracked and _live(pinfo):
            labels = pinfo.labels
            for t in tracked.values():
                if t.selector.matches(labels):
                    t.add(pinfo)

    def remove(self, pinfo: PodInfo) -> None:
        self.version += 1
        ns, uid = pinfo.namespace, pinfo.uid
        for t in (self._tracked.get(ns) or {}).values():
            t.remove(uid)
        _discard(self._by_ns, ns, uid)
        for k, v in pinfo.labels.items():
            _discard(self._by_label, (ns, k, v), uid)
        terms = pinfo.terms
        if terms:
            for kind, group in terms.by_kind():
                for term in group:
                    g = self._groups.get((kind, term))
                    if g is not None:
                        g.pods.pop(uid, None)
                        if not g.pods:
                            del self._groups[(kind, term)]
                            del self._groups_by_kind[kind][term]

    # ---- queries -----------------------------------------------------------------------

    def namespaces(self) -> list[str]:
        return list(self._by_ns)

    def select(self, namespaces: Iterable[str] | None, selector: LabelSelector) -> list[PodInfo]:
        """Placed pods in ``namespaces`` (None: all) whose labels match ``selector``."""
        if selector.matches_nothing:
            return []
        names = self._by_ns.keys() if namespaces is None else namespaces
        keys = selector.required_values()
        # A lone =/in requirement is answered by its buckets alone (the usual matchLabels
        # {app: x}): no per-pod check needed.
        exact = len(keys) == 1 and selector.requirement_count == 1
        out: list[PodInfo] = []
        candidates: Iterable[PodInfo]
        for ns in names:
            if keys:
                # The smallest bucket of one =/in requirement bounds the candidates.
                best: tuple[int, list[dict[str, PodInfo]]] | None = None
                for key, values in keys:
                    buckets = [b for v in values if (b := self._by_label.get((ns, key, v)))]
                    size = sum(len(b) for b in buckets)
                    if best is None or size < best[0]:
                        best = (size, buckets)
                assert best is not None  # keys is non-empty
                if exact:
                    for b in best[1]:
                        out.extend(b.values())
                    continue
                candidates = (p for b in best[1] for p in b.values())
            else:
                candidates = (self._by_ns.get(ns) or {}).values()
            out.extend(p for p in candidates if selector.matches(p.labels))
        return out

    def select_term(self, term: AffinityTerm, namespace_labels: NamespaceLabels) -> list[PodInfo]:
        """Placed pods a term covers (its namespaces and its label selector)."""
        if term.namespace_selector is None:
            return self.select(term.namespaces, term.selector)
        if term.all_namespaces:
            return self.select(None, term.selector)
        nss = [ns for ns in self._by_ns if term.covers_namespace(ns, namespace_labels)]
        return self.select(nss, term.selector)

    def rows(self, namespace: str, selector: LabelSelector) -> np.ndarray:
        """The node row of every live placed pod of ``namespace`` that ``selector``
        matches (PodTopologySpread's counts), kept current from the first time asked."""
        return self._rows(namespace, selector).array()

    def matching(self, namespace: str, selector: LabelSelector, num_nodes: int) -> tuple[np.ndarray, bool]:
        """What ``rows`` answers, in whichever form is cheaper to count domains over:
        (node rows, False) while the pods are fewer than the nodes, else (pods per node
        row, True): a large workload's spread cycle then reads each node once rather
        than each of its pods."""
        t = self._rows(namespace, selector)
        if t.n > num_nodes:
            return t.per_node(num_nodes), True
        return t.array(), False

    def _rows(self, namespace: str, selector: LabelSelector) -> _Rows:
        tracked = self._tracked.setdefault(namespace, {})
        t = tracked.pop(selector, None)
        if t is None:
            t = _Rows(selector, self.select((namespace,), selector))
            if len(tracked) >= self.TRACKED:
                del tracked[next(iter(tracked))]
        tracked[selector] = t  # re-inserted: most recently asked last
        return t

    def nodes_moved(self) -> None:
        """Node rows changed (a node was removed and the last row took its place)."""
        self._tracked.clear()

    def any_groups(self, *kinds: str) -> bool:
        """Whether any placed pod carries a term of one of ``kinds``."""
        by_kind = self._groups_by_kind
        return any(by_kind.get(kind) for kind in kinds)

    def groups(self, kind: str) -> list[TermGroup]:
        """Every distinct term of ``kind`` carried by placed pods, with its pods."""
        return list((self._groups_by_kind.get(kind) or {}).values())


def _discard(index: dict[K, dict[str, PodInfo]], key: K, uid: str) -> None:
    bucket = index.get(key)
    if bucket is not None:
        bucket.pop(uid, None)
        if not bucket:
            del index[key]
