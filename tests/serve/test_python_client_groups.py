"""The official Python client against ``kubemu serve`` for the groups and versions of issue 36:
it parses every answer into its typed models, so a missing or misshapen field fails here."""

import pytest
from kubernetes import client, config


@pytest.fixture(scope="module")
def api_client(served):
    config.load_kube_config(config_file=str(served.kubeconfig))
    return client.ApiClient()


def test_events_v1_lists_the_core_events(api_client):
    core = client.CoreV1Api(api_client)
    ref = client.V1ObjectReference(kind="Pod", namespace="default", name="py-web")
    core.create_namespaced_event(
        "default",
        client.CoreV1Event(
            metadata=client.V1ObjectMeta(name="py-web.1"), involved_object=ref, reason="Tested", message="hello"
        ),
    )
    events = client.EventsV1Api(api_client).list_namespaced_event("default")
    mine = [e for e in events.items if e.metadata.name == "py-web.1"]
    assert mine and mine[0].note == "hello" and mine[0].regarding.name == "py-web"


def test_networking_v1_ingress_crud(api_client):
    net = client.NetworkingV1Api(api_client)
    backend = client.V1IngressBackend(
        service=client.V1IngressServiceBackend(name="web", port=client.V1ServiceBackendPort(number=80))
    )
    path = client.V1HTTPIngressPath(path="/", path_type="Prefix", backend=backend)
    rule = client.V1IngressRule(host="py.example.com", http=client.V1HTTPIngressRuleValue(paths=[path]))
    body = client.V1Ingress(metadata=client.V1ObjectMeta(name="py-web"), spec=client.V1IngressSpec(rules=[rule]))
    made = net.create_namespaced_ingress("default", body)
    assert made.spec.rules[0].host == "py.example.com"
    net.patch_namespaced_ingress("py-web", "default", {"spec": {"rules": [{"host": "py2.example.com"}]}})
    assert net.read_namespaced_ingress("py-web", "default").spec.rules[0].host == "py2.example.com"
    assert [i.metadata.name for i in net.list_namespaced_ingress("default").items] == ["py-web"]
    net.delete_namespaced_ingress("py-web", "default")
    assert net.list_namespaced_ingress("default").items == []


def test_autoscaling_v1_create_and_v2_read(api_client):
    ref = client.V1CrossVersionObjectReference(api_version="apps/v1", kind="Deployment", name="web")
    spec = client.V1HorizontalPodAutoscalerSpec(
        scale_target_ref=ref, min_replicas=1, max_replicas=3, target_cpu_utilization_percentage=70
    )
    body = client.V1HorizontalPodAutoscaler(metadata=client.V1ObjectMeta(name="py-hpa"), spec=spec)
    made = client.AutoscalingV1Api(api_client).create_namespaced_horizontal_pod_autoscaler("default", body)
    assert made.spec.target_cpu_utilization_percentage == 70
    v2 = client.AutoscalingV2Api(api_client).read_namespaced_horizontal_pod_autoscaler("py-hpa", "default")
    assert v2.spec.metrics[0].resource.target.average_utilization == 70


def test_reviews_and_apiservices(api_client):
    attrs = client.V1ResourceAttributes(namespace="default", verb="list", resource="pods")
    review = client.V1SelfSubjectAccessReview(spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=attrs))
    answered = client.AuthorizationV1Api(api_client).create_self_subject_access_review(review)
    assert answered.status.allowed is True
    names = [s.metadata.name for s in client.ApiregistrationV1Api(api_client).list_api_service().items]
    assert "v1.apps" in names and "v1.autoscaling" in names
