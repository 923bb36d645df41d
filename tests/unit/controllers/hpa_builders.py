"""Builders for the HorizontalPodAutoscaler tests.

``hpa("web", cpu=50)`` is an HPA on Deployment ``web`` with one cpu Utilization metric;
``target("web", replicas=2)`` the Deployment (or another kind) as a watch shows it;
``worker("web-a", "250m")`` a Running, Ready pod of it whose container runs since
``start`` and declares its usage with ``kubemu.io/cpu-usage`` (or ``memory-usage``).
"""

from __future__ import annotations

from deploy_builders import deployment
from workload_builders import pod

from cluster.clock import rfc3339


def hpa(name="web", target="web", low=1, high=10, cpu=50, behavior=None, metrics=None, kind="Deployment") -> dict:
    spec = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": target},
        "minReplicas": low,
        "maxReplicas": high,
        "metrics": metrics
        or [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}},
            }
        ],
    }
    if behavior is not None:
        spec["behavior"] = behavior
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-hpa-{name}", "generation": 1},
        "spec": spec,
    }


def target(name="web", replicas=2, kind="Deployment", rv="7") -> dict:
    obj = deployment(name, replicas=replicas)
    obj["kind"] = kind
    obj["metadata"].update(uid=f"uid-{name}", resourceVersion=rv)
    return obj


def worker(name, usage="250m", request="500m", start=0.0, ready=True, app="web", resource="cpu"):
    """A Running pod of the target, its container running since ``start``."""
    p = pod(name).labels(app=app)
    p.spec["containers"] = [{"name": "c", "image": "nginx", "resources": {"requests": {resource: request}}}]
    if usage is not None:
        p.meta["annotations"] = {f"kubemu.io/{resource}-usage": usage}
    p.ready(at=start, ready=ready).status(
        phase="Running",
        startTime=rfc3339(start),
        containerStatuses=[{"name": "c", "state": {"running": {"startedAt": rfc3339(start)}}}],
    )
    return p
