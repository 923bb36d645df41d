"""Cron schedules as CronJobs read them: parsing and the next run time.

Owns the five-field syntax of upstream's parser (``minute hour day-of-month month
day-of-week``: ``*`` or ``?``, numbers, ``a-b``, lists, steps ``/n``, ``JAN``-``DEC`` and
``SUN``-``SAT``; day-of-week 0-6), the descriptors (``@yearly``/``@annually``,
``@monthly``, ``@weekly``, ``@daily``/``@midnight``, ``@hourly``, ``@every <duration>``),
the rule that day-of-month and day-of-week must both match when either is ``*`` and
either may match otherwise, and ``Schedule.next``: the first run strictly after a time, in
an IANA time zone (a local time skipped by a DST change does not run; one that occurs twice
runs the first time). Error messages are the parser's (``end of range (61) above maximum
(59): 61``). Validation and the CronJob controller call it; pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .durations import parse_duration

_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("dom", 1, 31), ("month", 1, 12), ("dow", 0, 6))
_NAMES = {
    3: {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())},
    4: {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())},
}
_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_SEARCH_YEARS = 5  # as upstream's parser: no run within five years is no run at all


class CronError(ValueError):
    pass


@dataclass(frozen=True)
class Schedule:
    fields: tuple[frozenset[int], ...] = ()  # minute, hour, dom, month, dow
    star_dom: bool = False
    star_dow: bool = False
    every: float | None = None  # @every: a constant delay, in seconds

    def next(self, after: float, tz: str | None = None) -> float | None:
        """The first run strictly after ``after`` (Unix seconds), or None within 5 years."""
        if self.every is not None:
            return math.floor(after) + self.every
        zone: tzinfo = ZoneInfo(tz) if tz else timezone.utc
        local = datetime.fromtimestamp(math.floor(after), zone).replace(tzinfo=None) + timedelta(minutes=1)
        local = local.replace(second=0)
        day = local.date()
        for _ in range(366 * _SEARCH_YEARS):
            if day.month in self.fields[3] and self._day_matches(day):
                for hour in sorted(self.fields[1]):
                    for minute in sorted(self.fields[0]):
                        candidate = datetime(day.year, day.month, day.day, hour, minute)
                        if candidate < local:
                            continue
                        t = _real(candidate, zone)
                        if t is not None and t > after:
                            return t
            day += timedelta(days=1)
        return None

    def _day_matches(self, day: date) -> bool:
        dom = day.day in self.fields[2]
        dow = (day.isoweekday() % 7) in self.fields[4]
        return (dom and dow) if (self.star_dom or self.star_dow) else (dom or dow)


def _real(local: datetime, zone: tzinfo) -> float | None:
    """The Unix time of a local wall time, or None when a DST change skips it."""
    t = local.replace(tzinfo=zone, fold=0)
    back = datetime.fromtimestamp(t.timestamp(), zone).replace(tzinfo=None)
    return t.timestamp() if back == local else None


def parse_schedule(text: str) -> Schedule:
    spec = text.strip()
    if spec.startswith(("TZ=", "CRON_TZ=")):
        raise CronError("cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
    if spec.startswith("@"):
        if spec.startswith("@every "):
            return _every(spec.removeprefix("@every ").strip())
        if spec not in _DESCRIPTORS:
            raise CronError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIPTORS[spec]
    parts = spec.split()
    if len(parts) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(parts)}: {text}")
    fields, stars = [], []
    for i, (part, (_, lo, hi)) in enumerate(zip(parts, _FIELDS)):
        values, star = _field(part, lo, hi, _NAMES.get(i, {}))
        fields.append(frozenset(values))
        stars.append(star)
    return Schedule(tuple(fields), star_dom=stars[2], star_dow=stars[4])


def _every(raw: str) -> Schedule:
    try:
        seconds = parse_duration(raw)
    except ValueError:
        raise CronError(f"failed to parse duration @every {raw}") from None
    return Schedule(every=float(max(1, round(seconds))))


def _field(part: str, lo: int, hi: int, names: dict[str, int]) -> tuple[set[int], bool]:
    values: set[int] = set()
    star = False
    for expr in part.split(","):
        got, is_star = _range(expr, lo, hi, names)
        values |= got
        star = star or is_star
    return values, star


def _range(expr: str, lo: int, hi: int, names: dict[str, int]) -> tuple[set[int], bool]:
    range_and_step = expr.split("/")
    if len(range_and_step) > 2:
        raise CronError(f"too many slashes: {expr}")
    low_high = range_and_step[0].split("-")
    if len(low_high) > 2:
        raise CronError(f"too many hyphens: {expr}")
    star = low_high[0] in ("*", "?")
    if star:
        start, end = lo, hi
    else:
        start = _int(low_high[0], names, expr)
        end = _int(low_high[1], names, expr) if len(low_high) == 2 else start
    step = 1
    if len(range_and_step) == 2:
        step = _int(range_and_step[1], {}, expr)
        if step <= 0:
            raise CronError(f"step of range should be a positive number: {expr}")
        if not star and len(low_high) == 1:
            end = hi  # "N/step" means N to the maximum
    if start < lo:
        raise CronError(f"beginning of range ({start}) below minimum ({lo}): {expr}")
    if end > hi:
        raise CronError(f"end of range ({end}) above maximum ({hi}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    return set(range(start, end + 1, step)), star


def _int(raw: str, names: dict[str, int], expr: str) -> int:
    if raw.lower() in names:
        return names[raw.lower()]
    try:
        n = int(raw)
    except ValueError:
        raise CronError(f'failed to parse int from {raw}: strconv.Atoi: parsing "{raw}": invalid syntax') from None
    if n < 0:
        raise CronError(f"negative number ({n}) not allowed: {raw}")
    return n


def check_time_zone(name: str) -> None:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise CronError(f"unknown time zone {name}") from None
