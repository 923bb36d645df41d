"""kube-scheduler emulation: queue, cache, framework, plugins and the scheduling cycle.

Entry point for the scheduler actor shell: ``Scheduler`` (fed with watch events, asked
to ``schedule``), configured by ``SchedulerConfig``; results come back as
``ScheduleOutput``. Module map: ``status`` (verdicts, FitError text), ``framework``
(extension points, registry, profiles), ``cache`` (nodes and placed pods as numpy
arrays, the per-cycle ``Snapshot``), ``queue`` (activeQ / unschedulable pods),
``plugins`` (in-tree plugins and the default set), ``scheduler`` (the cycle).
"""

from .framework import PluginSpec, ProfileConfig, Registry
from .output import ScheduleOutput
from .scheduler import Scheduler, SchedulerConfig
from .status import Code, Status

__all__ = [
    "Code",
    "PluginSpec",
    "ProfileConfig",
    "Registry",
    "ScheduleOutput",
    "Scheduler",
    "SchedulerConfig",
    "Status",
]
