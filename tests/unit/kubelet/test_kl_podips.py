"""Pod addresses: each node's pod CIDR (a /24 of 10.244.0.0/16, the cluster CIDR growing past
256 nodes), each pod the lowest free address of its node's block, given back when the pod
finishes or goes, held by adopted pods; hostNetwork pods get the node's address."""

from __future__ import annotations

import ipaddress

import pytest
from conftest import terminating

from cluster.kubelet.podips import PodIPs, block_base, cluster_cidr, node_pod_cidr


@pytest.mark.parametrize(
    "index,cidr,grown",
    [
        (0, "10.244.0.0/24", "10.244.0.0/16"),
        (255, "10.244.255.0/24", "10.244.0.0/16"),
        (256, "10.245.0.0/24", "10.244.0.0/15"),
        (512, "10.246.0.0/24", "10.244.0.0/14"),
        (1024, "10.240.0.0/24", "10.240.0.0/13"),
        (2048, "10.248.0.0/24", "10.240.0.0/12"),
        (4096, "10.224.0.0/24", "10.224.0.0/11"),
        (8192, "10.192.0.0/24", "10.192.0.0/10"),
        (16384, "10.128.0.0/24", "10.128.0.0/9"),
        (32767, "10.191.255.0/24", "10.128.0.0/9"),
        (32768, "240.0.0.0/24", "10.128.0.0/9,240.0.0.0/4"),
        (99999, "241.6.159.0/24", "10.128.0.0/9,240.0.0.0/4"),
    ],
)
def test_node_blocks_and_the_growing_cluster_cidr(index, cidr, grown):
    assert node_pod_cidr(index) == cidr
    assert cluster_cidr(index + 1) == grown


def test_the_first_32768_blocks_are_distinct_and_inside_the_grown_cidr():
    bases = {block_base(i) for i in range(32768)}
    assert len(bases) == 32768
    net = ipaddress.ip_network("10.128.0.0/9")
    assert all(ipaddress.ip_address(b) in net for b in bases)
    for reserved in ("10.0.0.0/9", "10.96.0.0/12"):  # node addresses, the service range
        assert not net.overlaps(ipaddress.ip_network(reserved))


def test_lowest_free_first_reused_after_release_held_on_adoption():
    ips = PodIPs(3)
    assert [ips.take() for _ in range(3)] == ["10.244.3.2", "10.244.3.3", "10.244.3.4"]
    ips.release("10.244.3.3")
    assert ips.take() == "10.244.3.3"
    assert ips.hold("10.244.3.9") and not ips.hold("10.244.3.9")  # a second holder is refused
    assert not ips.hold("10.0.0.4") and not ips.hold("10.244.4.7") and not ips.hold("")  # not this block's
    ips.release("10.0.0.4")  # a hostNetwork pod's (the node's) address: nothing to give back
    assert ips.take() == "10.244.3.5" and ips.in_use() == 5


def test_a_full_block_gives_no_address_until_one_is_released():
    ips = PodIPs(0)
    got = [ips.take() for _ in range(253)]
    assert got[0] == "10.244.0.2" and got[-1] == "10.244.0.254" and len(set(got)) == 253
    assert ips.take() == ""
    ips.release("10.244.0.100")
    assert ips.take() == "10.244.0.100"


def test_node_registers_with_its_pod_cidr(driver, config):
    d = driver(config("a"), config("b"))
    specs = {n["metadata"]["name"]: n["spec"] for n in d.node_creates}
    assert specs["a"]["podCIDR"] == "10.244.0.0/24" and specs["a"]["podCIDRs"] == ["10.244.0.0/24"]
    assert specs["b"]["podCIDR"] == "10.244.1.0/24"


def test_pods_get_lowest_free_addresses_reused_once_finished_or_deleted(driver, pod):
    d = driver()
    first = pod("a")
    d.send("ADDED", first)
    d.send("ADDED", pod("done", annotations={"run-seconds": 5}, restart_policy="Never"))
    d.send("ADDED", pod("c"))
    assert [d.statuses[n]["podIP"] for n in ("a", "done", "c")] == ["10.244.0.2", "10.244.0.3", "10.244.0.4"]
    d.run_until(6)
    assert d.statuses["done"]["phase"] == "Succeeded"
    assert d.statuses["done"]["podIP"] == "10.244.0.3"  # the status keeps it; the sandbox gave it back
    d.send("ADDED", pod("d"))
    assert d.statuses["d"]["podIP"] == "10.244.0.3"
    d.send("MODIFIED", terminating(first, 0, at=d.now))
    d.send("DELETED", first)
    d.send("ADDED", pod("e"))
    assert d.statuses["e"]["podIP"] == "10.244.0.2"
    live = [d.statuses[n]["podIP"] for n in ("c", "d", "e")]
    assert len(set(live)) == 3


def test_host_network_pods_get_the_node_address_and_take_none(driver, pod):
    d = driver()
    hp = pod("host")
    hp["spec"]["hostNetwork"] = True
    d.send("ADDED", hp)
    d.send("ADDED", pod("b"))
    st = d.statuses["host"]
    assert st["podIP"] == st["hostIP"] == "10.0.0.1" and st["podIPs"] == [{"ip": "10.0.0.1"}]
    assert d.statuses["b"]["podIP"] == "10.244.0.2"
