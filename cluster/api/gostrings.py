"""Go's text of some API values, where upstream messages print them with ``%v``.

Owns the generated ``String()`` of a ``*metav1.LabelSelector`` (``&LabelSelector{MatchLabels:
map[string]string{app: web,},MatchExpressions:[]LabelSelectorRequirement{},}``, ``nil`` for none),
which the HorizontalPodAutoscaler's external-metric errors and the ValidatingAdmissionPolicyBinding
table print. Pure; called by ``cluster/controllers/hpasources.py`` and the front end's tables.
"""

from __future__ import annotations

from typing import Any


def label_selector(selector: Any) -> str:
    """``selector`` (a LabelSelector as JSON, or None) as Go prints a ``*metav1.LabelSelector``."""
    if not isinstance(selector, dict):
        return "nil"
    raw = selector.get("matchLabels")
    labels: dict[str, Any] = raw if isinstance(raw, dict) else {}
    shown = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    exprs = []
    for e in selector.get("matchExpressions") or ():
        e = e if isinstance(e, dict) else {}
        values = " ".join(str(v) for v in e.get("values") or ())
        exprs.append(
            f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},Values:[{values}],}},"
        )
    return f"&LabelSelector{{MatchLabels:map[string]string{{{shown}}},MatchExpressions:[]LabelSelectorRequirement{{{''.join(exprs)}}},}}"
