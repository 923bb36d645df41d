"""``kubemu bench``: which benchmark runs where, and the checks on its arguments.

Owns ``run_bench``, the dispatch the CLI calls: ``schedule`` and ``preempt`` through the
actors (``benchray.py``), ``density`` (memory per node and per pod,
``benchdensity.py``) and ``startup`` (pod startup latency at a steady creation rate,
``benchstartup.py``) through the actors, ``cycle``, ``preempt-cycle`` and ``local`` in this process
without Ray (``benchcycle.py``), ``chaos``, the soak (``benchchaos.py``), and ``yunikorn``,
YuniKorn mode's throughput and preemption soak in this process (``benchyunikorn.py``). Every
benchmark returns one JSON-able dict, which the CLI prints as its last line. Ray is
imported only by the benchmarks that use it.
"""

from __future__ import annotations

import asyncio
import sys

from actors.harness.workloads import PREEMPT_ASYNC, PREEMPT_BASIC, PREEMPT_WORKLOADS, WORKLOADS

CHAOS_NODES_PER_HOST = 50  # the soak's default: many small hosts, so killHost takes a rack, not the cluster


def run_bench(
    name: str,
    nodes: int,
    pods: int,
    nodes_per_host: int | None = None,
    log=None,
    workload: str = "default",
    chaos: dict | None = None,
    pods_per_node: int = 10,
    rate: float = 500.0,
    kubelets: bool = True,
    accelerate: bool = True,
    explain: str = "failed",
) -> dict:
    """``chaos``: the chaos bench's options (kill_rate, duration, time_scale, seed, targets,
    restarts), as ``benchchaos.run_chaos`` takes them; ``pods_per_node``: density's;
    ``rate``: startup's pods created per second; ``kubelets``: schedule's (False: no
    kubelet runs, as in scheduler_perf); ``accelerate``: schedule's and preempt's (False:
    the scheduler's plain reference cycle); ``explain``: schedule's, cycle's and density's (what the
    scheduler records as SchedulingResults)."""
    log = log or (lambda s: print(s, file=sys.stderr))
    _check_shape(nodes, pods, nodes_per_host)
    if name == "yunikorn":
        return _yunikorn(nodes, pods, nodes_per_host, workload, log)
    opts = _options(name, chaos, kubelets, accelerate, explain, nodes, pods_per_node, rate)
    workload = _workload(name, workload)
    if name == "preempt":
        opts["workload"] = workload
    if name in ("cycle", "preempt-cycle", "local"):
        from actors.harness import benchcycle

        if name == "cycle":
            return benchcycle.cycle(nodes, pods, workload, log, opts["explain"])
        if name == "preempt-cycle" and workload == PREEMPT_BASIC:
            from actors.harness.benchpreemptbasic import preempt_basic_cycle

            return preempt_basic_cycle(nodes, pods, log)
        if name == "preempt-cycle":
            return benchcycle.preempt_cycle(nodes, pods, log)
        return benchcycle.local(nodes, pods, nodes_per_host or 0, workload, log)
    import ray

    started_here = not ray.is_initialized()
    try:
        return asyncio.run(_on_ray(name, nodes, pods, nodes_per_host, workload, opts, log))
    finally:
        # Before the JSON line is printed: actors killed at the end still have retries in
        # flight, and Ray's log monitor would print its notes about them after our last line.
        if started_here and ray.is_initialized():
            ray.shutdown()


def _check_shape(nodes: int, pods: int, nodes_per_host: int | None) -> None:
    if nodes < 1:
        raise ValueError(f"--nodes: {nodes} must be at least 1")
    if pods < 1:
        raise ValueError(f"--pods: {pods} must be at least 1")
    if nodes_per_host is not None and nodes_per_host < 0:
        raise ValueError(f"--nodes-per-host: {nodes_per_host} must be >= 0")


def _options(
    name: str,
    chaos: dict | None,
    kubelets: bool,
    accelerate: bool,
    explain: str,
    nodes: int,
    pods_per_node: int,
    rate: float,
) -> dict:
    """The options of the bench ``name``, as its function takes them (checked)."""
    opts = chaos or {}
    if name == "schedule":
        opts = {"kubelets": kubelets, "explain": explain}
    if name == "cycle":
        opts = {"explain": explain}
    if name in ("schedule", "preempt"):
        opts["accelerate"] = accelerate
    if name == "density":
        from actors.harness.benchdensity import check

        check(nodes, pods_per_node)
        opts = {"pods_per_node": pods_per_node, "explain": explain}
    if name == "startup":
        from actors.harness.benchstartup import check as check_rate

        check_rate(rate)
        opts = {"rate": rate}
    return opts


def _workload(name: str, workload: str) -> str:
    """``--workload`` for the bench ``name``, its default filled in (checked)."""
    if name in ("preempt", "preempt-cycle"):
        workload = PREEMPT_ASYNC if workload == "default" else workload
        if workload not in PREEMPT_WORKLOADS:
            raise ValueError(f"--workload: {workload!r} is not one of {', '.join(PREEMPT_WORKLOADS)} (bench {name})")
        return workload
    if workload == "default":
        return "basic"
    if workload not in WORKLOADS:
        raise ValueError(f"--workload: {workload!r} is not one of {', '.join(WORKLOADS)}")
    return workload


def _yunikorn(nodes: int, pods: int, nodes_per_host: int | None, workload: str, log) -> dict:
    from actors.harness import benchyunikorn

    workload = "basic" if workload == "default" else workload
    if workload not in benchyunikorn.WORKLOADS:
        raise ValueError(
            f"--workload: {workload!r} is not one of {', '.join(benchyunikorn.WORKLOADS)} (bench yunikorn)"
        )
    if workload == "soak":
        return benchyunikorn.soak(nodes, pods, log)
    runtime = "local" if workload == "local" else "ray"
    try:
        return benchyunikorn.throughput(nodes, pods, log, runtime, nodes_per_host or 0)
    finally:
        _shutdown_ray()


async def _on_ray(name: str, nodes: int, pods: int, nodes_per_host: int | None, workload: str, opts: dict, log):
    """``opts``: the options of the bench ``name`` (chaos, density, startup or schedule)."""
    if name == "density":
        from actors.harness.benchdensity import density

        return await density(nodes, opts["pods_per_node"], nodes_per_host or 0, log, opts["explain"])
    if name == "startup":
        from actors.harness.benchstartup import startup

        return await startup(nodes, pods, opts["rate"], nodes_per_host or 0, log)
    if name == "chaos":
        from actors.harness.benchchaos import run_chaos

        per_host = CHAOS_NODES_PER_HOST if nodes_per_host is None else nodes_per_host
        return await run_chaos(nodes, pods, nodes_per_host=per_host, log=log, **opts)
    from actors.harness import benchray

    if name == "preempt":
        return await benchray.preempt(nodes, pods, nodes_per_host or 0, log, opts["workload"], opts["accelerate"])
    return await benchray.schedule(
        nodes, pods, nodes_per_host or 0, workload, log, opts["kubelets"], opts["accelerate"], opts["explain"]
    )


def _shutdown_ray() -> None:
    """Before the JSON line: Ray's log monitor would print its notes after our last line."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()
