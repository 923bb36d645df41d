"""The controllers' work-queue and reconcile counters on /metrics: upstream's names and
labels, read from the controller manager's view at each scrape."""

from cluster.controllers.manager import ControllerManager
from cluster.controllers.nodetaints import NodeTaintReconciler
from cluster.controllers.reconciler import ReconcilerStep
from cluster.frontend.metrics import Metrics


def _lines(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(prefix)]


def test_no_controller_manager_shows_the_families_without_series():
    text = Metrics(controllers=lambda: None).render().decode()
    assert "# TYPE workqueue_depth gauge" in text and "# TYPE workqueue_adds_total counter" in text
    assert _lines(text, "workqueue_depth{") == [] and _lines(text, "controller_runtime_reconcile_total{") == []


def test_a_reconciler_counts_under_its_name():
    m = ControllerManager([ReconcilerStep(NodeTaintReconciler, sort_keys=True)])
    cordoned = {"kind": "Node", "metadata": {"name": "n1"}, "spec": {"unschedulable": True}}
    m.on_events(
        [("Node", "ADDED", cordoned, None), ("Node", "ADDED", {"kind": "Node", "metadata": {"name": "n2"}}, None)], 0.0
    )
    text = Metrics(controllers=m.metrics).render().decode()
    assert _lines(text, "workqueue_depth{") == ['workqueue_depth{name="node-taints"} 2.0']
    m.sync(0.0)
    text = Metrics(controllers=m.metrics).render().decode()
    assert _lines(text, "workqueue_depth{") == ['workqueue_depth{name="node-taints"} 0.0']
    assert _lines(text, "workqueue_adds_total{") == ['workqueue_adds_total{name="node-taints"} 2.0']
    assert _lines(text, "workqueue_retries_total{") == ['workqueue_retries_total{name="node-taints"} 0.0']
    assert _lines(text, "controller_runtime_reconcile_total{") == [
        'controller_runtime_reconcile_total{controller="node-taints",result="error"} 0.0',
        'controller_runtime_reconcile_total{controller="node-taints",result="requeue_after"} 0.0',
        'controller_runtime_reconcile_total{controller="node-taints",result="success"} 2.0',
    ]
    assert _lines(text, "controller_runtime_reconcile_errors_total{") == [
        'controller_runtime_reconcile_errors_total{controller="node-taints"} 0.0'
    ]
