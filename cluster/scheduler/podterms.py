"""What a pod asks of other pods and of host ports, parsed once per pod object.

Owns ``AffinityTerm`` (a PodAffinityTerm with its namespaces resolved against the owning
pod), ``PodTerms`` (the four kinds of inter-pod terms a pod carries) and ``host_ports``
(the hostPort triples a pod occupies). Built by ``PodInfo`` and read by the pod index,
InterPodAffinity, PodTopologySpread and NodePorts.

Namespaces follow upstream: a term with neither ``namespaces`` nor ``namespaceSelector``
covers the owning pod's namespace; ``namespaceSelector: {}`` covers every namespace; a
non-empty namespaceSelector is matched against Namespace labels the scheduler has seen.
Terms are frozen and hashable so that identical terms of many replicas share one entry
in the pod index (``signature``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..api.selectors import LabelSelector

# A namespace's labels by its name (None: no such namespace), for namespaceSelectors.
NamespaceLabels = Callable[[str], dict[str, str] | None]

# Kinds of inter-pod terms, as the pod index groups existing pods by them.
REQUIRED_AFFINITY = "requiredAffinity"
REQUIRED_ANTI_AFFINITY = "requiredAntiAffinity"
PREFERRED_AFFINITY = "preferredAffinity"
PREFERRED_ANTI_AFFINITY = "preferredAntiAffinity"
TERM_KINDS = (REQUIRED_AFFINITY, REQUIRED_ANTI_AFFINITY, PREFERRED_AFFINITY, PREFERRED_ANTI_AFFINITY)


@dataclass(frozen=True)
class AffinityTerm:
    selector: LabelSelector
    topology_key: str
    namespaces: frozenset[str]  # explicit names (plus the owner's when nothing else is set)
    namespace_selector: LabelSelector | None = None  # None: not set; empty: every namespace
    weight: int = 0  # preferred terms only

    def covers_namespace(self, namespace: str, namespace_labels: NamespaceLabels) -> bool:
        """``namespace_labels(name) -> dict | None`` resolves a namespaceSelector."""
        if namespace in self.namespaces:
            return True
        sel = self.namespace_selector
        if sel is None:
            return False
        if sel.empty:
            return True
        labels = namespace_labels(namespace)
        return labels is not None and sel.matches(labels)

    def matches(self, namespace: str, labels: dict[str, str], namespace_labels: NamespaceLabels) -> bool:
        """Does a pod in ``namespace`` with ``labels`` fall under this term?"""
        return self.covers_namespace(namespace, namespace_labels) and self.selector.matches(labels)

    @property
    def all_namespaces(self) -> bool:
        return self.namespace_selector is not None and self.namespace_selector.empty


def parse_term(term: dict[str, Any], owner_namespace: str, weight: int = 0) -> AffinityTerm:
    names = frozenset(term.get("namespaces") or ())
    ns_sel_raw = term.get("namespaceSelector")
    ns_sel = None if ns_sel_raw is None else LabelSelector.from_dict(ns_sel_raw)
    if not names and ns_sel is None:
        names = frozenset((owner_namespace,))
    return AffinityTerm(
        LabelSelector.from_dict(term.get("labelSelector")), term.get("topologyKey", ""), names, ns_sel, weight
    )


class PodTerms:
    """The inter-pod (anti-)affinity terms of one pod, by kind; empty tuples when absent."""

    __slots__ = ("required_affinity", "required_anti_affinity", "preferred_affinity", "preferred_anti_affinity")

    def __init__(self, pod: dict[str, Any], namespace: str) -> None:
        aff = (pod.get("spec") or {}).get("affinity") or {}
        pa, paa = aff.get("podAffinity") or {}, aff.get("podAntiAffinity") or {}
        self.required_affinity = _required(pa, namespace)
        self.required_anti_affinity = _required(paa, namespace)
        self.preferred_affinity = _preferred(pa, namespace)
        self.preferred_anti_affinity = _preferred(paa, namespace)

    def by_kind(self) -> tuple[tuple[str, tuple[AffinityTerm, ...]], ...]:
        return (
            (REQUIRED_AFFINITY, self.required_affinity),
            (REQUIRED_ANTI_AFFINITY, self.required_anti_affinity),
            (PREFERRED_AFFINITY, self.preferred_affinity),
            (PREFERRED_ANTI_AFFINITY, self.preferred_anti_affinity),
        )

    def __bool__(self) -> bool:
        return bool(
            self.required_affinity
            or self.required_anti_affinity
            or self.preferred_affinity
            or self.preferred_anti_affinity
        )


def _required(section: dict[str, Any], namespace: str) -> tuple[AffinityTerm, ...]:
    terms = section.get("requiredDuringSchedulingIgnoredDuringExecution") or ()
    return tuple(parse_term(t, namespace) for t in terms)


def _preferred(section: dict[str, Any], namespace: str) -> tuple[AffinityTerm, ...]:
    terms = section.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
    return tuple(parse_term(t.get("podAffinityTerm") or {}, namespace, int(t.get("weight") or 0)) for t in terms)
