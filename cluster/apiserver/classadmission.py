"""Admission by class: RuntimeClass for pods, DefaultIngressClass for Ingresses.

Owns two of upstream's default admission plugins, on create only:

- RuntimeClass (``plugin/pkg/admission/runtimeclass``): a pod naming a RuntimeClass that does
  not exist is refused (403 ``pod rejected: RuntimeClass "x" not found``); the class's
  ``overhead.podFixed`` becomes the pod's ``spec.overhead`` (a different one given is refused;
  one given without a class overhead is refused too), and its ``scheduling.nodeSelector`` and
  ``tolerations`` are merged into the pod's (a conflicting selector value is refused;
  tolerations merged as upstream's MergeTolerations, a toleration another covers dropped).
- DefaultIngressClass (``plugin/pkg/admission/network/defaultingressclass``): an Ingress with
  neither ``spec.ingressClassName`` nor the ``kubernetes.io/ingress.class`` annotation gets the
  default IngressClass's name (annotated ``ingressclass.kubernetes.io/is-default-class:
  "true"``; the newest when several are, ties by name).

Called by ``admission.Admission.admit_create``; reads the store's classes, writes the object.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import Forbidden
from ..api.quantity import QuantityError, parse
from ..clock import parse_timestamp

DEFAULT_CLASS = "ingressclass.kubernetes.io/is-default-class"
INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"


def _forbidden(pod: dict, why: str) -> Forbidden:
    """upstream's admission.NewForbidden: the pod by name, or generateName before one is drawn."""
    meta = pod.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or "Unknown"
    return Forbidden(f'pods "{name}" is forbidden: {why}')


def _same_quantities(a: Any, b: Any) -> bool:
    """Semantic equality of two resource lists (``1`` equals ``1000m``)."""
    if not isinstance(a, dict) or not isinstance(b, dict) or a.keys() != b.keys():
        return a == b
    try:
        return all(parse(a[k]) == parse(b[k]) for k in a)
    except QuantityError:
        return a == b


def admit_runtime_class(store: Any, pod: dict) -> None:
    """RuntimeClass admission of a pod being created (mutation, then validation)."""
    spec = pod.setdefault("spec", {})
    name = spec.get("runtimeClassName")
    rc = store.peek("RuntimeClass", "", name) if isinstance(name, str) else None
    if isinstance(name, str) and rc is None:
        raise _forbidden(pod, f'pod rejected: RuntimeClass "{name}" not found')
    fixed = ((rc or {}).get("overhead") or {}).get("podFixed")
    if fixed is not None:
        if spec.get("overhead") is not None and not _same_quantities(spec["overhead"], fixed):
            raise _forbidden(pod, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
        spec["overhead"] = dict(fixed)
    _scheduling(pod, spec, (rc or {}).get("scheduling"))
    if fixed is None and spec.get("overhead") is not None:  # the validating half
        raise _forbidden(pod, "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")


def _scheduling(pod: dict, spec: dict, scheduling: Any) -> None:
    if not isinstance(scheduling, dict):
        return
    wanted = scheduling.get("nodeSelector") or {}
    selector = spec.get("nodeSelector")
    if selector is None:
        selector = dict(wanted) if wanted else None
    else:
        for key, value in wanted.items():
            if key in selector and selector[key] != value:
                raise _forbidden(
                    pod,
                    f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                    f"pod.spec.nodeSelector[{key}] = {selector[key]}",
                )
            selector[key] = value
    if selector is not None:
        spec["nodeSelector"] = selector
    merged = merge_tolerations(list(spec.get("tolerations") or ()), list(scheduling.get("tolerations") or ()))
    if merged:
        spec["tolerations"] = merged


def _covers(ss: dict, t: dict) -> bool:
    """upstream's isSuperset: whether toleration ``ss`` tolerates everything ``t`` does."""
    if ss == t:
        return True
    if t.get("key", "") != ss.get("key", "") and (ss.get("key", "") != "" or ss.get("operator") != "Exists"):
        return False
    if t.get("effect", "") != ss.get("effect", "") and ss.get("effect", "") != "":
        return False
    if ss.get("effect") == "NoExecute" and ss.get("tolerationSeconds") is not None:
        if t.get("tolerationSeconds") is None or t["tolerationSeconds"] > ss["tolerationSeconds"]:
            return False
    operator = ss.get("operator", "")
    if operator in ("Equal", ""):
        return t.get("operator") == "Equal" and t.get("value", "") == ss.get("value", "")
    return operator == "Exists"


def merge_tolerations(first: list[dict], second: list[dict]) -> list[dict]:
    """upstream's MergeTolerations: both lists, a toleration another one covers left out
    (of two equal ones, the first kept)."""
    every = first + second
    merged: list[dict] = []
    for i, t in enumerate(every):
        if any(_covers(kept, t) for kept in merged):
            continue
        if any(t != later and _covers(later, t) for later in every[i + 1 :]):
            continue
        merged.append(t)
    return merged


def admit_default_ingress_class(store: Any, ingress: dict) -> None:
    """DefaultIngressClass admission of an Ingress being created."""
    spec = ingress.setdefault("spec", {})
    annotations = (ingress.get("metadata") or {}).get("annotations") or {}
    if spec.get("ingressClassName") is not None or INGRESS_CLASS_ANNOTATION in annotations:
        return
    classes = store.peek_all("IngressClass")
    defaults = [c for c in classes if ((c.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CLASS) == "true"]
    if not defaults:
        return
    by_name = sorted(defaults, key=lambda c: c["metadata"].get("name", ""))
    newest = max(by_name, key=lambda c: parse_timestamp(c["metadata"].get("creationTimestamp") or "") or 0.0)
    spec["ingressClassName"] = newest["metadata"]["name"]  # the newest; of equals, the first by name
