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
    run.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                     help="override a scenario field, e.g. --set spec.timeScale=50 (repeatable)")
    val = sub.add_parser("validate", help="check a scenario file without running it")
    val.add_argument("file")
    val.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    bench = sub.add_parser("bench", help="run a benchmark; the last line printed is one JSON object")
    bench.add_argument("benchmark", choices=["schedule", "preempt", "cycle", "preempt-cycle"],
                       help="schedule: through the actors; preempt: high-priority pods preempting low ones; "
                            "cycle / preempt-cycle: the same shapes in the Scheduler alone, in this process")
    bench.add_argument("--nodes", type=int, default=1000)
    bench.add_argument("--pods", type=int, default=10000)
    bench.add_argument("--nodes-per-host", type=int, default=0)
    bench.add_argument("--workload", default="basic",
                       help="schedule: basic (SchedulingBasic) or mixed (a third of the pods with "
                            "affinity or spread constraints)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "bench":
        from actors.bench import run_bench

        try:
            result = run_bench(args.benchmark, args.nodes, args.pods, args.nodes_per_host, workload=args.workload)
        except ValueError as e:
            print(f"kubemu: {e}", file=sys.stderr)
            return 2
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

    report = asyncio.run(run_scenario(scenario))
    if args.report:
        with open(args.report, "w") as f:
            json.dump(report, f, indent=1)
    print(reports.summary(report))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
