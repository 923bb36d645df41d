"""events.k8s.io/v1 Event: the view of the stored core/v1 Events.

Owns upstream's mapping between the two APIs of one storage (upstream's
``pkg/apis/events/v1/conversion.go``): ``involvedObject`` <-> ``regarding``, ``message`` <->
``note``, ``source`` <-> ``deprecatedSource``, ``firstTimestamp``/``lastTimestamp``/``count``
<-> ``deprecatedFirstTimestamp``/``deprecatedLastTimestamp``/``deprecatedCount``,
``reportingComponent`` <-> ``reportingController``; ``eventTime``, ``series``, ``action``,
``related``, ``reportingInstance``, ``reason`` and ``type`` keep their names. A counted core
Event (the core recorder's ``count``) is not made a ``series``, nor a series a ``count``:
upstream's conversion copies each field to its peer and nothing else. Also the
field-selector names the events.k8s.io API accepts (``regarding.name`` ...) and the
stricter checks upstream applies to an Event written through it
(``ValidateEventCreate``/``ValidateEventUpdate`` for events.k8s.io/v1, in core field names,
as upstream reports them). Pure functions of plain dicts; called through
``conversion.py`` by the HTTP front end's views (``cluster/frontend/views.py``).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ..clock import parse_timestamp, rfc3339_micro
from .errors import Cause

API_VERSION = "events.k8s.io/v1"
# (core field, events.k8s.io field), in the events.k8s.io Event's field order.
RENAMED = (
    ("eventTime", "eventTime"),
    ("series", "series"),
    ("reportingComponent", "reportingController"),
    ("reportingInstance", "reportingInstance"),
    ("action", "action"),
    ("reason", "reason"),
    ("involvedObject", "regarding"),
    ("related", "related"),
    ("message", "note"),
    ("type", "type"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
)
# Fields Go writes even when unset (no omitempty, or a struct): null or {} (but eventTime:
# ``derived_event_time``).
_ALWAYS: dict[str, Any] = {"eventTime": None, "regarding": {}, "deprecatedSource": {}}
# events.k8s.io field selectors -> the stored Event's (upstream's field label conversion).
FIELD_LABELS = {
    "reason": "reason",
    "type": "type",
    "reportingController": "reportingComponent",
    "metadata.namespace": "metadata.namespace",
    "metadata.name": "metadata.name",
    **{f"regarding.{f}": f"involvedObject.{f}" for f in ("kind", "namespace", "name", "uid", "apiVersion")},
    **{f"regarding.{f}": f"involvedObject.{f}" for f in ("resourceVersion", "fieldPath")},
}
REPORTING_INSTANCE_MAX = ACTION_MAX = REASON_MAX = 128
NOTE_MAX = 1024


def derived_event_time(ev: dict[str, Any], first: str = "firstTimestamp") -> str | None:
    """The ``eventTime`` kubemu shows for an old-style Event that has none: its first
    timestamp (else its creation) with six fraction digits. Deviation: upstream sends
    ``null``, which the Python client's ``EventsV1Event`` refuses (its eventTime is required)."""
    stamp = ev.get(first) or (ev.get("metadata") or {}).get("creationTimestamp")
    t = parse_timestamp(stamp) if isinstance(stamp, str) else None
    return rfc3339_micro(t) if t is not None else None


def to_events_v1(ev: dict[str, Any]) -> dict[str, Any]:
    """A stored core/v1 Event as events.k8s.io/v1 serves it."""
    out: dict[str, Any] = {
        "kind": "Event",
        "apiVersion": API_VERSION,
        "metadata": copy.deepcopy(ev.get("metadata") or {}),
    }
    for core, new in RENAMED:
        if ev.get(core) not in (None, "", 0) or new in _ALWAYS:
            value = ev.get(core)
            out[new] = copy.deepcopy(value) if value is not None else _ALWAYS.get(new)
    if out["eventTime"] is None:
        out["eventTime"] = derived_event_time(ev)
    return out


def to_core(ev: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event as it is stored (core/v1). An old-style event's derived
    ``eventTime`` (``derived_event_time``; such events have no ``action``) is dropped again,
    so reading one and writing it back changes nothing."""
    out: dict[str, Any] = {"kind": "Event", "apiVersion": "v1", "metadata": copy.deepcopy(ev.get("metadata") or {})}
    for core, new in RENAMED:
        if ev.get(new) is not None:
            out[core] = copy.deepcopy(ev[new])
    out.setdefault("involvedObject", {})
    if not out.get("action") and out.get("eventTime") == derived_event_time(ev, "deprecatedFirstTimestamp"):
        out.pop("eventTime", None)
    return out


def field_label(label: str) -> str | None:
    """The stored Event's field-selector name for an events.k8s.io one; None if not supported."""
    return FIELD_LABELS.get(label)


def _go(value: Any) -> str:
    return json.dumps(value)


def _required(field: str) -> Cause:
    return Cause("FieldValueRequired", "Required value", field)


def _invalid(field: str, value: Any, detail: str) -> Cause:
    return Cause("FieldValueInvalid", f"Invalid value: {_go(value)}: {detail}", field)


def _legacy(core: dict[str, Any]) -> list[Cause]:
    """upstream's legacyValidateEvent for a write through events.k8s.io (eventTime set)."""
    out = []
    meta, involved = core.get("metadata") or {}, core.get("involvedObject") or {}
    if not involved.get("namespace") and meta.get("namespace") not in ("default", "kube-system"):
        out.append(_invalid("involvedObject.namespace", "", "does not match event.namespace"))
    if not core.get("reportingComponent"):
        out.append(_required("reportingController"))
    for field, limit in (("reportingInstance", REPORTING_INSTANCE_MAX), ("action", ACTION_MAX), ("reason", REASON_MAX)):
        value = core.get(field) or ""
        if not value:
            out.append(_required(field))
        if len(value) > limit:
            out.append(_invalid(field, "", f"can have at most {limit} characters"))
    if len(core.get("message") or "") > NOTE_MAX:
        out.append(_invalid("message", "", f"can have at most {NOTE_MAX} characters"))
    return out


def _series(core: dict[str, Any]) -> list[Cause]:
    series = core.get("series")
    if not isinstance(series, dict):
        return []
    out = []
    if not isinstance(series.get("count"), int) or series["count"] < 2:
        out.append(_invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        out.append(_required("series.lastObservedTime"))
    return out


def create_causes(core: dict[str, Any]) -> list[Cause]:
    """What upstream refuses in an Event created through events.k8s.io/v1 (``core`` is the
    converted object); empty when it may be stored."""
    if not core.get("eventTime"):
        return [_required("eventTime")]  # without it upstream's legacy rules read it as old-style
    out = _legacy(core) + _series(core)
    if core.get("type") not in ("Normal", "Warning"):
        out.append(_invalid("type", "", f"has invalid value: {core.get('type') or ''}"))
    for field in ("firstTimestamp", "lastTimestamp", "count"):
        if core.get(field):
            out.append(_invalid(field, "", "needs to be unset"))
    source = core.get("source") or {}
    if source.get("component") or source.get("host"):
        out.append(_invalid("source", "", "needs to be unset"))
    return out


_IMMUTABLE = (
    "involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count", "type",
    "eventTime", "action", "related", "reportingComponent", "reportingInstance",
)  # fmt: skip


def update_causes(new: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """What upstream refuses in an update through events.k8s.io/v1: a changed series must
    be valid, and the rest of the event may not change."""
    out = _legacy(new) if new.get("eventTime") else []
    if new.get("series") != old.get("series"):
        out += _series(new)
    for field in _IMMUTABLE:
        if _go_value(new.get(field)) != _go_value(old.get(field)):
            name = "reportingController" if field == "reportingComponent" else field
            out.append(_invalid(name, new.get(field), "field is immutable"))
    return out


def _go_value(value: Any) -> Any:
    """A field as Go holds it: absent, null and the empty value are one zero value (a read
    shows ``deprecatedSource: {}`` for an Event that has no source; writing it back is no change)."""
    return None if value in (None, "", 0, {}, []) else value
