"""``GET pods/<name>/log``: emulated lines from the pod as stored, the query parameters as
upstream reads them, and ``follow=true`` held open until the run ends. Through a
``Handler`` over the local runtime."""

import asyncio
import socket

import pytest
from test_handler import AUTH, PODS, TOKEN, call, run

from cluster.clock import rfc3339 as ts
from cluster.frontend import server
from cluster.frontend.backend import LocalBackend
from cluster.frontend.handler import Handler
from cluster.frontend.wire import Request, Response, WatchStream
from cluster.runtime.local import LocalCluster
from cluster.scenario.layout import expand_pools, layout
from cluster.scenario.schema import NodePool


@pytest.fixture
def api():
    pools = [NodePool(namePrefix="n", count=2, capacity={"cpu": "4", "memory": "8Gi"})]
    cluster = LocalCluster(layout(expand_pools(pools), seed=1), seed=1)
    run(cluster.start())
    backend = LocalBackend(lambda: cluster.api, cluster.now)
    return Handler(backend, token=TOKEN), cluster, backend


def make_pod(name, containers=("c",), scheduler=None, **annotations):
    spec = {"containers": [{"name": c, "image": "x"} for c in containers]}
    if scheduler:
        spec["schedulerName"] = scheduler
    ann = {f"kubemu.io/{k.replace('_', '-')}": str(v) for k, v in annotations.items()}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": ann}, "spec": spec}


async def until(cluster, t):
    while cluster.now() < t:
        await cluster.advance(t)
        await cluster.settle()


def create(h, cluster, *pods, at=0.0):
    for p in pods:
        assert call(h, "POST", PODS, p)[0] == 201
    run(cluster.settle())
    run(until(cluster, at))


def log(h, name, **query):
    code, body = call(h, "GET", f"{PODS}/{name}/log", **query)
    return code, body if code != 200 else body.decode()


START = f"kubemu: container c started at {ts(0)}\n"


def test_the_log_of_a_running_container(api):
    h, cluster, _ = api
    create(h, cluster, make_pod("web", log="one\ntwo"))
    assert log(h, "web") == (200, START + "one\ntwo\n")
    answer = run(h.handle(Request("GET", f"{PODS}/web/log", {}, AUTH)))
    assert isinstance(answer, Response) and answer.content_type == "text/plain"


@pytest.mark.parametrize(
    "query, expected",
    [
        ({"tailLines": "1"}, "three\n"),
        ({"tailLines": "0"}, ""),
        ({"tailLines": "9"}, START + "one\ntwo\nthree\n"),
        ({"limitBytes": "10"}, START[:10]),
        ({"timestamps": "true", "tailLines": "1"}, f"{ts(0)[:-1]}.000000000Z three\n"),
        ({"sinceSeconds": "5"}, ""),  # now is 10: every line was written at 0
        ({"sinceSeconds": "20"}, START + "one\ntwo\nthree\n"),
        ({"sinceTime": ts(1)}, ""),
        ({"sinceTime": ts(0)}, START + "one\ntwo\nthree\n"),
        ({"container": "c", "follow": "false"}, START + "one\ntwo\nthree\n"),
    ],
)
def test_query_parameters(api, query, expected):
    h, cluster, _ = api
    create(h, cluster, make_pod("web", log="one\ntwo\nthree"), at=10)
    assert log(h, "web", **query) == (200, expected)


@pytest.mark.parametrize(
    "query, code, message",
    [
        ({"tailLines": "x"}, 400, 'tailLines: "x" is not an integer'),
        ({"sinceTime": "yesterday"}, 400, 'sinceTime: "yesterday" is not an RFC 3339 time'),
        (
            {"tailLines": "-1"},
            422,
            'PodLogOptions "web" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0',
        ),
        (
            {"limitBytes": "0", "sinceSeconds": "0"},
            422,
            'PodLogOptions "web" is invalid: [limitBytes: Invalid value: 0: must be greater than 0, '
            "sinceSeconds: Invalid value: 0: must be greater than 0]",
        ),
        (
            {"sinceSeconds": "5", "sinceTime": ts(0)},
            422,
            'PodLogOptions "web" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified',
        ),
        ({"container": "zz"}, 400, "container zz is not valid for pod web"),
        ({"previous": "true"}, 400, 'previous terminated container "c" in pod "web" not found'),
    ],
)
def test_refused_requests(api, query, code, message):
    h, cluster, _ = api
    create(h, cluster, make_pod("web"))
    got, body = log(h, "web", **query)
    assert (got, body["message"]) == (code, message)


def test_a_pod_with_several_containers_needs_one_named(api):
    h, cluster, _ = api
    create(h, cluster, make_pod("two", containers=("a", "b")))
    code, body = log(h, "two")
    assert (code, body["message"]) == (400, "a container name must be specified for pod two, choose one of: [a b]")
    assert log(h, "two", container="b") == (200, f"kubemu: container b started at {ts(0)}\n")


def test_missing_and_unscheduled_pods(api):
    h, cluster, _ = api
    create(h, cluster, make_pod("pending", scheduler="nobody"))
    assert log(h, "pending") == (200, "")  # no node yet: upstream answers an empty log
    code, body = log(h, "nope")
    assert (code, body["message"]) == (404, 'pods "nope" not found')


def test_previous_after_a_restart_and_the_exit_of_a_finished_run(api):
    h, cluster, _ = api
    create(h, cluster, make_pod("crash", run_seconds=5, exit_code=2, log="boom"), at=16)
    previous = START + f"boom\nkubemu: container c exited with code 2 (Error) at {ts(5)}\n"
    assert log(h, "crash", previous="true") == (200, previous)
    assert log(h, "crash") == (200, f"kubemu: container c started at {ts(15)}\nboom\n")


async def _lines(stream):
    return [chunk async for chunk in stream.lines]


def test_follow_streams_until_the_run_ends(api):
    h, cluster, backend = api
    create(h, cluster, make_pod("job", run_seconds=5))
    calls = []
    watch = backend.watch

    async def counted(*args):
        calls.append(args)
        return await watch(*args)

    backend.watch = counted

    async def scenario():
        answer = await h.handle(Request("GET", f"{PODS}/job/log", {"follow": "true"}, AUTH))
        assert isinstance(answer, WatchStream) and answer.content_type == "text/plain"
        it = answer.lines.__aiter__()
        assert await it.__anext__() == START.encode()
        pending = asyncio.ensure_future(it.__anext__())
        await asyncio.sleep(0.2)
        assert not pending.done() and len(calls) == 1  # one wait, no polling while nothing changes
        await until(cluster, 6)
        backend.tick()  # the serving loop's wake-up after a settled instant
        last = await asyncio.wait_for(pending, 5)
        assert last == f"kubemu: container c exited with code 0 (Completed) at {ts(5)}\n".encode()
        with pytest.raises(StopAsyncIteration):
            await it.__anext__()

    run(scenario())


def test_follow_ends_when_the_pod_goes_and_a_finished_run_is_not_followed(api):
    h, cluster, backend = api
    create(h, cluster, make_pod("web"))

    async def scenario():
        answer = await h.handle(Request("GET", f"{PODS}/web/log", {"follow": "true"}, AUTH))
        assert isinstance(answer, WatchStream)
        it = answer.lines.__aiter__()
        await it.__anext__()
        pending = asyncio.ensure_future(it.__anext__())
        await asyncio.sleep(0)
        deleted = await h.handle(Request("DELETE", f"{PODS}/web", {"gracePeriodSeconds": "0"}, AUTH))
        assert deleted.status == 200
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(pending, 5)

    run(scenario())
    create(h, cluster, make_pod("done", run_seconds=1), at=3)  # backing off: its last run ended
    answer = run(h.handle(Request("GET", f"{PODS}/done/log", {"follow": "true"}, AUTH)))
    assert isinstance(answer, Response) and answer.body.decode().endswith(f"(Completed) at {ts(1)}\n")


def test_follow_with_a_byte_limit_stops_at_the_limit(api):
    h, cluster, _ = api
    create(h, cluster, make_pod("web"))
    answer = run(h.handle(Request("GET", f"{PODS}/web/log", {"follow": "true", "limitBytes": "5"}, AUTH)))
    assert isinstance(answer, Response) and answer.body == START[:5].encode()


def test_a_follower_ends_as_soon_as_its_client_goes_away(api):
    h, cluster, backend = api
    create(h, cluster, make_pod("web"))
    ended = []
    changed = backend.changed

    async def waiting(rv, timeout):
        try:
            await changed(rv, timeout)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise

    backend.changed = waiting
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def scenario():
        runner = await server.start(h, "127.0.0.1", port, None)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            request = (
                f"GET {PODS}/web/log?follow=true HTTP/1.1\r\nHost: kubemu\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
            )
            writer.write(request.encode())
            assert b"200 OK" in await reader.readuntil(b"started at")
            writer.close()  # kubectl logs -f interrupted
            for _ in range(100):
                if ended:
                    break
                await asyncio.sleep(0.02)
            assert ended == ["cancelled"]
        finally:
            await runner.cleanup()

    run(scenario())
