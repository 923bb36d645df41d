"""The ``kubemu`` command line: ``run``, ``validate`` and ``bench``.

Parses arguments, loads and checks scenarios (a bad one exits 2 with one line and starts
nothing), runs them through ``actors.driver`` and prints the summary; writes the JSON
report when asked. Exit codes: 0 every expectation held, 1 some did not, 2 bad input.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from cluster.scenario import report as reports
from cluster.scenario.schema import ScenarioError, load_file


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kubemu", description="A Kubernetes control-plane emulator on Ray.")
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a scenario file and check its expectations")
    run.add_argument("file")
    run.add_argument("--report", metavar="PATH", help="write the JSON report here")
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
    val.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    bench = sub.add_parser("bench", help="run a benchmark; the last line printed is one JSON object")
    bench.add_argument(
        "benchmark",
        choices=["schedule", "preempt", "cycle", "preempt-cycle", "chaos"],
        help="schedule: through the actors; preempt: high-priority pods preempting low ones; "
        "cycle / preempt-cycle: the same shapes in the Scheduler alone, in this process; "
        "chaos: ReplicaSets under random faults, counting pods lost",
    )
    bench.add_argument("--nodes", type=int, default=1000)
    bench.add_argument("--pods", type=int, default=10000)
    bench.add_argument("--nodes-per-host", type=int, default=0)
    bench.add_argument(
        "--workload",
        default="basic",
        help="schedule: basic (SchedulingBasic) or mixed (a third of the pods with affinity or spread constraints)",
    )
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
        help="comma-separated control-plane actors to restart during the soak "
        "(apiserver, scheduler, controller-manager)",
    )
    return p


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


def _stop_own_ray(started_here: bool) -> None:
    """Stop the Ray this command started before printing the result: actors killed at the
    end of a run still have retries in flight, and Ray's log monitor would print its
    notes about them after our last line."""
    import ray

    if started_here and ray.is_initialized():
        ray.shutdown()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    import ray

    ray_before = ray.is_initialized()
    if args.command == "bench":
        from actors.bench import run_bench

        try:
            result = run_bench(
                args.benchmark,
                args.nodes,
                args.pods,
                args.nodes_per_host,
                workload=args.workload,
                chaos=_chaos_options(args),
            )
        except ValueError as e:
            print(f"kubemu: {e}", file=sys.stderr)
            return 2
        _stop_own_ray(not ray_before)
        print(json.dumps(result))
        return 0
    try:
        scenario = load_file(args.file, args.overrides)
    except ScenarioError as e:
        print(f"kubemu: {e}", file=sys.stderr)
        return 2
    if args.command == "validate":
        print(f"{args.file}: ok ({scenario.metadata.name})")
        return 0
    from actors.driver import run_scenario
    from actors.raycluster import RayClusterError

    try:
        report = asyncio.run(run_scenario(scenario))
    except RayClusterError as e:  # raised before any actor is created
        print(f"kubemu: {e}", file=sys.stderr)
        return 2
    _stop_own_ray(not ray_before)
    if args.report:
        with open(args.report, "w") as f:
            json.dump(report, f, indent=1)
    print(reports.summary(report))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
