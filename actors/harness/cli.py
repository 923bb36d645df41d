"""The ``kubemu`` command line: ``run``, ``validate`` and ``bench``.

Parses arguments, loads and checks scenarios (a bad one exits 2 with one line and starts
nothing), builds the cluster on the runtime the scenario or ``--runtime`` names, runs it
through ``cluster/scenario/driver.py`` and prints the summary; writes the JSON report (and
the local runtime's event trace) when asked. Exit codes: 0 every expectation held, 1 some
did not, 2 bad input. The local runtime never imports Ray.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack

from cluster.scenario import report as reports
from cluster.scenario.schema import Scenario, ScenarioError, load_file

BENCHMARKS = (
    "schedule",
    "preempt",
    "cycle",
    "preempt-cycle",
    "local",
    "chaos",
    "density",
    "startup",
    "api",
    "yunikorn",
    "rollout",
)
FAIL_INCOMPLETE = (
    "schedule",
    "preempt",
    "cycle",
    "preempt-cycle",
    "local",
    "density",
    "startup",
    "rollout",
)  # an incomplete run exits 1
# scheduler_perf's shapes: SchedulingBasic (5,000 nodes, 10,000 measured pods) and
# PreemptionAsync (5,000 nodes, 5,000 measured pods), through the actors and in the
# Scheduler alone (cycle, preempt-cycle); the other benches 1,000 and 10,000.
SHAPES = {"schedule": (5000, 10000), "preempt": (5000, 5000), "cycle": (5000, 10000), "preempt-cycle": (5000, 5000)}
DEFAULT_SHAPE = (1000, 10000)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kubemu", description="A Kubernetes control-plane emulator on Ray.")
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a scenario file and check its expectations")
    run.add_argument("file")
    run.add_argument("--runtime", choices=["ray", "local"], help="where the components run (default: spec.runtime)")
    run.add_argument("--report", metavar="PATH", help="write the JSON report here")
    run.add_argument("--trace", metavar="PATH", help="write the trace of every write here (local runtime)")
    run.add_argument("--html", metavar="PATH", help="write the report as one self-contained HTML page with charts")
    run.add_argument("--serve", action="store_true", help="serve the Kubernetes API while the scenario runs (local)")
    run.add_argument("--address", default="127.0.0.1")
    run.add_argument("--port", type=int, default=6443, help="with --serve")
    run.add_argument("--kubeconfig", default="kubemu.kubeconfig", help="with --serve")
    run.add_argument("--insecure-http", action="store_true", help="with --serve: plain HTTP, loopback only")
    run.add_argument(
        "--no-accelerate",
        action="store_true",
        help="the scheduler runs its plain reference cycle (spec.scheduler.accelerate=false)",
    )
    run.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario field, e.g. --set spec.timeScale=50 (repeatable)",
    )
    val = sub.add_parser("validate", help="check a scenario file without running it")
    val.add_argument("file")
    val.add_argument("--runtime", choices=["ray", "local"])
    val.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    _serve_parser(sub)
    _explain_parser(sub)
    bench = sub.add_parser("bench", help="run a benchmark; the last line printed is one JSON object")
    bench.add_argument(
        "benchmark",
        choices=BENCHMARKS,
        help="schedule: through the actors; preempt: high-priority pods preempting low ones; "
        "cycle / preempt-cycle: the same shapes in the Scheduler alone, in this process; "
        "local: the schedule shape through the local runtime; "
        "chaos: ReplicaSets under random faults, counting pods lost; "
        "density: --nodes nodes and --pods-per-node pods each through the actors, memory per node and per pod; "
        "startup: --pods pods created at --rate pods/s through the actors, pod startup latency p50/p90/p99; "
        "api: the Kubernetes API over HTTP (creates/s, watch events/s, LIST time); "
        "yunikorn: YuniKorn mode's throughput over a queue tree (--workload basic: through the actors, "
        "local: in one process) or its preemption soak (--workload soak); "
        "rollout: a rolling update of one Deployment of --replicas pods, in one process",
    )
    bench.add_argument(
        "--nodes", type=int, help="default: 5000 for schedule, preempt, cycle and preempt-cycle, else 1000"
    )
    bench.add_argument("--pods", type=int, help="default: 5000 for preempt and preempt-cycle, else 10000")
    bench.add_argument("--replicas", type=int, default=10000, help="rollout: the Deployment's replicas")
    bench.add_argument(
        "--runtime", choices=["local", "ray"], help="rollout: local (default: in one process) or ray (the actors)"
    )
    bench.add_argument(
        "--against-schedule",
        type=int,
        metavar="N",
        help="rollout: N rounds of the rollout through the actors and bench schedule of as many pods, "
        "alternating, with each round's ratio of their rates and the median",
    )
    bench.add_argument("--nodes-per-host", type=int, default=None, help="default: 0 (automatic); chaos: 50")
    bench.add_argument(
        "--workload",
        default="default",
        help="schedule: basic (SchedulingBasic, the default) or mixed (a third of the pods with affinity or spread "
        "constraints); preempt, preempt-cycle: async (PreemptionAsync, the default) or basic (PreemptionBasic); "
        "yunikorn: basic (the default), local or soak",
    )
    bench.add_argument(
        "--no-kubelets",
        action="store_true",
        help="schedule: no kubelet runs, nodes are API objects only and bound pods never start "
        "(scheduler_perf's way; default: every node's kubelet runs)",
    )
    bench.add_argument(
        "--no-accelerate",
        action="store_true",
        help="schedule, preempt: the scheduler runs its plain reference cycle (no speed-ups)",
    )
    bench.add_argument(
        "--explain",
        choices=["failed", "all", "none"],
        help="schedule, cycle, density: what the scheduler records as SchedulingResults "
        "(spec.scheduler.explain; default failed)",
    )
    bench.add_argument("--pods-per-node", type=int, default=10, help="density: pods per node (default 10; at most 110)")
    bench.add_argument("--rate", type=float, default=500.0, help="startup: pods created per second (default 500)")
    bench.add_argument("--client", default="aiohttp", help="api: aiohttp (default) or python (the kubernetes client)")
    bench.add_argument("--html", metavar="PATH", help="also write the figures as a self-contained HTML chart page")
    soak = bench.add_argument_group("chaos")
    soak.add_argument("--kill-rate", type=float, default=0.05, help="faults per emulated second (default 0.05)")
    soak.add_argument("--duration", type=float, default=300.0, help="emulated seconds of faults (default 300)")
    soak.add_argument("--time-scale", type=float, default=10.0, help="emulated seconds per real second (default 10)")
    soak.add_argument("--seed", type=int, default=7)
    soak.add_argument(
        "--targets",
        default="killNode,killHost,partition",
        help="comma-separated actions to pick from (killNode, killHost, partition)",
    )
    soak.add_argument(
        "--restart",
        default="",
        metavar="COMPONENTS",
        help="comma-separated components to restart during the soak (apiserver, scheduler, controller-manager, host)",
    )
    return p


def _serve_parser(sub) -> None:
    srv = sub.add_parser(
        "serve", help="serve the Kubernetes API over a cluster until SIGINT/SIGTERM (kubectl, clients)"
    )
    srv.add_argument("--nodes", type=int, default=3)
    srv.add_argument("--cpu", default="4", help="CPUs per node (default 4)")
    srv.add_argument("--memory", default="16Gi", help="memory per node (default 16Gi)")
    srv.add_argument("--gpus", type=int, default=0, help="nvidia.com/gpu devices per node (default 0)")
    srv.add_argument("--address", default="127.0.0.1")
    srv.add_argument("--port", type=int, default=6443)
    srv.add_argument("--kubeconfig", default="kubemu.kubeconfig", help="where to write it (mode 0600)")
    srv.add_argument("--time-scale", type=float, default=1.0, help="emulated seconds per real second")
    srv.add_argument("--insecure-http", action="store_true", help="plain HTTP, no token (loopback only)")
    srv.add_argument(
        "--no-scheduler", action="store_true", help="no default scheduler: leave its pods to an external one"
    )
    srv.add_argument(
        "--schedulers",
        default="default-scheduler",
        metavar="LIST",
        help="comma-separated schedulers to run: default-scheduler (the default), yunikorn (YuniKorn mode, for pods "
        "with schedulerName: yunikorn, and YuniKorn's REST API under /ws/v1); a --scenario uses its own list",
    )
    srv.add_argument("--runtime", choices=["local", "ray"], default="local", help="local (default) or ray")
    srv.add_argument(
        "--job-run-seconds",
        type=float,
        default=5.0,
        help="emulated seconds a Job's pod runs (then exits 0) when it sets no kubemu.io/run-seconds (default 5)",
    )
    srv.add_argument("--scenario", metavar="FILE", help="serve this scenario's cluster while its timeline runs")
    srv.add_argument(
        "--service-cluster-ip-range",
        dest="service_cidr",
        default="10.96.0.0/12",
        metavar="CIDR",
        help="the range Services' ClusterIPs come from; the first address is the kubernetes Service's "
        "(default 10.96.0.0/12)",
    )
    srv.add_argument(
        "--manage-nodes",
        choices=["all", "annotated", "none"],
        default="all",
        help="which Nodes created through the API get an emulated kubelet: all (default; not those annotated "
        'kubemu.io/managed: "false"), annotated (only those annotated kubemu.io/managed: "true"), none',
    )


def _serve_options(args):
    import os
    from dataclasses import replace

    from actors.harness.serve import ServeOptions

    base = ServeOptions()
    given = {  # ``run --serve`` has only the listening options: the scenario has the cluster
        k: getattr(args, k)
        for k in (
            "nodes",
            "cpu",
            "memory",
            "gpus",
            "address",
            "port",
            "time_scale",
            "insecure_http",
            "runtime",
            "job_run_seconds",
            "service_cidr",
            "manage_nodes",
        )
        if hasattr(args, k)
    }
    schedulers = getattr(args, "schedulers", None)
    if schedulers is not None:  # ``run --serve`` has none: its scenario says which run
        given["schedulers"] = tuple(s.strip() for s in schedulers.split(",") if s.strip())
    return replace(
        base,
        **given,
        kubeconfig=os.path.abspath(args.kubeconfig),
        scheduler=not getattr(args, "no_scheduler", False),
    )


def _serve(args, scenario: Scenario | None = None, keep_serving: bool = True) -> tuple[int, dict | None]:
    """Serve (with ``scenario``: while it runs); (exit code, the scenario's report)."""
    import asyncio

    from actors.harness.serve import check, serve

    opts = _serve_options(args)
    try:
        check(opts)
    except ValueError as e:
        print(f"kubemu: {e}", file=sys.stderr)
        return 2, None
    try:
        report = asyncio.run(serve(opts, lambda s: print(s, flush=True), scenario=scenario, keep_serving=keep_serving))
    except OSError as e:  # the port is taken, the address is not ours
        print(f"kubemu: --address/--port: cannot listen on {args.address}:{args.port}: {e.strerror}", file=sys.stderr)
        return 2, None
    return 0, report


def _rollout_against_schedule(args) -> dict:
    """``bench rollout --against-schedule N`` (``benchrollout.against_schedule``)."""
    from actors.harness.bench import run_bench
    from actors.harness.benchrollout import against_schedule, rollout

    if args.runtime == "local":
        raise ValueError("--against-schedule: needs --runtime ray (bench schedule runs through the actors)")

    def log(s: str) -> None:
        print(s, file=sys.stderr)

    return against_schedule(
        args.against_schedule,
        lambda: rollout(args.nodes, args.replicas, log, "ray"),
        lambda: run_bench("schedule", args.nodes, args.replicas, log=log),
        log,
    )


def _chaos_options(args) -> dict:
    from cluster.scenario.chaos import COMPONENTS

    restarts = [c for c in args.restart.split(",") if c]
    for c in restarts:
        if c not in COMPONENTS:
            raise ValueError(
                f"--restart: {c!r} is not a component kubemu restarts (supported: {', '.join(COMPONENTS)})"
            )
    if not args.duration > 0:
        raise ValueError(f"--duration: {args.duration} must be greater than 0")
    if not args.time_scale > 0:
        raise ValueError(f"--time-scale: {args.time_scale} must be greater than 0")
    return {
        "kill_rate": args.kill_rate,
        "duration": args.duration,
        "time_scale": args.time_scale,
        "seed": args.seed,
        "targets": [t for t in args.targets.split(",") if t],
        "restarts": restarts,
    }


def _explain_parser(sub) -> None:
    exp = sub.add_parser(
        "explain", help="print why the scheduler placed a pod where it did, or why it could not (SchedulingResult)"
    )
    exp.add_argument("what", choices=["pod"])
    exp.add_argument("pod", metavar="NS/NAME", help="the pod (namespace default when omitted)")
    exp.add_argument("--report", metavar="PATH", help="read a run's JSON report instead of a running kubemu serve")
    exp.add_argument(
        "--kubeconfig", help="the kubeconfig kubemu serve wrote (default: $KUBECONFIG, else kubemu.kubeconfig)"
    )


def _explain(args) -> int:
    """``kubemu explain pod NS/NAME``: 0 printed, 1 the pod has no explanation, 2 bad input."""
    import os

    from actors.harness.explain_fetch import ExplainError, from_report, from_server, split_name
    from cluster.scheduler.explain_text import render

    try:
        ns, name = split_name(args.pod)
        if args.report:
            result = from_report(args.report, ns, name)
        else:
            config = args.kubeconfig or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or "kubemu.kubeconfig"
            result = from_server(config, ns, name)
    except ExplainError as e:
        print(f"kubemu: {e}", file=sys.stderr)
        return e.code
    print(render(result), end="")
    return 0


def _load(args) -> Scenario:
    overrides = list(args.overrides)
    if args.runtime:
        overrides.append(f"spec.runtime={args.runtime}")
    if getattr(args, "no_accelerate", False):
        overrides.append("spec.scheduler.accelerate=false")
    return load_file(args.file, overrides)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "explain":
        return _explain(args)
    unwritable = _html_unwritable(getattr(args, "html", None))
    if unwritable:
        return _refuse(unwritable)
    if args.command == "serve":
        return _serve_command(args)
    if args.command == "bench":
        return _bench_command(args)
    return _run_command(args)


def _refuse(message: str) -> int:
    """Bad input: one line, exit code 2, nothing started."""
    print(message if message.startswith("kubemu:") else f"kubemu: {message}", file=sys.stderr)
    return 2


def _serve_command(args) -> int:
    scenario = None
    if args.scenario and args.runtime == "ray":
        return _refuse("--scenario: a scenario is served over the local runtime (drop --runtime ray)")
    if args.scenario:
        try:
            scenario = load_file(args.scenario, ["spec.runtime=local"])
        except ScenarioError as e:
            return _refuse(str(e))
    return _serve(args, scenario)[0]


# A bench option and the benches that take it: (attribute, flag, benches, what they are).
BENCH_ONLY = (
    ("no_accelerate", "--no-accelerate", ("schedule", "preempt"), "only bench schedule and preempt take it"),
    ("explain", "--explain", ("schedule", "cycle", "density"), "only bench schedule, cycle and density take it"),
    ("no_kubelets", "--no-kubelets", ("schedule",), "only bench schedule runs without kubelets"),
)


def _bench_command(args) -> int:
    nodes, pods = SHAPES.get(args.benchmark, DEFAULT_SHAPE)
    args.nodes = nodes if args.nodes is None else args.nodes
    args.pods = pods if args.pods is None else args.pods
    for attr, flag, benches, which in BENCH_ONLY:
        if getattr(args, attr) and args.benchmark not in benches:
            return _refuse(f"{flag}: {which}, not bench {args.benchmark}")
    try:
        if args.benchmark == "api":
            from actors.harness.benchapi import run_api_bench

            result = run_api_bench(args.nodes, args.pods, args.client, lambda s: print(s, file=sys.stderr))
            complete = True
        elif args.benchmark == "rollout":
            result = _rollout(args)
            complete = bool(result.get("complete"))
        else:
            from actors.harness.bench import run_bench

            result = run_bench(
                args.benchmark,
                args.nodes,
                args.pods,
                args.nodes_per_host,
                workload=args.workload,
                chaos=_chaos_options(args),
                pods_per_node=args.pods_per_node,
                rate=args.rate,
                kubelets=not args.no_kubelets,
                accelerate=not args.no_accelerate,
                explain=args.explain or "failed",
            )
            complete = args.benchmark not in FAIL_INCOMPLETE or bool(result.get("complete"))
    except ValueError as e:
        return _refuse(str(e))
    _print_result(args, result)
    return 0 if complete else 1


def _rollout(args) -> dict:
    from actors.harness.benchrollout import rollout

    if args.against_schedule is not None:
        return _rollout_against_schedule(args)
    return rollout(args.nodes, args.replicas, lambda s: print(s, file=sys.stderr), args.runtime or "local")


def _run_command(args) -> int:
    """``run`` and ``validate``: a scenario file, on its runtime (``--serve``: with the API)."""
    if getattr(args, "serve", False):
        if args.runtime == "ray":
            return _refuse("--serve: the API is served over the local runtime (drop --runtime ray)")
        args.runtime = "local"
    try:
        scenario = _load(args)
    except ScenarioError as e:
        return _refuse(str(e))
    if args.command == "validate":
        print(f"{args.file}: ok ({scenario.metadata.name}, runtime {scenario.spec.runtime})")
        return 0
    if args.trace and scenario.spec.runtime != "local":
        return _refuse("--trace: the trace is the local runtime's (add --runtime local)")
    if args.serve:
        code, served = _serve(args, scenario, keep_serving=False)  # prints the summary itself
        if served is None:
            return code
        report = served
    else:
        try:
            report = _run(scenario, args.trace)
        except ValueError as e:  # the Ray cluster cannot do what the scenario asks; raised before any actor starts
            return _refuse(str(e))
        print(reports.summary(report))
    if args.report:
        with open(args.report, "w") as f:
            json.dump(report, f, indent=1)
    if args.html:
        _write_html(args.html, report)
    return 0 if report["passed"] else 1


def _print_result(args, result: dict) -> None:
    """A bench's last line (one JSON object), after its chart page when ``--html`` asks."""
    if args.html:
        _write_html(args.html, result, bench=True)
    print(json.dumps(result))


def _html_unwritable(path: str | None) -> str | None:
    """Why ``--html PATH`` cannot be written (checked before anything runs), or None."""
    import os

    if not path:
        return None
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return f"kubemu: --html: {path} is a directory"
    if not os.path.isdir(folder):
        return f"kubemu: --html: cannot write {path}: no such directory {folder}"
    if not os.access(folder, os.W_OK):
        return f"kubemu: --html: cannot write {path}: permission denied"
    return None


def _write_html(path: str, report: dict, bench: bool = False) -> None:
    """The report as a page (``cluster/viz``); a path that cannot be written is one line."""
    from cluster.viz.reportpage import bench_page, report_page

    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(bench_page(report) if bench else report_page(report))
    except OSError as e:
        print(f"kubemu: --html: cannot write {path}: {e.strerror}", file=sys.stderr)


def _run(scenario: Scenario, trace: str | None) -> dict:
    log = lambda s: print(s, file=sys.stderr)  # noqa: E731
    if scenario.spec.runtime == "local":
        from cluster.scenario.local import run_local

        with ExitStack() as stack:
            out = stack.enter_context(open(trace, "w")) if trace else None
            return run_local(scenario, log, out)
    from actors.harness.ray import run_on_ray

    return run_on_ray(scenario, log)


if __name__ == "__main__":
    sys.exit(main())
