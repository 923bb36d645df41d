"""Scenario-level pod defaults, and the full check of the emulated-usage annotations.

Owns ``spec.defaults``: a list of ``{labelSelector, annotations}`` entries that give every
pod the scenario creates (Pods, and the pod templates of ReplicaSets and DaemonSets) the
annotations of each entry whose selector matches the pod's labels (no selector: every
pod). Later entries override earlier ones; a pod's own annotations always win. This is
how a scenario gives a whole workload a usage profile, a start time or a run time
without repeating it:

    defaults:
    - annotations: {kubemu.io/memory-usage: 64Mi}
    - labelSelector: app=batch
      annotations: {kubemu.io/memory-usage: "ramp(100Mi, 900Mi, 60s)", kubemu.io/run-seconds: "120"}

Called by ``schema.py`` after repeats are expanded and before manifests are validated,
so defaulted annotations are checked like written ones. ``check_usage`` parses the usage
profiles with the kubelet's own grammar (API validation only checks their outline).
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field

from ..api.annotations import AnnotationError
from ..api.selectors import LabelSelector, SelectorError
from ..api.usage import container_usage

TEMPLATED = ("ReplicaSet", "DaemonSet", "Deployment")


class PodDefaults(BaseModel):
    model_config = ConfigDict(extra="forbid")

    labelSelector: str | None = None
    annotations: dict[str, str] = Field(default_factory=dict)


def _pod_meta(obj: dict) -> dict | None:
    """The metadata of the pod a manifest makes (the manifest's own, or its template's)."""
    kind = obj.get("kind")
    if kind == "Pod":
        return obj.setdefault("metadata", {})
    if kind in TEMPLATED:
        template = (obj.setdefault("spec", {})).setdefault("template", {})
        return template.setdefault("metadata", {})
    return None


def apply(defaults: list[PodDefaults], manifests: list[dict]) -> None:
    """Give each pod manifest the default annotations that match it (in place)."""
    if not defaults:
        return
    selectors = [None if d.labelSelector is None else LabelSelector.parse(d.labelSelector) for d in defaults]
    for item in manifests:
        obj = item.get("template") if isinstance(item, dict) and "repeat" in item else item
        meta = _pod_meta(obj) if isinstance(obj, dict) else None
        if meta is None:
            continue
        labels = meta.get("labels") or {}
        merged: dict[str, str] = {}
        for d, sel in zip(defaults, selectors):
            if sel is None or sel.matches(labels):
                merged.update(d.annotations)
        if merged:
            meta["annotations"] = {**merged, **(meta.get("annotations") or {})}


def pod_of(obj: dict) -> tuple[str, dict] | None:
    """(path suffix, pod-shaped dict) for a Pod or a templated workload; None otherwise."""
    if obj.get("kind") == "Pod":
        return "", obj
    if obj.get("kind") in TEMPLATED:
        return ".spec.template", (obj.get("spec") or {}).get("template") or {}
    return None


def check_usage(path: str, obj: dict) -> str | None:
    """One error line for a usage annotation the kubelet cannot parse, else None."""
    found = pod_of(obj)
    if found is None:
        return None
    suffix, pod = found
    try:
        container_usage(pod)
    except AnnotationError as e:
        key = e.key if "/" not in e.key else f"[{e.key}]"
        sep = "" if key.startswith("[") else "."
        return f"{path}{suffix}.metadata.annotations{sep}{key}: {json.dumps(e.value)} {e.message}"
    return None


def check_selectors(defaults: list[PodDefaults]) -> str | None:
    for i, d in enumerate(defaults):
        if d.labelSelector is not None:
            try:
                LabelSelector.parse(d.labelSelector)
            except SelectorError as err:
                return f"spec.defaults[{i}].labelSelector: {json.dumps(d.labelSelector)} {err.detail}"
    return None
