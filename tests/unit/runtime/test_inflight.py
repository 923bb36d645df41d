"""Writes in flight (``cluster/runtime/inflight.py``): replies collected in order, failures
handed back, a call that failed as a whole read as a retryable failure of each request, and
the tally of successful writes the benchmarks read."""

import concurrent.futures

from cluster.api.errors import Conflict, ServiceUnavailable
from cluster.api.requests import Bind, Create
from cluster.runtime.component import Failure
from cluster.runtime.inflight import Inflight, outcomes


def done(result=None, error=None) -> concurrent.futures.Future:
    fut: concurrent.futures.Future = concurrent.futures.Future()
    if error is not None:
        fut.set_exception(error)
    else:
        fut.set_result(result)
    return fut


def bind(name: str) -> Bind:
    return Bind("default", name, "u", "n1")


def test_collect_takes_the_answered_calls_and_keeps_the_rest():
    calls = Inflight()
    later: concurrent.futures.Future = concurrent.futures.Future()
    calls.add(done([None, Conflict("taken")]), [bind("web-1"), bind("web-2")])
    calls.add(later, [bind("db-1")])
    calls.add(done(error=RuntimeError("actor died\ntraceback")), [Create({"kind": "Pod"})])
    assert calls.any_done() and len(calls.pending()) == 3
    failures = calls.collect(wall=50.0)
    assert failures == [
        Failure(bind("web-2"), Conflict("taken")),
        Failure(Create({"kind": "Pod"}), ServiceUnavailable("write call failed: RuntimeError: actor died")),
    ]
    assert failures[1].error.retryable
    assert calls.replies == 2 and calls.pending() == [later] and bool(calls) and not calls.any_done()
    later.set_result([None])
    assert calls.collect(wall=51.0) == [] and calls.replies == 3 and not calls
    assert calls.window("Bind") == (50.0, 51.0, 2)
    assert calls.window("Bind:web") == (50.0, 50.0, 1) and calls.window("Bind:db") == (51.0, 51.0, 1)
    assert calls.window("Create") == (None, None, 0)  # it failed


def test_a_window_starts_again_once_reset():
    calls = Inflight()
    calls.add(done([None, None]), [bind("a-1"), bind("a-2")])
    calls.collect(wall=7.0)
    assert calls.reset_window("Bind") == 2 and calls.reset_window("Bind") == 0
    assert calls.window("Bind") == (None, None, 0) and calls.window("Bind:a") == (7.0, 7.0, 2)


def test_outcomes_of_a_call_that_failed_without_a_message():
    assert outcomes(done(error=RuntimeError()), 2) == [ServiceUnavailable("write call failed: RuntimeError: ")] * 2
