"""Durations as scenarios write them: ``300s``, ``5m``, ``1h30m``, ``250ms``, or a bare number of seconds."""

from __future__ import annotations

import re
from typing import Any

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def parse_duration(value: Any) -> float:
    """Seconds in ``value``; raises ValueError with a message that names the value."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError(f"{value!r} is not a duration (must be >= 0)")
        return float(value)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{value!r} is not a duration")
    try:
        return parse_duration(float(value))
    except ValueError:
        pass
    pos, total = 0, 0.0
    for m in _PART.finditer(value):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(value) or pos == 0:
        raise ValueError(f"{value!r} is not a duration (use e.g. 30s, 5m, 1h30m)")
    return total
