"""Scheduling throughput as upstream's scheduler_perf reports it.

Owns the sampling rule of scheduler_perf's throughput collector, so kubemu's figures
compare like for like with the real kube-scheduler's: every second the bench reads how many
measured pods are bound; nothing is recorded until the first pod is, and that first reading
only starts the clock (sampling and creating pods start independently); a second in which
no pod was bound is not recorded as 0 but merged into the next one that has binds, whose
rate is then recorded once per second it spans; the summary is the average and the 50th,
90th, 95th and 99th percentiles (the ceil(n * p / 100)-th smallest sample). The bench
harnesses (``benchray.py``, ``benchyunikorn.py``) call ``Throughput.tick`` once a second
while they wait for the binds, and put ``summary()`` beside kubemu's own first-to-last rate.
"""

from __future__ import annotations

import math

SAMPLE_SECONDS = 1.0  # scheduler_perf's throughputSampleInterval


class Throughput:
    def __init__(self) -> None:
        self.samples: list[float] = []
        self._last_count: int | None = None
        self._last_time = 0.0
        self._skipped = 0

    def tick(self, now: float, scheduled: int) -> None:
        """One reading: ``scheduled`` measured pods bound by ``now`` (seconds)."""
        if scheduled == 0:
            return
        if self._last_count is None:  # the first reading only starts the clock
            self._last_count, self._last_time = scheduled, now
            return
        new = scheduled - self._last_count
        if new == 0:
            self._skipped += 1
            return
        rate = new / (now - self._last_time)
        self.samples.extend([rate] * (self._skipped + 1))
        self._last_count, self._last_time, self._skipped = scheduled, now, 0

    def summary(self) -> dict[str, float] | None:
        """{"average", "perc50", "perc90", "perc95", "perc99"} in pods/s; None without samples."""
        n = len(self.samples)
        if n == 0:
            return None
        ordered = sorted(self.samples)

        def perc(p: int) -> float:
            return round(ordered[math.ceil(n * p / 100) - 1], 1)

        return {
            "average": round(sum(ordered) / n, 1),
            "perc50": perc(50),
            "perc90": perc(90),
            "perc95": perc(95),
            "perc99": perc(99),
        }
