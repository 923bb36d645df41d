"""The controller manager's memory per pod and per node: a record's bytes compressed once
the pod has settled (and read back the same), and watch events decoded one at a time by
the manager, none kept by the batch, with the same writes as events decoded up front."""

import random

import pytest
from controller_builders import node, pod, summary
from workload_builders import rs

from cluster.api.codec import encode
from cluster.api.requests import Update
from cluster.controllers import podrecord
from cluster.controllers.component import ControllerManagerComponent
from cluster.controllers.manager import ControllerManager, default_controllers
from cluster.controllers.podrecord import PACKED, PodRecords
from cluster.runtime.component import WatchEvent


def _pods(*names: str) -> list[dict]:
    return [pod(n, uid=f"uid-{n}") for n in names]


def _packed(rec) -> bool:
    return rec.raw[0] == PACKED


# ---- compression of settled records --------------------------------------------------------

AGEING = [
    # (case, young, records made (names, in order), the names whose records end compressed)
    ("none past the limit", 3, ["a", "b", "c"], set()),
    ("the oldest past the limit", 2, ["a", "b", "c", "d", "e"], {"a", "b", "c"}),
    ("every record but the newest", 1, ["a", "b", "c"], {"a", "b"}),
    ("a pod seen again is young again", 2, ["a", "b", "a", "c"], {"b"}),
]


@pytest.mark.parametrize("case,young,made,want", AGEING, ids=[c[0] for c in AGEING])
def test_a_record_is_compressed_once_young_newer_ones_were_made(case, young, made, want):
    records = PodRecords(young=young)
    latest = {}
    for name in made:
        p = pod(name, uid=f"uid-{name}")
        latest[name] = (records.make(p, encode(p)), p)
    assert {n for n, (rec, _) in latest.items() if _packed(rec)} == want
    assert records.packed == len(want)
    for rec, p in latest.values():
        assert rec.pod() == p and rec.encoded() == encode(p)  # read the same, compressed or not


def test_compression_takes_a_density_pod_to_a_fifth_of_its_bytes():
    records = PodRecords(young=1)
    made = [records.make(p, encode(p)) for p in _pods(*(f"density-{i}" for i in range(50)))]
    sizes = [len(r.raw) for r in made[1:-1]]  # compressed against an earlier pod's bytes
    assert all(_packed(r) for r in made[:-1]) and not _packed(made[-1])
    assert max(sizes) * 5 < len(encode(made[1].pod()))


def test_a_replaced_or_forgotten_record_is_never_compressed():
    records = PodRecords(young=2)
    first = records.make(pod("a"), None)
    second = records.make(pod("a", phase="Succeeded"), None)  # the pod's next version
    gone = records.make(pod("g"), None)
    records.forget(gone.key)  # its DELETED: nobody keeps it
    for p in _pods("b", "c", "d"):
        records.make(p, None)
    assert not _packed(first) and _packed(second) and not _packed(gone)
    assert first.pod() == pod("a") and second.pod() == pod("a", phase="Succeeded")


def test_bytes_that_would_not_shrink_are_kept_as_they_came():
    records = PodRecords(young=2)  # b is compressed against a's bytes
    rng = random.Random(7)
    noisy = []
    for name in ("a", "b", "c", "d"):
        p = {"metadata": {"name": name}, "noise": rng.randbytes(1500)}  # nothing in common with another pod's
        noisy.append((records.make(p, raw := encode(p)), p, raw))
    (a, _, _), (b, pb, raw_b), *_ = noisy
    assert _packed(a)  # the first is its own dictionary
    assert b.raw is raw_b and b.zdict is None and b.pod() == pb


def test_a_new_dictionary_every_young_records_and_each_record_reads_with_its_own():
    records = PodRecords(young=2)
    made = [records.make(p, None) for p in _pods(*"abcdefg")]
    packed = [r for r in made if _packed(r)]
    assert [r.key[1] for r in packed] == list("abcde")
    assert packed[0].zdict is packed[1].zdict  # a's bytes serve a and b
    assert packed[2].zdict is not packed[0].zdict and packed[2].zdict is packed[3].zdict
    assert [r.pod()["metadata"]["name"] for r in made] == list("abcdefg")


def test_a_pods_msgpack_never_starts_with_the_compressed_mark():
    assert all(encode(p)[0] != PACKED for p in [{}, {"a": 1}, pod("x"), {str(i): i for i in range(20)}])


# ---- the manager decodes one event at a time -------------------------------------------------


class CountingEvent(WatchEvent):
    """A watch event that counts reads of its decoded object (which it would then keep)."""

    __slots__ = ()
    reads = 0

    @property
    def obj(self):
        CountingEvent.reads += 1
        return super().obj


def _stream() -> list[tuple[float, str, str, dict]]:
    """Nodes, an owner, pods it adopts, their status changes and a deletion."""
    out: list[tuple[float, str, str, dict]] = [(0.0, "Node", "ADDED", node(f"n{i}")) for i in range(3)]
    owner = rs("web", replicas=2)
    for i, p in enumerate(_pods("web-a", "web-b", "web-c", "web-d")):
        p["metadata"]["labels"] = {"app": "web"}
        out.append((1.0, "Pod", "ADDED", p))
        if i % 2:
            out.append(
                (1.0, "Pod", "MODIFIED", pod(p["metadata"]["name"], phase="Succeeded") | {"metadata": p["metadata"]})
            )
    out.append((2.0, "ReplicaSet", "ADDED", dict(owner)))
    out.append(
        (
            3.0,
            "Pod",
            "DELETED",
            _pods("web-d")[0] | {"metadata": {**_pods("web-d")[0]["metadata"], "labels": {"app": "web"}}},
        )
    )
    return out


@pytest.mark.parametrize("young", [1, 4096], ids=["records compressed", "records plain"])
def test_events_read_from_their_bytes_leave_the_same_writes_and_no_decoded_object_in_the_batch(young, monkeypatch):
    monkeypatch.setattr(podrecord, "YOUNG", young)
    lazy, eager = ControllerManager(default_controllers()), ControllerManager(default_controllers())
    CountingEvent.reads, adopted = 0, 0
    for t, kind, etype, obj in _stream():
        lazy.on_events([CountingEvent(kind, etype, raw=encode(obj))], t)
        eager.on_events([(kind, etype, obj, encode(obj))], t)
        got, want = lazy.sync(t), eager.sync(t)
        assert (repr(got.requests), summary(got)) == (repr(want.requests), summary(want))
        adopted += sum(isinstance(r, Update) for r in want.requests)
    assert CountingEvent.reads == 0 and adopted == 2  # the ReplicaSet adopted its two live pods
    assert repr(lazy.sync(400.0).requests) == repr(eager.sync(400.0).requests)
    assert lazy.next_wakeup() == eager.next_wakeup()


def test_a_made_up_deleted_without_bytes_is_read_as_it_is():
    m = ControllerManager(default_controllers())
    CountingEvent.reads = 0
    m.on_events([CountingEvent("Node", "ADDED", raw=encode(node("n1")))], 0.0)
    m.on_events([CountingEvent("Node", "DELETED", {"kind": "Node", "metadata": {"name": "n1"}})], 1.0)
    assert CountingEvent.reads == 1


def test_the_controller_manager_watches_every_kind_lazily():
    c = ControllerManagerComponent()
    watches = c.watches()
    assert watches and all(w.lazy for w in watches)
    assert [w.kind for w in watches] == c.manager.kinds
