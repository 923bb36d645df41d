"""Sets of names and keys that keep numbered names as bits (cluster/runtime/nameset.py), and
the reflector keeping the keys of a kind it reads lazily in one (cluster/runtime/reflector.py)."""

from __future__ import annotations

import random
import sys

import pytest

from cluster.api.requests import Watch
from cluster.apiserver.apiserver import APIServer
from cluster.runtime.nameset import SLACK_BYTES, KeySet, NameSet
from cluster.runtime.reflector import Reflector

# Names that look alike and must stay apart: a leading zero, a bare number, digits inside.
TRICKY = ["web-1", "web-01", "web-0", "web-00", "0", "00", "10", "web-", "web", "a1b", "a1b2", "x-9999999999"]


@pytest.mark.parametrize("seed", range(20))
def test_a_name_set_answers_as_a_set_of_strings(seed):
    rnd = random.Random(seed)
    pool = TRICKY + [f"density-{i}" for i in range(300)] + [f"p{i}" for i in (5, 70000, 10**9)]
    ours, ref = NameSet(), set()
    for _ in range(2000):
        name = rnd.choice(pool)
        if rnd.random() < 0.7:
            ours.add(name)
            ref.add(name)
        else:
            ours.discard(name)
            ref.discard(name)
        assert len(ours) == len(ref)
    assert all((n in ours) == (n in ref) for n in pool)
    assert sorted(ours) == sorted(ref)


def test_numbered_names_cost_a_bit_each_and_other_names_a_string():
    names = NameSet(f"density-{i}" for i in range(100_000))
    assert len(names) == 100_000 and "density-99999" in names and "density-100000" not in names
    assert set(names._bits) == {"density-"} and not names._other
    assert sys.getsizeof(names._bits["density-"]) < 20_000
    names.add("web-01")
    assert not names._other and "web-0" in names._bits  # "web-0" + 1: a bit, read back as web-01
    assert "web-1" not in names and "web-01" in names


def test_a_far_out_index_is_kept_as_a_string_not_a_huge_bitmap():
    names = NameSet(["p-1"])
    far = f"p-{8 * (SLACK_BYTES + 10)}"
    names.add(far)
    assert far in names._other and len(names._bits["p-"]) < SLACK_BYTES + 16
    names.discard(far)
    assert far not in names and len(names) == 1


def test_things_that_are_not_names_are_not_in_it():
    names, keys = NameSet(["a-1"]), KeySet()
    keys.add(("ns", "a-1"))
    assert 1 not in names and None not in names
    assert ("ns",) not in keys and "a-1" not in keys and ("other", "a-1") not in keys and ("ns", "a-1") in keys


def test_a_key_set_keeps_namespaces_apart_and_forgets_empty_ones():
    keys = KeySet()
    for key in [("a", "p-1"), ("b", "p-1"), ("a", "q"), ("a", "p-1")]:
        keys.add(key)
    assert len(keys) == 3 and sorted(keys) == [("a", "p-1"), ("a", "q"), ("b", "p-1")]
    keys.discard(("b", "p-1"))
    keys.discard(("b", "p-1"))
    keys.discard(("c", "x"))
    assert len(keys) == 2 and "b" not in keys._by_ns


def pod(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause"}]},
    }


@pytest.mark.parametrize("watch", [Watch("Pod", lazy=True), Watch("Pod"), Watch("ConfigMap", lazy=True)])
def test_a_relist_of_a_kind_kept_by_key_names_what_vanished_in_order(watch):
    api = APIServer()
    kind = watch.kind

    def obj(name):
        return (
            pod(name)
            if kind == "Pod"
            else {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": "default"}}
        )

    names = ["web-01", "web-1", "web-10", "x", "web-2"]
    for n in names:
        api.create(obj(n), 0)
    r = Reflector([watch])
    r.on_list(kind, api.list(kind))
    for n in ("web-01", "web-10", "x"):
        api.delete(kind, "default", n, None, 0, 0)
    api.create(obj("web-3"), 0)
    r.relist_all()
    got = [(e.type, e.obj["metadata"]["name"]) for e in r.on_list(kind, api.list(kind))]
    assert got == [
        ("MODIFIED", "web-1"),
        ("MODIFIED", "web-2"),
        ("ADDED", "web-3"),
        ("DELETED", "web-01"),
        ("DELETED", "web-10"),
        ("DELETED", "x"),
    ]
    assert isinstance(r._known[kind], KeySet) and len(r._known[kind]) == 3


def test_a_watch_of_a_kind_kept_by_key_adds_and_forgets_keys():
    api = APIServer()
    r = Reflector([Watch("Pod", lazy=True)])
    r.on_list("Pod", api.list("Pod"))
    api.create(pod("p-1"), 0)
    api.create(pod("p-2"), 0)
    api.delete("Pod", "default", "p-1", None, 0, 0)
    out = r.on_watch("Pod", api.watch({"Pod": r.rv["Pod"]})["Pod"])
    assert [(e.type, e.head.name) for e in out] == [("ADDED", "p-1"), ("ADDED", "p-2"), ("DELETED", "p-1")]
    assert sorted(r._known["Pod"]) == [("default", "p-2")]


def test_both_compare_equal_to_a_set_of_the_same_members():
    keys = KeySet()
    keys.add(("a", "p-1"))
    assert NameSet(["p-1", "x"]) == {"x", "p-1"} and NameSet(["p-1"]) != {"p-2"}
    assert keys == {("a", "p-1")} and keys != set()
