"""Table cells of ``kubemu.io/v1alpha1 SchedulingResult`` (``kubectl get schedulingresults``).

Owns the columns and one row's cells of the scheduler's explanation objects
(``cluster/scheduler/explain.py`` writes them): the pod (the object's name), its attempts,
the last result, the node chosen or nominated, and the short reason; with ``-o wide`` the
scheduler and when the last attempt was. ``tables.py`` registers them under the kind; cells
never raise on a sparse object.
"""

from __future__ import annotations

from typing import Any

from .tables_kinds import NONE, _age, _d, _name, _s, since

# (name, type, description, priority) per column, after NAME; tables.py builds its Columns.
COLUMNS: tuple[tuple[str, str, str, int], ...] = (
    ("Attempts", "integer", "Scheduling attempts explained for the pod.", 0),
    ("Result", "string", "The last attempt's result: Scheduled, Unschedulable, Preempting or Error.", 0),
    ("Node", "string", "The node chosen, or nominated by preemption.", 0),
    ("Reason", "string", "Why: the best score, or the FailedScheduling message.", 0),
    ("Age", "string", "Time since the object was created.", 0),
    ("Scheduler", "string", "The scheduler profile that tried the pod.", 1),
    ("Last Attempt", "string", "Time since the last attempt.", 1),
)


def scheduling_result_cells(obj: dict[str, Any], now: float) -> list[Any]:
    st = _d(obj.get("status"))
    attempts = st.get("attempts")
    return [
        _name(obj),
        attempts if isinstance(attempts, int) else 0,
        _s(st.get("result")) or NONE,
        _s(st.get("node")) or NONE,
        _s(st.get("reason")) or NONE,
        _age(obj, now),
        _s(st.get("schedulerName")) or NONE,
        since(st.get("lastAttemptTime"), now),
    ]
