"""Pod addresses: each node's pod CIDR (upstream's node IPAM) and each pod's IP in it
(upstream's host-local IPAM behind the CNI plugin).

Owns two rules. **The node's block**: the cluster CIDR is ``10.244.0.0/16`` with a ``/24``
per node (kubeadm's and flannel's defaults), the block of the node's index, as upstream's
range allocator hands out the next block after the last one given (a deleted node's block
is not handed out again). Past 256 nodes the cluster CIDR grows by itself, one prefix bit
at a time, to the network enclosing the one before (10.244.0.0/15, /14, 10.240.0.0/13, ...
10.128.0.0/9: 32,768 nodes), so every block already given stays inside it; past that, the
blocks come from the reserved 240.0.0.0/4 (another 1,048,576 nodes; GKE uses that range
for pods too). None of them meets the node addresses (10.0.0.0/9) or the default service
range (10.96.0.0/12). The kubelet sets ``spec.podCIDR``/``podCIDRs`` when it registers its
Node (``node.py``), where upstream's nodeipam controller patches them in a moment later.

**The pod's address**: ``PodIPs``, one per kubelet, hands out the lowest free address of
the block (``.2`` to ``.254``: ``.1`` is the node's bridge), takes it back when the pod's
sandbox goes (the pod finished, was evicted or deleted), and holds the addresses of pods a
restarted kubelet adopts; so two live pods never share an address. Its state is one
integer used as a bitmap (a few dozen bytes per node, nothing per pod). A node running
more than 253 pods at once gives the rest no address (upstream's sandbox creation fails).
The kubelet (``kubelet.py``, ``reconcile.py``) calls it.
"""

from __future__ import annotations

import ipaddress

CLUSTER_CIDR = "10.244.0.0/16"
NODE_MASK = 24
_BASE = int(ipaddress.IPv4Address("10.244.0.0"))
_PER_STEP = 1 << (NODE_MASK - 16)  # 256 blocks in the first /16
_CHAIN_STEPS = 7  # /16 grown to /9
_CHAIN_BLOCKS = _PER_STEP << _CHAIN_STEPS  # 32,768
_OVERFLOW = int(ipaddress.IPv4Address("240.0.0.0"))
_OVERFLOW_BLOCKS = 1 << (28 - (32 - NODE_MASK))  # 240.0.0.0/4 in /24s
FIRST_HOST, LAST_HOST = 2, 254  # .1 is the node's bridge (the pods' gateway)


def block_base(index: int) -> int:
    """The first address of node ``index``'s block, as an integer."""
    if index < _PER_STEP:
        return _BASE + (index << 8)
    if index >= _CHAIN_BLOCKS:
        return _OVERFLOW + (((index - _CHAIN_BLOCKS) % _OVERFLOW_BLOCKS) << 8)
    step = index.bit_length() - 8  # the cluster CIDR grew to /(16 - step) for this index
    before = 16 - step + 1  # the prefix of the network it grew from
    grown_from = _BASE & ~((1 << (32 - before)) - 1)
    sibling = grown_from ^ (1 << (32 - before))  # the half the growth added
    return sibling + ((index - (_PER_STEP << (step - 1))) << 8)


def node_pod_cidr(index: int) -> str:
    """Node ``index``'s ``spec.podCIDR``."""
    return f"{ipaddress.IPv4Address(block_base(index))}/{NODE_MASK}"


def cluster_cidr(nodes: int) -> str:
    """The cluster CIDR once ``nodes`` nodes hold blocks: the chain network enclosing them
    (past 32,768 nodes, 10.128.0.0/9 and 240.0.0.0/4)."""
    step = max(0, (max(1, nodes) - 1).bit_length() - 8)
    if step > _CHAIN_STEPS:
        return "10.128.0.0/9,240.0.0.0/4"
    prefix = 16 - step
    return f"{ipaddress.IPv4Address(_BASE & ~((1 << (32 - prefix)) - 1))}/{prefix}"


class PodIPs:
    """One node's pod addresses (see the module): lowest free first, released, held."""

    __slots__ = ("_prefix", "_used")

    def __init__(self, index: int) -> None:
        base = ipaddress.IPv4Address(block_base(index))
        self._prefix = str(base).rsplit(".", 1)[0] + "."  # "10.244.3."
        self._used = 0  # bit i: host part i is in use

    def take(self) -> str:
        """The lowest free address, now in use; "" when the block is full."""
        free = ~self._used & ~((1 << FIRST_HOST) - 1)
        host = (free & -free).bit_length() - 1
        if host > LAST_HOST:
            return ""
        self._used |= 1 << host
        return self._prefix + str(host)

    def _host(self, ip: str) -> int | None:
        if not ip.startswith(self._prefix):
            return None  # the node's own address (hostNetwork), or none
        tail = ip[len(self._prefix) :]
        host = int(tail) if tail.isdigit() else -1
        return host if FIRST_HOST <= host <= LAST_HOST else None

    def release(self, ip: str) -> None:
        """The pod holding ``ip`` is gone: the address is free again."""
        host = self._host(ip)
        if host is not None:
            self._used &= ~(1 << host)

    def hold(self, ip: str) -> bool:
        """An adopted pod keeps ``ip``; False when it is not this block's or already held."""
        host = self._host(ip)
        if host is None or self._used >> host & 1:
            return False
        self._used |= 1 << host
        return True

    def in_use(self) -> int:
        return bin(self._used).count("1")
