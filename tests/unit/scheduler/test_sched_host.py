"""The scheduler's preemption host: the resource shortcut agrees with re-running the filters."""

from __future__ import annotations

import pytest
from sched_builders import make_node, make_pod, make_scheduler

from cluster.scheduler.accel import Accelerate


def setup(nominated=(), accelerate: Accelerate | None = None):
    pods = [make_pod(f"v{i}").prio(10).req(cpu="1", memory="1Gi").node("n1") for i in range(3)]
    nodes = [make_node("n1", cpu="4", memory="4Gi", pods="4"), make_node("n2", cpu="1")]
    s = make_scheduler(nodes, pods, accelerate=accelerate or Accelerate())
    for p in nominated:
        s.queue.nominator.add(s.cache.new_pod_info(p))
    s.host.set_cycle(s.frameworks["default-scheduler"], 0.0)
    return s


def both_paths(nominated, pod, removed_names):
    """The verdict with resource arithmetic on, and with it off (the plugins re-run)."""
    verdicts = []
    for accelerate in (Accelerate(), Accelerate(resource_arithmetic=False)):
        s = setup(nominated, accelerate)
        pinfo = s.cache.new_pod_info(pod)
        removed = [s.cache.pod_info(f"uid-default-{n}") for n in removed_names]
        assert s.host.resources_decide(pinfo)
        verdicts.append(s.host.filter_on_node(None, pinfo, s.cache.snapshot().index_of("n1"), removed))
    return verdicts


@pytest.mark.parametrize(
    "req,removed,nominated,ok,reasons",
    [
        (dict(cpu="1"), [], [], True, ()),
        (dict(cpu="2"), [], [], False, ("Insufficient cpu",)),
        (dict(cpu="2"), ["v0"], [], True, ()),
        (dict(cpu="2", memory="3Gi"), ["v0"], [], False, ("Insufficient memory",)),
        (dict(cpu="2", memory="3Gi"), ["v0", "v1"], [], True, ()),
        # A nominated pod of higher priority on n1 takes room; one of lower priority does not.
        (dict(cpu="2"), ["v0"], [make_pod("nom").prio(200).req(cpu="1").nominated("n1")], False, ("Insufficient cpu",)),
        (dict(cpu="2"), ["v0"], [make_pod("nom").prio(50).req(cpu="1").nominated("n1")], True, ()),
        # pods: 4 allowed, 3 placed + a nominated one = full.
        (dict(cpu="100m"), [], [make_pod("nom").prio(200).nominated("n1")], False, ("Too many pods",)),
    ],
)
def test_resource_shortcut_matches_the_filters(req, removed, nominated, ok, reasons):
    fast, slow = both_paths(nominated, make_pod("p").prio(100).req(**req), removed)
    assert fast.is_success() == slow.is_success() == ok
    assert sorted(fast.reasons) == sorted(slow.reasons) == sorted(reasons)


def test_cache_is_restored_after_a_what_if():
    s = setup()
    pinfo = s.cache.new_pod_info(
        make_pod("p").prio(100).pod_anti_affinity("kubernetes.io/hostname", {"matchLabels": {"a": "b"}})
    )
    assert not s.host.resources_decide(pinfo)  # inter-pod terms: the general path
    before = s.cache.snapshot().requested.copy()
    s.host.filter_on_node(None, pinfo, 0, [s.cache.pod_info("uid-default-v0")])
    assert (s.cache.snapshot().requested == before).all()
    assert "uid-default-v0" in s.cache.node_info("n1").pods


def test_a_what_if_keeps_the_pods_order_and_attach_order():
    """Victims tied on priority and start are ordered by attach order: a what-if that takes
    pods off and puts them back must not reorder them (both dry runs then agree)."""
    s = setup()
    ni, table = s.cache.node_info("n1"), s.cache.table
    order = list(ni.pods)
    seqs = [int(table.seq[slot]) for slot in [table.slot_of(uid) for uid in order]]
    removed = [s.cache.pod_info(uid) for uid in order[:2]]
    with s.cache.without(removed):
        assert list(ni.pods) == order[2:]
    assert list(ni.pods) == order
    assert [int(table.seq[slot]) for slot in [table.slot_of(uid) for uid in order]] == seqs


def test_the_reference_what_if_judges_the_one_node_with_its_own_nominated_pods():
    """As upstream's SelectVictimsOnNode: a pod nominated to another node does not count,
    one nominated to this node does, and only this node is filtered."""
    away = make_pod("away").prio(200).req(cpu="4").nominated("n2")
    here = make_pod("here").prio(200).req(cpu="1").nominated("n1")
    pod = make_pod("p").prio(100).req(cpu="2")
    for nominated, ok in (([away], True), ([away, here], False)):
        s = setup(nominated, Accelerate.all(False))
        judged = []
        real = s.frameworks["default-scheduler"].run_filter

        def spy(state, p, snap, allowed=None, rows=None, real=real, judged=judged):
            judged.append(None if rows is None else list(rows))
            return real(state, p, snap, allowed, rows)

        s.frameworks["default-scheduler"].run_filter = spy
        status = s.host.filter_on_node(None, s.cache.new_pod_info(pod), 0, [s.cache.pod_info("uid-default-v0")])
        assert status.is_success() == ok, status
        assert judged and all(rows == [0] for rows in judged)
