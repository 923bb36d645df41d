"""The apiserver's durability: its data directory, from recovery to every commit.

Owns the apiserver's ``DurableLog`` (``wal.py``), the ``APIServer`` built on what that log
recovered, and the cluster clock's real start saved beside the log (``clock.json``), so a
restarted apiserver stamps writes on the same emulated timeline before anyone starts its
clock again. The apiserver actor (``actors/apiserver.py``) makes one when it is given a
data directory and calls ``commit`` after every write call, before it replies or wakes a
watcher. Plain file IO on the directory; nothing here reads the clock.

A failed commit leaves writes in memory that are not on disk. Nobody has seen them yet (the
actor commits before anything can read them), and nobody may: ``commit`` throws the memory
away and recovers afresh from the directory, as a process restart would but without
dropping any client, then raises ``CommitFailed`` so the call's items are all refused. If
even that recovery fails it raises ``Unrecoverable``: the process must end without another
reply, and Ray restarts the actor from the directory.
"""

from __future__ import annotations

import hashlib
import json
import os

from ..api.errors import ServiceUnavailable
from .apiserver import APIServer
from .bootstrap_services import carry_serving
from .store import Store
from .wal import DurableLog, Recovered, WalError
from .window import DEFAULT_WINDOW, Window

CLOCK_FILE = "clock.json"
# Records between snapshots, at the least (a store of more objects waits as many records
# as it holds: ``DurableLog._interval_after``). A snapshot of a 10,000-pod cluster (about
# 30 MB) holds the actor loop for about 0.1 s, which at 20,000 was a tenth of the log's
# cost in ``bench schedule``; replaying 50,000 records on a restart takes a few tenths of a
# second.
DEFAULT_SNAPSHOT_EVERY = 50_000
# Under load the snapshot waits for a quiet moment, up to this many intervals of records
# (a snapshot of a large store holds the actor loop for a tenth of a second or more).
BUSY_FACTOR = 3.0


class CommitFailed(ServiceUnavailable):
    """The durable log refused a call's writes; they were dropped with the memory."""


class Unrecoverable(Exception):
    """A commit failed and the directory could not be recovered either."""


def uid_seed(seed: int, rv: int) -> int:
    """Admission's uid generator seed after a recovery at ``rv``: a stream of its own, so the
    uids of a restarted apiserver do not repeat the ones it handed out before; the same seed
    and rv give the same stream, so a replay stays deterministic."""
    digest = hashlib.sha256(f"kubemu-uids:{seed}:{rv}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


class Durable:
    def __init__(
        self,
        directory: str,
        seed: int = 0,
        window: Window = DEFAULT_WINDOW,
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
        *,
        fsync: bool = False,
    ):
        self.directory, self.seed, self.window = directory, seed, window
        self.snapshot_every, self.fsync = snapshot_every, fsync
        self.commits_failed = 0
        self.snapshot_error = ""  # the last failed snapshot's message; the writes stay logged
        self.log, self.api = self._open()
        self.recovered_rv = self.log.recovered.rv  # 0: a first start

    def _open(self) -> tuple[DurableLog, APIServer]:
        log = DurableLog(self.directory, self.snapshot_every, fsync=self.fsync)
        rec = log.recovered
        if rec.rv:
            store = Store.from_recovered(rec, self.window, journal=log)
            return log, APIServer(seed=uid_seed(self.seed, rec.rv), window=self.window, store=store)
        api = APIServer(seed=self.seed, window=self.window)
        # The built-in namespaces and priority classes are written before the journal is
        # attached; one snapshot holds them instead.
        log.snapshot(*api.store.snapshot_state())
        api.store.journal = log
        return log, api

    def commit(self) -> None:
        """Make every write so far durable. Raises ``CommitFailed`` (the state is recovered
        from the directory, ``api`` replaced) or ``Unrecoverable``."""
        try:
            self.log.commit()
        except WalError as err:
            self._recover_after(err)
        # A busy apiserver snapshots only once the log has grown to BUSY_FACTOR intervals;
        # until then ``idle`` takes the snapshot when nobody is waiting on it.
        self._snapshot(BUSY_FACTOR)

    def idle(self) -> None:
        """Nothing is happening: take a snapshot now if one is due."""
        self._snapshot(1.0)

    def _snapshot(self, factor: float) -> None:
        try:
            self.log.maybe_snapshot(self.api.store, factor)
        except WalError as err:
            self.snapshot_error = str(err)  # the log still holds every record: no write is lost

    def _recover_after(self, err: WalError) -> None:
        self.commits_failed += 1
        self.log.abandon()
        try:
            self.log, self.api = self._open()
        except WalError as again:
            raise Unrecoverable(
                f"{self.directory}: a commit failed ({err}) and recovering from the "
                f"log failed too ({again}); the apiserver must restart"
            ) from again
        raise CommitFailed(
            f"apiserver: writing the durable log failed, so this call's writes are not "
            f"acknowledged and the state was reloaded from the log: {err}"
        ) from err

    # -- the cluster clock ---------------------------------------------------------------
    def saved_clock(self) -> float | None:
        """The real start the cluster clock was started with, or None before it was."""
        path = os.path.join(self.directory, CLOCK_FILE)
        try:
            with open(path) as f:
                value = json.load(f)["realStart"]
        except FileNotFoundError:
            return None
        except OSError as e:
            raise WalError(f"{path}: cannot read the saved clock: {e.strerror or e}", True) from e
        except (ValueError, TypeError, KeyError) as e:
            raise WalError(f"{path}: not a saved clock ({e}); remove it to start a new timeline", False) from e
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise WalError(f"{path}: realStart {value!r} is not a number; remove it to start a new timeline", False)
        return float(value)

    def save_clock(self, real_start: float) -> None:
        """Keep ``real_start`` for a restart; written whole or not at all."""
        if self.saved_clock() == real_start:
            return  # a restarted apiserver is told the start it already has
        path = os.path.join(self.directory, CLOCK_FILE)
        tmp = path + ".tmp"
        try:
            with open(tmp, "w") as f:
                json.dump({"realStart": real_start}, f)
                f.flush()
                if self.fsync:
                    os.fsync(f.fileno())
            os.replace(tmp, path)
        except OSError as e:
            raise WalError(f"{path}: cannot save the clock: {e.strerror or e}", True) from e


def restart_in_memory(api: APIServer, seed: int, window: Window = DEFAULT_WINDOW) -> APIServer:
    """What a restarted apiserver recovers when its log holds every write (the local
    runtime's restart): the same objects, the resourceVersion sequence continued, a new uid
    stream, and watch windows that start empty, so older watches get Expired."""
    rv, objects = api.store.snapshot_state()
    store = Store.from_recovered(Recovered(rv=rv, objects=objects), window, journal=api.store.journal)
    new = APIServer(seed=uid_seed(seed, rv), window=window, store=store)
    carry_serving(api, new)  # the range, address and CA kubemu serve gave it
    return new
