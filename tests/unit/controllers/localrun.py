"""Run objects through the local runtime (apiserver, scheduler, kubelets and the
controller-manager in one process) as a scenario would, for the controller tests that want
the whole loop: ``run_objects([job], duration=60, expect=[...])`` returns the report."""

from cluster.scenario.local import run_local
from cluster.scenario.schema import load


def run_objects(objects, *, duration, expect, timeline=(), nodes=2, cpu="8"):
    doc = {
        "apiVersion": "kubemu.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "controller-test"},
        "spec": {
            "runtime": "local",
            "duration": duration,
            "cluster": {"nodes": [{"count": nodes, "capacity": {"cpu": cpu, "memory": "8Gi"}}]},
            "objects": list(objects),
            "timeline": list(timeline),
            "expect": list(expect),
        },
    }
    return run_local(load(doc), lambda _: None)
