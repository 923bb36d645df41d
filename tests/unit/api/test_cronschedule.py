"""Cron schedules: next run times (in UTC and in zones with DST) and the parser's errors."""

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from cluster.api.cronschedule import CronError, check_time_zone, parse_schedule


def at(text: str, tz: str = "UTC") -> float:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(tz)).timestamp()


def shown(t: float, tz: str = "UTC") -> str:
    return datetime.fromtimestamp(t, ZoneInfo(tz)).strftime("%Y-%m-%d %H:%M:%S %a")


@pytest.mark.parametrize(
    "schedule, after, want",
    [
        ("* * * * *", "2026-01-01 00:00:00", "2026-01-01 00:01:00 Thu"),
        ("* * * * *", "2026-01-01 00:00:59", "2026-01-01 00:01:00 Thu"),  # strictly after
        ("*/15 * * * *", "2026-01-01 00:07:00", "2026-01-01 00:15:00 Thu"),
        ("*/15 * * * *", "2026-01-01 00:45:00", "2026-01-01 01:00:00 Thu"),
        ("5/20 * * * *", "2026-01-01 00:06:00", "2026-01-01 00:25:00 Thu"),  # 5, 25, 45
        ("@hourly", "2026-01-01 00:59:59", "2026-01-01 01:00:00 Thu"),
        ("30 2 * * *", "2026-01-01 03:00:00", "2026-01-02 02:30:00 Fri"),
        ("@daily", "2026-12-31 23:59:00", "2027-01-01 00:00:00 Fri"),
        ("0 9-17 * * MON-FRI", "2026-01-02 17:30:00", "2026-01-05 09:00:00 Mon"),
        ("0 9-17/4 * * 1-5", "2026-01-05 10:00:00", "2026-01-05 13:00:00 Mon"),
        ("0 0 13 * FRI", "2026-01-01 00:00:00", "2026-01-02 00:00:00 Fri"),  # either day field
        ("0 0 13 * *", "2026-01-01 00:00:00", "2026-01-13 00:00:00 Tue"),
        ("0 0 * * sun", "2026-01-01 00:00:00", "2026-01-04 00:00:00 Sun"),
        ("0 0 29 2 *", "2026-01-01 00:00:00", "2028-02-29 00:00:00 Tue"),
        ("0 0 1 jan,jul *", "2026-02-01 00:00:00", "2026-07-01 00:00:00 Wed"),
        ("@monthly", "2026-01-31 12:00:00", "2026-02-01 00:00:00 Sun"),
        ("@weekly", "2026-01-01 00:00:00", "2026-01-04 00:00:00 Sun"),
        ("@yearly", "2026-01-01 00:00:00", "2027-01-01 00:00:00 Fri"),
        ("@every 90s", "2026-01-01 00:00:00", "2026-01-01 00:01:30 Thu"),
        ("? * * * ?", "2026-01-01 00:00:00", "2026-01-01 00:01:00 Thu"),
    ],
)
def test_next_run_in_utc(schedule, after, want):
    assert shown(parse_schedule(schedule).next(at(after))) == want


@pytest.mark.parametrize(
    "schedule, tz, after, want",
    [
        (
            "30 2 * * *",
            "America/New_York",
            "2026-03-07 12:00:00",
            "2026-03-09 02:30:00 Mon",
        ),  # 02:30 skipped on the 8th
        ("30 1 * * *", "America/New_York", "2026-10-31 12:00:00", "2026-11-01 01:30:00 Sun"),  # runs once
        ("0 9 * * *", "Asia/Kolkata", "2026-01-01 00:00:00", "2026-01-01 09:00:00 Thu"),
    ],
)
def test_next_run_in_a_time_zone(schedule, tz, after, want):
    s = parse_schedule(schedule)
    t = s.next(at(after, tz), tz)
    assert shown(t, tz) == want
    if "11-01" in want:  # the repeated hour: the next run is a day later, not an hour later
        assert shown(s.next(t, tz), tz) == "2026-11-02 01:30:00 Mon"


@pytest.mark.parametrize(
    "schedule, message",
    [
        ("61 * * * *", "end of range (61) above maximum (59): 61"),
        ("* 24 * * *", "end of range (24) above maximum (23): 24"),
        ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("0 0 * * 7", "end of range (7) above maximum (6): 7"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("1/2/3 * * * *", "too many slashes: 1/2/3"),
        ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
        ("* * * *", "expected exactly 5 fields, found 4: * * * *"),
        ("@often", "unrecognized descriptor: @often"),
        ("TZ=UTC 0 * * * *", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"),
    ],
)
def test_bad_schedules(schedule, message):
    with pytest.raises(CronError) as err:
        parse_schedule(schedule)
    assert str(err.value) == message


def test_time_zones():
    check_time_zone("Europe/Berlin")
    with pytest.raises(CronError, match="unknown time zone Mars/Olympus"):
        check_time_zone("Mars/Olympus")
