import pytest

from cluster.api.qos import compute_pod_qos, get_pod_qos, pod_qos_class


def _c(requests=None, limits=None, name="c"):
    res = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    return {"name": name, "resources": res}


def _pod(*containers, init=()):
    spec = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return {"spec": spec}


G = {"cpu": "1", "memory": "1Gi"}


@pytest.mark.parametrize(
    "pod, expected",
    [
        (_pod(_c()), "BestEffort"),
        (_pod(_c(requests={"cpu": "0", "memory": "0"})), "BestEffort"),  # zero counts as unset
        (_pod(_c(requests={"nvidia.com/gpu": "1"}, limits={"nvidia.com/gpu": "1"})), "BestEffort"),
        (_pod(_c(requests={"ephemeral-storage": "1Gi"})), "BestEffort"),
        (_pod(_c(requests=G, limits=G)), "Guaranteed"),
        (_pod(_c(limits=G)), "Burstable"),  # before the apiserver defaults requests from limits
        (_pod(_c(requests={"cpu": "1"}, limits={"cpu": "1"})), "Burstable"),  # memory limit missing
        (_pod(_c(requests={"cpu": "500m", "memory": "1Gi"}, limits=G)), "Burstable"),
        (_pod(_c(requests={"cpu": "100m"})), "Burstable"),
        (_pod(_c(requests=G, limits=G), _c()), "Burstable"),  # one container without limits
        (_pod(_c(requests=G, limits=G), _c(requests=G, limits=G)), "Guaranteed"),
        (_pod(_c(requests=G, limits={**G, "nvidia.com/gpu": "1"})), "Guaranteed"),
        # Init containers take part exactly like regular containers.
        (_pod(_c(requests=G, limits=G), init=[_c()]), "Burstable"),
        (_pod(_c(requests=G, limits=G), init=[_c(requests=G, limits=G)]), "Guaranteed"),
        (_pod(_c(), init=[_c(requests={"memory": "10Mi"})]), "Burstable"),
        (_pod(_c(requests={"cpu": "0"}, limits={"cpu": "0", "memory": "0"})), "BestEffort"),
    ],
)
def test_qos_table(pod, expected):
    assert compute_pod_qos(pod) == expected
    assert pod_qos_class(pod) == expected


def test_persisted_qos_class_wins_for_get_only():
    pod = _pod(_c(requests=G, limits=G))
    pod["status"] = {"qosClass": "Burstable"}
    assert get_pod_qos(pod) == "Burstable"
    assert compute_pod_qos(pod) == "Guaranteed"
