"""kubectl 1.33 against ``kubemu serve``: a claim of a WaitForFirstConsumer class waits
until a pod uses it, then ``get pvc`` shows it Bound on the pod's node; a default class
fills a claim's missing class; a bad provisioning delay is refused with a field error;
the Python client sees the same binding."""

import json

from kubernetes import client, config
from servedcluster import needs_kubectl, until

pytestmark = needs_kubectl

OBJECTS = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-wffc
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 2Gi}}
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {name: user}
spec:
  containers: [{name: c, image: nginx}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
"""
BAD_CLASS = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: bad
  annotations: {kubemu.io/provision-seconds: soon}
provisioner: example.com/x
"""


def test_get_pvc_shows_bound_after_a_pod_uses_it(served):
    served.kubectl("apply", "-f", "-", input=OBJECTS)
    claim = json.loads(served.kubectl("get", "pvc", "data", "-o", "json").stdout)
    assert claim["spec"]["storageClassName"] == "local-wffc"  # DefaultStorageClass admission
    until(lambda: "WaitForFirstConsumer" in served.kubectl("describe", "pvc", "data").stdout)
    row = served.kubectl("get", "pvc", "data", "--no-headers").stdout.split()
    assert row[:2] == ["data", "Pending"]
    served.kubectl("apply", "-f", "-", input=POD)

    def bound():
        row = served.kubectl("get", "pvc", "data", "--no-headers").stdout.split()
        return row if row[1] == "Bound" else None

    row = until(bound)
    assert row[1] == "Bound" and row[2].startswith("pvc-") and row[3:6] == ["2Gi", "RWO", "local-wffc"]
    pod = json.loads(served.kubectl("get", "pod", "user", "-o", "json").stdout)
    claim = json.loads(served.kubectl("get", "pvc", "data", "-o", "json").stdout)
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == pod["spec"]["nodeName"]
    pv = json.loads(served.kubectl("get", "pv", row[2], "-o", "json").stdout)
    values = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"]
    assert values == [pod["spec"]["nodeName"]] and pv["status"]["phase"] == "Bound"

    api = config.new_client_from_config(str(served.kubeconfig))
    got = client.CoreV1Api(api).read_namespaced_persistent_volume_claim("data", "default")
    assert got.status.phase == "Bound" and got.spec.volume_name == row[2]


def test_a_bad_provisioning_delay_is_refused_and_nothing_is_stored(served):
    refused = served.kubectl("apply", "-f", "-", input=BAD_CLASS, check=False)
    assert refused.returncode == 1
    assert (
        'The StorageClass "bad" is invalid: metadata.annotations[kubemu.io/provision-seconds]: '
        'Invalid value: "soon": must be a non-negative number of seconds'
    ) in refused.stderr
    assert served.kubectl("get", "sc", "bad", check=False).returncode == 1
