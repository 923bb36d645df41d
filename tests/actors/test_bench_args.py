"""``kubemu bench`` input checks and the benchmark workloads (no Ray is started here)."""

import pytest

from actors.harness.cli import main
from actors.harness.workloads import FILL_PER_NODE, GROUP, bench_pod, bench_pools, preempt_pod


@pytest.mark.parametrize(
    "argv,message",
    [
        (["bench", "schedule", "--workload", "heavy"], "--workload: 'heavy' is not one of basic, mixed"),
        (["bench", "schedule", "--nodes", "0"], "--nodes: 0 must be at least 1"),
        (["bench", "schedule", "--pods", "0"], "--pods: 0 must be at least 1"),
        (["bench", "preempt", "--nodes", "0"], "--nodes: 0 must be at least 1"),
        (
            ["bench", "chaos", "--kill-rate", "0"],
            "--kill-rate: 0.0 must be greater than 0 (faults per emulated second)",
        ),
        (
            ["bench", "chaos", "--targets", "killNode,reboot"],
            "--targets: 'reboot' is not an action random chaos runs (supported: killNode, killHost, partition)",
        ),
        (
            ["bench", "chaos", "--restart", "etcd"],
            "--restart: 'etcd' is not a component kubemu restarts (supported: apiserver, scheduler, yunikorn, controller-manager, host)",
        ),
        (["bench", "chaos", "--duration", "0"], "--duration: 0.0 must be greater than 0"),
        (["bench", "chaos", "--time-scale", "-1"], "--time-scale: -1.0 must be greater than 0"),
        (["bench", "rollout", "--replicas", "0"], "--replicas: 0 must be at least 1"),
        (["bench", "rollout", "--nodes", "0", "--runtime", "ray"], "--nodes: 0 must be at least 1"),
        (["bench", "rollout", "--against-schedule", "0"], "--against-schedule: 0 must be at least 1"),
        (
            ["bench", "rollout", "--against-schedule", "3", "--runtime", "local"],
            "--against-schedule: needs --runtime ray (bench schedule runs through the actors)",
        ),
        (["bench", "rollout", "--against-schedule", "3", "--replicas", "0"], "--replicas: 0 must be at least 1"),
        (
            ["bench", "preempt", "--no-kubelets"],
            "--no-kubelets: only bench schedule runs without kubelets, not bench preempt",
        ),
        (
            ["bench", "rollout", "--no-kubelets"],
            "--no-kubelets: only bench schedule runs without kubelets, not bench rollout",
        ),
        (
            ["bench", "cycle", "--no-kubelets"],
            "--no-kubelets: only bench schedule runs without kubelets, not bench cycle",
        ),
        (
            ["bench", "preempt", "--explain", "all"],
            "--explain: only bench schedule, cycle and density take it, not bench preempt",
        ),
    ],
)
def test_bad_bench_arguments_exit_2_with_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"kubemu: {message}"


def test_basic_pods_have_no_constraints():
    pods = [bench_pod(i) for i in range(30)]
    assert all("affinity" not in p["spec"] and "topologySpreadConstraints" not in p["spec"] for p in pods)
    assert {p["metadata"]["labels"]["app"] for p in pods} == {"bench"}


def test_mixed_workload_constrains_a_third_of_the_pods_evenly():
    pods = [bench_pod(i, "mixed") for i in range(900)]
    kinds = {"preferredAntiAffinity": 0, "spread": 0, "requiredAffinity": 0, "none": 0}
    for p in pods:
        spec = p["spec"]
        aff = spec.get("affinity") or {}
        if "podAntiAffinity" in aff:
            kinds["preferredAntiAffinity"] += 1
        elif "podAffinity" in aff:
            kinds["requiredAffinity"] += 1
        elif "topologySpreadConstraints" in spec:
            kinds["spread"] += 1
        else:
            kinds["none"] += 1
    assert kinds == {"preferredAntiAffinity": 100, "spread": 100, "requiredAffinity": 100, "none": 600}
    assert pods[0]["metadata"]["labels"]["app"] == "app-0"
    assert pods[GROUP]["metadata"]["labels"]["app"] == "app-1"


def test_bench_pools_spread_nodes_over_zones():
    pools = bench_pools(25)
    assert sum(p.count for p in pools) == 25 and len(pools) == 10
    assert [p.count for p in pools][:6] == [3, 3, 3, 3, 3, 2]
    assert len(bench_pools(3)) == 3


def test_cycle_bench_schedules_every_pod_without_ray(capsys):
    import json

    assert main(["bench", "cycle", "--nodes", "30", "--pods", "60", "--workload", "mixed"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (result["benchmark"], result["bound"], result["nodes"]) == ("cycle", 60, 30)
    assert result["podsPerSecond"] > 0


def test_rollout_bench_rolls_every_replica_in_one_process(capsys):
    import json

    assert main(["bench", "rollout", "--nodes", "20", "--replicas", "100"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (result["benchmark"], result["runtime"], result["complete"], result["replicas"]) == (
        "rollout",
        "local",
        True,
        100,
    )
    assert result["newPodsPerSecond"] > 0 and result["createPodsPerSecond"] > 0


def test_preempt_pods_fill_a_node_and_each_preemptor_needs_one_victim():
    from cluster.api.quantity import to_milli

    low, high = preempt_pod("l", "bench-low"), preempt_pod("h", "bench-high")
    cpu = to_milli(low["spec"]["containers"][0]["resources"]["requests"]["cpu"])
    assert cpu * FILL_PER_NODE <= 4000 < cpu * (FILL_PER_NODE + 1)  # four fill a 4-CPU node
    assert 4000 - cpu * FILL_PER_NODE < cpu  # ...and leave no room for a fifth
    assert high["spec"]["priorityClassName"] == "bench-high" and high["spec"]["terminationGracePeriodSeconds"] == 0


def test_preempt_cycle_bench_preempts_one_victim_per_pod(capsys):
    import json

    assert main(["bench", "preempt-cycle", "--nodes", "30", "--pods", "20"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (result["bound"], result["victims"]) == (20, 20)  # room for each on its own node


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "preempt-cycle", "--nodes", "2", "--pods", "20"],
        ["bench", "cycle", "--nodes", "1", "--pods", "200"],
        ["bench", "local", "--nodes", "1", "--pods", "200"],
    ],
    ids=["preempt-cycle", "cycle", "local"],
)
def test_an_in_process_bench_whose_pods_cannot_fit_says_so_and_exits_1(argv, capsys):
    import json

    assert main(argv) == 1
    captured = capsys.readouterr()
    result = json.loads(captured.out.strip().splitlines()[-1])
    assert result["complete"] is False and 0 < result["bound"] < int(argv[-1])
    assert f"{int(argv[-1]) - result['bound']} of {argv[-1]} pods never bound" in captured.err


def test_rollout_against_schedule_alternates_the_order_and_takes_the_median_ratio():
    from actors.harness.benchrollout import against_schedule

    ran, rates = [], iter([400.0, 1000.0, 600.0, 1000.0, 500.0, 800.0])

    def bench(name, key, complete=True):
        def run():
            ran.append(name)
            return {key: next(rates), "complete": complete}

        return run

    result = against_schedule(3, bench("rollout", "newPodsPerSecond"), bench("schedule", "podsPerSecond"), ran.append)
    runs = [r for r in ran if r in ("rollout", "schedule")]
    assert runs == ["rollout", "schedule", "schedule", "rollout", "rollout", "schedule"]
    # Rounds: 400/1000; then schedule first, 600, and the rollout 1000; then 500/800.
    assert [r["ratio"] for r in result["rounds"]] == [0.4, 1.667, 0.625]
    assert (result["medianRatio"], result["roundsAtOrAboveHalf"], result["complete"]) == (0.625, 2, True)
    unfinished = {"newPodsPerSecond": 300.0, "complete": False}
    lost = against_schedule(1, lambda: unfinished, lambda: {"podsPerSecond": 1000.0, "complete": True}, ran.append)
    assert lost["complete"] is False and lost["rounds"][0]["ratio"] == 0.3
