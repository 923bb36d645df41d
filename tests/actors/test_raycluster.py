"""Placement helpers on the shared one-node local Ray: what a scenario asking for more Ray
nodes than there are gets, and killRayNode without a Ray cluster kubemu started."""

import pytest

from actors import raycluster
from actors.harness.cli import main


@pytest.mark.ray
def test_too_few_ray_nodes_is_one_line_and_nothing_starts(ray_local, capsys, tmp_path):
    with pytest.raises(raycluster.RayClusterError) as err:
        raycluster.init_ray(3)
    assert str(err.value) == (
        "spec.cluster.rayNodes: 3 Ray nodes asked for, the Ray cluster has 1 "
        "(run without RAY_ADDRESS in a fresh process to start a local one)"
    )
    doc = tmp_path / "s.yaml"
    doc.write_text(
        "apiVersion: kubemu.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\n"
        "spec: {cluster: {rayNodes: 2, nodes: [{count: 1, capacity: {cpu: '1', memory: 1Gi}}]}}\n"
    )
    assert main(["run", str(doc)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "kubemu: spec.cluster.rayNodes: 2 Ray nodes asked for, the Ray cluster has 1 "
        "(run without RAY_ADDRESS in a fresh process to start a local one)"
    )


@pytest.mark.ray
def test_kill_ray_node_needs_a_cluster_kubemu_started(ray_local):
    assert not raycluster.can_kill_ray_nodes()
    with pytest.raises(raycluster.RayClusterError, match="^rayNode: killRayNode needs the local Ray cluster"):
        raycluster.kill_ray_node(1)
    ids = raycluster.node_ids()
    assert len(ids) == 1 and raycluster.pinned(ids[0])["scheduling_strategy"].node_id == ids[0]
