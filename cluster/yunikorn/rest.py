"""The queue tree and the applications in the JSON shape of YuniKorn's REST API.

Owns ``queues`` (``/ws/v1/partition/default/queues``: the root queue with its children,
resources as YuniKorn keeps them: vcore in millicores, memory in bytes) and
``applications`` (``/ws/v1/partition/default/applications``). Called by the component's
``inspect``; the HTTP front end serves what it returns and the report and the run summary
read it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .asks import Alloc, App
from .queues import Queue
from .resources import total

if TYPE_CHECKING:
    from .core import YuniKorn

NANOS = 1_000_000_000


def queues(yk: YuniKorn) -> dict[str, Any]:
    return _queue(yk, yk.tree.root)


def _queue(yk: YuniKorn, q: Queue) -> dict[str, Any]:
    tree = yk.tree
    running = sum(1 for app in q.apps.values() if any(a.node for a in app.allocs.values()))
    return {
        "queuename": q.path,
        "status": "Active",
        "partition": "default",
        "pendingResource": dict(q.pending),
        "maxResource": dict(tree.max_of(q)),
        "guaranteedResource": dict(q.guaranteed),
        "allocatedResource": dict(q.allocated),
        "preemptingResource": dict(q.preempting),
        "headroom": tree.headroom(q) if q.is_leaf else {},
        "isLeaf": q.is_leaf,
        "isManaged": not q.dynamic,
        "properties": dict(q.properties),
        "parent": q.parent.path if q.parent is not None else "",
        "children": [_queue(yk, c) for c in q.children.values()],
        "childNames": list(q.children),
        "maxRunningApps": q.max_applications,
        "runningApps": running,
        "sortingPolicy": q.app_sort_policy,
        "prioritySorting": q.app_sort_priority,
        "preemptionEnabled": q.preemption_policy != "disabled",
        "preemptionDelay": f"{q.preemption_delay:g}s",
        "priorityPolicy": q.priority_policy,
        "priorityOffset": q.priority_offset,
        "preemptionVictims": q.preemptions,
    }


def applications(yk: YuniKorn) -> list[dict[str, Any]]:
    return [_app(app) for app in sorted(yk.apps.values(), key=lambda x: x.seq)]


def _app(app: App) -> dict[str, Any]:
    placed = [a for a in app.allocs.values() if a.node]
    pending = [a for a in app.allocs.values() if not a.node]
    state = "Rejected" if app.rejected else ("Running" if placed else "Accepted")
    return {
        "applicationID": app.app_id,
        "usedResource": app.allocated(),
        "pendingResource": total(a.res for a in pending),
        "partition": "default",
        "queueName": app.queue.path if app.queue is not None else "",
        "submissionTime": int(app.submit_time * NANOS),
        "requests": [_alloc(a) for a in sorted(pending, key=lambda x: x.seq)],
        "allocations": [_alloc(a) for a in sorted(placed, key=lambda x: x.seq)],
        "applicationState": state,
        "rejectedMessage": app.rejected,
        "hasReserved": any(a.reserved_node for a in pending),
        "reservations": [f"{a.reserved_node}|{a.uid}" for a in pending if a.reserved_node],
        "maxRequestPriority": max((a.priority for a in pending), default=0),
    }


def _alloc(a: Alloc) -> dict[str, Any]:
    out: dict[str, Any] = {
        "allocationKey": a.uid,
        "resource": dict(a.res),
        "priority": str(a.priority),
        "requestTime": int(a.create_time * NANOS),
        "applicationId": a.app_id,
        "partition": "default",
        "originator": a.originator,
        "placeholder": False,
        "preempted": a.victim,
    }
    if a.node:
        out["nodeId"] = a.node
    else:
        out["allocationLog"] = [{"message": m, "count": 1} for m in a.log]
        out["triggeredPreemption"] = a.triggered_preemption
    return out
