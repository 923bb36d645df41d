"""The apiserver's durability: the store's journal hook, recovery into an APIServer,
commit failures, snapshot failures, the saved clock."""

import json
import os

import pytest
from store_builders import make_pod

from cluster.api.errors import Expired
from cluster.api.requests import Create, ListResult
from cluster.apiserver import durable as durable_mod
from cluster.apiserver.durable import CLOCK_FILE, CommitFailed, Durable, Unrecoverable, uid_seed
from cluster.apiserver.store import Store
from cluster.apiserver.wal import DurableLog, WalError, recover
from cluster.runtime.reflector import Reflector


class Journal:
    def __init__(self):
        self.records = []

    def record_put(self, kind, rv, event_type, ns, name, data):
        self.records.append((kind, rv, event_type, ns, name, data))

    def record_remove(self, kind, rv, ns, name):
        self.records.append((kind, rv, "DELETED", ns, name, b""))


def uids(api, kind="Pod"):
    return {o["metadata"]["uid"] for o in api.store.objects(kind)}


# -- the journal hook --------------------------------------------------------------------
def test_the_store_journals_every_write_with_the_bytes_it_encoded_once():
    journal = Journal()
    store = Store(journal=journal)
    store.put("Pod", make_pod("a"), "ADDED")
    store.put("Pod", make_pod("a", node="n1"), "MODIFIED")
    store.remove("Pod", "default", "a")
    assert [r[:5] for r in journal.records] == [
        ("Pod", 1, "ADDED", "default", "a"),
        ("Pod", 2, "MODIFIED", "default", "a"),
        ("Pod", 3, "DELETED", "default", "a"),
    ]
    events, _ = store.events_since("Pod", 0)
    assert journal.records[1][5] is events[1][1]  # the watch window's bytes, not a second encode


def test_a_store_without_a_journal_records_nothing():
    store = Store()
    assert store.journal is None
    store.put("Pod", make_pod("a"), "ADDED")
    store.remove("Pod", "default", "a")
    assert store.rv == 2


def test_a_watcher_ahead_of_the_store_is_expired_so_it_relists():
    store = Store()
    store.put("Pod", make_pod("a"), "ADDED")
    with pytest.raises(Expired, match="too large resource version: 9"):
        store.events_since("Pod", 9)
    with pytest.raises(Expired):
        store.events_since("Node", 9)  # a kind never written too


def test_relist_all_reports_what_vanished_while_the_connection_was_down():
    r = Reflector(["Pod", "Node"])
    store = Store()
    store.put("Pod", make_pod("a"), "ADDED")
    store.put("Pod", make_pod("b"), "ADDED")
    for kind in r.kinds_to_list():
        r.on_list(kind, ListResult(*store.list(kind)))
    store.remove("Pod", "default", "a")
    r.relist_all()
    assert r.kinds_to_list() == ["Pod", "Node"]
    got = r.on_list("Pod", ListResult(*store.list("Pod")))
    assert sorted((t, o["metadata"]["name"]) for _, t, o, _ in got) == [("DELETED", "a"), ("MODIFIED", "b")]
    assert r.relists == 1


# -- recovery into an APIServer ----------------------------------------------------------
def test_a_fresh_directory_keeps_the_bootstrap_objects_in_a_snapshot(tmp_path):
    d = Durable(str(tmp_path), seed=3)
    assert d.recovered_rv == 0
    boot_rv = d.api.store.rv
    got = recover(str(tmp_path))
    assert got.snapshot_rv == boot_rv > 0
    assert ("", "kube-system") in got.objects["Namespace"]
    again = Durable(str(tmp_path), seed=3)
    assert again.recovered_rv == boot_rv and again.api.store.rv == boot_rv  # not bootstrapped twice


def test_a_reopened_directory_has_every_committed_write_and_continues_the_sequence(tmp_path):
    d = Durable(str(tmp_path), seed=3)
    assert d.api.write([Create(make_pod(f"p{i}")) for i in range(5)], 1.0) == [None] * 5
    d.api.delete("Pod", "default", "p4", None, 0, 2.0)
    d.commit()
    rv, before = d.api.store.rv, uids(d.api)
    d.api.create(make_pod("uncommitted"), 3.0)  # the process dies before this commit

    again = Durable(str(tmp_path), seed=3)
    assert again.api.store.rv == rv
    assert sorted(o["metadata"]["name"] for o in again.api.store.objects("Pod")) == ["p0", "p1", "p2", "p3"]
    assert uids(again.api) == before
    created = again.api.create(make_pod("after"), 4.0)
    assert int(created["metadata"]["resourceVersion"]) == rv + 1
    assert created["metadata"]["uid"] not in before | uids(d.api)  # a new uid stream after the restart
    assert uid_seed(3, rv) == uid_seed(3, rv) != uid_seed(3, rv + 1)


def test_a_data_dir_that_is_a_file_is_a_clear_error(tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(WalError, match=f"{path}: cannot create the log directory: .*will not help"):
        Durable(str(path))


# -- failures ----------------------------------------------------------------------------
def _failing_commit(log):
    def commit():
        raise WalError(f"{log.directory}: append failed: No space left on device", True)

    log.commit = commit


def test_a_failed_commit_drops_the_unlogged_writes_and_the_next_one_works(tmp_path):
    d = Durable(str(tmp_path))
    d.api.create(make_pod("kept"), 1.0)
    d.commit()
    rv, old_api = d.api.store.rv, d.api
    d.api.create(make_pod("lost"), 1.0)
    _failing_commit(d.log)
    with pytest.raises(CommitFailed, match="not acknowledged .*No space left") as err:
        d.commit()
    assert (err.value.code, err.value.reason) == (503, "ServiceUnavailable") and d.commits_failed == 1
    assert d.api is not old_api and d.api.store.rv == rv
    assert d.api.store.get("Pod", "default", "lost") is None
    d.api.create(make_pod("next"), 2.0)
    d.commit()
    names = {n for (_, n) in recover(str(tmp_path)).objects["Pod"]}
    assert names == {"kept", "next"}


def test_a_commit_failure_that_cannot_be_recovered_from_is_unrecoverable(tmp_path, monkeypatch):
    d = Durable(str(tmp_path))
    d.api.create(make_pod("a"), 1.0)
    _failing_commit(d.log)

    def unreadable(*args, **kwargs):
        raise WalError(f"{tmp_path}: cannot list the log directory: Input/output error", True)

    monkeypatch.setattr(durable_mod, "DurableLog", unreadable)
    with pytest.raises(Unrecoverable, match="recovering from the log failed too .*Input/output error"):
        d.commit()


def test_a_failed_snapshot_loses_no_write_and_is_retried_later(tmp_path, monkeypatch):
    d = Durable(str(tmp_path), snapshot_every=100)
    calls = []

    def no_space(directory, rv, objects, **kwargs):
        calls.append(rv)
        raise WalError(f"{directory}: cannot write snapshot: No space left on device", True)

    def write(n):
        for _ in range(n):
            d.api.create(make_pod(f"p{d.api.store.count('Pod')}"), 1.0)
            d.commit()
            d.idle()

    monkeypatch.setattr("cluster.apiserver.wal.write_snapshot", no_space)
    write(100)
    assert len(calls) == 1 and "No space left" in d.snapshot_error
    write(9)
    assert len(calls) == 1  # postponed, not tried again at every commit
    monkeypatch.undo()
    write(1)
    assert recover(str(tmp_path)).snapshot_rv == d.api.store.rv  # tried again a tenth later
    assert len(Durable(str(tmp_path)).api.store.list("Pod")[1]) == 110


def test_abandon_closes_the_log_without_writing_what_is_queued(tmp_path):
    log = DurableLog(str(tmp_path))
    log.record_put("Pod", 1, "ADDED", "default", "a", b"x")
    log.abandon()
    assert log.pending == 0 and recover(str(tmp_path)).rv == 0


# -- the saved clock ---------------------------------------------------------------------
def test_the_clock_round_trips_and_a_second_save_of_the_same_start_writes_nothing(tmp_path):
    d = Durable(str(tmp_path))
    assert d.saved_clock() is None
    d.save_clock(1234.5678901)
    path = tmp_path / CLOCK_FILE
    assert Durable(str(tmp_path)).saved_clock() == 1234.5678901
    mtime = os.stat(path).st_mtime_ns
    os.utime(path, ns=(0, 0))
    d.save_clock(1234.5678901)
    assert os.stat(path).st_mtime_ns == 0 != mtime


@pytest.mark.parametrize(
    "content,message",
    [
        ("{not json", "not a saved clock"),
        (json.dumps({"start": 1}), "not a saved clock"),
        (json.dumps({"realStart": "soon"}), "realStart 'soon' is not a number"),
    ],
)
def test_a_damaged_clock_file_is_a_clear_error(tmp_path, content, message):
    d = Durable(str(tmp_path))
    (tmp_path / CLOCK_FILE).write_text(content)
    with pytest.raises(WalError, match=message) as err:
        d.saved_clock()
    assert not err.value.retryable and CLOCK_FILE in str(err.value)


def test_a_clock_that_cannot_be_saved_is_a_clear_error(tmp_path):
    d = Durable(str(tmp_path))
    os.mkdir(tmp_path / (CLOCK_FILE + ".tmp"))  # the temporary file cannot be created
    with pytest.raises(WalError, match="cannot save the clock") as err:
        d.save_clock(1.0)
    assert err.value.retryable


def test_a_wal_error_survives_pickling_as_ray_sends_it():
    import pickle

    err = pickle.loads(pickle.dumps(WalError("d: cannot read", False)))
    assert (str(err), err.retryable, err.code) == ("d: cannot read (a retry will not help)", False, 500)


def test_a_busy_apiserver_snapshots_when_idle_or_at_three_intervals(tmp_path):
    d = Durable(str(tmp_path), snapshot_every=100)
    boot = recover(str(tmp_path)).snapshot_rv

    def write(n):
        for _ in range(n):
            d.api.create(make_pod(f"p{d.api.store.count('Pod')}"), 1.0)
            d.commit()

    write(150)
    assert recover(str(tmp_path)).snapshot_rv == boot  # due, but the apiserver is busy
    d.idle()
    first = recover(str(tmp_path)).snapshot_rv
    assert first == d.api.store.rv  # a quiet moment takes it
    interval = max(100, first - boot + 9)  # the snapshot held 150 pods and the 9 built-in objects
    assert interval == 159
    write(3 * interval - 1)
    assert recover(str(tmp_path)).snapshot_rv == first
    write(1)  # three intervals of records: taken even though nobody went idle
    assert recover(str(tmp_path)).snapshot_rv == d.api.store.rv
