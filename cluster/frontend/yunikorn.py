"""YuniKorn's REST API and queue metrics, served from the YuniKorn-mode scheduler's view.

Owns the ``/ws/v1/`` paths a YuniKorn web UI, ``curl`` or a script reads for the
``default`` partition (``answer``) and the ``yunikorn_*`` families of ``/metrics``
(``YuniKornCollector``). Both read one view: the ``inspect()`` dict of the live
``YuniKornComponent`` (``cluster/yunikorn/component.py``; its ``queues`` and
``applications`` are already in YuniKorn's REST shape, ``cluster/yunikorn/rest.py``), or
None when no YuniKorn-mode scheduler runs. ``handler.py`` calls ``answer`` for every path
under ``/ws/v1``; ``metrics.py`` registers the collector. The view is asked for at each
request or scrape, never kept.

Served paths (``<q>`` is a full queue path such as ``root.a``):

  ``GET /ws/v1/partitions``                                  one partition, ``default``
  ``GET /ws/v1/partition/default/queues``                    the root queue and its subtree
  ``GET /ws/v1/partition/default/queue/<q>``                 one queue (its subtree with ``?subtree``)
  ``GET /ws/v1/partition/default/queue/<q>/applications``    the applications placed in it
  ``GET /ws/v1/partition/default/applications``              every application

Errors carry upstream's JSON body (``status_code``, ``message``, ``description``): 404
``Partition not found``, 404 ``Queue not found``, 405 for a method other than GET, and a
404 naming the flag to use when YuniKorn mode is not running.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import unquote

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

from .wire import Response, dumps

PREFIX = "/ws/v1"
PARTITION = "default"
CLUSTER_ID = "mycluster"  # what the Kubernetes shim registers as its cluster (its RM id) by default
CONTENT_TYPE = "application/json; charset=UTF-8"  # as upstream's web service writes it
NOT_RUNNING = "YuniKorn mode is not running: start with --schedulers default-scheduler,yunikorn"
PARTITION_NOT_FOUND = "Partition not found"
QUEUE_NOT_FOUND = "Queue not found"

YuniKornView = Callable[[], Mapping[str, Any] | None]


class _Refused(Exception):
    """An answer other than 200, with upstream's error body."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def is_rest_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def answer(view: Mapping[str, Any] | None, method: str, path: str, query: Mapping[str, str]) -> Response:
    """The answer to one request under ``/ws/v1`` (``path`` without a trailing slash)."""
    try:
        if method.upper() not in ("GET", "HEAD"):
            raise _Refused(405, "Method not allowed")  # the REST API is read-only here
        route = _route(path)
        if view is None:
            raise _Refused(404, NOT_RUNNING)
        return Response(200, dumps(route(view, query)), CONTENT_TYPE)
    except _Refused as e:
        return refused(e.code, e.message)


def refused(code: int, message: str) -> Response:
    """Upstream's error body: the description repeats the message when there is no cause."""
    return Response(code, dumps({"status_code": code, "message": message, "description": message}), CONTENT_TYPE)


Route = Callable[[Mapping[str, Any], Mapping[str, str]], Any]


def _route(path: str) -> Route:
    """What a path asks for, checked before the view is read (an unknown path is 404
    whether or not YuniKorn mode runs)."""
    parts = [unquote(p) for p in path.removeprefix(PREFIX).split("/") if p]
    if parts == ["partitions"]:
        return lambda view, _: partitions(view)
    if len(parts) >= 3 and parts[0] == "partition":
        partition, rest = parts[1], parts[2:]
        route = _partition_route(rest)
        if route is not None:
            return lambda view, query: route(_in_partition(view, partition), query)
    raise _Refused(404, f"kubemu does not serve {path}")


def _partition_route(rest: list[str]) -> Route | None:
    if rest == ["queues"]:
        return lambda view, _: view.get("queues") or {}
    if rest == ["applications"]:
        return lambda view, _: list(view.get("applications") or ())
    if len(rest) == 2 and rest[0] == "queue":
        return lambda view, query: _one_queue(find_queue(view, rest[1]), "subtree" in query)
    if len(rest) == 3 and rest[0] == "queue" and rest[2] == "applications":
        return lambda view, _: queue_applications(view, find_queue(view, rest[1])["queuename"])
    return None


def _in_partition(view: Mapping[str, Any], partition: str) -> Mapping[str, Any]:
    if partition != PARTITION:
        raise _Refused(404, PARTITION_NOT_FOUND)
    return view


# -- what the paths answer ------------------------------------------------------------------------
def walk(queue: Mapping[str, Any] | None) -> Iterator[Mapping[str, Any]]:
    """A queue and every queue below it, parents first."""
    if not queue:
        return
    yield queue
    for child in queue.get("children") or ():
        yield from walk(child)


def find_queue(view: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    for q in walk(view.get("queues")):
        if q.get("queuename") == path:
            return q
    raise _Refused(404, QUEUE_NOT_FOUND)


def _one_queue(queue: Mapping[str, Any], subtree: bool) -> dict[str, Any]:
    """One queue as upstream gives it: its children's names always, the children
    themselves only when ``?subtree`` asks for them."""
    if subtree:
        return dict(queue)
    return {k: v for k, v in queue.items() if k != "children"}


def queue_applications(view: Mapping[str, Any], path: str) -> list[Any]:
    return [app for app in view.get("applications") or () if app.get("queueName") == path]


def partitions(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The one partition: its capacity is the root queue's max (the nodes' allocatable),
    what is used the root's allocated; applications counted per state and in total."""
    root = view.get("queues") or {}
    capacity, used = dict(root.get("maxResource") or {}), dict(root.get("allocatedResource") or {})
    apps = list(view.get("applications") or ())
    counts: dict[str, int] = {}
    for app in apps:
        state = str(app.get("applicationState", ""))
        counts[state] = counts.get(state, 0) + 1
    return [
        {
            "clusterId": CLUSTER_ID,
            "name": PARTITION,
            "state": "Active",
            "capacity": {"capacity": capacity, "usedCapacity": used, "utilization": utilization(capacity, used)},
            "nodeSortingPolicy": {"type": "fair"},
            "applications": {**counts, "total": len(apps)},
            "totalContainers": sum(len(app.get("allocations") or ()) for app in apps),
        }
    ]


def utilization(capacity: Mapping[str, int], used: Mapping[str, int]) -> dict[str, int]:
    """Percent used per resource type the capacity names, as upstream rounds it (down);
    a use of a resource with no capacity is full, as upstream has it."""
    out = {}
    for name, cap in capacity.items():
        if name not in used:
            continue
        u = used[name]
        out[name] = 0 if u <= 0 else 100 if cap <= 0 else min(int(u * 100 / cap), 2**31 - 1)
    return out


# -- /metrics --------------------------------------------------------------------------------------
# (the state label, the queue's key) in upstream's order of the resource states
RESOURCE_STATES = (
    ("guaranteed", "guaranteedResource"),
    ("max", "maxResource"),
    ("allocated", "allocatedResource"),
    ("pending", "pendingResource"),
    ("preempting", "preemptingResource"),
)


def _count(view: Mapping[str, Any], key: str) -> int:
    v = view.get(key)
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0


class YuniKornCollector:
    """The ``yunikorn_*`` families, read from the view at every scrape; none at all while
    YuniKorn mode is not running (as a cluster without YuniKorn exports none). What each
    is against upstream: ``metrics.py``'s docstring."""

    def __init__(self, view: YuniKornView):
        self._view = view

    @staticmethod
    def _families() -> tuple[GaugeMetricFamily, GaugeMetricFamily, CounterMetricFamily, CounterMetricFamily]:
        return (
            GaugeMetricFamily(
                "yunikorn_queue_resource",
                "Resources of a queue by state: guaranteed, max, allocated, pending, preempting.",
                labels=("queue", "state", "resource"),
            ),
            GaugeMetricFamily(
                "yunikorn_queue_app", "Applications of a queue by state (running).", labels=("queue", "state")
            ),
            CounterMetricFamily(
                "yunikorn_scheduler_container_allocation_attempt_total",
                "Attempts to allocate containers by their outcome (allocated).",
                labels=("state",),
            ),
            CounterMetricFamily(
                "yunikorn_scheduler_preemption_victims_total", "Allocations preempted to make room for others."
            ),
        )

    def describe(self) -> Iterable[Metric]:
        return list(self._families())

    def collect(self) -> Iterable[Metric]:
        view = self._view()
        if view is None:
            return []
        resources, apps, attempts, victims = self._families()
        for q in walk(view.get("queues")):
            path = str(q.get("queuename", ""))
            for state, key in RESOURCE_STATES:
                for name, value in sorted((q.get(key) or {}).items()):
                    resources.add_metric([path, state, name], value)
            apps.add_metric([path, "running"], _count(q, "runningApps"))
        attempts.add_metric(["allocated"], _count(view, "scheduled"))
        victims.add_metric([], _count(view, "preemptions"))
        return [resources, apps, attempts, victims]
