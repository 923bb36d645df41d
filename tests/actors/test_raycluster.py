"""Placement helpers on the shared one-node local Ray: what a scenario asking for more Ray
nodes than there are gets, and killRayNode without a Ray cluster kubemu started; and the
transport: replies of a few megabytes travel inside the call, not through shared memory."""

import pytest
import ray

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


@ray.remote(num_cpus=0)
class _Replier:
    def reply(self, size: int) -> bytes:
        return b"x" * size

    def shared_kb(self) -> int:
        """Shared-memory pages this process holds (the object store's, once it writes there)."""
        for line in open("/proc/self/status"):
            if line.startswith("RssShmem:"):
                return int(line.split()[1])
        raise AssertionError("no RssShmem in /proc/self/status")


@pytest.mark.ray
def test_replies_of_megabytes_stay_out_of_the_object_store(ray_local):
    # A watch reply of a few thousand pods is megabytes. Through the object store every page
    # the replying process wrote would stay in its RSS (and the reader's); inline, none does.
    replier = _Replier.remote()
    before = ray.get(replier.shared_kb.remote())
    for _ in range(8):
        assert len(ray.get(replier.reply.remote(2 << 20))) == 2 << 20
    assert ray.get(replier.shared_kb.remote()) - before < 1024
    assert raycluster.INLINE_BYTES > 2 << 20
    # Ray adds its spilling settings to the dict it is given: ours must be a copy.
    assert set(raycluster.SYSTEM_CONFIG) == {"max_direct_call_object_size", "task_rpc_inlined_bytes_limit"}


def test_the_cluster_launcher_config_starts_ray_with_the_same_transport():
    import json
    import pathlib
    import re

    import yaml

    doc = yaml.safe_load((pathlib.Path(__file__).parents[2] / "ray_config.yaml").read_text())
    head = " ".join(doc["head_start_ray_commands"])
    found = re.search(r"--system-config='([^']*)'", head)
    assert found is not None, head
    assert json.loads(found.group(1)) == raycluster.SYSTEM_CONFIG
