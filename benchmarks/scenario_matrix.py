"""Every shipped scenario, several times on each runtime, as a user runs it: the table of
wall times and verdicts that ``BENCHMARKS.md`` records (issue: a shipped scenario on Ray
within 30 s wall or three times its local wall time, whichever is larger).

Each run is its own ``kubemu run FILE`` process (Ray started and stopped by it, as a user
sees it); the default runtime is the scenario's own (Ray unless it says otherwise), the
other column passes ``--runtime local``. Scenarios that need processes (``spec.runtime:
ray`` with process faults) have no local column. Usage:

    python benchmarks/scenario_matrix.py [--runs 3] [--out DIR] [SCENARIO ...]

Prints one line per run as it ends and, at the end, a markdown table; every report is kept
in ``--out``. Exits 1 if any run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 1800  # real seconds one run may take before it counts as failed


def needs_processes(path: Path) -> bool:
    """Whether the scenario is for Ray only (it says so: its faults kill processes)."""
    return "runtime: ray" in path.read_text()


def process_faults(path: Path) -> bool:
    """Whether the scenario restarts or kills processes, whose start takes real seconds (no
    wall-time bound)."""
    text = path.read_text()
    return any(f"action: {a}" in text for a in ("restart", "killHost", "killRayNode"))


def run_once(path: Path, runtime: str | None, report: Path) -> dict:
    argv = [sys.executable, "-m", "actors.harness.cli", "run", str(path), "--report", str(report)]
    if runtime:
        argv += ["--runtime", runtime]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=LIMIT)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        code = -1
    wall = time.perf_counter() - t0
    clock: dict = {}
    if report.exists():
        try:
            clock = json.loads(report.read_text()).get("clock") or {}
        except ValueError:
            pass
    return {"ok": code == 0, "code": code, "wall": wall, "clock": clock, "load": os.getloadavg()[0]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default="/tmp/kubemu-scenario-matrix")
    ap.add_argument("--runtimes", default="ray,local", help="which columns: ray (the default runtime), local")
    ap.add_argument("scenarios", nargs="*")
    args = ap.parse_args()
    files = [Path(s).resolve() for s in args.scenarios] or sorted((ROOT / "scenarios").rglob("*.yaml"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    failed = False
    for path in files:
        name = str(path.relative_to(ROOT / "scenarios")).removesuffix(".yaml")
        row: dict = {"name": name, "ray": [], "local": [], "faults": process_faults(path)}
        for runtime in args.runtimes.split(","):
            if runtime == "local" and needs_processes(path):
                continue
            for k in range(args.runs):
                report = out / f"{name.replace('/', '_')}.{runtime}.{k}.json"
                r = run_once(path, None if runtime == "ray" else "local", report)
                row[runtime].append(r)
                failed |= not r["ok"]
                steps = r["clock"].get("steps", "")
                print(
                    f"{name:42s} {runtime:5s} run {k + 1}: {'pass' if r['ok'] else 'FAIL(' + str(r['code']) + ')'} "
                    f"{r['wall']:7.1f}s steps={steps} load={r['load']:.1f}",
                    flush=True,
                )
        rows.append(row)
    print()
    print("| scenario | local wall s (mean) | Ray wall s (mean) | bound s | Ray passes | local passes | within bound |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        ray, local = row["ray"], row["local"]
        lw = statistics.mean(r["wall"] for r in local) if local else None
        rw = statistics.mean(r["wall"] for r in ray) if ray else None
        bound = max(30.0, 3 * lw) if lw is not None and not row["faults"] else None
        within = "—" if bound is None or rw is None else ("yes" if rw <= bound else "no")
        cells = [
            row["name"],
            f"{lw:.1f}" if lw is not None else "n/a",
            f"{rw:.1f}" if rw is not None else "n/a",
            f"{bound:.0f}" if bound is not None else "none (process faults)",
            f"{sum(r['ok'] for r in ray)}/{len(ray)}" if ray else "n/a",
            f"{sum(r['ok'] for r in local)}/{len(local)}" if local else "n/a",
            within,
        ]
        print("| " + " | ".join(cells) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
