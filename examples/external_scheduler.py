"""An external scheduler in about 60 lines: it watches the pods that name it in
``spec.schedulerName`` and binds each to the node with the fewest pods, through the
``pods/binding`` subresource, with the official Python client. Run it against
``kubemu serve`` (``--no-scheduler`` leaves every pod to it, or keep kubemu's scheduler for
the others):

    kubemu serve --nodes 10 &
    KUBECONFIG=kubemu.kubeconfig python examples/external_scheduler.py

Pods with ``schedulerName: my-scheduler`` then run on the emptiest nodes.
"""

from __future__ import annotations

import argparse
from collections import Counter

from kubernetes import client, config, watch

SCHEDULER = "my-scheduler"


def emptiest_node(api: client.CoreV1Api) -> str | None:
    """The Ready, schedulable node with the fewest pods bound to it (ties: by name)."""
    ready = [
        n.metadata.name
        for n in api.list_node().items
        if not n.spec.unschedulable and any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or [])
    ]
    load = Counter(p.spec.node_name for p in api.list_pod_for_all_namespaces().items if p.spec.node_name)
    return min(sorted(ready), key=lambda n: load[n], default=None)


def bind(api: client.CoreV1Api, pod: client.V1Pod, node: str) -> None:
    target = client.V1ObjectReference(kind="Node", api_version="v1", name=node)
    meta = client.V1ObjectMeta(name=pod.metadata.name, namespace=pod.metadata.namespace, uid=pod.metadata.uid)
    body = client.V1Binding(metadata=meta, target=target)
    api.create_namespaced_pod_binding(pod.metadata.name, pod.metadata.namespace, body)


def run(max_pods: int | None = None, timeout: int | None = None) -> int:
    """Schedule pending pods as they appear; stop after ``max_pods`` binds or ``timeout`` s."""
    config.load_kube_config()
    api, bound = client.CoreV1Api(), 0
    stream = watch.Watch().stream(
        api.list_pod_for_all_namespaces, field_selector=f"spec.schedulerName={SCHEDULER}", timeout_seconds=timeout
    )
    for event in stream:
        pod = event["object"]
        if event["type"] == "DELETED" or pod.spec.node_name or pod.metadata.deletion_timestamp:
            continue
        node = emptiest_node(api)
        if node is None:
            continue  # nothing Ready yet: the next event looks again
        bind(api, pod, node)
        bound += 1
        print(f"bound {pod.metadata.namespace}/{pod.metadata.name} to {node}", flush=True)
        if max_pods is not None and bound >= max_pods:
            break
    return bound


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-pods", type=int, default=None)
    p.add_argument("--timeout", type=int, default=None, help="stop watching after this many seconds")
    args = p.parse_args()
    run(args.max_pods, args.timeout)
