"""kubectl 1.33 against ``kubemu serve``: a ReplicationController re-applied from another
manifest of the same name (kubernetes/examples ships two ``guestbook`` RCs) gets a selector
its template no longer matches; upstream refuses that update, and so does kubemu, which
before stored it and then created pods without end, and stopped answering."""

import json

from servedcluster import needs_kubectl

pytestmark = needs_kubectl

FIRST = """
kind: ReplicationController
apiVersion: v1
metadata: {name: guestbook}
spec:
  replicas: 3
  template:
    metadata: {labels: {component: guestbook, app: vitess}}
    spec: {containers: [{name: guestbook, image: vitess/guestbook:v2.0.0-alpha5}]}
"""
SECOND = """
kind: ReplicationController
apiVersion: v1
metadata: {name: guestbook, labels: {app: guestbook}}
spec:
  replicas: 3
  selector: {app: guestbook}
  template:
    metadata: {labels: {app: guestbook}}
    spec: {containers: [{name: guestbook, image: registry.k8s.io/guestbook:v3}]}
"""


def test_an_rc_whose_selector_stops_matching_its_template_is_refused_and_the_server_answers(served):
    served.kubectl("apply", "-f", "-", input=FIRST)
    rc = json.loads(served.kubectl("get", "rc", "guestbook", "-o", "json").stdout)
    assert rc["spec"]["selector"] == {"component": "guestbook", "app": "vitess"}  # defaulted from the labels
    refused = served.kubectl("apply", "-f", "-", input=SECOND, check=False)
    assert refused.returncode != 0
    assert 'The ReplicationController "guestbook" is invalid' in refused.stderr
    assert "selector does not match template labels" in refused.stderr
    after = json.loads(served.kubectl("get", "rc", "guestbook", "-o", "json").stdout)
    assert after["spec"]["template"]["metadata"]["labels"] == {"component": "guestbook", "app": "vitess"}
    assert served.kubectl("get", "--raw", "/readyz").stdout.strip() == "ok"
    served.kubectl("delete", "rc", "guestbook")


def test_an_rc_with_a_bad_restart_policy_or_replicas_is_refused(served):
    bad = SECOND.replace("replicas: 3", "replicas: -1").replace("name: guestbook,", "name: g2,")
    out = served.kubectl("apply", "-f", "-", input=bad, check=False)
    assert out.returncode != 0 and "spec.replicas" in out.stderr
    assert served.kubectl("get", "rc", "g2", check=False).returncode != 0  # nothing stored
