"""``kubectl label node`` and ``kubectl taint node`` against a ``kubemu serve`` process reach
the node's kubelet: its admission checks pods against the Node as stored, labels and
taints set through the API included."""

import json
import os
import subprocess
import time

from servedcluster import needs_kubectl, until

pytestmark = needs_kubectl

SELECTS = """
apiVersion: v1
kind: Pod
metadata: {name: selects}
spec:
  nodeSelector: {x: "y"}
  tolerations: [{key: k, operator: Exists, effect: NoExecute}]
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
"""
PINNED = """
apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {{case: taint}}}}
spec:
  nodeName: node-1
  tolerations: {tolerations}
  containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: 100m}}}}}}]
"""


def phase_and_node(served, name):
    got = served.kubectl("get", "pod", name, "-o", "json", check=False)
    if got.returncode != 0:
        return None
    pod = json.loads(got.stdout)
    return pod["status"].get("phase"), pod["status"].get("reason"), pod["spec"].get("nodeName")


def watch_pods(served, selector):
    """``kubectl get pods -l SELECTOR --watch``, one line per pod as each change shows it:
    a rejected pod that the taint manager then deletes is seen Failed only on the watch."""
    env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(served.cache)}
    template = '{.metadata.name} {.status.phase} {.status.reason}{"\\n"}'
    return subprocess.Popen(
        ["kubectl", "get", "pods", "-l", selector, "--watch", "-o", f"jsonpath={template}"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_label_set_with_kubectl_admits_a_pod_selecting_it(served):
    assert served.kubectl("label", "node", "node-1", "x=y").stdout.strip() == "node/node-1 labeled"
    served.kubectl("apply", "-f", "-", input=SELECTS)
    assert until(lambda: phase_and_node(served, "selects") == ("Running", None, "node-1"))


def test_a_no_execute_taint_set_with_kubectl_rejects_the_pods_that_do_not_tolerate_it(served):
    assert served.kubectl("taint", "node", "node-1", "k=v:NoExecute").stdout.strip() == "node/node-1 tainted"
    watch = watch_pods(served, "case=taint")
    try:
        time.sleep(1.0)  # the watch is listening before the pods exist
        tolerates = "[{key: k, operator: Equal, value: v, effect: NoExecute}]"
        served.kubectl("apply", "-f", "-", input=PINNED.format(name="tolerates", tolerations=tolerates))
        served.kubectl("apply", "-f", "-", input=PINNED.format(name="does-not", tolerations="[]"))
        assert until(lambda: phase_and_node(served, "tolerates") == ("Running", None, "node-1"))
        rejected = until(lambda: _warnings(served, "does-not"))
        assert rejected == [
            (
                "TaintToleration",
                "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate",
            )
        ]
    finally:
        watch.terminate()
        seen, _ = watch.communicate(timeout=10)
    # Seen Failed on the watch: the taint manager deletes it right after, as upstream's does.
    assert "does-not Failed TaintToleration" in seen.splitlines()


def _warnings(served, pod):
    out = served.kubectl(
        "get", "events", "--field-selector", f"involvedObject.name={pod},type=Warning", "-o", "json"
    ).stdout
    return [(e["reason"], e["message"]) for e in json.loads(out)["items"]]
