"""kubectl 1.33 against `kubemu serve`: Services get ClusterIPs, EndpointSlices list the
pods' IPs, every namespace gets its `default` ServiceAccount, and `kubectl create token`
gives a token the API accepts as that account."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml
from servedcluster import ROOT, Served, until

APP = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx, ports: [{name: http, containerPort: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
"""


def test_kubernetes_service(served):
    row = served.kubectl("get", "svc", "kubernetes").stdout.splitlines()[1].split()
    assert row[:5] == ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]


def test_service_cluster_ip_and_endpointslices_list_pod_ips(served):
    served.kubectl("apply", "-f", "-", input=APP)
    row = served.kubectl("get", "svc", "web").stdout.splitlines()[1].split()
    assert row[1] == "ClusterIP" and row[2].startswith("10.96.")
    ips = until(
        lambda: (
            [
                ln.split()[-1]
                for ln in served.kubectl("get", "pods", "-l", "app=web", "-o", "wide").stdout.splitlines()[1:]
            ]
            if served.kubectl("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].status.podIP}").stdout.count(
                "."
            )
            == 6
            else None
        )
    )
    assert ips
    pod_ips = served.kubectl("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[*].status.podIP}").stdout.split()

    def listed():
        out = served.kubectl(
            "get",
            "endpointslices",
            "-l",
            "kubernetes.io/service-name=web",
            "-o",
            "jsonpath={.items[*].addressType} {.items[*].ports[*].port} {.items[*].endpoints[*].addresses[*]}",
        ).stdout.split()
        return out if sorted(out[2:]) == sorted(pod_ips) else None

    listed_now = until(listed, 20)
    assert listed_now and listed_now[:2] == ["IPv4", "8080"]
    eps = until(
        lambda: (
            served.kubectl("get", "endpoints", "web", "-o", "jsonpath={.subsets[0].addresses[*].ip}").stdout.split()
            or None
        )
    )
    assert sorted(eps) == sorted(pod_ips)


def test_taken_cluster_ip_refused_with_upstreams_message(served):
    proc = served.kubectl("create", "service", "clusterip", "dup", "--tcp=80", "--clusterip=10.96.0.1", check=False)
    assert proc.returncode == 1
    assert (
        'Service "dup" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.1"}: failed to allocate IP '
        "10.96.0.1: provided IP is already allocated" in proc.stderr
    )


def test_default_serviceaccount_and_token_identity(served):
    served.kubectl("create", "namespace", "team-a")
    assert until(lambda: "default" in served.kubectl("get", "sa", "-n", "team-a").stdout)
    token = until(lambda: served.kubectl("create", "token", "default", check=False).stdout.strip() or None)
    assert token and token.count(".") == 2
    assert served.kubectl("--token", token, "get", "pods").returncode == 0
    who = served.kubectl("--token", token, "auth", "whoami").stdout
    assert "system:serviceaccount:default:default" in who
    assert "Unauthorized" in served.kubectl("--token", token + "x", "get", "pods", check=False).stderr
    short = served.kubectl("create", "token", "default", "--duration=5m", check=False)
    assert "may not specify a duration less than 10 minutes" in short.stderr
    missing = served.kubectl("create", "token", "nobody", check=False)
    assert 'serviceaccounts "nobody" not found' in missing.stderr


def test_kubernetes_endpoints_name_the_served_address_and_port(served):
    row = served.kubectl("get", "endpoints", "kubernetes").stdout.splitlines()[1].split()
    assert row[:2] == ["kubernetes", f"127.0.0.1:{served.port}"]
    got = served.kubectl(
        "get", "endpointslice", "kubernetes", "-o", "jsonpath={.endpoints[0].addresses[0]}:{.ports[0].port}"
    ).stdout
    assert got == f"127.0.0.1:{served.port}"


def test_kube_root_ca_is_the_kubeconfigs_ca(served):
    config = yaml.safe_load(served.kubeconfig.read_text())
    ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
    assert ca.startswith("-----BEGIN CERTIFICATE-----")
    for ns in ("default", "kube-system"):
        got = until(
            lambda ns=ns: (
                served.kubectl(
                    "get", "configmap", "kube-root-ca.crt", "-n", ns, "-o", "jsonpath={.data.ca\\.crt}", check=False
                ).stdout
            )
        )
        assert got == ca
    auth = served.kubectl(
        "get", "cm", "extension-apiserver-authentication", "-n", "kube-system", "-o", "jsonpath={.data.client-ca-file}"
    ).stdout
    assert auth == ca


@pytest.fixture(scope="module")
def ranged(tmp_path_factory):
    s = Served(tmp_path_factory.mktemp("ranged"), nodes=1, extra=("--service-cluster-ip-range", "10.100.0.0/16"))
    yield s
    s.stop()


def test_service_cluster_ip_range_flag(ranged):
    row = ranged.kubectl("get", "svc", "kubernetes").stdout.splitlines()[1].split()
    assert row[:3] == ["kubernetes", "ClusterIP", "10.100.0.1"]
    ranged.kubectl("create", "service", "clusterip", "one", "--tcp=80")
    assert ranged.kubectl("get", "svc", "one", "-o", "jsonpath={.spec.clusterIP}").stdout == "10.100.1.1"
    out = ranged.kubectl("create", "service", "clusterip", "out", "--tcp=80", "--clusterip=10.96.0.5", check=False)
    assert "The range of valid IPs is 10.100.0.0/16" in out.stderr


@pytest.mark.parametrize(
    "value,message",
    [
        ("10.0.0.0/8", "'10.0.0.0/8' is too large; for 32-bit addresses, the mask must be >= 12"),
        ("ten", "'ten' is not a CIDR (no /prefix length)"),
    ],
)
def test_bad_service_cluster_ip_range_refused_before_start(tmp_path, value, message):
    kubeconfig = tmp_path / "kc"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "actors.harness.cli",
            "serve",
            "--service-cluster-ip-range",
            value,
            "--kubeconfig",
            str(kubeconfig),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"kubemu: --service-cluster-ip-range: {message}"]
    assert not kubeconfig.exists()


KUBECTL_133 = shutil.which("kubectl.1.33") or os.path.join(
    os.path.dirname(os.path.realpath(shutil.which("kubectl") or "kubectl")), "kubectl.1.33"
)


def _rows(served, *args: str) -> list[list[str]]:
    """``kubectl`` 1.33's printed rows (header dropped, AGE cut off: it ticks)."""
    env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(served.cache)}
    out = subprocess.run([KUBECTL_133, "get", *args], env=env, capture_output=True, text=True, timeout=60, check=True)
    return [line.split() for line in out.stdout.splitlines()[1:]]


def _get(served, *args: str) -> dict:
    return json.loads(served.kubectl("get", *args, "-o", "json").stdout)


def test_kubectl_133_prints_endpoints_slices_and_services_as_upstream(served):
    served.kubectl("apply", "-f", "-", input=APP)
    until(lambda: len(_get(served, "endpoints", "web").get("subsets", [{}])[0].get("addresses", [])) == 2, 30)
    ep = _get(served, "endpoints", "web")["subsets"][0]
    pairs = ",".join(f"{a['ip']}:{ep['ports'][0]['port']}" for a in ep["addresses"])
    assert [r[:2] for r in _rows(served, "endpoints", "web")] == [["web", pairs]]
    (sl,) = _get(served, "endpointslices", "-l", "kubernetes.io/service-name=web")["items"]
    ips = ",".join(a for e in sl["endpoints"] for a in e["addresses"])
    want = [sl["metadata"]["name"], "IPv4", "8080", ips]
    assert [r[:4] for r in _rows(served, "endpointslices", "-l", "kubernetes.io/service-name=web")] == [want]
    svc = _get(served, "svc", "web")
    (row,) = _rows(served, "svc", "web", "-o", "wide")
    assert row[:5] + row[6:] == ["web", "ClusterIP", svc["spec"]["clusterIP"], "<none>", "80/TCP", "app=web"]
    (k8s,) = _rows(served, "endpointslices", "kubernetes")
    assert k8s[:4] == ["kubernetes", "IPv4", str(served.port), "127.0.0.1"]


def test_pod_ips_come_from_their_nodes_pod_cidr(served):
    import ipaddress

    served.kubectl("apply", "-f", "-", input=APP)
    nodes = _get(served, "nodes")["items"]
    cidrs = {n["metadata"]["name"]: n["spec"]["podCIDR"] for n in nodes}
    assert sorted(cidrs.values()) == [f"10.244.{i}.0/24" for i in range(len(nodes))]
    pods = until(
        lambda: (
            [p for p in _get(served, "pods", "-l", "app=web")["items"] if p["status"].get("podIP")]
            if all(p["status"].get("podIP") for p in _get(served, "pods", "-l", "app=web")["items"])
            else None
        ),
        30,
    )
    assert pods
    ips = [p["status"]["podIP"] for p in pods]
    assert len(set(ips)) == len(ips)
    for p in pods:
        net = ipaddress.ip_network(cidrs[p["spec"]["nodeName"]])
        assert ipaddress.ip_address(p["status"]["podIP"]) in net
