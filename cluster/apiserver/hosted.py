"""The apiserver as a serving process holds it: the ``APIServer`` and where its storage lives.

Owns ``HostedAPIServer``: the apiserver kept in memory, or with a data directory on its
durable log (``durable.py``), and what a process serving it does around each call: commit a
call's writes before anyone hears of them (``commit``; a refused commit reloads the
apiserver from the log), commit what a failed call left before any read (``unsettled``), and
report the log's state and the store's counts. The apiserver Ray actor
(``actors/apiserver.py``) is its shell; the actor ends the process on ``Unrecoverable``.

Also the names of the durable storage that callers outside the apiserver use (the actor,
the local runtime's restart), so that none of them imports ``durable.py`` itself
(pyproject.toml's storage contract).
"""

from __future__ import annotations

from ..api.requests import Outcome
from .apiserver import APIServer
from .durable import DEFAULT_SNAPSHOT_EVERY, CommitFailed, Durable, Unrecoverable, restart_in_memory
from .storage import DEFAULT_WINDOW, Window

__all__ = ["DEFAULT_SNAPSHOT_EVERY", "Durable", "HostedAPIServer", "Unrecoverable", "restart_in_memory"]

# What ``counts`` reports of the store: the kinds a benchmark watches grow.
COUNTED_KINDS = ("Pod", "Node", "Event", "Lease")


class HostedAPIServer:
    def __init__(
        self,
        seed: int = 0,
        window: Window = DEFAULT_WINDOW,
        data_dir: str | None = None,
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
    ):
        """``data_dir``: where the durable log lives; None keeps everything in memory (a
        restart then starts from nothing)."""
        self.durable = Durable(data_dir, seed, window, snapshot_every) if data_dir else None
        self.api = APIServer(seed=seed, window=window) if self.durable is None else self.durable.api

    def commit(self, outcomes: list[Outcome]) -> list[Outcome]:
        """Commit what the call wrote before anyone hears of it: ``outcomes`` as they are, or,
        when the log refuses, the refusal for every item (``api`` is then reloaded from the
        log, the refused writes gone). Raises ``Unrecoverable`` when not even that works."""
        durable = self.durable
        if durable is None:
            return outcomes
        try:
            durable.commit()
        except CommitFailed as e:
            self.api = durable.api
            return [e] * len(outcomes)
        return outcomes

    def unsettled(self) -> bool:
        """Writes are waiting for a commit (a call raised midway): commit before a read, so
        no reader sees a write a crash could still lose."""
        return self.durable is not None and self.durable.log.pending > 0

    def idle(self) -> None:
        """Nothing is happening: a good moment for a due snapshot."""
        if self.durable is not None:
            self.durable.idle()

    def durability(self) -> dict:
        """The durable log's state: {} without a data directory."""
        d = self.durable
        if d is None:
            return {}
        return {
            "dataDir": d.directory,
            "recoveredResourceVersion": d.recovered_rv,
            "snapshotResourceVersion": d.log.snapshot_rv,
            "commitsFailed": d.commits_failed,
            "snapshotError": d.snapshot_error,
        }

    def counts(self) -> dict[str, int]:
        """Objects stored of each of ``COUNTED_KINDS``, and the resourceVersion."""
        counts = {kind: self.api.count(kind) for kind in COUNTED_KINDS}
        return counts | {"resourceVersion": self.api.resource_version()}
