"""A new pod's parse taken from a recent pod of its template (``PodInfo._from_template``):
the same fields as parsing it, for pods differing in every parsed respect; never across
labels, namespaces or specs that differ; never for pods with inter-pod terms."""

from __future__ import annotations

import copy

import pytest
from sched_builders import make_pod

from cluster.scheduler.podinfo import TEMPLATES_KEPT, PodInfo, ResourceColumns


def _columns() -> ResourceColumns:
    return ResourceColumns(lambda: None)


def _fields(p: PodInfo) -> tuple:
    # Compared by value, not the column numbers: those are per ResourceColumns.
    return (p.priority, p.labels, p.terms, p.requests, p.nonzero_cpu, p.nonzero_mem, p.host_ports, p.deleting)


VARIANTS = [
    lambda: make_pod("v").req(cpu="1", memory="1Gi"),
    lambda: make_pod("v").req(cpu="2", memory="1Gi"),
    lambda: make_pod("v").req(cpu="1", memory="1Gi").prio(100),
    lambda: make_pod("v").req(cpu="1", memory="1Gi").label("app", "a"),
    lambda: make_pod("v").req(cpu="1", memory="1Gi").label("app", "b"),
    lambda: make_pod("v", namespace="other").req(cpu="1", memory="1Gi"),
    lambda: make_pod("v").req(cpu="1", memory="1Gi").host_port(80),
    lambda: make_pod("v").req(cpu="1", memory="1Gi").ext("example.com/gpu", "1"),
]


@pytest.mark.parametrize("first", range(len(VARIANTS)))
def test_a_pod_after_any_other_parses_as_on_its_own(first):
    columns = _columns()
    PodInfo(VARIANTS[first](), columns)  # leaves its template behind
    for build in VARIANTS:
        pod = build()
        got = PodInfo(pod, columns)
        assert _fields(got) == _fields(PodInfo(copy.deepcopy(pod), _columns()))
        assert (got.uid, got.name, got.namespace) == (pod["metadata"]["uid"], "v", pod["metadata"]["namespace"])


def test_pods_of_one_template_share_the_parse():
    columns = _columns()
    a = PodInfo(make_pod("a").req(cpu="1").label("app", "x"), columns)
    b = PodInfo(make_pod("b").req(cpu="1").label("app", "x"), columns)
    assert b.requests is a.requests and b.labels is a.labels and b.resources_key is a.resources_key
    assert b.name == "b" and b.uid != a.uid


def test_a_pod_with_inter_pod_terms_is_parsed_every_time():
    columns = _columns()
    build = lambda name: make_pod(name).req(cpu="1").pod_anti_affinity("zone", {"matchLabels": {"x": "y"}})  # noqa: E731
    a, b = PodInfo(build("a"), columns), PodInfo(build("b"), columns)
    assert a.terms is not None and b.terms is not None and b.terms is not a.terms
    assert columns.template(build("c"), "default") is None


def test_only_the_last_few_templates_are_kept():
    columns = _columns()
    for i in range(TEMPLATES_KEPT + 2):
        PodInfo(make_pod(f"p{i}").req(cpu=f"{i + 1}"), columns)
    assert columns.template(make_pod("new").req(cpu=f"{TEMPLATES_KEPT + 2}"), "default") is not None
    assert columns.template(make_pod("old").req(cpu="1"), "default") is None


def test_an_updated_pod_is_parsed_anew_and_leaves_the_template_as_it_was():
    columns = _columns()
    a = PodInfo(make_pod("a").req(cpu="1"), columns)
    a.refresh(make_pod("a", uid=a.uid).req(cpu="3"), columns)
    b = PodInfo(make_pod("b").req(cpu="1"), columns)
    assert b.requests == {"cpu": 1000} and a.requests == {"cpu": 3000}
