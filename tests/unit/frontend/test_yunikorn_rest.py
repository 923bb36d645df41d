"""YuniKorn's REST API (``/ws/v1/...``) and the ``yunikorn_*`` metrics, from a hand-made
view in the shape ``YuniKornComponent.inspect`` gives (``cluster/yunikorn/rest.py``),
through a ``Handler`` without a socket."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from cluster.frontend.backend import LocalBackend
from cluster.frontend.handler import Handler
from cluster.frontend.metrics import Metrics
from cluster.frontend.wire import Request, Response
from cluster.frontend.yunikorn import NOT_RUNNING, utilization

TOKEN = "secret"
AUTH = {"authorization": f"Bearer {TOKEN}"}
WS = "/ws/v1/partition/default"


def queue(path: str, children: tuple[dict[str, Any], ...] = (), **fields: Any) -> dict[str, Any]:
    q: dict[str, Any] = {
        "queuename": path,
        "status": "Active",
        "partition": "default",
        "pendingResource": {},
        "maxResource": {},
        "guaranteedResource": {},
        "allocatedResource": {},
        "preemptingResource": {},
        "headroom": {},
        "isLeaf": not children,
        "isManaged": True,
        "properties": {},
        "parent": path.rpartition(".")[0],
        "children": list(children),
        "childNames": [c["queuename"] for c in children],
        "maxRunningApps": 0,
        "runningApps": 0,
        "preemptionVictims": 0,
    }
    q.update(fields)
    return q


def app(app_id: str, queue_name: str, state: str = "Running", allocations: int = 1) -> dict[str, Any]:
    return {
        "applicationID": app_id,
        "usedResource": {"vcore": 500 * allocations},
        "pendingResource": {},
        "partition": "default",
        "queueName": queue_name,
        "submissionTime": 1,
        "requests": [],
        "allocations": [{"allocationKey": f"{app_id}-{i}", "resource": {"vcore": 500}} for i in range(allocations)],
        "applicationState": state,
    }


def view() -> dict[str, Any]:
    a = queue(
        "root.a",
        guaranteedResource={"vcore": 1000},
        allocatedResource={"vcore": 1000, "memory": 2**30, "pods": 2},
        preemptingResource={"vcore": 500},
        runningApps=2,
    )
    b = queue("root.b", pendingResource={"vcore": 250, "pods": 1})
    root = queue(
        "root",
        (a, b),
        maxResource={"vcore": 12000, "memory": 3 * 2**34, "pods": 330},
        allocatedResource={"vcore": 1000, "memory": 2**30, "pods": 2},
        pendingResource={"vcore": 250, "pods": 1},
        runningApps=2,
    )
    apps = [app("a-1", "root.a"), app("a-2", "root.a"), app("b-1", "root.b", "Accepted", 0)]
    return {
        "scheduled": 7,
        "preemptions": 3,
        "reservations": 1,
        "configReloads": 2,
        "configRejected": 0,
        "pending": 1,
        "queues": root,
        "applications": apps,
    }


def handler(v: dict[str, Any] | None, **kw: Any) -> Handler:
    backend = LocalBackend(lambda: None, lambda: 0.0)  # never asked: no Kubernetes path here
    return Handler(backend, token=TOKEN, yunikorn=lambda: v, **kw)


def call(h: Handler, path: str, method: str = "GET", headers: dict[str, str] | None = None, **query: str):
    answer = asyncio.run(h.handle(Request(method, path, query, AUTH if headers is None else headers)))
    assert isinstance(answer, Response)
    return answer.status, answer.content_type, orjson.loads(answer.body)


# ---- the paths ---------------------------------------------------------------------------------


def test_queues_is_the_root_with_its_subtree_as_json() -> None:
    code, ctype, body = call(handler(view()), f"{WS}/queues")
    assert (code, ctype.split(";")[0]) == (200, "application/json")
    assert body["queuename"] == "root" and [c["queuename"] for c in body["children"]] == ["root.a", "root.b"]
    assert body["children"][0]["allocatedResource"]["vcore"] == 1000


def test_applications_lists_every_application() -> None:
    code, _, body = call(handler(view()), f"{WS}/applications/")  # a trailing slash is the same path
    assert code == 200 and [a["applicationID"] for a in body] == ["a-1", "a-2", "b-1"]


def test_one_queue_by_its_path_with_its_children_only_on_subtree() -> None:
    h = handler(view())
    code, _, leaf = call(h, f"{WS}/queue/root.a")
    assert code == 200 and leaf["queuename"] == "root.a" and leaf["guaranteedResource"] == {"vcore": 1000}
    _, _, root = call(h, f"{WS}/queue/root")
    assert "children" not in root and root["childNames"] == ["root.a", "root.b"]
    _, _, tree = call(h, f"{WS}/queue/root", subtree="")
    assert [c["queuename"] for c in tree["children"]] == ["root.a", "root.b"]


def test_an_escaped_queue_path_is_read_unescaped() -> None:
    code, _, body = call(handler(view()), f"{WS}/queue/root%2Eb")
    assert code == 200 and body["queuename"] == "root.b"


def test_a_queues_applications_are_those_placed_in_it() -> None:
    h = handler(view())
    assert [a["applicationID"] for a in call(h, f"{WS}/queue/root.a/applications")[2]] == ["a-1", "a-2"]
    assert call(h, f"{WS}/queue/root/applications")[2] == []  # only apps placed in the queue itself


def test_partitions_is_the_default_partition_with_the_roots_capacity_and_use() -> None:
    code, _, body = call(handler(view()), "/ws/v1/partitions")
    assert code == 200 and len(body) == 1
    p = body[0]
    assert (p["name"], p["state"], p["nodeSortingPolicy"]) == ("default", "Active", {"type": "fair"})
    assert p["capacity"]["capacity"] == {"vcore": 12000, "memory": 3 * 2**34, "pods": 330}
    assert p["capacity"]["usedCapacity"] == {"vcore": 1000, "memory": 2**30, "pods": 2}
    assert p["capacity"]["utilization"] == {"vcore": 8, "memory": 2, "pods": 0}
    assert p["applications"] == {"total": 3, "Running": 2, "Accepted": 1}
    assert p["totalContainers"] == 2


def test_utilization_rounds_down_and_a_use_without_capacity_is_full() -> None:
    assert utilization({"vcore": 3000, "gpu": 0, "memory": 10}, {"vcore": 1000, "gpu": 1}) == {"vcore": 33, "gpu": 100}


# ---- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path, message",
    [
        ("/ws/v1/partition/other/queues", "Partition not found"),
        ("/ws/v1/partition/other/applications", "Partition not found"),
        ("/ws/v1/partition/other/queue/root", "Partition not found"),
        (f"{WS}/queue/root.c", "Queue not found"),
        (f"{WS}/queue/a", "Queue not found"),  # a queue is named by its full path
        (f"{WS}/queue/root.c/applications", "Queue not found"),
    ],
)
def test_an_unknown_partition_or_queue_is_yunikorns_404(path: str, message: str) -> None:
    code, ctype, body = call(handler(view()), path)
    assert (code, ctype.split(";")[0]) == (404, "application/json")
    assert body == {"status_code": 404, "message": message, "description": message}


@pytest.mark.parametrize("path", ["/ws/v1/partitions", f"{WS}/queues", f"{WS}/applications", f"{WS}/queue/root"])
def test_without_yunikorn_mode_every_path_says_how_to_start_it(path: str) -> None:
    code, _, body = call(handler(None), path)
    assert code == 404 and body["status_code"] == 404 and body["message"] == NOT_RUNNING
    assert "--schedulers default-scheduler,yunikorn" in body["message"]


@pytest.mark.parametrize("path", ["/ws/v1", "/ws/v1/clusters", f"{WS}/nodes", f"{WS}/queue/root/apps"])
def test_a_path_kubemu_does_not_serve_is_404_in_either_mode(path: str) -> None:
    for v in (view(), None):
        code, _, body = call(handler(v), path)
        assert code == 404 and body["message"] == f"kubemu does not serve {path}"


def test_only_get_is_allowed() -> None:
    code, _, body = call(handler(view()), f"{WS}/queues", method="POST")
    assert code == 405 and body["status_code"] == 405


def test_the_token_is_needed_as_for_metrics() -> None:
    h = handler(view())
    code, _, body = call(h, f"{WS}/queues", headers={})
    assert (code, body["reason"]) == (401, "Unauthorized")
    assert call(h, "/metrics", headers={})[0] == 401
    assert call(h, f"{WS}/queues")[0] == 200


def test_the_view_is_refreshed_before_it_is_read() -> None:
    # On Ray the view lives in an actor: refresh fetches it, the callable hands it out.
    latest: dict[str, Any] = {}

    async def refresh() -> None:
        latest["view"] = view()

    h = Handler(LocalBackend(lambda: None, lambda: 0.0), yunikorn=lambda: latest.get("view"), refresh=refresh)
    code, _, body = call(h, f"{WS}/queues")
    assert code == 200 and body["queuename"] == "root"


# ---- /metrics ------------------------------------------------------------------------------------


def families(v: dict[str, Any] | None) -> dict[str, Any]:
    text = Metrics(yunikorn=lambda: v).render().decode()
    return {f.name: f for f in text_string_to_metric_families(text) if f.name.startswith("yunikorn_")}


def samples(family: Any) -> dict[tuple[str, ...], float]:
    return {tuple(s.labels[k] for k in sorted(s.labels)): s.value for s in family.samples}


def test_no_yunikorn_metrics_without_yunikorn_mode() -> None:
    assert families(None) == {}


def test_metric_names_and_types_are_upstreams() -> None:
    got = {name: f.type for name, f in families(view()).items()}
    assert got == {
        "yunikorn_queue_resource": "gauge",
        "yunikorn_queue_app": "gauge",
        "yunikorn_scheduler_container_allocation_attempt": "counter",  # the parser drops _total
        "yunikorn_scheduler_preemption_victims": "counter",
    }


def test_queue_resources_per_queue_state_and_resource() -> None:
    got = samples(families(view())["yunikorn_queue_resource"])  # keys: (queue, resource, state)
    assert got[("root.a", "vcore", "guaranteed")] == 1000
    assert got[("root.a", "vcore", "allocated")] == 1000
    assert got[("root.a", "memory", "allocated")] == 2**30
    assert got[("root.a", "vcore", "preempting")] == 500
    assert got[("root.b", "pods", "pending")] == 1
    assert got[("root", "pods", "max")] == 330
    assert {q for q, _, _ in got} == {"root", "root.a", "root.b"}
    assert ("root.b", "vcore", "guaranteed") not in got  # a resource the queue does not name has no series


def test_running_apps_and_the_counters() -> None:
    fams = families(view())
    assert samples(fams["yunikorn_queue_app"]) == {
        ("root", "running"): 2,
        ("root.a", "running"): 2,
        ("root.b", "running"): 0,
    }
    attempts = fams["yunikorn_scheduler_container_allocation_attempt"].samples
    assert [(s.name, s.labels, s.value) for s in attempts] == [
        ("yunikorn_scheduler_container_allocation_attempt_total", {"state": "allocated"}, 7)
    ]
    victims = fams["yunikorn_scheduler_preemption_victims"].samples
    assert [(s.name, s.value) for s in victims] == [("yunikorn_scheduler_preemption_victims_total", 3)]


def test_metrics_through_the_handler_carry_the_queue_label() -> None:
    v = view()
    h = Handler(LocalBackend(lambda: None, lambda: 0.0), metrics=Metrics(yunikorn=lambda: v), yunikorn=lambda: v)
    answer = asyncio.run(h.handle(Request("GET", "/metrics", {}, {})))
    assert isinstance(answer, Response) and answer.status == 200
    text = answer.body.decode()
    assert 'yunikorn_queue_resource{queue="root.a",resource="vcore",state="allocated"} 1000.0' in text
