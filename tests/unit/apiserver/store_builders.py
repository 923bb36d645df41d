"""Small pod builders for the store tests."""


def make_pod(name="p", node=None, grace=None, ns="default", **spec):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": [{"name": "c", "image": "pause"}], **spec},
    }
    if node:
        pod["spec"]["nodeName"] = node
    if grace is not None:
        pod["spec"]["terminationGracePeriodSeconds"] = grace
    return pod
