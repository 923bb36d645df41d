"""The apiserver actor's replies when its durable log fails, run in this process (the
actor class without Ray): nothing unlogged is acknowledged or shown to a reader."""

import gc
import os

import pytest

from actors.apiserver import APIServerActor
from cluster.api.errors import ServiceUnavailable
from cluster.api.patches import Apply
from cluster.api.requests import Create, Patch, Update, WatchChunk
from cluster.apiserver import durable as durable_mod
from cluster.apiserver.wal import WalError
from cluster.kubelet.component import lease

Actor = APIServerActor.__ray_actor_class__  # the plain class Ray wraps


@pytest.fixture
def actor(tmp_path):
    thresholds = gc.get_threshold()
    a = Actor(seed=1, data_dir=str(tmp_path))
    yield a
    gc.unfreeze()  # the actor tunes the collector for its own process
    gc.set_threshold(*thresholds)


def pod(name):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "pause"}]},
    }


def fail_next_commit(actor):
    log = actor.durable.log

    def commit():
        raise WalError(f"{log.directory}: append failed: No space left on device", True)

    log.commit = commit


async def test_a_failed_commit_refuses_every_item_and_the_state_is_the_logs(actor):
    assert await actor.write([Create(pod("kept"))]) == [None]
    rv = actor.api.store.rv
    fail_next_commit(actor)
    replies = await actor.write([Create(pod("a")), Create(pod("b")), Create({"kind": "Pod"})])
    assert all(isinstance(r, ServiceUnavailable) and (r.code, r.retryable) == (503, True) for r in replies)
    assert "not acknowledged" in replies[0].message and "No space left" in replies[0].message
    assert actor.api.store.rv == rv and (await actor.list("Pod")).resource_version == rv
    assert actor.api.store.get("Pod", "default", "a") is None
    assert (await actor.watch({"Pod": rv}, timeout=0))["Pod"] == WatchChunk([], rv)  # no event of the refused writes
    assert await actor.write([Create(pod("a"))]) == [None]  # the next write works
    assert (await actor.durability())["commitsFailed"] == 1


async def test_every_kind_of_write_gets_the_error(actor):
    await actor.write([Create(pod("p"))])
    current = await actor.get("Pod", "default", "p")
    fail_next_commit(actor)
    (reply,) = await actor.write([Update(dict(current, metadata=dict(current["metadata"], labels={"a": "b"})))])
    assert isinstance(reply, ServiceUnavailable)
    renew = lambda t: Patch("Lease", "kube-node-lease", "n1", "", Apply(lease("n1", t)))  # noqa: E731
    fail_next_commit(actor)
    (lease_reply,) = await actor.write([renew(1.0)])
    assert isinstance(lease_reply, ServiceUnavailable)
    assert await actor.write([renew(2.0)]) == [None]


async def test_a_write_left_unlogged_by_a_failing_call_is_committed_before_any_read(actor):
    actor.api.create(pod("midway"), 0.0)  # as a call that raised before reaching _wrote
    assert actor.durable.log.pending == 1
    await actor.list("Pod")
    assert actor.durable.log.pending == 0


async def test_an_unrecoverable_log_ends_the_process_without_a_reply(actor, monkeypatch, tmp_path):
    class Exited(Exception):
        pass

    def exit_(code):
        raise Exited(code)

    def unreadable(*args, **kwargs):
        raise WalError(f"{tmp_path}: cannot list the log directory: Input/output error", True)

    fail_next_commit(actor)
    monkeypatch.setattr(durable_mod, "DurableLog", unreadable)
    monkeypatch.setattr(os, "_exit", exit_)
    with pytest.raises(Exited) as ended:
        await actor.write([Create(pod("a"))])
    assert ended.value.args == (1,)


def test_a_bad_data_dir_fails_the_actors_construction(tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    thresholds = gc.get_threshold()
    try:
        with pytest.raises(WalError, match="cannot create the log directory"):
            Actor(data_dir=str(path))
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


async def test_without_a_data_dir_nothing_is_logged(tmp_path):
    thresholds = gc.get_threshold()
    try:
        a = Actor(seed=1)
        assert a.durable is None and await a.durability() == {}
        assert await a.write([Create(pod("p"))]) == [None]
        await a.start_clock(1.0)
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
