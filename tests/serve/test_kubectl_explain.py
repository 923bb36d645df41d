"""What kubectl reads from the OpenAPI documents, against one ``kubemu serve``: ``kubectl
explain`` of every resource ``kubectl api-resources`` lists and of nested fields, with kubectl
1.33 (OpenAPI v3) and 1.27 (``--output plaintext-openapiv2``: OpenAPI v2), a custom kind
explained from its definition's schema and again after an edit, a manifest of a removed API
version refused as a 1.33 cluster refuses it, and ``kind: List`` files created and applied by
kubectl 1.27, 1.32 and 1.33 (which validate a List on the client, from ``/openapi/v2``).
The binaries ``kubectl.1.27`` ... sit beside the kubectl dispatcher; a test whose binary is
absent is skipped. Explains run in a thread pool to keep the module near 30 s."""

import os
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

import pytest
from servedcluster import kubectl_binary, needs_kubectl

pytestmark = needs_kubectl


@pytest.fixture(scope="module")
def kubectl(served, tmp_path_factory):
    """``kubectl(version, *args)``: one binary of the skew, a fresh cache per call."""
    tmp = tmp_path_factory.mktemp("kubectl")

    def run(version: str, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        env = {**os.environ, "KUBECONFIG": str(served.kubeconfig)}
        command = [kubectl_binary(version), "--cache-dir", tempfile.mkdtemp(dir=tmp), *args]
        proc = subprocess.run(command, env=env, input=input, capture_output=True, text=True, timeout=60)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl.{version} {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
        return proc

    return run


def in_pool(jobs):
    with ThreadPoolExecutor(max_workers=6) as pool:
        return list(pool.map(lambda job: job(), jobs))


def api_resources(kubectl) -> list[tuple[str, str, str]]:
    """(name, apiVersion, kind) of each row of ``kubectl api-resources``."""
    rows = []
    for line in kubectl("1.33", "api-resources", "--no-headers").stdout.splitlines():
        parts = line.split()  # NAME [SHORTNAMES] APIVERSION NAMESPACED KIND
        rows.append((parts[0], parts[-3], parts[-1]))
    return rows


def test_explain_every_resource_with_v3_and_v2(kubectl):
    rows = api_resources(kubectl)
    assert len(rows) > 50 and ("deployments", "apps/v1", "Deployment") in rows
    assert ("nodes", "metrics.k8s.io/v1beta1", "NodeMetrics") in rows

    def v3(name, gv, kind):
        return lambda: (name, gv, kind, kubectl("1.33", "explain", name, f"--api-version={gv}", check=False))

    def v2(name, gv, kind):
        args = ("explain", name, f"--api-version={gv}", "--output", "plaintext-openapiv2")
        return lambda: (name, gv, kind, kubectl("1.27", *args, check=False))

    # kubectl's v2 explain maps a metrics.k8s.io resource to the core kind of its name (Node,
    # Pod) and finds no such kind there: the same answer as a real cluster's, left out.
    jobs = [v3(*row) for row in rows] + [v2(*row) for row in rows if not row[1].startswith("metrics.k8s.io/")]
    failed = []
    for name, gv, kind, proc in in_pool(jobs):
        if proc.returncode != 0 or "KIND:" not in proc.stdout or kind not in proc.stdout:
            failed.append(f"{name} {gv}: {proc.stderr.strip()[-200:]}")
    assert failed == []


# (path, a line kubectl 1.33 prints, a line kubectl 1.27's v2 explain prints)
NESTED = [
    (
        "deployment.spec.template.spec.containers.resources",
        "  limits\t<map[string]Quantity>",
        "   limits\t<map[string]string>",
    ),
    ("deployment.spec.strategy.rollingUpdate", "  maxSurge\t<IntOrString>", "   maxSurge\t<string>"),
    ("deployment.spec", "  selector\t<LabelSelector> -required-", "   selector\t<Object> -required-"),
    (
        "pod.spec.affinity.nodeAffinity",
        "  requiredDuringSchedulingIgnoredDuringExecution\t<NodeSelector>",
        "   requiredDuringSchedulingIgnoredDuringExecution\t<Object>",
    ),
    ("pod.spec.containers.ports", "  containerPort\t<integer> -required-", "   containerPort\t<integer> -required-"),
    ("pod.metadata.creationTimestamp", "FIELD: creationTimestamp <string>", "FIELD:    creationTimestamp <string>"),
    (
        "node.status.allocatable",
        "FIELD: allocatable <map[string]Quantity>",
        "FIELD:    allocatable <map[string]string>",
    ),
    ("node.spec.taints", "  effect\t<string> -required-", "   effect\t<string> -required-"),
    (
        "statefulset.spec.volumeClaimTemplates.spec.resources",
        "  requests\t<map[string]Quantity>",
        "   requests\t<map[string]string>",
    ),
    (
        "cronjob.spec.jobTemplate.spec.template.spec.restartPolicy",
        "FIELD: restartPolicy <string>",
        "FIELD:    restartPolicy <string>",
    ),
    ("service.spec.ports", "  targetPort\t<IntOrString>", "   targetPort\t<string>"),
    ("hpa.spec.metrics.resource.target", "  averageUtilization\t<integer>", "   averageUtilization\t<integer>"),
    ("poddisruptionbudget.spec", "  maxUnavailable\t<IntOrString>", "   maxUnavailable\t<string>"),
    (
        "crd.spec.versions.schema.openAPIV3Schema",
        "  x-kubernetes-preserve-unknown-fields\t<boolean>",
        "   x-kubernetes-preserve-unknown-fields\t<boolean>",
    ),
]


def test_explain_nested_fields(kubectl):
    def job(version, path, *more):
        return lambda: (version, path, kubectl(version, "explain", path, *more, check=False))

    jobs = [job("1.33", path) for path, _, _ in NESTED]
    jobs += [job("1.27", path, "--output", "plaintext-openapiv2") for path, _, _ in NESTED]
    expected = {("1.33", path): v3 for path, v3, _ in NESTED} | {("1.27", path): v2 for path, _, v2 in NESTED}
    wrong = []
    for version, path, proc in in_pool(jobs):
        if proc.returncode != 0 or expected[(version, path)] not in proc.stdout.splitlines():
            wrong.append(f"{version} {path}: {proc.stdout[:600]} {proc.stderr[-300:]}")
    assert wrong == []
    unknown = kubectl("1.33", "explain", "deployment.spec.nosuch", check=False)
    assert unknown.returncode == 1 and 'field "nosuch" does not exist' in unknown.stderr


CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: gadgets.example.com}}
spec:
  group: example.com
  scope: Namespaced
  names: {{plural: gadgets, singular: gadget, kind: Gadget}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {{type: integer, description: how big the gadget is}}
              {extra}
"""


def test_a_custom_kind_is_explained_from_its_definition_and_its_edits(kubectl):
    kubectl("1.33", "apply", "-f", "-", input=CRD.format(extra=""))
    try:
        spec = kubectl("1.33", "explain", "gadget.spec").stdout.splitlines()
        assert "  size\t<integer> -required-" in spec and "    how big the gadget is" in spec
        old = kubectl("1.27", "explain", "gadget.spec", "--output", "plaintext-openapiv2").stdout.splitlines()
        assert "   size\t<integer> -required-" in old
        kubectl("1.33", "apply", "-f", "-", input=CRD.format(extra="color: {type: string}"))
        assert "FIELD: color <string>" in kubectl("1.33", "explain", "gadget.spec.color").stdout.splitlines()
    finally:
        kubectl("1.33", "delete", "crd", "gadgets.example.com", "--wait=false")


REMOVED = [
    ("extensions/v1beta1", "DaemonSet"),
    ("batch/v1beta1", "CronJob"),
    ("policy/v1beta1", "PodDisruptionBudget"),
    ("storage.k8s.io/v1beta1", "CSIDriver"),
]


@pytest.mark.parametrize("version", ["1.27", "1.33"])
def test_a_removed_api_version_is_no_match_for_its_kind(kubectl, version):
    def job(api_version, kind):
        manifest = f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x}}\n"
        return lambda: (api_version, kind, kubectl(version, "apply", "-f", "-", input=manifest, check=False))

    for api_version, kind, proc in in_pool([job(*removed) for removed in REMOVED]):
        assert proc.returncode == 1
        assert proc.stderr.splitlines() == [
            f'error: resource mapping not found for name: "x" namespace: "" from "STDIN": '
            f'no matches for kind "{kind}" in version "{api_version}"',
            "ensure CRDs are installed first",
        ]


LIST = """apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {{name: {name}, namespace: default}}
  data: {{mode: fast}}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {{name: {name}, namespace: default}}
  spec:
    replicas: 1
    {extra}selector: {{matchLabels: {{app: {name}}}}}
    template:
      metadata: {{labels: {{app: {name}}}}}
      spec:
        containers:
        - name: c
          image: nginx
          ports: [{{containerPort: 80}}]
          resources: {{limits: {{cpu: 1, memory: 64Mi}}}}
          readinessProbe: {{httpGet: {{port: 80}}}}
- apiVersion: v1
  kind: Service
  metadata: {{name: {name}, namespace: default}}
  spec: {{selector: {{app: {name}}}, ports: [{{port: 80, targetPort: 8080}}]}}
"""


@pytest.mark.parametrize("version", ["1.27", "1.32", "1.33"])
def test_a_list_file_is_created_and_applied(kubectl, version):
    name = "listed-" + version.replace(".", "-")
    manifest = LIST.format(name=name, extra="")
    created = kubectl(version, "create", "-f", "-", input=manifest).stdout.splitlines()
    assert created == [f"configmap/{name} created", f"deployment.apps/{name} created", f"service/{name} created"]
    changed = manifest.replace("mode: fast", "mode: slow").replace("replicas: 1", "replicas: 2")
    applied = kubectl(version, "apply", "-f", "-", input=changed).stdout.splitlines()
    assert applied == [
        f"configmap/{name} configured",
        f"deployment.apps/{name} configured",
        f"service/{name} configured",
    ]
    assert kubectl(version, "apply", "-f", "-", input=changed).stdout.splitlines()[0] == f"configmap/{name} unchanged"
    replicas = kubectl(version, "get", "deployment", name, "-n", "default", "-o", "jsonpath={.spec.replicas}")
    assert replicas.stdout == "2"


def test_a_list_is_validated_on_the_client_from_the_v2_models(kubectl):
    # A List is never handed to the server's field validation: kubectl checks it against
    # /openapi/v2 itself, and words an unknown field as it does against any cluster.
    manifest = LIST.format(name="listed-bad", extra="bogus: 1\n    ")
    refused = kubectl("1.32", "apply", "-f", "-", input=manifest, check=False)
    assert refused.returncode == 1
    assert (
        'ValidationError(Deployment.spec): unknown field "bogus" in io.k8s.api.apps.v1.DeploymentSpec' in refused.stderr
    )
    assert kubectl("1.32", "get", "configmap", "listed-bad", "-n", "default", check=False).returncode == 1
