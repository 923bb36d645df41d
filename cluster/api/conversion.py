"""The converters of the views: one stored kind served at a second group-version.

Owns the table from a view (``kinds.VIEWS``: ``autoscaling/v1`` HorizontalPodAutoscaler,
``events.k8s.io/v1`` Event) to the two functions between its version and the stored one,
and the view's own rules on writes and field selectors. A new view is one entry here and
one in ``kinds.VIEWS``; ``cluster/frontend/views.py`` serves every one alike. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import eventsv1, hpav1
from .errors import Cause
from .kinds import VIEWS, Resource

Obj = dict[str, Any]


def _no_causes(new: Obj, old: Obj | None) -> list[Cause]:
    return []


def _same_label(label: str) -> str | None:
    return label


@dataclass(frozen=True)
class Converter:
    to_stored: Callable[[Obj], Obj]  # the view's object as it is stored
    from_stored: Callable[[Obj], Obj]  # a stored object as the view serves it
    # What the view refuses in a write (the stored object it would make, the stored one
    # it replaces or None for a create), beyond the stored kind's own validation.
    causes: Callable[[Obj, Obj | None], list[Cause]] = _no_causes
    # A field selector's name in the view -> its name on the stored object (None: refused).
    field_label: Callable[[str], str | None] = _same_label


def _event_causes(new: Obj, old: Obj | None) -> list[Cause]:
    return eventsv1.create_causes(new) if old is None else eventsv1.update_causes(new, old)


CONVERTERS: dict[tuple[str, str], Converter] = {
    (hpav1.V1, "HorizontalPodAutoscaler"): Converter(hpav1.to_v2, hpav1.to_v1),
    (eventsv1.API_VERSION, "Event"): Converter(
        eventsv1.to_core, eventsv1.to_events_v1, _event_causes, eventsv1.field_label
    ),
}
assert {(v.api_version, v.kind) for v in VIEWS} == set(CONVERTERS), "every view has its converter"


def converter(view: Resource) -> Converter:
    return CONVERTERS[(view.api_version, view.kind)]
