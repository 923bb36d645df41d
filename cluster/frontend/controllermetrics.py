"""The controller manager's work-queue and reconcile metrics on ``GET /metrics``.

Owns ``ControllersCollector``: at every scrape it reads the controller manager's view (its
``inspect()`` dict's ``controllers``: per controller, the counters
``cluster/controllers/reconciler.py``'s ``ReconcilerStep.metrics`` gives) and reports them
under upstream's names, so kube-controller-manager dashboards work unchanged:

- ``workqueue_depth{name}`` (gauge), ``workqueue_adds_total{name}`` and
  ``workqueue_retries_total{name}`` (counters): client-go's workqueue metrics, ``name``
  the controller's queue;
- ``controller_runtime_reconcile_total{controller,result}`` and
  ``controller_runtime_reconcile_errors_total{controller}``: controller-runtime's.

Not reported: client-go's ``workqueue_work_duration_seconds``,
``workqueue_queue_duration_seconds`` and ``workqueue_unfinished_work_seconds``, and
controller-runtime's ``controller_runtime_reconcile_time_seconds``: a reconcile takes no
emulated time and the controllers never read the wall clock. Only controllers written as
reconcilers have a queue, so only they have series. ``metrics.py`` registers the collector.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

ControllersView = Callable[[], Mapping[str, Mapping[str, Any]] | None]


def _families() -> tuple[
    GaugeMetricFamily, CounterMetricFamily, CounterMetricFamily, CounterMetricFamily, CounterMetricFamily
]:
    return (
        GaugeMetricFamily("workqueue_depth", "Current depth of workqueue", labels=("name",)),
        CounterMetricFamily("workqueue_adds", "Total number of adds handled by workqueue", labels=("name",)),
        CounterMetricFamily("workqueue_retries", "Total number of retries handled by workqueue", labels=("name",)),
        CounterMetricFamily(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            labels=("controller", "result"),
        ),
        CounterMetricFamily(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            labels=("controller",),
        ),
    )


class ControllersCollector:
    """The families above, read from ``controllers()`` at every scrape (None or {}: no
    controller manager runs, and the families have no series)."""

    def __init__(self, controllers: ControllersView):
        self._controllers = controllers

    def describe(self) -> Iterable[Metric]:
        return _families()

    def collect(self) -> Iterable[Metric]:
        depth, adds, retries, reconciles, errors = families = _families()
        for name, m in sorted((self._controllers() or {}).items()):
            depth.add_metric([name], float(m.get("workqueue_depth", 0)))
            adds.add_metric([name], float(m.get("workqueue_adds_total", 0)))
            retries.add_metric([name], float(m.get("workqueue_retries_total", 0)))
            for result, n in sorted((m.get("controller_runtime_reconcile_total") or {}).items()):
                reconciles.add_metric([name, result], float(n))
            errors.add_metric([name], float(m.get("controller_runtime_reconcile_errors_total", 0)))
        return families
