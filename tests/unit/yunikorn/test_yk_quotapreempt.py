"""Quota preemption (``cluster/yunikorn/quotapreempt.py``): V19's victim choice, the amount
to free and its cap, the split of a parent's amount down to its leaves, the order of
victims, and ``QuotaWatch``'s start times (upstream's setPreemptionTime cases)."""

from __future__ import annotations

import pytest
from yk_builders import Sim, node_cap, res

from cluster.yunikorn.quotapreempt import (
    QuotaWatch,
    _Seen,
    amount_to_free,
    quota_order,
    quota_victims,
    split,
)

MIN = 60.0
NOW = 10 * 3600 + 30 * MIN  # half past ten: every age below lands in the same hour
QUOTA_ON = "quotapreemptionenabled: true"


def leaf_sim(guaranteed: str = "", max_cpu: int = 10) -> Sim:
    g = f"guaranteed: {{vcore: {guaranteed}}}, " if guaranteed else ""
    return Sim(
        f"- {{name: leaf, resources: {{{g}max: {{vcore: {max_cpu}}}}}, properties: {{quota.preemption.delay: 30s}}}}",
        {"node-1": node_cap(100)},
        preemption=QUOTA_ON,
    )


def place(s: Sim, queue: str, pods: list[tuple[str, float, float]], app: str = "app-q") -> None:
    """Victims as V19 has them: one application, priority 10, opted in, no originator."""
    for name, cpu, age in pods:
        s.run(name, queue, "node-1", res(cpu), app=app, priority=10, created=NOW - age * MIN, originator=False)


# ---- V19 ----------------------------------------------------------------------------------------

V19 = {
    "no victims": ("", [], None, [], None),
    "suitable": ("", [("ask1", 10, 5), ("ask2", 8, 4)], 8, ["ask2"], 8),
    "none suitable": ("", [("ask6", 11, 3)], 1, [], None),
    "skip oversized": ("", [("ask21", 9, 4), ("ask3", 11, 3)], 10, ["ask21"], 9),
    "guarantee unset": ("", [("ask4", 5, 3), ("ask41", 6, 2), ("ask42", 9, 1)], 10, ["ask4"], 5),
    "guarantee below max": ("5", [("ask4", 5, 3), ("ask41", 6, 2), ("ask42", 9, 1)], 10, ["ask4"], 5),
    "best effort, g = max": (
        "10",
        [("ask5", 5, 4), ("ask51", 6, 3), ("ask52", 3, 2), ("ask53", 4, 1)],
        8,
        ["ask52", "ask53"],
        7,
    ),
}


@pytest.mark.parametrize(("g", "running", "amount", "victims", "claimed"), V19.values(), ids=V19.keys())
def test_v19_victims(g, running, amount, victims, claimed):
    s = leaf_sim(g)
    place(s, "root.leaf", running)
    r = quota_victims(s.tree, s.tree.by_path["root.leaf"])
    assert [v.name for v in r.victims] == victims
    assert r.amount == ({} if amount is None else {"vcore": amount * 1000})
    assert r.claimed == ({} if claimed is None else {"vcore": claimed * 1000, "pods": len(victims)})
    assert r.candidates == len(running)


def test_v19_summaries():
    s = leaf_sim()
    place(s, "root.leaf", [("ask1", 10, 5), ("ask2", 8, 4)])
    assert quota_victims(s.tree, s.tree.by_path["root.leaf"]).summary() == (
        "Quota Preemption results summary: preemptable resources: map[vcore:8000], claimed resources: "
        "map[pods:1 vcore:8000], selected victims: 2, preempted victims: 1"
    )
    s = leaf_sim()
    place(s, "root.leaf", [("ask6", 11, 3)])
    assert quota_victims(s.tree, s.tree.by_path["root.leaf"]).summary() == (
        "Quota Preemption results summary: preemptable resources: map[vcore:1000], claimed resources: "
        "nil resource, selected victims: 1, preempted victims: 0"
    )


@pytest.mark.parametrize(
    "before", ["max: {vcore: 20}", "", "guaranteed: {vcore: 10}"], ids=["lowered", "newly set", "g only"]
)
def test_v19_through_the_watch(before):
    # The max is lowered (or newly set: the reference's last V19 row) by a reload; the start
    # time comes delay later and the check then takes ask52 and ask53.
    s = Sim(
        f"- {{name: leaf, resources: {{{before}}}, properties: {{quota.preemption.delay: 30s}}}}",
        {"node-1": node_cap(100)},
        preemption=QUOTA_ON,
    )
    place(s, "root.leaf", [("ask5", 5, 4), ("ask51", 6, 3), ("ask52", 3, 2), ("ask53", 4, 1)])
    watch = QuotaWatch()
    watch.on_change(s.tree, NOW)
    assert watch.due(NOW) is None
    leaf = s.tree.by_path["root.leaf"]
    leaf.max, leaf.guaranteed = {"vcore": 10000}, {"vcore": 10000}
    watch.on_change(s.tree, NOW + 5)
    assert watch.due(NOW + 5) == NOW + 35
    assert watch.run(s.tree, NOW + 34, True) == []
    (r,) = watch.run(s.tree, NOW + 35, True)
    assert [v.name for v in r.victims] == ["ask52", "ask53"] and r.claimed["vcore"] == 7000
    assert watch.due(NOW + 35) is None  # fired once; the victims' end brings it within its max


# ---- the amount ---------------------------------------------------------------------------------


def amount_sim(parent_g: int | None, leaf_max: dict[str, int], used: dict[str, int]) -> int | dict:
    s = Sim("- name: parent\n  queues: [{name: leaf}]", {"node-1": node_cap(1)})
    parent, leaf = s.tree.by_path["root.parent"], s.tree.by_path["root.parent.leaf"]
    parent.guaranteed = {} if parent_g is None else {"memory": parent_g}
    leaf.max = dict(leaf_max)
    for q in leaf.ancestors():
        q.allocated = dict(used)
    return amount_to_free(leaf)


@pytest.mark.parametrize(
    ("parent_g", "leaf_max", "used", "amount"),
    [  # upstream's TestQuotaChangeGetPreemptableResource
        (None, {}, {"memory": 1000}, {}),
        (None, {"memory": 1000}, {}, {}),
        (None, {"memory": 1000}, {"memory": 500}, {}),
        (None, {"memory": 1000}, {"memory": 1500}, {"memory": 500}),
        (None, {"memory": 1000, "vcore": 10, "gpu": 10}, {"memory": 1500, "vcore": 10, "gpu": 9}, {"memory": 500}),
        (None, {"memory": 1000}, {"vcore": 150}, {}),
        (1200, {"memory": 1000}, {"memory": 1500}, {"memory": 300}),
        (1200, {"memory": 1000}, {"memory": 1500, "vcore": 10, "gpu": 9}, {"memory": 300}),
        (900, {"memory": 1000}, {"memory": 1500}, {"memory": 500}),
        (900, {"memory": 1000}, {"memory": 1500, "vcore": 10, "gpu": 9}, {"memory": 500}),
    ],
)
def test_the_amount_and_its_guarantee_cap(parent_g, leaf_max, used, amount):
    assert amount_sim(parent_g, leaf_max, used) == amount


def test_the_cap_is_the_largest_overshoot_on_the_path():
    # Upstream takes the per-type minimum of guaranteed − allocated over the path: the most
    # negative entry, i.e. the queue or ancestor furthest above its guarantee.
    s = Sim("- name: parent\n  queues: [{name: leaf}]", {"node-1": node_cap(1)})
    parent, leaf = s.tree.by_path["root.parent"], s.tree.by_path["root.parent.leaf"]
    parent.guaranteed, leaf.guaranteed, leaf.max = {"memory": 900}, {"memory": 1200}, {"memory": 1000}
    for q in leaf.ancestors():
        q.allocated = {"memory": 1500}
    assert amount_to_free(leaf) == {"memory": 500}  # caps 300 (leaf) and 600 (parent): 600 applies


def test_preempting_pods_no_longer_count_as_used():
    s = leaf_sim()
    place(s, "root.leaf", [("a", 8, 3), ("b", 8, 2)])
    s.victim("b")
    assert amount_to_free(s.tree.by_path["root.leaf"]) == {}


# ---- a parent's amount, split -----------------------------------------------------------------

HIERARCHY = """
- name: parent
  queues:
    - name: leaf1
      queues:
        - name: leaf11
          queues: [{name: leaf111}]
        - {name: leaf12}
    - name: leaf2
      queues:
        - name: leaf21
          queues: [{name: leaf211}]
        - {name: leaf22}
    - {name: leaf3}
    - {name: leaf4}
"""
GUARANTEED_SIDE = ("leaf1", "leaf1.leaf11", "leaf1.leaf12", "leaf1.leaf11.leaf111", "leaf4")


def hierarchy(g: dict[str, int] | None) -> Sim:
    s = Sim(HIERARCHY, {"node-1": node_cap(1000)})
    for path in GUARANTEED_SIDE if g else ():
        s.tree.by_path[f"root.parent.{path}"].guaranteed = dict(g)  # type: ignore[arg-type]
    return s


@pytest.mark.parametrize(
    ("g", "extra", "amount", "expected"),
    [  # upstream's TestQuotaChangeGetChildQueuesPreemptableResource(WithDifferentResTypes)
        ({"first": 10}, {}, {"first": 100}, (22, 11, 41, 24)),
        ({"first": 10}, {}, {"first": 200}, (44, 22, 83, 49)),
        ({"first": 10}, {}, {"first": 50}, (10, 5, 20, 12)),
        ({"first": 10, "third": 10}, {"second": True}, {"first": 100, "fourth": 100}, (22, 11, 41, 24)),
        ({"first": 10, "third": 10}, {"second": True}, {"first": 200, "fourth": 100}, (44, 22, 83, 49)),
        ({"first": 10, "third": 10}, {"second": True}, {"first": 50, "fourth": 100}, (10, 5, 20, 12)),
    ],
)
def test_a_parents_amount_is_split_by_usage_above_guarantee(g, extra, amount, expected):
    s = hierarchy(g)
    usage = {
        "leaf1": 50,
        "leaf2": 80,
        "leaf4": 10,
        "leaf1.leaf11": 30,
        "leaf1.leaf12": 20,
        "leaf2.leaf21": 50,
        "leaf2.leaf22": 30,
        "leaf1.leaf11.leaf111": 30,
        "leaf2.leaf21.leaf211": 50,
    }
    for path, v in usage.items():
        alloc = {"first": v}
        if extra and (path.startswith("leaf1") or path == "leaf4"):
            alloc["second"] = v
        s.tree.by_path[f"root.parent.{path}"].allocated = alloc
    out: dict = {}
    split(s.tree.by_path["root.parent"], amount, out)
    leaves = ("leaf1.leaf11.leaf111", "leaf1.leaf12", "leaf2.leaf21.leaf211", "leaf2.leaf22")
    assert sorted(out) == sorted(f"root.parent.{p}" for p in leaves)  # leaf3 unused, leaf4 at its guarantee
    assert tuple(out[f"root.parent.{p}"][1] for p in leaves) == tuple({"first": v} for v in expected)


PARENT_VICTIMS = {  # leaf: [(name, size, minutes ago)]
    "leaf1.leaf11.leaf111": [("ask1", 9, 5), ("ask2", 10, 4), ("ask3", 11, 4)],
    "leaf1.leaf12": [("ask4", 9, 5), ("ask5", 11, 4)],
    "leaf2.leaf21.leaf211": [("ask6", 8, 5), ("ask7", 9, 4), ("ask8", 10, 5), ("ask9", 11, 4), ("ask10", 12, 4)],
    "leaf2.leaf22": [("ask11", 9, 5), ("ask12", 10, 4), ("ask13", 11, 4)],
    "leaf4": [("ask14", 10, 5)],
}
EVEN_VICTIMS = {
    leaf: [(f"{leaf}-13", 13, 4), (f"{leaf}-12", 12, 4)]
    for leaf in ("leaf1.leaf11.leaf111", "leaf1.leaf12", "leaf2.leaf21.leaf211", "leaf2.leaf22", "leaf4")
}


@pytest.mark.parametrize(
    ("g", "victims", "new_max", "taken", "claimed", "candidates"),
    [  # upstream's TestQuotaChangeTryPreemptionForParentQueue
        (
            {"vcore": 10},
            PARENT_VICTIMS,
            10,
            ["ask1", "ask2", "ask4", "ask6", "ask7", "ask8", "ask9", "ask10", "ask11", "ask12", "ask13"],
            108,
            13,
        ),
        (None, PARENT_VICTIMS, 10, ["ask1", "ask2", "ask4", "ask6", "ask7", "ask8", "ask9", "ask11", "ask12"], 85, 14),
        (None, EVEN_VICTIMS, 20, [f"{leaf}-12" for leaf in EVEN_VICTIMS], 60, 10),
        (None, EVEN_VICTIMS, 5, [f"{leaf}-12" for leaf in EVEN_VICTIMS], 60, 10),
    ],
    ids=["guarantee on one side", "no guarantee below", "guarantee on the parent only", "same, lower max"],
)
def test_quota_preemption_of_a_parent(g, victims, new_max, taken, claimed, candidates):
    s = hierarchy(g)
    for leaf, pods in victims.items():
        place(s, f"root.parent.{leaf}", [(n, size / 1000, age) for n, size, age in pods], app=leaf)
    parent = s.tree.by_path["root.parent"]
    parent.max = parent.guaranteed = {"vcore": new_max}
    r = quota_victims(s.tree, parent)
    assert sorted(v.name for v in r.victims) == sorted(taken)
    assert (r.claimed["vcore"], r.candidates) == (claimed, candidates)


# ---- the order ----------------------------------------------------------------------------------


def test_the_quota_order():
    s = leaf_sim()
    q = s.tree.by_path["root.leaf"]
    mk = s.run
    pods = [
        mk("orig", "root.leaf", "node-1", res(1), app="o", created=NOW - 5 * MIN),  # originator: first (quirk)
        mk("out", "root.leaf", "node-1", res(1), app="p", created=NOW, opted_out=True, originator=False),
        mk("low", "root.leaf", "node-1", res(4), app="p", created=NOW - 90 * MIN, priority=1, originator=False),
        mk("old-small", "root.leaf", "node-1", res(1), app="p", created=NOW - 2 * MIN, priority=5, originator=False),
        mk("new-big", "root.leaf", "node-1", res(3), app="p", created=NOW - 1 * MIN, priority=5, originator=False),
        mk("last-hour", "root.leaf", "node-1", res(1), app="p", created=NOW - 60 * MIN, priority=5, originator=False),
        mk("mem", "root.leaf", "node-1", res(1, mem=5), app="p", created=NOW, priority=5, originator=False),
    ]
    order = quota_order(pods, {"vcore": 5000}, q.max)
    # opted out (2^34) > originator (2^33); then the share of the pod's types to free:
    # {vcore, pods} 50 beats {vcore, memory, pods} 33; then priority, the hour, the share
    assert [a.name for a in order] == ["out", "orig", "low", "old-small", "new-big", "last-hour", "mem"]


# ---- the start times ----------------------------------------------------------------------------


def watch_case(old_max, new_max, usage, old_delay, delay, had_start) -> tuple[float | None, float | None]:
    s = Sim(
        "- {name: q, resources: {max: {test: 100}}, properties: {quota.preemption.delay: 10s}}",
        {"node-1": node_cap(1)},
        preemption=QUOTA_ON,
    )
    q = s.tree.by_path["root.q"]
    q.max, q.quota_preemption_delay, q.allocated = dict(new_max or {}), delay, dict(usage or {})
    w = QuotaWatch()
    w.enabled = True
    w.seen[q.path] = _Seen(dict(old_max or {}), old_delay, dict(q.allocated))
    before = 500.0 if had_start else None
    if had_start:
        w.start[q.path] = 500.0
    w.on_change(s.tree, 1000.0)
    return before, w.start.get(q.path)


T100, T10, T120 = {"test": 100}, {"test": 10}, {"test": 120}


@pytest.mark.parametrize(
    ("old_max", "new_max", "usage", "old_delay", "delay", "had_start", "after"),
    [  # upstream's TestQueue_setPreemptionTime, with the resulting time
        (None, None, None, 0, 0, False, None),  # empty
        ({}, {"test": 100}, None, 0, 0, False, None),  # no delays
        (T100, None, None, 10, 10, False, None),  # max removed
        (T100, None, None, 0, 10, True, None),  # max removed update
        (T100, T100, {"test": 110}, 0, 10, False, 1010),  # delay added
        (T100, T100, {"test": 110}, 5, 10, True, 505),  # delay change with a start: shifted
        (T100, T100, None, 5, 10, False, None),  # delay change, within the max
        (T100, T10, {"test": 110}, 10, 10, False, 1010),  # max lowered
        (T100, T10, {"test": 5}, 10, 10, True, None),  # lowered but usage below the new max
        (T100, T10, {"test": 110}, 10, 10, True, 500),  # lowered again: the earliest stays
        (T100, T10, {"test": 110}, 5, 10, True, 505),  # lowered again with a delay change
        (T10, T100, {"test": 110}, 5, 5, True, 500),  # raised but still over: kept
        (T10, T100, {"test": 90}, 5, 5, True, None),  # raised above the usage: cleared
        (T10, T100, {"test": 110}, 5, 10, True, 505),  # raised, still over, delay changed: shifted
        (T100, T120, {"test": 110}, 5, 10, True, None),  # raised above the usage, delay changed
        (T100, T10, None, 10, 5, True, None),  # lowered, no usage
    ],
)
def test_a_reconfiguration_sets_keeps_shifts_or_clears_the_start(
    old_max, new_max, usage, old_delay, delay, had_start, after
):
    assert watch_case(old_max, new_max, usage, old_delay, delay, had_start)[1] == after


@pytest.mark.parametrize(
    ("new_max", "usage", "armed", "after_alloc"),
    [  # upstream's TestOverrideAndResetPreemptionTime
        ({"test": 150}, {"test": 80}, None, None),  # within: nothing set, the new pod keeps it within
        ({"test": 50}, {"test": 80}, 1010.0, 1010.0),  # set by the change; a new pod does not move it
        ({"test": 150}, {"test": 180}, None, 1020.0),  # raised but over: a new pod sets it
    ],
)
def test_an_added_allocation_arms_a_queue_over_its_max(new_max, usage, armed, after_alloc):
    s = Sim(
        "- {name: q, resources: {max: {test: 100}}, properties: {quota.preemption.delay: 10s}}",
        {"node-1": node_cap(1)},
        preemption=QUOTA_ON,
    )
    q = s.tree.by_path["root.q"]
    w = QuotaWatch()
    q.allocated = dict(usage)
    w.on_change(s.tree, 990.0)  # first look: the usage arrived as allocations
    w.start.clear()
    q.max = dict(new_max)
    w.on_change(s.tree, 1000.0)
    assert w.start.get(q.path) == armed
    q.allocated = {"test": usage["test"] + 1}
    w.on_change(s.tree, 1010.0)
    assert w.start.get(q.path) == after_alloc


def test_allocations_added_while_switched_off_do_not_arm():
    s = Sim(
        "- {name: q, resources: {max: {vcore: 1}}, properties: {quota.preemption.delay: 10s}}",
        {"node-1": node_cap(4)},
    )
    w = QuotaWatch()
    w.on_change(s.tree, 0)
    s.run("p", "root.q", "node-1", res(2), created=1)
    w.on_change(s.tree, 5)
    assert w.start == {} and w.due(5) is None


def test_a_dynamic_queue_or_a_queue_without_delay_is_never_armed():
    s = Sim("- {name: q, resources: {max: {vcore: 1}}}", {"node-1": node_cap(4)}, preemption=QUOTA_ON)
    w = QuotaWatch()
    w.on_change(s.tree, 0)
    s.run("p", "root.q", "node-1", res(2), created=1)
    dyn = s.tree.create("root.made")
    dyn.max, dyn.properties = {"vcore": 1}, {"quota.preemption.delay": "1s"}
    dyn.read_properties()
    s.run("d", "root.made", "node-1", res(2), created=1)
    w.on_change(s.tree, 5)
    assert w.start == {}


def two_level_watch() -> tuple[Sim, QuotaWatch]:
    s = Sim(
        """
- name: p
  resources: {max: {vcore: 10}}
  properties: {quota.preemption.delay: 10s}
  queues:
    - {name: a, resources: {max: {vcore: 10}}, properties: {quota.preemption.delay: 5s}}
    - {name: b}
""",
        {"node-1": node_cap(100)},
        preemption=QUOTA_ON,
    )
    place(s, "root.p.a", [("a1", 4, 3), ("a2", 4, 2)])
    place(s, "root.p.b", [("b1", 2, 3)], app="app-b")
    w = QuotaWatch()
    w.on_change(s.tree, 0)
    s.tree.by_path["root.p"].max = {"vcore": 5000}
    s.tree.by_path["root.p.a"].max = {"vcore": 6000}
    w.on_change(s.tree, 100)
    return s, w


def test_the_check_from_the_top_skips_the_subtree_of_a_queue_that_fires():
    s, w = two_level_watch()
    assert w.start == {"root.p": 110, "root.p.a": 105}
    assert w.due(100) == 105
    (ra,) = w.run(s.tree, 105, True)  # p's time has not come: the check goes on into a
    assert ra.queue_path == "root.p.a"
    assert w.due(105) == 110
    s2, w2 = two_level_watch()
    (rp,) = w2.run(s2.tree, 110, True)  # both due: p fires, a is not looked at
    assert rp.queue_path == "root.p" and w2.start == {"root.p.a": 105}
    assert w2.due(110) == 111  # one tick later a gets its turn
    (ra2,) = w2.run(s2.tree, 111, True)
    assert ra2.queue_path == "root.p.a"


def test_switched_off_nothing_fires_and_nothing_is_due():
    s, w = two_level_watch()
    assert w.run(s.tree, 200, False) == [] and w.due(200) is None
    assert w.start == {"root.p": 110, "root.p.a": 105}  # kept for when it is switched on


def test_back_within_the_max_clears_the_start():
    s, w = two_level_watch()
    s.gone("a2")
    w.on_change(s.tree, 101)
    assert "root.p.a" not in w.start and "root.p" in w.start


def test_a_queue_that_fires_without_candidates_gives_no_result():
    s = Sim(
        "- {name: q, resources: {max: {vcore: 1}}, properties: {quota.preemption.delay: 10s}}",
        {"node-1": node_cap(4)},
        preemption=QUOTA_ON,
    )
    w = QuotaWatch()
    w.on_change(s.tree, 0)
    s.run("agent", "root.q", "node-1", res(2), ds_node="node-1", created=1)  # DaemonSet pods are no candidates
    w.on_change(s.tree, 1)
    assert w.run(s.tree, 11, True) == [] and w.start == {}
