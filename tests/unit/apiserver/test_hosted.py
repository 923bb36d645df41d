"""``HostedAPIServer``: the apiserver as the actor serves it, in memory or on a durable log
(commit before acknowledging, refused commits reload the state, the reported counts)."""

import pytest
from store_builders import make_pod

from cluster.api.errors import ServiceUnavailable
from cluster.api.requests import Create
from cluster.apiserver.hosted import HostedAPIServer, Unrecoverable
from cluster.apiserver.wal import WalError


def fail_commits(hosted: HostedAPIServer) -> None:
    log = hosted.durable.log

    def commit():
        raise WalError(f"{log.directory}: append failed: No space left on device", True)

    log.commit = commit


def test_in_memory_there_is_nothing_to_commit_or_report():
    hosted = HostedAPIServer(seed=1)
    assert hosted.durable is None and hosted.durability() == {}
    out = hosted.api.write([Create(make_pod("a"))], 1.0)
    assert hosted.commit(out) is out and not hosted.unsettled()
    hosted.idle()  # nothing to snapshot: no error
    assert hosted.counts() == {
        "Pod": 1,
        "Node": 0,
        "Event": 0,
        "Lease": 0,
        "resourceVersion": hosted.api.resource_version(),
    }


def test_with_a_data_dir_writes_wait_for_their_commit(tmp_path):
    hosted = HostedAPIServer(seed=1, data_dir=str(tmp_path))
    assert hosted.durability()["dataDir"] == str(tmp_path)
    assert hosted.durability()["recoveredResourceVersion"] == 0
    hosted.api.create(make_pod("a"), 1.0)
    assert hosted.unsettled()
    assert hosted.commit([None]) == [None] and not hosted.unsettled()
    again = HostedAPIServer(seed=1, data_dir=str(tmp_path))  # a restart recovers the commit
    assert again.api.exists("Pod", "default", "a")
    assert again.durability()["recoveredResourceVersion"] == hosted.api.resource_version()


def test_a_refused_commit_refuses_every_item_and_reloads_the_logs_state(tmp_path):
    hosted = HostedAPIServer(seed=1, data_dir=str(tmp_path))
    old_api, rv = hosted.api, hosted.api.resource_version()
    out = hosted.api.write([Create(make_pod("a")), Create(make_pod("b"))], 1.0)
    fail_commits(hosted)
    refused = hosted.commit(out)
    assert len(refused) == 2 and all(isinstance(e, ServiceUnavailable) for e in refused)
    assert "No space left on device" in str(refused[0])
    assert hosted.api is not old_api and hosted.api.resource_version() == rv
    assert hosted.counts()["Pod"] == 0 and hosted.durability()["commitsFailed"] == 1


def test_a_log_that_cannot_be_recovered_either_is_unrecoverable(tmp_path, monkeypatch):
    from cluster.apiserver import durable as durable_mod

    hosted = HostedAPIServer(seed=1, data_dir=str(tmp_path))
    hosted.api.create(make_pod("a"), 1.0)
    fail_commits(hosted)

    def unreadable(*args, **kwargs):
        raise WalError(f"{tmp_path}: cannot list the log directory: Input/output error", True)

    monkeypatch.setattr(durable_mod, "DurableLog", unreadable)
    with pytest.raises(Unrecoverable, match="Input/output error"):
        hosted.commit([None])
