"""The controllers' work queues on /metrics, through the real kubectl and the Python
client: a cordon (``spec.unschedulable``, patched with the Python client) reaches the
node-taints reconciler (the node gets the unschedulable taint) and its queue's counters,
read with ``kubectl get --raw /metrics``, move under upstream's metric names."""

import pytest
from servedcluster import needs_kubectl, until

pytestmark = needs_kubectl


def _series(text: str, prefix: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(prefix + " "):
            return float(line.split()[-1])
    return None


def _core(served):
    kubernetes = pytest.importorskip("kubernetes")
    kubernetes.config.load_kube_config(config_file=str(served.kubeconfig))
    return kubernetes.client.CoreV1Api()


def _taint_keys(core, node: str) -> list[str]:
    return [t.key for t in core.read_node(node).spec.taints or ()]


def test_a_cordon_goes_through_the_node_taints_queue(served):
    core = _core(served)
    before = served.kubectl("get", "--raw", "/metrics").stdout
    assert "# TYPE workqueue_depth gauge" in before
    assert "# TYPE controller_runtime_reconcile_total counter" in before
    adds = _series(before, 'workqueue_adds_total{name="node-taints"}')
    assert adds is not None and adds >= 3  # every node registered once at least

    core.patch_node("node-1", {"spec": {"unschedulable": True}})
    assert until(lambda: "node.kubernetes.io/unschedulable" in _taint_keys(core, "node-1"))
    after = served.kubectl("get", "--raw", "/metrics").stdout
    assert _series(after, 'workqueue_adds_total{name="node-taints"}') > adds
    ok = _series(after, 'controller_runtime_reconcile_total{controller="node-taints",result="success"}')
    assert ok is not None and ok >= 4
    assert _series(after, 'controller_runtime_reconcile_errors_total{controller="node-taints"}') == 0.0
    assert _series(after, 'workqueue_depth{name="node-taints"}') == 0.0

    core.patch_node("node-1", {"spec": {"unschedulable": False}})
    assert until(lambda: "node.kubernetes.io/unschedulable" not in _taint_keys(core, "node-1"))


def test_the_python_client_reads_the_same_series(served):
    api = _core(served).api_client
    resp = api.call_api(*api.param_serialize("GET", "/metrics", auth_settings=["BearerToken"]))
    resp.read()
    text = resp.data.decode()
    assert resp.status == 200
    assert _series(text, 'workqueue_retries_total{name="ttl-after-finished"}') == 0.0
    assert _series(text, 'workqueue_adds_total{name="cronjob"}') is not None
