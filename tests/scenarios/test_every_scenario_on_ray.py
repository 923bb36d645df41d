"""Every shipped scenario passes on the Ray runtime through ``kubemu run FILE`` with no flags
(``make test-ray``; ``make test`` runs one per folder on Ray, in ``test_both_runtimes.py``),
and one without process faults ends within ``RAY_BOUND`` seconds of wall time or
``RAY_FACTOR`` times its local run, whichever is larger: Ray steps its clock from one
wakeup to the next as fast as the actors keep up (``cluster/runtime/stepper.py``).

A file that names the local runtime (``spec.runtime: local``) runs here with ``--runtime
ray``: it must pass on Ray too, with no bound on its time (it says why it is meant for
local). Each scenario runs in a fresh process, as a user runs it (``chaos/ray-nodes``
starts a Ray cluster of its own). Set ``KUBEMU_TEST_RAY_ALL=1`` to run it.
"""

import json
import os
import subprocess
import sys
import time

import pytest
from scenariofiles import ALL, NEEDS_PROCESSES, ROOT, key

from cluster.scenario.schema import load_file

pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(
        not os.environ.get("KUBEMU_TEST_RAY_ALL"),
        reason="every shipped scenario on Ray, one kubemu run each, takes minutes: make test-ray runs them (KUBEMU_TEST_RAY_ALL=1)",
    ),
]
RAY_BOUND, RAY_FACTOR = 30.0, 3.0
PROCESS_FAULTS = {"restart", "killHost", "killRayNode", "random"}


def has_process_faults(path) -> bool:
    spec = load_file(str(path), ["spec.runtime=ray"]).spec
    return bool(spec.cluster.rayNodes) or any(s.chaos and s.chaos.action in PROCESS_FAULTS for s in spec.timeline)


def cli(tmp_path, path, *flags: str) -> tuple[dict, float]:
    """Run ``kubemu run`` on ``path`` in a fresh process; the report and its wall seconds."""
    report = tmp_path / f"{path.stem}-{len(flags)}.json"
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    argv = [sys.executable, "-m", "actors.harness.cli", "run", str(path), "--report", str(report), *flags]
    t = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    took = time.monotonic() - t
    assert report.exists(), proc.stderr[-3000:]
    return json.loads(report.read_text()), took


@pytest.mark.parametrize("path", ALL, ids=key)
def test_every_scenario_passes_on_ray_as_fast_as_the_cluster_goes(tmp_path, path):
    local_only = load_file(str(path)).spec.runtime == "local"
    report, took = cli(tmp_path, path, *(["--runtime", "ray"] if local_only else []))
    failed = [(e["spec"], e["detail"]) for e in report["expectations"] if not e["ok"]]
    assert report["passed"] and report["runtime"] == "ray", failed
    if local_only or key(path) in NEEDS_PROCESSES or has_process_faults(path):
        return  # no bound: a restart takes what Ray takes; a file for local says why
    local, local_took = cli(tmp_path, path, "--runtime", "local")
    assert local["passed"]
    assert took <= max(RAY_BOUND, RAY_FACTOR * local_took), (took, report["wallSeconds"], report["clock"])
