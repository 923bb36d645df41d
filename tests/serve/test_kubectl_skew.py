"""Every kubectl of the supported skew window (1.27 to 1.33) against one ``kubemu serve``,
each command with an empty discovery cache, so each starts by negotiating ``/api`` and
``/apis``: 1.27 to 1.29 read only the v2beta1 aggregated
list, 1.30 and later ask for v2 first. The binaries ``kubectl.1.27`` ... ``kubectl.1.33``
sit beside the machine's kubectl dispatcher; a version whose binary is absent is skipped."""

import os
import shutil
import subprocess
import tempfile

import pytest
from servedcluster import kubectl_path, needs_kubectl, until

pytestmark = needs_kubectl

VERSIONS = [f"1.{minor}" for minor in range(27, 34)]
V2BETA1_ONLY = {"1.27", "1.28", "1.29"}  # client-go before 1.30 does not know v2

CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata: {{name: {name}, namespace: default}}
data: {{mode: fast}}
"""


class Kubectl:
    """One kubectl binary against the served cluster; every call gets a fresh cache dir
    unless it names one."""

    def __init__(self, served, version: str, tmp):
        self.served, self.version, self.tmp = served, version, tmp
        self.path = kubectl_path(version)

    def __call__(self, *args: str, cache: str = "", check: bool = True) -> subprocess.CompletedProcess:
        cache = cache or tempfile.mkdtemp(dir=self.tmp)
        env = {**os.environ, "KUBECONFIG": str(self.served.kubeconfig)}
        proc = subprocess.run(
            [self.path, "--cache-dir", cache, *args], env=env, capture_output=True, text=True, timeout=60
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl.{self.version} {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
        return proc


@pytest.fixture
def kubectl(served, tmp_path, version):
    k = Kubectl(served, version, tmp_path)
    if not os.access(k.path, os.X_OK):
        pytest.skip(f"{k.path} is not installed")
    return k


def discovery_content_type(version: str) -> str:
    aggregated = "v2beta1" if version in V2BETA1_ONLY else "v2"
    # As logged at -v=8 ("Accept: " precedes the request's own copy of this string).
    return f"Content-Type: application/json;g=apidiscovery.k8s.io;v={aggregated};as=APIGroupDiscoveryList"


@pytest.mark.parametrize("version", VERSIONS)
def test_get_nodes_reads_the_aggregated_version_it_knows(kubectl, version):
    got = kubectl("get", "nodes", "-v=8")
    lines = got.stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert [line.split()[:2] for line in lines[1:]] == [["node-0", "Ready"], ["node-1", "Ready"], ["node-2", "Ready"]]
    assert discovery_content_type(version) in got.stderr


@pytest.mark.parametrize("version", VERSIONS)
def test_a_namespace_with_a_pod_a_deployment_and_a_priorityclass(kubectl, version):
    ns = "skew-" + version.replace(".", "-")
    assert kubectl("create", "namespace", ns).stdout.strip() == f"namespace/{ns} created"
    assert kubectl("run", "web", "--image=nginx", "-n", ns).stdout.strip() == "pod/web created"
    created = kubectl("create", "deployment", "api", "--image=nginx", "-n", ns).stdout.strip()
    assert created == "deployment.apps/api created"
    created = kubectl("create", "priorityclass", ns, "--value=1000").stdout.strip()
    assert created == f"priorityclass.scheduling.k8s.io/{ns} created"
    listed = kubectl("get", "pod/web", "deployment/api", "priorityclass/" + ns, "-n", ns, "-o", "name").stdout
    assert listed.split() == ["pod/web", "deployment.apps/api", f"priorityclass.scheduling.k8s.io/{ns}"]
    assert kubectl("delete", "namespace", ns, "--timeout=30s").stdout.strip() == f'namespace "{ns}" deleted'
    missing = until(lambda: kubectl("get", "namespace", ns, check=False).returncode == 1)
    assert missing, f"namespace {ns} still there after delete"


@pytest.mark.parametrize("version", VERSIONS)
def test_apply_a_manifest_creates_then_leaves_it_unchanged(kubectl, version, tmp_path):
    name = "settings-" + version.replace(".", "-")
    manifest = tmp_path / f"{name}.yaml"
    manifest.write_text(CONFIGMAP.format(name=name))
    assert kubectl("apply", "-f", str(manifest)).stdout.strip() == f"configmap/{name} created"
    assert kubectl("apply", "-f", str(manifest)).stdout.strip() == f"configmap/{name} unchanged"
    assert kubectl("get", "configmap", name, "-o", "jsonpath={.data.mode}").stdout == "fast"


@pytest.mark.parametrize("version", VERSIONS)
def test_a_lost_discovery_cache_is_refilled_by_a_304(kubectl, version, tmp_path):
    """kubectl's HTTP cache keeps the aggregated answers with their ETag; without the
    discovery cache it asks again with If-None-Match, and a 304 lets it reuse them (the
    HTTP cache marks such answers X-From-Cache)."""
    cache = str(tmp_path / "cache")
    kubectl("get", "nodes", cache=cache)
    shutil.rmtree(os.path.join(cache, "discovery"))
    again = kubectl("get", "nodes", "-v=8", cache=cache)
    assert "node-0" in again.stdout
    assert discovery_content_type(version) in again.stderr and "X-From-Cache: 1" in again.stderr
