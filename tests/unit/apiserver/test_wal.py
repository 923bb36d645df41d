"""The durable log: commit and recover, torn tails, mid-log damage, snapshots plus tail."""

import os
import struct

import pytest
from store_builders import make_pod

from cluster.api import codec
from cluster.api.errors import Expired
from cluster.apiserver import wal
from cluster.apiserver.store import Store
from cluster.apiserver.wal import DurableLog, Record, WalError, recover


class Writer:
    """A Store and a DurableLog written together, the way the apiserver will use them."""

    def __init__(self, directory, snapshot_every=1_000_000, store=None):
        self.log = DurableLog(str(directory), snapshot_every)
        self.store = store or Store.from_recovered(self.log.recovered)

    def put(self, name, node=None, event="ADDED", kind="Pod"):
        pod = self.store.get(kind, "default", name) or make_pod(name, node=node)
        if node:
            pod["spec"]["nodeName"] = node
        rv = self.store.put(kind, pod, event)
        self.log.record_put(kind, rv, event, "default", name, codec.encode(pod))
        return rv

    def remove(self, name, kind="Pod"):
        rv = self.store.remove(kind, "default", name)
        self.log.record_remove(kind, rv, "default", name)
        return rv


def state(objects):
    """kind -> {name: decoded object} for comparing a recovery with a live store."""
    return {k: {n: codec.decode(b) for (_, n), b in v.items()} for k, v in objects.items()}


def segments(directory):
    return sorted(n for n in os.listdir(directory) if n.startswith("wal-"))


def only_segment(directory):
    (name,) = segments(directory)
    return os.path.join(directory, name)


def test_empty_or_missing_directory_is_empty_state_at_rv_0(tmp_path):
    for d in (tmp_path, tmp_path / "never-created"):
        got = recover(str(d))
        assert (got.rv, got.objects, got.snapshot_rv, got.records_replayed, got.torn) == (0, {}, 0, 0, False)


def test_puts_and_removes_round_trip_through_commit_and_recover(tmp_path):
    w = Writer(tmp_path)
    w.put("a")
    w.put("b")
    w.log.commit()
    w.put("a", node="n1", event="MODIFIED")
    w.remove("b")
    w.put("c")
    assert w.log.commit() == 3
    w.log.close()

    got = recover(str(tmp_path))
    assert got.rv == w.store.rv == 5
    assert got.records_replayed == 5 and not got.torn
    assert state(got.objects) == state(w.store.snapshot_state()[1])
    assert set(got.objects["Pod"]) == {("default", "a"), ("default", "c")}
    assert codec.decode(got.objects["Pod"]["default", "a"])["spec"]["nodeName"] == "n1"


def test_uncommitted_records_are_not_recovered(tmp_path):
    w = Writer(tmp_path)
    w.put("a")
    w.log.commit()
    w.put("b")  # queued, never committed: the process dies here
    got = recover(str(tmp_path))
    assert got.rv == 1 and set(got.objects["Pod"]) == {("default", "a")}


def test_a_rebuilt_store_continues_the_rv_sequence_and_expires_old_watchers(tmp_path):
    w = Writer(tmp_path)
    for name in ("a", "b", "c"):
        w.put(name, node="n1")
    w.remove("c")
    w.log.close()

    log = DurableLog(str(tmp_path))
    store = Store.from_recovered(log.recovered)
    assert store.rv == 4
    assert store.get("Pod", "default", "a")["metadata"]["resourceVersion"] == "1"
    assert store.list("Pod", {"n1"})[1] == store.list("Pod")[1] and len(store.list("Pod")[1]) == 2
    with pytest.raises(Expired):
        store.events_since("Pod", 2)  # a watcher from before the restart relists
    assert store.put("Pod", make_pod("d"), "ADDED") == 5
    events, resume = store.events_since("Pod", 4)
    assert [t for t, _ in events] == ["ADDED"] and resume == 5


def test_a_kind_emptied_before_the_restart_still_expires_its_watchers(tmp_path):
    w = Writer(tmp_path)
    w.put("lease-1", kind="Lease")
    w.remove("lease-1", kind="Lease")
    w.put("a")
    w.log.close()
    store = Store.from_recovered(recover(str(tmp_path)))
    assert store.count("Lease") == 0
    with pytest.raises(Expired):
        store.events_since("Lease", 1)


def _three_then_one(tmp_path):
    """Records 1-3 in one commit, record 4 in another; returns (segment, offset of 4, size)."""
    w = Writer(tmp_path)
    for name in ("a", "b", "c"):
        w.put(name)
    w.log.commit()
    path = only_segment(tmp_path)
    last = os.path.getsize(path)
    w.put("d")
    w.log.close()
    return path, last, os.path.getsize(path)


def _cut(size):
    def damage(path, last, end):
        os.truncate(path, size(last, end))

    return damage


def _flip(pos):
    def damage(path, last, end):
        with open(path, "r+b") as f:
            f.seek(pos(last, end))
            byte = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte[0] ^ 0xFF]))

    return damage


def _append(junk):
    def damage(path, last, end):
        with open(path, "ab") as f:
            f.write(junk)

    return damage


TORN = {
    "cut inside the header": (_cut(lambda last, end: last + 3), True),
    "cut inside the payload": (_cut(lambda last, end: last + 8 + 2), True),
    "cut one byte short": (_cut(lambda last, end: end - 1), True),
    "crc flipped": (_flip(lambda last, end: last + 5), True),
    "last payload byte flipped": (_flip(lambda last, end: end - 1), True),
    "zeros after the last record": (_append(b"\0" * 64), False),
}


@pytest.mark.parametrize("damage, loses_last", TORN.values(), ids=TORN.keys())
def test_a_torn_last_record_is_dropped_and_the_file_truncated(tmp_path, damage, loses_last):
    path, last, end = _three_then_one(tmp_path)
    damage(path, last, end)
    dropped = os.path.getsize(path) - (last if loses_last else end)

    got = recover(str(tmp_path))
    assert got.torn and got.bytes_dropped == dropped
    assert got.rv == (3 if loses_last else 4)
    expected = {"a", "b", "c"} | (set() if loses_last else {"d"})
    assert {n for _, n in got.objects["Pod"]} == expected
    assert os.path.getsize(path) == (last if loses_last else end)
    again = recover(str(tmp_path))  # the truncation made the file clean
    assert not again.torn and again.rv == got.rv


def test_after_a_torn_tail_the_log_continues_cleanly(tmp_path):
    path, last, _ = _three_then_one(tmp_path)
    os.truncate(path, last + 4)
    w = Writer(tmp_path)
    assert w.log.recovered.torn and w.store.rv == 3
    assert w.put("e") == 4
    w.log.close()
    got = recover(str(tmp_path))
    assert not got.torn and {n for _, n in got.objects["Pod"]} == {"a", "b", "c", "e"}


def _offsets(path):
    """The start of every record in a segment."""
    buf, out, off = open(path, "rb").read(), [], 0
    while off < len(buf):
        out.append(off)
        off += 8 + struct.unpack_from("<I", buf, off)[0]
    return out


MIDDLE = {
    "payload byte of record 2 flipped": (1, 12),
    "crc of record 1 flipped": (0, 4),
    "length of record 3 damaged": (2, 3),
}


@pytest.mark.parametrize("record, delta", MIDDLE.values(), ids=MIDDLE.keys())
def test_damage_in_the_middle_of_a_log_is_an_error_naming_file_and_offset(tmp_path, record, delta):
    path, _, _ = _three_then_one(tmp_path)
    bad = _offsets(path)[record]
    _flip(lambda last, end: bad + delta)(path, 0, 0)
    size = os.path.getsize(path)
    with pytest.raises(WalError) as err:
        recover(str(tmp_path))
    assert path in str(err.value) and f"offset {bad} " in str(err.value)
    assert "will not help" in str(err.value) and not err.value.retryable
    assert os.path.getsize(path) == size  # nothing was truncated


def _raw_log(tmp_path, rvs):
    log = wal.LogFile(wal.segment_path(str(tmp_path), 0))
    log.append([Record(rv, "Pod", "ADDED", "default", f"p{rv}", codec.encode({"n": rv})) for rv in rvs])
    log.close()
    return log.path


def test_resource_versions_may_skip_but_not_go_back(tmp_path):
    _raw_log(tmp_path, [1, 2, 5, 9])
    assert recover(str(tmp_path)).rv == 9
    path = _raw_log(tmp_path, [3])  # appended after 9
    with pytest.raises(WalError, match=r"offset \d+ has rv 3, not after 9") as err:
        recover(str(tmp_path))
    assert path in str(err.value)


def test_the_log_refuses_to_record_an_rv_that_does_not_increase(tmp_path):
    w = Writer(tmp_path)
    w.put("a")
    with pytest.raises(WalError, match="not after"):
        w.log.record_put("Pod", 1, "MODIFIED", "default", "a", b"x")


def test_snapshot_plus_tail(tmp_path):
    w = Writer(tmp_path)
    for name in ("a", "b", "c"):
        w.put(name)
    w.log.snapshot(*w.store.snapshot_state())
    w.remove("a")  # deleted after the snapshot: must stay deleted
    w.put("b", node="n2", event="MODIFIED")
    w.put("d")
    w.log.close()
    assert segments(tmp_path) == [f"wal-{3:020d}.log"]  # the covered segment is gone

    got = recover(str(tmp_path))
    assert (got.snapshot_rv, got.records_replayed, got.rv) == (3, 3, 6)
    assert state(got.objects) == state(w.store.snapshot_state()[1])
    assert ("default", "a") not in got.objects["Pod"]


def test_records_the_snapshot_covers_are_skipped(tmp_path):
    # A crash after the snapshot's rename but before the log rotated: one segment holds
    # records on both sides of the snapshot.
    w = Writer(tmp_path)
    for name in ("a", "b", "c"):
        w.put(name)
    w.log.commit()
    wal.write_snapshot(str(tmp_path), *w.store.snapshot_state())
    w.remove("a")
    w.put("d")
    w.log.close()

    got = recover(str(tmp_path))
    assert (got.snapshot_rv, got.records_replayed, got.rv) == (3, 2, 5)
    assert {n for _, n in got.objects["Pod"]} == {"b", "c", "d"}


def test_maybe_snapshot_runs_every_n_records_and_keeps_only_the_newest(tmp_path):
    w = Writer(tmp_path, snapshot_every=3)
    taken = []
    for i in range(7):
        w.put(f"p{i}")
        w.log.commit()
        taken.append(w.log.maybe_snapshot(w.store))
    assert taken == [False, False, True, False, False, True, False]
    assert [n for n in os.listdir(tmp_path) if n.startswith("snapshot-")] == [f"snapshot-{6:020d}.snap"]
    got = recover(str(tmp_path))
    assert (got.snapshot_rv, got.records_replayed, got.rv) == (6, 1, 7)


def test_the_snapshot_interval_grows_to_the_size_of_the_last_snapshot(tmp_path):
    w = Writer(tmp_path, snapshot_every=3)
    for i in range(10):
        w.put(f"p{i}")
    w.log.snapshot(*w.store.snapshot_state())  # ten objects: the next one waits ten records
    taken = []
    for i in range(10):
        w.put(f"p{i}", event="MODIFIED")
        w.log.commit()
        taken.append(w.log.maybe_snapshot(w.store))
    assert taken == [False] * 9 + [True]
    w.log.close()
    again = DurableLog(str(tmp_path), snapshot_every=3)  # a restart knows it from the snapshot
    assert not again.snapshot_due() and again._interval == 10


class Crash(BaseException):
    """The process dies: no handler runs."""


def test_a_crash_before_the_snapshot_rename_leaves_the_old_snapshot_in_use(tmp_path, monkeypatch):
    w = Writer(tmp_path)
    for name in ("a", "b"):
        w.put(name)
    w.log.snapshot(*w.store.snapshot_state())
    w.put("c")
    w.remove("a")

    def die(src, dst):
        raise Crash()

    monkeypatch.setattr(wal.os, "replace", die)
    with pytest.raises(Crash):
        w.log.snapshot(*w.store.snapshot_state())
    monkeypatch.undo()
    assert any(n.endswith(".snap.tmp") for n in os.listdir(tmp_path))

    got = recover(str(tmp_path))
    assert (got.snapshot_rv, got.records_replayed, got.rv) == (2, 2, 4)
    assert {n for _, n in got.objects["Pod"]} == {"b", "c"}
    DurableLog(str(tmp_path))  # reopening removes the abandoned temporary file
    assert not any(n.endswith(".tmp") for n in os.listdir(tmp_path))


def test_a_corrupt_snapshot_is_an_error_naming_the_file(tmp_path):
    w = Writer(tmp_path)
    w.put("a")
    path = w.log.snapshot(*w.store.snapshot_state())
    w.log.close()
    _flip(lambda last, end: end - 1)(path, 0, os.path.getsize(path))
    with pytest.raises(WalError, match="CRC mismatch") as err:
        recover(str(tmp_path))
    assert path in str(err.value) and not err.value.retryable


def test_a_log_starting_after_the_snapshot_is_missing_records(tmp_path):
    w = Writer(tmp_path)
    w.put("a")
    path = w.log.snapshot(*w.store.snapshot_state())
    w.put("b")
    w.log.close()
    os.unlink(path)
    with pytest.raises(WalError, match=r"records 1\.\.1 are missing"):
        recover(str(tmp_path))


class HalfWriter:
    """A file whose next write lands half its bytes and then fails, like a full disk."""

    def __init__(self, real):
        self.real = real

    def write(self, data):
        self.real.write(data[: len(data) // 2])
        self.real.flush()
        raise OSError(28, "No space left on device")

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_a_failed_commit_leaves_no_partial_record_and_can_be_retried(tmp_path):
    w = Writer(tmp_path)
    w.put("a")
    w.log.commit()
    w.put("b")
    w.log._segment._file = HalfWriter(w.log._segment._file)
    with pytest.raises(WalError, match="No space left") as err:
        w.log.commit()
    assert err.value.retryable and w.log.pending == 1
    assert w.log.commit() == 1  # the cut-back reopened the file; the batch was kept
    w.log.close()
    got = recover(str(tmp_path))
    assert not got.torn and got.rv == 2 and got.records_replayed == 2


def test_fsync_mode_writes_the_same_log(tmp_path):
    log = DurableLog(str(tmp_path), fsync=True)
    log.record_put("Node", 1, "ADDED", "", "n1", codec.encode({"metadata": {"name": "n1"}}))
    log.commit()
    log.snapshot(1, {"Node": {("", "n1"): codec.encode({"metadata": {"name": "n1"}})}})
    log.record_remove("Node", 2, "", "n1")
    log.close()
    got = recover(str(tmp_path))
    assert (got.snapshot_rv, got.records_replayed, got.rv, got.objects) == (1, 1, 2, {"Node": {}})
