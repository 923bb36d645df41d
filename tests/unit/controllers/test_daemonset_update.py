"""DaemonSet updates: the rolling step (table tests against upstream's rules), the
fenceposts, history pruning, and the controller's traces for RollingUpdate (with and
without surge), OnDelete, revisions and their failure paths."""

import pytest
from workload_builders import Fake, ds, names, node, pod, target

from cluster.api.errors import Conflict
from cluster.controllers.daemonset import DaemonSetController, template_hash
from cluster.controllers.daemonsetupdate import fenceposts, history_to_prune, rolling_step, split_node

NEW, OLD = "new-hash", "old-hash"


def rolling(unavailable=1, surge=0) -> dict:
    return {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": unavailable, "maxSurge": surge}}


def dpod(node_name: str, hash_: str, ready_at: float | None = 0.0, name: str = "", created: float = 0.0):
    p = pod(name or f"{hash_[0]}-{node_name}").labels(**{"controller-revision-hash": hash_}).on(node_name)
    p = p.created(created)
    return p.ready(at=ready_at) if ready_at is not None else p.phase("Running")


# ---- fenceposts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "strategy, desired, want",
    [
        (rolling(1, 0), 6, (0, 1)),
        (rolling(2, 0), 6, (0, 2)),
        (rolling("30%", 0), 6, (0, 2)),  # 1.8 rounds up
        (rolling("10%", 0), 6, (0, 1)),
        (rolling(0, 1), 6, (1, 0)),
        (rolling(0, "20%"), 6, (2, 0)),  # 1.2 rounds up
        (rolling(0, 0), 6, (0, 1)),  # both 0: accept one unavailable
        ({"type": "OnDelete"}, 6, (0, 0)),
        ({}, 6, (0, 0)),  # no type: upstream's controller rolls nothing
        (rolling("50%", 0), 0, (0, 1)),
    ],
)
def test_fenceposts(strategy, desired, want):
    assert fenceposts(strategy, desired) == want


# ---- one rolling step -----------------------------------------------------------------------------


def step(by_node, fences, now=100.0, min_ready=0.0, should_run=None, desired=None):
    runs = should_run if should_run is not None else dict.fromkeys(by_node, True)
    s = rolling_step(by_node, runs, NEW, None, fences, desired or len(by_node), min_ready, now)
    return names(s.deletes), s.creates, s.wake


NODES = [f"n{i}" for i in range(6)]


@pytest.mark.parametrize(
    "case, by_node, fences, want",
    [
        ("all old available: delete maxUnavailable of them, in node order",
         {n: [dpod(n, OLD)] for n in NODES}, (0, 2), (["o-n0", "o-n1"], [])),
        ("a new pod not yet ready uses one unit",
         {"n0": [dpod("n0", NEW, ready_at=None)], **{n: [dpod(n, OLD)] for n in NODES[1:]}}, (0, 2), (["o-n1"], [])),
        ("a node with no pod counts as unavailable",
         {"n0": [], **{n: [dpod(n, OLD)] for n in NODES[1:]}}, (0, 2), (["o-n1"], [])),
        ("an old pod not available is replaced whatever the budget",
         {"n0": [dpod("n0", NEW, ready_at=None)], "n1": [dpod("n1", NEW, ready_at=None)],
          "n2": [dpod("n2", OLD, ready_at=None)], "n3": [dpod("n3", OLD)]}, (0, 2), (["o-n2"], [])),
        ("two old pods on a node: left to the per-node pass, counted unavailable",
         {"n0": [dpod("n0", OLD, name="a"), dpod("n0", OLD, name="b")], "n1": [dpod("n1", OLD)]}, (0, 1), ([], [])),
        ("a terminating old pod does not count",
         {"n0": [dpod("n0", OLD).terminating()], "n1": [dpod("n1", OLD)]}, (0, 2), (["o-n1"], [])),
        ("everything updated and available: nothing",
         {n: [dpod(n, NEW)] for n in NODES}, (0, 2), ([], [])),
        ("surge: new pods beside up to maxSurge available old ones",
         {n: [dpod(n, OLD)] for n in NODES}, (1, 0), ([], ["n0"])),
        ("surge: a surged pod not yet available holds the budget",
         {"n0": [dpod("n0", OLD), dpod("n0", NEW, ready_at=None)], "n1": [dpod("n1", OLD)]}, (1, 0), ([], [])),
        ("surge: once the new pod is available the old one goes, and the next node surges",
         {"n0": [dpod("n0", OLD), dpod("n0", NEW)], "n1": [dpod("n1", OLD)]}, (1, 0), (["o-n0"], ["n1"])),
        ("surge: an old pod not available gets its replacement at once",
         {"n0": [dpod("n0", OLD, ready_at=None)], "n1": [dpod("n1", OLD)], "n2": [dpod("n2", OLD)]}, (1, 0),
         ([], ["n0", "n1"])),
    ],
)  # fmt: skip
def test_rolling_step(case, by_node, fences, want):
    assert step(by_node, fences)[:2] == want, case


def test_surge_on_a_node_it_should_no_longer_run_on():
    by_node = {"n0": [dpod("n0", OLD, ready_at=None)], "n1": [dpod("n1", OLD)], "n2": [dpod("n2", NEW)]}
    runs = {"n0": False, "n1": False, "n2": True}
    # n0's unavailable old pod is deleted; n1's available one only while more are available
    # than desired (2 available, 1 desired).
    assert step(by_node, (1, 0), should_run=runs, desired=1)[:2] == (["o-n0", "o-n1"], [])
    assert step(by_node, (1, 0), should_run=runs, desired=2)[:2] == (["o-n0"], [])


def test_min_ready_seconds_holds_the_budget_and_wakes_when_available():
    by_node = {"n0": [dpod("n0", NEW, ready_at=95.0)], "n1": [dpod("n1", OLD)], "n2": [dpod("n2", OLD)]}
    assert step(by_node, (0, 1), now=100.0, min_ready=10.0) == ([], [], 105.0)
    assert step(by_node, (0, 1), now=105.0, min_ready=10.0) == (["o-n1"], [], None)


def test_split_node_by_hash_or_template_generation():
    gen = pod("g").labels(**{"pod-template-generation": "3"})
    assert split_node([gen], "x", "3") == (gen, None, True)
    assert split_node([gen], "x", "2") == (None, gen, True)
    assert split_node([gen, gen], "x", "3") == (None, None, False)


# ---- history ---------------------------------------------------------------------------------------


def rev(name: str) -> dict:
    return {"metadata": {"name": name}}


@pytest.mark.parametrize(
    "revs, current, live, limit, want",
    [
        (["a", "b", "c", "d"], "d", set(), 10, []),
        (["a", "b", "c", "d"], "d", set(), 1, ["a", "b"]),
        (["a", "b", "c", "d"], "d", {"a"}, 1, ["b", "c"]),  # live ones count against the limit
        (["a", "b", "c", "d"], "b", set(), 0, ["a", "c", "d"]),  # a rollback made b current
        (["a", "b"], "b", {"a"}, 0, []),
    ],
)
def test_history_to_prune(revs, current, live, limit, want):
    assert names(history_to_prune([rev(r) for r in revs], current, live, limit)) == want


# ---- the controller --------------------------------------------------------------------------------


def agent_ds(strategy: dict, history: int = 10):
    a = ds("agent").generation(1)
    a.spec.update(updateStrategy=strategy, revisionHistoryLimit=history)
    a.meta["annotations"] = {"deprecated.daemonset.template.generation": "1"}
    return a


def up(f: Fake, w) -> list:
    """Land the pod creates of ``w``, and the revisions it creates; make new pods ready."""
    for r in w.creates:
        r = {**r, "metadata": {**r["metadata"], "uid": "uid-" + r["metadata"]["name"]}}
        f.add(r)
    made = f.land(w)
    for p in made:
        f.modify(p.on(target(p)).ready(at=f.now))
    return made


def gone(f: Fake, w, pods: dict) -> list[str]:
    """The pods ``w`` deletes go away; returns their names."""
    out = [d[1] for d in w.pod_deletes]
    f.remove(*[pods[n] for n in out])
    return out


def image(a, tag: str, gen: int):
    b = a.copy().generation(gen)
    b.template["spec"]["containers"] = [{"name": "c", "image": f"busybox:{tag}"}]
    b.meta["annotations"] = {"deprecated.daemonset.template.generation": str(gen)}
    return b


def roll(f: Fake, pods: dict, rounds: int = 20) -> list[tuple]:
    """Sync, delete, create until nothing happens; the trace of (deleted, created-on)."""
    trace = []
    for _ in range(rounds):
        w = f.sync()
        if not w.pod_creates and not w.pod_deletes:
            return trace
        deleted = gone(f, w, pods)
        made = up(f, w)
        pods.update({p["metadata"]["name"]: p for p in made})
        trace.append((deleted, [target(p) for p in made]))
    raise AssertionError("did not settle")


def started(strategy: dict, n: int = 4, history: int = 10):
    a = agent_ds(strategy, history)
    f = Fake(DaemonSetController(), now=1.0).add(*[node(f"n{i}") for i in range(n)], a)
    pods: dict = {}
    roll(f, pods)
    return f, a, pods


def test_rolling_update_with_max_unavailable_2_exact_trace():
    f, a, pods = started(rolling(2, 0), n=5)
    b = image(a, "2", 2)
    f.modify(b)
    f.now = 2.0
    trace = roll(f, pods)
    # deletes go first (the per-node pass creates on the emptied nodes at the next sync)
    assert trace == [
        (["agent-0", "agent-1"], []),
        ([], ["n0", "n1"]),
        (["agent-2", "agent-3"], []),
        ([], ["n2", "n3"]),
        (["agent-4"], []),
        ([], ["n4"]),
    ]
    new_hash = template_hash(b.template)
    live = [p for p in pods.values() if p["metadata"]["name"] >= "agent-5"]
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in live} == {new_hash}
    assert {p["metadata"]["labels"]["pod-template-generation"] for p in live} == {"2"}
    (*_, status) = f.sync().daemonset_status or [(None, None, None, None)]
    revs = f.ctrl.revisions("default", "agent")
    assert [(r["metadata"]["name"], r["revision"]) for r in revs] == [
        (f"agent-{template_hash(a.template)}", 1),
        (f"agent-{new_hash}", 2),
    ]
    assert revs[0]["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"


def test_rolling_update_with_surge_exact_trace():
    f, a, pods = started(rolling(0, 1), n=3)
    f.modify(image(a, "2", 2))
    f.now = 2.0
    assert roll(f, pods) == [
        ([], ["n0"]),  # surge on n0, the old pod stays until the new one is available
        (["agent-0"], ["n1"]),
        (["agent-1"], ["n2"]),
        (["agent-2"], []),
    ]


def test_on_delete_replaces_only_pods_that_go():
    f, a, pods = started({"type": "OnDelete"}, n=3)
    b = image(a, "2", 2)
    f.modify(b)
    assert roll(f, pods) == []
    f.remove(pods["agent-1"])
    assert roll(f, pods) == [([], ["n1"])]
    assert pods["agent-3"]["metadata"]["labels"]["controller-revision-hash"] == template_hash(b.template)
    w = f.sync()
    assert not w.pod_deletes and not w.pod_creates


def test_status_counts_updated_pods_during_a_rollout():
    f, a, pods = started(rolling(1, 0), n=3)
    f.modify(image(a, "2", 2))
    w = f.sync()
    gone(f, w, pods)
    w = f.sync()
    up(f, w)
    (*_, status) = f.sync().daemonset_status[-1]
    assert (status["updatedNumberScheduled"], status["numberAvailable"], status["observedGeneration"]) == (1, 3, 2)


def test_history_beyond_the_limit_is_pruned_but_not_revisions_pods_run():
    f, a, pods = started({"type": "OnDelete"}, n=2, history=0)
    f.modify(image(a, "2", 2))
    w = f.sync()
    assert not w.deletes  # the first revision's pods still run
    f.add(*[{**r, "metadata": {**r["metadata"], "uid": "uid-r2"}} for r in w.creates])
    f.remove(pods["agent-0"])
    w = f.sync()
    assert not w.deletes  # agent-1 still runs it
    up(f, w)
    f.remove(pods["agent-1"])
    w = f.sync()
    first = f"agent-{template_hash(a.template)}"
    assert w.deletes == [("ControllerRevision", "default", first, "uid-" + first, "Background")]
    assert not f.sync().deletes  # its delete is on its way


def test_refused_revision_create_backs_off_and_is_sent_again():
    a = agent_ds(rolling())
    f = Fake(DaemonSetController()).add(node("n0"), a)
    w = f.sync()
    (revision,) = w.creates
    f.ctrl.on_object_create_failed(revision, Conflict("taken"), f.now)
    w = f.sync()
    assert [r["metadata"]["name"] for r in w.creates] == [revision["metadata"]["name"]]
