"""``kubemu bench cycle --explain``: the Scheduler alone records what the flag says, and its
SchedulingResult writes are taken after every batch (what the scheduler component sends)."""

from __future__ import annotations

import pytest

from actors.harness.bench import run_bench


@pytest.mark.parametrize("explain,writes", [("all", 30), ("none", 0), ("failed", 0)])
def test_cycle_records_as_the_flag_says(explain, writes):
    result = run_bench("cycle", 20, 30, log=lambda s: None, explain=explain)
    assert (result["bound"], result["explain"], result["schedulingResultWrites"]) == (30, explain, writes)
