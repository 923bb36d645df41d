"""PodMetrics and NodeMetrics from the declared usage, at the container's age."""

from cluster.api.podmetrics import container_usage_now, node_metrics, pod_metrics
from cluster.clock import rfc3339


def running(name="p", started=10.0, **annotations) -> dict:
    return {
        "metadata": {"name": name, "namespace": "default", "annotations": annotations},
        "spec": {"containers": [{"name": "c"}, {"name": "d"}]},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {"name": "c", "state": {"running": {"startedAt": rfc3339(started)}}},
                {"name": "d", "state": {"running": {"startedAt": rfc3339(started)}}},
            ],
        },
    }


def test_a_ramp_is_read_at_the_containers_age_and_undeclared_usage_is_zero():
    pod = running(**{"kubemu.io/cpu-usage.c": "ramp(100m, 300m, 20s)", "kubemu.io/memory-usage": "64Mi"})
    assert container_usage_now(pod, 20.0) == {"c": (200, 64 * 2**20), "d": (0, 64 * 2**20)}
    m = pod_metrics(pod, 40.0, "t")
    assert m["containers"][0]["usage"] == {"cpu": "300m", "memory": "64Mi"}


def test_only_running_pods_have_metrics_and_a_node_sums_its_pods():
    pending = {**running(), "status": {"phase": "Pending"}}
    assert pod_metrics(pending, 5.0, "t") is None
    pods = [running("a", **{"kubemu.io/cpu-usage": "1"}), running("b", **{"kubemu.io/cpu-usage": "500m"}), pending]
    usage = node_metrics({"metadata": {"name": "n1"}}, pods, 30.0, "t")["usage"]
    assert usage == {"cpu": "3", "memory": "0"}  # two containers each at 1 CPU, two at 500m
