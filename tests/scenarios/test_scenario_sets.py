"""Every scenario under scenarios/ passes end to end on the local runtime (one process,
virtual time), except those that stop processes, which the local runtime refuses with one
line. ``test_both_runtimes.py`` runs one scenario per folder on Ray as well and compares.

Each file states its own expectations (placements, FailedScheduling and Preempted events,
counts); the test runs it and reports the expectations that failed.
"""

import pytest
from scenariofiles import ALL, FOLDERS, NEEDS_PROCESSES, ROOT, failed, key, quiet

from cluster.scenario.local import run_local
from cluster.scenario.schema import ScenarioError, load_file

REQUIRED = {
    "scheduling": {
        "node-selector",
        "node-affinity",
        "taints",
        "host-ports",
        "pod-anti-affinity",
        "pod-affinity-zone",
        "topology-spread",
        "extended-resource",
        "fits-later",
    },
    "preemption": {"basic", "nominated-wait", "higher-preemptor", "never", "pdb", "system-critical", "unresolvable"},
    "kubelet": {"nodename-outofcpu", "memory-pressure", "soft-eviction", "oom", "cpu-manager", "gpus"},
    "chaos": {
        "node-kill",
        "host-kill",
        "host-restart",
        "apiserver-restart",
        "scheduler-restart",
        "daemonset",
        "ray-nodes",
    },
    "workloads": {
        "rolling-update",
        "rolling-max-unavailable-0",
        "recreate",
        "progress-deadline-rollback",
        "rollout-node-failures",
        "job-backoff-limit",
        "job-active-deadline",
        "job-indexed",
        "cronjob-forbid",
        "statefulset-ordered",
        "statefulset-partition",
        "hpa-scale",
    },
}
LOCAL = [p for p in ALL if key(p) not in NEEDS_PROCESSES]


def test_every_scenario_folder_is_run():
    # A folder the suites do not know would ship scenarios no test runs.
    assert {d.name for d in (ROOT / "scenarios").iterdir() if d.is_dir()} == set(FOLDERS)


@pytest.mark.parametrize("folder", sorted(REQUIRED))
def test_the_sets_are_complete(folder):
    assert {p.stem for p in (ROOT / "scenarios" / folder).glob("*.yaml")} >= REQUIRED[folder]


@pytest.mark.parametrize("path", LOCAL, ids=[key(p) for p in LOCAL])
def test_scenario_on_the_local_runtime(path):
    report = run_local(load_file(str(path), ["spec.runtime=local"]), quiet)
    assert report["passed"], failed(report)
    assert report["runtime"] == "local"
    if path.stem == "apiserver-restart":
        # The restarted apiserver expired every watch: the driver relisted its four kinds.
        assert report["watch"]["relists"] >= 4, report["watch"]


@pytest.mark.parametrize("name,needs", sorted(NEEDS_PROCESSES.items()))
def test_scenarios_that_stop_processes_are_refused_by_local_and_listed_in_the_readme(name, needs):
    path = str(ROOT / "scenarios" / f"{name}.yaml")
    load_file(path)  # fine on ray, the default
    with pytest.raises(ScenarioError, match=f"{needs}.* needs the ray runtime"):
        load_file(path, ["spec.runtime=local"])
    assert f"`{name}`" in (ROOT / "README.md").read_text()


def test_no_other_scenario_needs_processes():
    for path in LOCAL:
        load_file(str(path), ["spec.runtime=local"])  # raises if it asked for killHost or rayNodes


def test_a_scenario_names_a_runtime_only_when_it_needs_processes():
    # Every other file runs on both: Ray by default, local with --runtime local.
    named = {key(p): load_file(str(p)).spec.runtime for p in ALL if "runtime:" in p.read_text()}
    assert named == {name: "ray" for name in NEEDS_PROCESSES}
