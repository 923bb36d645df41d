"""kubectl 1.33 against ``kubemu serve``: bad input gets a real v1.28 apiserver's answer.

Each manifest is refused with upstream's one line (every error of the object, ``[e1,
e2]`` when several), a 422 Invalid Status with one cause per error, and nothing is stored.
"""

import json

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from servedcluster import needs_kubectl

pytestmark = needs_kubectl

NO_IMAGE = "apiVersion: v1\nkind: Pod\nmetadata: {name: noimg}\nspec:\n  containers: [{name: c}]\n"
BAD_SERVICE = """apiVersion: v1
kind: Service
metadata: {name: badsvc}
spec:
  type: Foo
  ports: [{port: 70000, protocol: tcp, targetPort: 80}]
"""
NEGATIVE_QUOTA = 'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: negq}\nspec:\n  hard: {pods: "-1"}\n'
BAD_CLAIM = """apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: badpvc}
spec:
  accessModes: [ReadWriteSometimes]
  resources: {requests: {storage: "0"}}
"""
BAD_INGRESS = """apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: badingress}
spec:
  rules:
  - host: 10.0.0.1
    http:
      paths: [{path: api, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]
"""
BAD_POLICY = """apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: badpolicy}
spec:
  podSelector: {}
  egress: [{to: [{ipBlock: {cidr: 10.0.0.0/8, except: [192.168.0.0/16]}}]}]
"""
LOOPBACK_ENDPOINTS = """apiVersion: v1
kind: Endpoints
metadata: {name: badeps}
subsets: [{addresses: [{ip: 127.0.0.1}], ports: [{port: 80}]}]
"""
MODES = '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'
CLAIM = (
    f'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: {MODES}\n'
    '* spec.resources[storage]: Invalid value: "0": must be greater than zero'
)
INGRESS = (
    'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address\n'
    '* spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path'
)
EXCEPT = 'spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "192.168.0.0/16": must be a strict subset of `cidr`'
LOOPBACK = (
    'subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)'
)

PORT = "spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive"
PROTOCOL = 'spec.ports[0].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"'
TYPE = 'spec.type: Unsupported value: "Foo": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"'


@pytest.mark.parametrize(
    "manifest, kind, name, message",
    [
        (NO_IMAGE, "pod", "noimg", 'The Pod "noimg" is invalid: spec.containers[0].image: Required value'),
        (BAD_SERVICE, "service", "badsvc", f'The Service "badsvc" is invalid: \n* {PORT}\n* {PROTOCOL}\n* {TYPE}'),
        (
            NEGATIVE_QUOTA,
            "resourcequota",
            "negq",
            'The ResourceQuota "negq" is invalid: spec.hard[pods]: Invalid value: "-1": must be greater than or equal to 0',
        ),
        (BAD_CLAIM, "pvc", "badpvc", f'The PersistentVolumeClaim "badpvc" is invalid: \n* {CLAIM}'),
        (BAD_INGRESS, "ingress", "badingress", f'The Ingress "badingress" is invalid: \n* {INGRESS}'),
        (BAD_POLICY, "networkpolicy", "badpolicy", f'The NetworkPolicy "badpolicy" is invalid: {EXCEPT}'),
        (LOOPBACK_ENDPOINTS, "endpoints", "badeps", f'The Endpoints "badeps" is invalid: {LOOPBACK}'),
    ],
)
def test_kubectl_apply_of_bad_input_prints_upstreams_message_and_stores_nothing(served, manifest, kind, name, message):
    refused = served.kubectl("apply", "-f", "-", input=manifest, check=False)
    assert refused.returncode != 0
    assert refused.stderr.strip() == message
    gone = served.kubectl("get", kind, name, check=False)
    assert gone.returncode != 0 and "NotFound" in gone.stderr


def test_python_client_sees_422_with_a_cause_per_field(served):
    api = client.CoreV1Api(config.new_client_from_config(config_file=str(served.kubeconfig)))
    with pytest.raises(ApiException) as info:
        api.create_namespaced_service("default", yaml.safe_load(BAD_SERVICE))
    assert info.value.status == 422
    assert api.list_namespaced_service("default", field_selector="metadata.name=badsvc").items == []
    status = json.loads(info.value.body)
    assert status["reason"] == "Invalid"
    assert status["message"] == f'Service "badsvc" is invalid: [{PORT}, {PROTOCOL}, {TYPE}]'
    assert [(c["field"], c["reason"]) for c in status["details"]["causes"]] == [
        ("spec.ports[0].port", "FieldValueInvalid"),
        ("spec.ports[0].protocol", "FieldValueNotSupported"),
        ("spec.type", "FieldValueNotSupported"),
    ]
