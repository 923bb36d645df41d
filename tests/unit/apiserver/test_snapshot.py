"""Snapshots streamed in chunks: round trips, the old one-frame format, every kind of
damage, and a process killed mid-write (a real SIGKILL) leaving the previous state."""

import os
import signal
import struct
import subprocess
import sys
import textwrap
import zlib

import msgpack
import pytest

from cluster.api import codec
from cluster.apiserver import snapshot
from cluster.apiserver.snapshot import SnapshotCorrupt, load_snapshot, write_snapshot
from cluster.apiserver.wal import WalError, recover


def objects(n: int, kind: str = "Pod") -> dict:
    return {kind: {("default", f"p{i}"): codec.encode({"metadata": {"name": f"p{i}"}}) for i in range(n)}}


def test_many_chunks_and_an_empty_kind_round_trip(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshot, "CHUNK_OBJECTS", 7)
    state = {**objects(50), "Node": {}, **objects(3, "Lease")}
    path = str(tmp_path / "s")
    write_snapshot(path, 42, state)
    assert load_snapshot(path, 42) == state


def test_a_snapshot_from_before_streaming_still_loads(tmp_path):
    state = objects(3)
    items = {k: [[ns, name, data] for (ns, name), data in v.items()] for k, v in state.items()}
    payload = codec.encode({"format": 1, "rv": 9, "objects": items})
    path = tmp_path / "old"
    path.write_bytes(struct.pack("<8sQI", b"KMSNAP01", len(payload), zlib.crc32(payload)) + payload)
    assert load_snapshot(str(path), 9) == state


def _damaged(tmp_path, how) -> str:
    path = str(tmp_path / "s")
    write_snapshot(path, 5, objects(10))
    data = bytearray(open(path, "rb").read())
    open(path, "wb").write(how(data))
    return path


def _trailer(rv, count):
    payload = msgpack.packb({"rv": rv, "objects": count})
    return struct.pack("<II", len(payload), zlib.crc32(payload)) + payload


@pytest.mark.parametrize(
    "how,message",
    [
        (lambda d: d[:-20], "ends before its trailer|cut short|its header says"),  # torn
        (lambda d: d[:40] + bytes([d[40] ^ 0xFF]) + d[41:], "CRC mismatch"),
        (lambda d: d + b"x", "bytes after the trailer"),
        (lambda d: b"NOTASNAP" + d[8:], "not a kubemu snapshot"),
        (lambda d: d[:8] + struct.pack("<Q", 6) + d[16:], "holds rv 6, its name says 5"),
        (lambda d: d[:3], "shorter than the header"),
        (lambda d: d[: len(d) - len(_trailer(5, 10))] + _trailer(5, 11), "does not match rv 5 and 10 objects"),
    ],
)
def test_damage_is_named(tmp_path, how, message):
    with pytest.raises(SnapshotCorrupt, match=message):
        load_snapshot(_damaged(tmp_path, how), 5)


_WRITER = textwrap.dedent(
    """
    import sys, time
    from cluster.api import codec
    from cluster.apiserver import snapshot
    from cluster.apiserver.store import Store
    from cluster.apiserver.wal import DurableLog

    log = DurableLog(sys.argv[1], snapshot_every=10**9)
    store = Store.from_recovered(log.recovered, journal=log)
    for i in range(3000):
        store.put("Pod", {"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"}}, "ADDED")
    log.commit()
    log.snapshot(*store.snapshot_state())  # the snapshot recovery must fall back to
    for i in range(3000, 3500):
        store.put("Pod", {"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"}}, "ADDED")
    log.commit()
    snapshot.CHUNK_OBJECTS = 100
    frame = snapshot._frame
    written = [0]

    def slow(f, payload):
        frame(f, payload)
        written[0] += 1
        if written[0] == 5:  # part of the new snapshot is on disk: time to be killed
            f.flush()
            print("writing", flush=True)
            time.sleep(60)

    snapshot._frame = slow
    log.snapshot(*store.snapshot_state())
    print("finished", flush=True)
    """
)


def test_a_process_killed_mid_snapshot_recovers_every_acknowledged_write(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path)], stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout.readline().strip() == "writing"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    leftovers = [n for n in os.listdir(tmp_path) if n.endswith(".snap.tmp")]
    assert len(leftovers) == 1 and os.path.getsize(tmp_path / leftovers[0]) > 0  # killed mid-write
    got = recover(str(tmp_path))
    assert len(got.objects["Pod"]) == 3500 and got.rv == 3500
    assert got.snapshot_rv == 3000 and got.records_replayed == 500


def test_an_unreadable_snapshot_is_a_wal_error_naming_the_file(tmp_path):
    path = _damaged(tmp_path, lambda d: d[:-20])
    os.rename(path, tmp_path / f"snapshot-{5:020d}.snap")
    with pytest.raises(WalError, match=r"snapshot-0+5\.snap is corrupt") as err:
        recover(str(tmp_path))
    assert not err.value.retryable
