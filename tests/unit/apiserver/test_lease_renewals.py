"""Lease renewals made in the stored bytes leave the store exactly as decoding would."""

import pytest

from cluster.api.codec import decode
from cluster.api.objects import NODE_LEASE_NAMESPACE
from cluster.api.patches import Apply
from cluster.api.requests import Patch, Update
from cluster.apiserver.apiserver import APIServer
from cluster.apiserver.store import Store
from cluster.kubelet.component import lease

NS = NODE_LEASE_NAMESPACE


def renewal(node: str, t: float, **spec) -> Patch:
    obj = lease(node, t)
    obj["spec"].update(spec)
    return Patch("Lease", NS, node, "", Apply(obj))


def state(api: APIServer) -> tuple:
    """Every stored Lease's bytes, the Lease window's events and the resourceVersion."""
    store = api.store
    stored = {key: store.raw("Lease", *key) for key in store.keys("Lease")}
    events, _ = store.events_since("Lease", 0)
    return stored, events, store.rv


SPLICED: list[bool] = []  # what each renew of the splicing apiserver answered


def twins(monkeypatch) -> tuple[APIServer, APIServer]:
    """Two apiservers; the second never splices (every renewal decoded and merged)."""
    spliced, decoded = APIServer(), APIServer()
    real = Store.renew
    SPLICED.clear()

    def renew(self, *args):
        if self is decoded.store:
            return False
        SPLICED.append(real(self, *args))
        return SPLICED[-1]

    monkeypatch.setattr(Store, "renew", renew)
    return spliced, decoded


STEPS = [
    [renewal("n1", 0.0), renewal("n2", 0.0)],  # created: the general way
    [renewal("n1", 10.0), renewal("n2", 10.5)],  # renewed in the bytes
    [renewal("n1", 10.0)],  # the same time again: no write
    [renewal("n1", 20.25), renewal("n2", 20.0, leaseDurationSeconds=60)],  # another duration
    [renewal("n2", 30.0, leaseDurationSeconds=60), renewal("n1", 30.0, holderIdentity="other")],
    [renewal("n1", 40.0), renewal("n2", 40.0)],  # and back
]


def test_renewals_in_the_bytes_leave_what_decoding_leaves(monkeypatch):
    spliced, decoded = twins(monkeypatch)
    for i, step in enumerate(STEPS):
        assert spliced.write(step, float(i)) == decoded.write(step, float(i))
        assert state(spliced) == state(decoded), f"step {i}"
    # created: 2 decoded; renewed: 2 spliced; the same time: spliced (no write); n1 spliced,
    # n2 decoded (a new duration); n2 spliced, n1 decoded (a new holder); both decoded
    # (holder and duration as before)
    assert SPLICED == [False, False, True, True, True, True, False, True, False, False, False]
    assert decode(spliced.store.raw("Lease", NS, "n1"))["spec"]["renewTime"] == lease("n1", 40.0)["spec"]["renewTime"]


def test_a_renewal_after_a_users_edit_is_decoded_and_keeps_the_edit(monkeypatch):
    spliced, decoded = twins(monkeypatch)
    for api in (spliced, decoded):
        api.write([renewal("n1", 0.0)], 0.0)
        edited = api.get("Lease", NS, "n1")
        edited["metadata"]["labels"] = {"renewTime": "x"}  # the field's name twice in the bytes
        edited["spec"]["extra"] = "kept"  # not a kubelet's shape: never spliced
        api.write([Update(edited)], 1.0)
        api.write([renewal("n1", 10.0)], 10.0)
        api.write([renewal("n1", 20.0)], 20.0)
    assert state(spliced) == state(decoded)
    spec = decode(spliced.store.raw("Lease", NS, "n1"))["spec"]
    assert spec["extra"] == "kept" and spec["renewTime"] == lease("n1", 20.0)["spec"]["renewTime"]
    assert len(spliced.store._renewals) == 0  # its shape is not a kubelet's any more


@pytest.mark.parametrize(
    "odd",
    [
        {"renewTime": "2026-01-01T00:00:10.000000Z\xa9renewTime"},  # the field's bytes in its value
        {"leaseDurationSeconds": True},  # equal to 1 in Python, not the same JSON
        {"holderIdentity": None},
    ],
)
def test_odd_renewals_leave_what_decoding_leaves(monkeypatch, odd):
    spliced, decoded = twins(monkeypatch)
    for api in (spliced, decoded):
        api.write([renewal("n1", 0.0)], 0.0)
        api.write([renewal("n1", 10.0, **odd)], 10.0)
        api.write([renewal("n1", 20.0)], 20.0)
    assert state(spliced) == state(decoded)


def test_a_deleted_lease_is_forgotten_and_created_again_the_general_way(monkeypatch):
    spliced, decoded = twins(monkeypatch)
    from cluster.api.requests import Delete

    for api in (spliced, decoded):
        api.write([renewal("n1", 0.0), renewal("n1", 10.0)], 10.0)
        api.write([Delete("Lease", NS, "n1", "")], 11.0)
        api.write([renewal("n1", 20.0), renewal("n1", 30.0)], 30.0)
    assert state(spliced) == state(decoded)
    assert len(spliced.store._renewals) == 1
