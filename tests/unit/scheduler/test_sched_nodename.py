"""NodeName: a pod naming its node fits only that node."""

from __future__ import annotations

import pytest
from sched_builders import make_node, make_pod

from cluster.scheduler.cache import Cache
from cluster.scheduler.framework import ClusterEvent, CycleState
from cluster.scheduler.plugins.nodename import NodeName
from cluster.scheduler.status import Code

REASON = "node(s) didn't match the requested node name"

CASES = [
    # (id, spec.nodeName, feasible over nodes a, b, c)
    ("no node name fits everywhere", None, [True, True, True]),
    ("empty node name fits everywhere", "", [True, True, True]),
    ("named node only", "b", [False, True, False]),
    ("unknown node fits nowhere", "zz", [False, False, False]),
]


@pytest.mark.parametrize("node_name,feasible", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_filter(node_name, feasible):
    c = Cache()
    for name in "abc":
        c.add_node(make_node(name))
    pod = make_pod("p")
    if node_name is not None:
        pod["spec"]["nodeName"] = node_name
    plugin, state, pinfo, snap = NodeName(), CycleState(), c.new_pod_info(pod), c.snapshot()
    status, narrowed = plugin.pre_filter(state, pinfo, snap)
    assert narrowed is None  # never narrows: the other nodes must carry this plugin's reason
    assert status.is_skip() == (not node_name)
    result = plugin.filter(state, pinfo, snap)
    assert result.feasible.tolist() == feasible
    rejected = [not f for f in feasible]
    expected = [(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON, rejected)] if any(rejected) else []
    assert [(code, reason, mask.tolist()) for code, reason, mask in result.failures] == expected


def test_bad_args():
    with pytest.raises(ValueError, match="NodeName takes no arguments"):
        NodeName({"nodeName": "a"})


def test_identity():
    p = NodeName()
    assert p.NAME == "NodeName"
    assert p.EVENTS == {ClusterEvent.NODE_ADD}
