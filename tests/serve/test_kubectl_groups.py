"""The real kubectl (1.33, by our /version) against ``kubemu serve`` for the groups and versions
real manifests use (issue 36): networking.k8s.io kinds, autoscaling/v1 as a view of the
autoscaling/v2 HPAs, events.k8s.io, ``kubectl auth can-i`` / ``whoami`` and the local APIServices."""

import json

from servedcluster import needs_kubectl, until

pytestmark = needs_kubectl

INGRESS_CLASS = """
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  annotations: {ingressclass.kubernetes.io/is-default-class: "true"}
spec: {controller: k8s.io/ingress-nginx}
"""
INGRESS = """
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  tls: [{hosts: [web.example.com], secretName: web-tls}]
  rules:
  - host: %s
    http:
      paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]
"""
NETWORK_POLICY = """
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db}
spec:
  podSelector: {matchLabels: {role: db}}
  policyTypes: [Ingress]
  ingress: [{from: [{podSelector: {matchLabels: {role: web}}}], ports: [{protocol: TCP, port: 5432}]}]
"""
HPA_V1 = """
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 4
  targetCPUUtilizationPercentage: 60
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: evented}
spec:
  containers: [{name: c, image: nginx}]
"""


def rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines()]


def test_networking_kinds_create_get_apply_delete(served):
    made = served.kubectl(
        "apply", "-f", "-", input=INGRESS_CLASS + "---" + INGRESS % "web.example.com" + "---" + NETWORK_POLICY
    )
    assert made.stdout.splitlines() == [
        "ingressclass.networking.k8s.io/nginx created",
        "ingress.networking.k8s.io/web created",
        "networkpolicy.networking.k8s.io/db created",
    ]
    ing = rows(served.kubectl("get", "ingress").stdout)
    assert ing[0] == ["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]
    assert ing[1][:5] == ["web", "nginx", "web.example.com", "80,", "443"]  # the default class, given at admission
    assert rows(served.kubectl("get", "ingressclass").stdout)[0] == ["NAME", "CONTROLLER", "PARAMETERS", "AGE"]
    assert rows(served.kubectl("get", "ingressclass").stdout)[1][:3] == ["nginx", "k8s.io/ingress-nginx", "<none>"]
    netpol = rows(served.kubectl("get", "netpol").stdout)
    assert netpol[0] == ["NAME", "POD-SELECTOR", "AGE"] and netpol[1][:2] == ["db", "role=db"]
    # A second apply that changes a host is a strategic merge patch of a built-in kind.
    again = served.kubectl("apply", "-f", "-", input=INGRESS % "www.example.com")
    assert again.stdout.strip() == "ingress.networking.k8s.io/web configured"
    assert served.kubectl("get", "ing", "web", "-o", "jsonpath={.spec.rules[0].host}").stdout == "www.example.com"
    gone = served.kubectl("delete", "ingress/web", "networkpolicy/db", "ingressclass/nginx")
    assert 'ingress.networking.k8s.io "web" deleted' in gone.stdout
    assert served.kubectl("get", "ingress", "web", check=False).returncode != 0


def test_an_hpa_created_as_v1_reads_back_as_v2(served):
    assert (
        served.kubectl("apply", "-f", "-", input=HPA_V1).stdout.strip()
        == "horizontalpodautoscaler.autoscaling/web created"
    )
    v2 = json.loads(served.kubectl("get", "hpa.v2.autoscaling", "web", "-o", "json").stdout)
    assert v2["apiVersion"] == "autoscaling/v2"
    assert v2["spec"]["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}
    ]
    v1 = served.kubectl(
        "get",
        "horizontalpodautoscalers.v1.autoscaling",
        "web",
        "-o",
        "jsonpath={.apiVersion} {.spec.targetCPUUtilizationPercentage}",
    )
    assert v1.stdout == "autoscaling/v1 60"
    assert served.kubectl("get", "hpa").stdout.splitlines()[0].split()[:3] == ["NAME", "REFERENCE", "TARGETS"]
    served.kubectl("delete", "horizontalpodautoscalers.v1.autoscaling", "web")


def test_events_through_events_k8s_io(served):
    served.kubectl("apply", "-f", "-", input=POD)
    header = "LAST SEEN TYPE REASON OBJECT MESSAGE".split()

    def scheduled():
        out = served.kubectl("get", "events.v1.events.k8s.io").stdout
        return out if "pod/evented" in out else None

    out = until(scheduled, 30)
    assert out and rows(out)[0] == header
    listed = json.loads(served.kubectl("get", "events.v1.events.k8s.io", "-o", "json").stdout)
    mine = [e for e in listed["items"] if e["regarding"]["name"] == "evented"]
    assert mine and all(e["apiVersion"] == "events.k8s.io/v1" and "note" in e for e in mine)
    served.kubectl("delete", "pod", "evented", "--wait=false")


def test_auth_can_i_and_whoami(served):
    assert served.kubectl("auth", "can-i", "create", "pods").stdout.strip() == "yes"
    assert served.kubectl("auth", "can-i", "delete", "nodes").stdout.strip() == "yes"
    listing = served.kubectl("auth", "can-i", "--list").stdout.splitlines()
    assert listing[0].split()[:2] == ["Resources", "Non-Resource"] and listing[1].split()[0] == "*.*"
    me = rows(served.kubectl("auth", "whoami").stdout)
    assert me[0] == ["ATTRIBUTE", "VALUE"]
    assert me[1] == ["Username", "kubemu-admin"]
    assert me[2] == ["Groups", "[system:masters", "system:authenticated]"]


def test_get_apiservices_lists_the_local_group_versions(served):
    table = {r[0]: r[1:3] for r in rows(served.kubectl("get", "apiservices").stdout)[1:]}
    assert table["v1.apps"] == ["Local", "True"] and table["v2.autoscaling"] == ["Local", "True"]
    assert table["v1.networking.k8s.io"] == ["Local", "True"] and table["v1.events.k8s.io"] == ["Local", "True"]
