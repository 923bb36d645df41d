"""A node host's kubelets record events as client-go's recorder does: at most 25 about one
object from one node at once (the filter itself: tests/unit/api/test_event_spam.py)."""

from cluster.api.events import make_event
from cluster.api.requests import RecordEvent
from cluster.kubelet.component import NodeHostComponent
from cluster.kubelet.node import NodeConfig
from cluster.kubelet.outbox import Outbox
from cluster.runtime.component import START, Batch


def test_the_host_passes_25_events_per_node_and_object():
    comp = NodeHostComponent([NodeConfig("n1", {"cpu": "4", "memory": "8Gi", "pods": "110"})])
    comp.reconcile(Batch(now=0.0, boot=START))
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u"}}

    def noisy() -> Outbox:
        out = Outbox()
        for host in ("n1", "n2"):
            out.events += [make_event(pod, "BackOff", "Back-off", 1.0, component="kubelet", host=host)] * 30
        return out

    comp.host.drain = noisy  # type: ignore[method-assign]
    recorded = [r.event["source"]["host"] for r in comp.reconcile(Batch(now=1.0)).writes if isinstance(r, RecordEvent)]
    assert recorded == ["n1"] * 25 + ["n2"] * 25
