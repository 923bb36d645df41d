"""The kubelet's CPU manager: which logical CPUs each container may run on.

Owns the cpuset string format, the node's CPU topology as kubemu models it, the reserved
CPUs, the shared pool (upstream's "default cpuset"), the exclusive assignments of the
static policy and their checkpoint. ``Kubelet`` builds one ``CpuManager`` per node (see
``from_node_config``), calls ``admit`` (or ``allocate``) when it admits a pod, ``release``
when the pod's containers are gone, and ``cpuset_of`` for the report's ``pods[].cpuset``.
``admission.admit`` accepts a manager and runs it in upstream's place in the chain.

Policies (KubeletConfiguration ``cpuManagerPolicy``):

- ``none`` (the default): every container shares every CPU; ``cpuset_of`` is None.
- ``static``: a container gets CPUs of its own exactly when its pod is Guaranteed and its
  own cpu request is a whole number of CPUs. Everything else runs on the shared pool: all
  CPUs minus the exclusive ones. Reserved CPUs stay in the shared pool but are never handed
  out exclusively, as upstream. A cpu reservation of zero is a configuration error, as
  upstream (an exhausted shared pool would leave nowhere for best-effort work to run).

Topology (kubemu's model): one socket, one NUMA node, ``floor(capacity cpu)`` logical CPUs
numbered from 0. With ``threads_per_core=2`` the hyperthread siblings are the adjacent pairs
(2k, 2k+1), so a whole core reads as "4-5" in a cpuset. (Real Intel hosts usually number
siblings k and k+N/2; adjacent pairs keep cpusets readable and change nothing else.)
Choosing CPUs follows upstream's takeByTopology for one socket: whole free cores first,
lowest core first; then single CPUs from the cores with the fewest free CPUs (packing
half-used cores), lowest core and CPU first. Reserved CPUs are chosen the same way from all
CPUs, so ``reserved cpu: 1500m`` reserves CPUs 0 and 1.

Choices where upstream has no single answer:

- An allocation failure rejects the pod with ``UnexpectedAdmissionError`` and the message
  ``Allocate failed due to not enough cpus available to satisfy request: requested=N,
  available=M, which is unexpected`` (upstream's GetPodAdmitResult wrapping of the static
  policy's error). A pod is allocated all or nothing; upstream leaves a partial
  allocation for its stale-state cleanup to undo before the next pod, with the same effect.
- Init containers finish at the instant of allocation (the emulation does not run them
  separately): they get CPUs, app containers may reuse them (upstream's cpusToReuse), and
  whatever the app containers did not take goes back to the shared pool at once. Sidecars
  (restartable init containers) keep theirs, as upstream.
- ``cpuset_of`` is the pod's exclusive CPUs, plus the shared pool when any of its
  long-running containers runs there; a pod with no exclusive CPUs gets the shared pool as
  it is at the time of asking (upstream re-pins shared containers when the pool changes).
- The checkpoint has upstream's ``cpu_manager_state`` shape without the checksum.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..api.qos import GUARANTEED, get_pod_qos
from ..api.quantity import QuantityError, parse, resource_int
from .admission import Rejection

NONE, STATIC = "none", "static"
POLICIES = (NONE, STATIC)
ADMIT_REASON = "UnexpectedAdmissionError"  # upstream admission.ErrorReasonUnexpected

_ITEM = re.compile(r"([0-9]+)(?:-([0-9]+))?")


class CpusetError(ValueError):
    """A string that is not a cpuset list."""


# ---- cpuset strings ----------------------------------------------------------------------


def parse_cpuset(value: str) -> frozenset[int]:
    """The CPUs in a Linux cpuset list such as ``"0-3,5,7-8"``; ``""`` is the empty set."""
    if not isinstance(value, str):
        raise CpusetError(f"{value!r} is not a cpuset (use e.g. 0-3,5,7-8)")
    if value == "":
        return frozenset()
    cpus: set[int] = set()
    for item in value.split(","):
        m = _ITEM.fullmatch(item)
        if m is None:
            raise CpusetError(f"{value!r} is not a cpuset (use e.g. 0-3,5,7-8)")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if lo > hi:
            raise CpusetError(f"{value!r} is not a cpuset: range {item!r} runs backwards")
        cpus.update(range(lo, hi + 1))
    return frozenset(cpus)


def format_cpuset(cpus: Iterable[int]) -> str:
    """Upstream's cpuset.String(): sorted, runs of consecutive CPUs as ``a-b``, ``,``-joined."""
    out: list[str] = []
    run_start = prev = None
    for cpu in sorted(cpus):
        if prev is not None and cpu == prev + 1:
            prev = cpu
            continue
        if run_start is not None:
            out.append(str(run_start) if run_start == prev else f"{run_start}-{prev}")
        run_start = prev = cpu
    if run_start is not None:
        out.append(str(run_start) if run_start == prev else f"{run_start}-{prev}")
    return ",".join(out)


# ---- topology and choosing CPUs -----------------------------------------------------------


@dataclass(frozen=True)
class Topology:
    num_cpus: int
    threads_per_core: int = 1

    def core_of(self, cpu: int) -> int:
        return cpu // self.threads_per_core

    def core_size(self, core: int) -> int:
        # The last core of an odd CPU count has fewer threads.
        first = core * self.threads_per_core
        return min(self.threads_per_core, self.num_cpus - first)

    def all_cpus(self) -> frozenset[int]:
        return frozenset(range(self.num_cpus))


def _by_core(topo: Topology, cpus: Iterable[int]) -> dict[int, list[int]]:
    cores: dict[int, list[int]] = {}
    for cpu in sorted(cpus):
        cores.setdefault(topo.core_of(cpu), []).append(cpu)
    return cores


def take_by_topology(topo: Topology, available: frozenset[int], n: int) -> frozenset[int] | None:
    """``n`` CPUs out of ``available`` chosen as described in the module docstring, or None
    when there are fewer than ``n``."""
    if n <= 0:
        return frozenset()
    if len(available) < n:
        return None
    taken: list[int] = []
    for core, cpus in _by_core(topo, available).items():
        size = topo.core_size(core)
        if len(cpus) == size and n - len(taken) >= size:
            taken.extend(cpus)
    rest = _by_core(topo, available.difference(taken))
    # Fewest free CPUs first keeps whole cores whole for later requests.
    for core in sorted(rest, key=lambda c: (len(rest[c]), c)):
        for cpu in rest[core]:
            if len(taken) == n:
                return frozenset(taken)
            taken.append(cpu)
    return frozenset(taken)


# ---- the manager --------------------------------------------------------------------------


class CpuAllocationError(Exception):
    """Not enough CPUs for a container; ``rejection`` is what the pod's status gets."""

    def __init__(self, requested: int, available: int):
        detail = f"not enough cpus available to satisfy request: requested={requested}, available={available}"
        super().__init__(detail)
        self.rejection = Rejection(ADMIT_REASON, f"Allocate failed due to {detail}, which is unexpected")


@dataclass
class _PodCpus:
    exclusive: dict[str, frozenset[int]]  # long-running containers with CPUs of their own
    shared: bool  # some long-running container runs on the shared pool
    seen: bool  # allocate() has read the pod's spec (False for an entry restored from a checkpoint)


def _count_cpus(raw, field: str) -> int:
    """Whole CPUs in a capacity-like value (a quantity or a number), rounded down."""
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        raw = str(raw)
    try:
        value = parse(raw)
    except QuantityError:
        raise ValueError(f"{field}: {raw!r} is not a quantity") from None
    if value < 0:
        raise ValueError(f"{field}: {raw!r} must be greater than or equal to 0")
    return math.floor(value)


def _container_plan(pod: dict) -> list[tuple[str, int, bool]]:
    """(name, exclusive CPUs wanted, is a run-to-completion init container), in start order."""
    spec = pod.get("spec") or {}
    guaranteed = get_pod_qos(pod) == GUARANTEED
    plan = []
    for c in spec.get("initContainers") or ():
        plan.append((c.get("name", ""), _exclusive_cpus(c) if guaranteed else 0, c.get("restartPolicy") != "Always"))
    for c in spec.get("containers") or ():
        plan.append((c.get("name", ""), _exclusive_cpus(c) if guaranteed else 0, False))
    return plan


def _exclusive_cpus(container: dict) -> int:
    res = container.get("resources") or {}
    raw = (res.get("requests") or {}).get("cpu")
    if raw is None:  # the apiserver defaults a request from its limit
        raw = (res.get("limits") or {}).get("cpu")
    milli = resource_int("cpu", raw) if raw is not None else 0
    return milli // 1000 if milli % 1000 == 0 else 0


class CpuManager:
    """One node's CPU manager. ``reserved_milli`` is kube-reserved + system-reserved cpu in
    millicores; ``reserved_cpus`` (a cpuset string, upstream's reservedSystemCPUs) replaces it."""

    __slots__ = ("policy", "topology", "reserved", "_default", "_pods")

    def __init__(
        self,
        capacity_cpus,
        reserved_milli: int = 0,
        reserved_cpus: str | None = None,
        policy: str = NONE,
        threads_per_core: int = 1,
    ):
        if policy not in POLICIES:
            raise ValueError(f"cpuManagerPolicy: {policy!r} is not a CPU manager policy (use none or static)")
        if isinstance(threads_per_core, bool) or not isinstance(threads_per_core, int) or threads_per_core < 1:
            raise ValueError(f"threads_per_core: {threads_per_core!r} must be a whole number >= 1")
        self.policy = policy
        self.topology = Topology(_count_cpus(capacity_cpus, "capacity.cpu"), threads_per_core)
        self.reserved = self._choose_reserved(reserved_milli, reserved_cpus)
        if policy == STATIC and not self.reserved:
            raise ValueError(
                'cpuManagerPolicy: "static" needs a cpu reservation greater than zero '
                "(reserved cpu, or reservedSystemCPUs)"
            )
        self._default = self.topology.all_cpus()  # the shared pool, reserved CPUs included
        self._pods: dict[str, _PodCpus] = {}

    @classmethod
    def from_node_config(cls, config, threads_per_core: int = 1) -> CpuManager:
        """From a ``NodeConfig``: capacity cpu, reserved cpu, and the kubelet settings
        ``cpuManagerPolicy`` and ``reservedSystemCPUs``."""
        kubelet = getattr(config, "kubelet", None) or {}
        raw = (getattr(config, "reserved", None) or {}).get("cpu")
        try:
            reserved_milli = resource_int("cpu", raw) if raw is not None else 0
        except QuantityError:
            raise ValueError(f"reserved.cpu: {raw!r} is not a quantity") from None
        return cls(
            (config.capacity or {}).get("cpu", 0),
            reserved_milli,
            kubelet.get("reservedSystemCPUs"),
            kubelet.get("cpuManagerPolicy", NONE),
            threads_per_core,
        )

    def _choose_reserved(self, reserved_milli: int, reserved_cpus: str | None) -> frozenset[int]:
        topo = self.topology
        if reserved_cpus not in (None, ""):
            try:
                cpus = parse_cpuset(reserved_cpus)
            except CpusetError as e:
                raise ValueError(f"reservedSystemCPUs: {e}") from None
            outside = cpus - topo.all_cpus()
            if outside:
                raise ValueError(
                    f"reservedSystemCPUs: {reserved_cpus!r} names CPUs the node does not have "
                    f"({format_cpuset(outside)}; it has {topo.num_cpus})"
                )
            return cpus
        if reserved_milli < 0:
            raise ValueError(f"reserved.cpu: {reserved_milli}m must be greater than or equal to 0")
        count = -(-reserved_milli // 1000)  # a fraction of a CPU cannot be handed out, so round up
        chosen = take_by_topology(topo, topo.all_cpus(), count)
        if chosen is None:
            raise ValueError(
                f"reserved.cpu: {reserved_milli}m needs {count} whole CPU(s); the node has {topo.num_cpus}"
            )
        return chosen

    # ---- admission and release --------------------------------------------------------------

    def allocate(self, uid: str, pod: dict) -> dict[str, str]:
        """Exclusive CPUs per container (init containers included), as cpuset strings; empty
        when every container shares the pool. Raises ``CpuAllocationError``. Calling it
        again for an admitted pod returns the long-running containers' CPUs."""
        if self.policy == NONE:
            return {}
        held = self._pods.get(uid)
        if held is not None and held.seen:
            return {name: format_cpuset(cpus) for name, cpus in held.exclusive.items()}
        given, keep, shared, free = self._choose(pod, held)
        self._default = frozenset(free | self.reserved)
        self._pods[uid] = _PodCpus(keep, shared, True)
        return {name: format_cpuset(cpus) for name, cpus in given.items()}

    def _choose(self, pod: dict, held: _PodCpus | None):
        """Work on copies, so a failure part-way leaves the state untouched."""
        previous = held.exclusive if held is not None else {}
        free = set(self._default - self.reserved)
        reusable: set[int] = set()  # CPUs of finished init containers (upstream's cpusToReuse)
        given: dict[str, frozenset[int]] = {}
        keep: dict[str, frozenset[int]] = {}
        shared = False
        for name, want, run_once in _container_plan(pod):
            if held is not None and run_once:
                continue  # a restored pod's init containers ran before the checkpoint
            cpus = previous.get(name)
            if cpus is None:
                if want == 0:
                    shared = shared or not run_once
                    continue
                pool = frozenset(free | reusable)
                cpus = take_by_topology(self.topology, pool, want)
                if cpus is None:
                    raise CpuAllocationError(want, len(pool))
            free -= cpus
            given[name] = cpus
            if run_once:
                reusable |= cpus
            else:
                reusable -= cpus
                keep[name] = cpus
        free |= reusable  # what the app containers did not reuse returns to the pool
        for name, cpus in previous.items():
            if name not in keep:  # a restored entry of a finished init container
                free |= cpus
        return given, keep, shared, free

    def admit(self, uid: str, pod: dict) -> Rejection | None:
        """``allocate`` as an admit handler: None, or the pod's rejection."""
        try:
            self.allocate(uid, pod)
        except CpuAllocationError as e:
            return e.rejection
        return None

    def release(self, uid: str) -> None:
        """The pod's containers are gone: its exclusive CPUs return to the shared pool."""
        held = self._pods.pop(uid, None)
        if held is not None and held.exclusive:
            self._default = self._default.union(*held.exclusive.values())

    # ---- queries ------------------------------------------------------------------------------

    def cpuset_of(self, uid: str) -> str | None:
        """The CPUs the pod's containers may run on (see the module docstring); None under
        the none policy or for a pod this manager has not admitted."""
        held = self._pods.get(uid)
        if self.policy == NONE or held is None:
            return None
        cpus = frozenset().union(*held.exclusive.values())
        if held.shared or not cpus:
            cpus |= self._default
        return format_cpuset(cpus)

    def shared_pool(self) -> str:
        return format_cpuset(self._default)

    def assignments(self) -> dict[str, dict[str, str]]:
        """uid -> container -> exclusive cpuset, for pods holding exclusive CPUs."""
        return {
            uid: {name: format_cpuset(cpus) for name, cpus in held.exclusive.items()}
            for uid, held in self._pods.items()
            if held.exclusive
        }

    # ---- checkpoint ---------------------------------------------------------------------------

    def checkpoint(self) -> dict:
        """Upstream's cpu_manager_state (policyName, defaultCpuSet, entries), no checksum."""
        if self.policy == NONE:
            return {"policyName": NONE, "defaultCpuSet": "", "entries": {}}
        return {"policyName": self.policy, "defaultCpuSet": format_cpuset(self._default), "entries": self.assignments()}

    def restore(self, state: dict) -> None:
        """Load a checkpoint; raises ValueError (one line) for one this node cannot use,
        with upstream's consistency checks. Restored pods count as sharing no CPUs until
        ``allocate`` sees their spec again."""
        if not isinstance(state, dict):
            raise ValueError(f"cpu_manager_state: {state!r} is not a mapping")
        name = state.get("policyName")
        if name != self.policy:
            raise ValueError(
                f"cpu_manager_state.policyName: configured policy {self.policy!r} differs from "
                f"state checkpoint policy {name!r}"
            )
        default, entries = _parse_state(state)
        if self.policy == NONE or (not default and not entries):
            self._default, self._pods = self.topology.all_cpus(), {}
            return
        problem = self._inconsistency(default, entries)
        if problem:
            raise ValueError(f"cpu_manager_state: {problem}")
        self._default = default
        self._pods = {uid: _PodCpus(dict(per), False, False) for uid, per in entries.items()}

    def _inconsistency(self, default: frozenset[int], entries: dict) -> str | None:
        if not self.reserved <= default:
            return (
                f"not all reserved cpus {format_cpuset(self.reserved)!r} are present in "
                f"defaultCpuSet {format_cpuset(default)!r}"
            )
        known = set(default)
        for uid, per in entries.items():
            for container, cpus in per.items():
                if cpus & known:
                    return (
                        f"pod {uid} container {container} cpuset {format_cpuset(cpus)!r} overlaps "
                        f"the defaultCpuSet or another assignment"
                    )
                known |= cpus
        if known != self.topology.all_cpus():
            return (
                f"the node's CPUs {format_cpuset(self.topology.all_cpus())!r} do not match the CPUs in "
                f"the state {format_cpuset(known)!r}"
            )
        return None


def _parse_state(state: dict) -> tuple[frozenset[int], dict[str, dict[str, frozenset[int]]]]:
    def cpus(raw, field: str) -> frozenset[int]:
        try:
            return parse_cpuset(raw)
        except CpusetError as e:
            raise ValueError(f"cpu_manager_state.{field}: {e}") from None

    default = cpus(state.get("defaultCpuSet") or "", "defaultCpuSet")
    raw_entries = state.get("entries") or {}
    if not isinstance(raw_entries, dict):
        raise ValueError(f"cpu_manager_state.entries: {raw_entries!r} is not a mapping")
    entries = {}
    for uid, per in raw_entries.items():
        if not isinstance(per, dict):
            raise ValueError(f"cpu_manager_state.entries[{uid}]: {per!r} is not a mapping")
        entries[uid] = {c: cpus(v, f"entries[{uid}][{c}]") for c, v in per.items()}
    return default, entries
