"""GcPacer: the actors' collector pacing freezes after every turn and runs a full
collection only when one is due."""

import gc
import weakref

import pytest

from actors.profiling import GcPacer


@pytest.fixture
def collections(monkeypatch) -> list:
    """The full collections a pacer runs, with freezing switched off."""
    calls = []
    monkeypatch.setattr(gc, "freeze", lambda: None)
    monkeypatch.setattr(gc, "unfreeze", lambda: None)
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append("collect") or 0)
    return calls


class Tick:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_turns_freeze_and_a_full_collection_comes_when_due(monkeypatch):
    calls = []
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append("collect") or 0)
    clock = Tick()
    pacer = GcPacer(full_every=60.0, clock=clock)
    pacer.turn_done()
    clock.t = 59.9
    pacer.turn_done()
    assert calls == ["freeze", "freeze"]
    clock.t = 60.0
    pacer.turn_done()
    assert calls[2:] == ["unfreeze", "collect", "freeze"]
    clock.t = 119.0  # the next one is due 60 s after the last, not on a fixed grid
    pacer.turn_done()
    assert calls[5:] == ["freeze"]


def test_a_due_collection_waits_for_an_idle_turn_but_not_forever(collections):
    calls = collections
    clock = Tick()
    pacer = GcPacer(full_every=60.0, clock=clock)
    clock.t = 100.0
    pacer.turn_done(idle=False)
    assert calls == []
    pacer.turn_done(idle=True)
    assert calls == ["collect"]
    clock.t = 100.0 + 599.0
    pacer.turn_done(idle=False)
    assert calls == ["collect"]
    clock.t = 100.0 + 600.0  # busy for ten periods: collect anyway
    pacer.turn_done(idle=False)
    assert calls == ["collect", "collect"]


def test_cyclic_garbage_frozen_by_a_turn_waits_for_the_full_collection():
    class Node:
        pass

    clock = Tick()
    pacer = GcPacer(full_every=10.0, clock=clock)
    try:
        a, b = Node(), Node()
        a.other, b.other = b, a  # a reference cycle: only the cyclic collector frees it
        ref = weakref.ref(a)
        pacer.turn_done()
        del a, b
        clock.t = 5.0
        pacer.turn_done()
        gc.collect()  # frozen objects are out of the collector's reach
        assert ref() is not None
        clock.t = 10.0
        pacer.turn_done()
        assert ref() is None
    finally:
        gc.unfreeze()


def test_collect_now_restarts_the_period(collections):
    calls = collections
    clock = Tick()
    pacer = GcPacer(full_every=60.0, clock=clock)
    clock.t = 50.0
    pacer.collect_now()
    clock.t = 100.0  # 60 s after start, but only 50 s after the collection
    pacer.turn_done()
    assert calls == ["collect"]
    clock.t = 110.0
    pacer.turn_done()
    assert calls == ["collect", "collect"]
