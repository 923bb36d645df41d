"""queues.yaml as users write it: quantities, properties and their inheritance, placement
rules, and every refusal as one line naming the queue and the field."""

from __future__ import annotations

import pytest

from cluster.yunikorn import config as cfg
from cluster.yunikorn.config import ConfigError, parse
from cluster.yunikorn.placement import place


def doc(queues: str) -> str:
    body = "\n".join("          " + line for line in queues.strip("\n").splitlines())
    return f"""partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
{body}
"""


def queue(config: cfg.Config, path: str) -> cfg.QueueConfig:
    q = config.partition().root
    for name in path.split(".")[1:]:
        q = next(c for c in q.children if c.name == name)
    return q


@pytest.mark.parametrize(
    ("text", "kind", "amount"),
    [
        ("vcore: 2", "vcore", 2000),
        ("vcore: 500m", "vcore", 500),
        ("memory: 2G", "memory", 2_000_000_000),
        ("memory: 2Gi", "memory", 2**31),
        ("nvidia.com/gpu: 2", "nvidia.com/gpu", 2),
        ("pods: 10", "pods", 10),
    ],
)
def test_resource_values_are_kubernetes_quantities(text, kind, amount):
    c = parse(doc(f"- name: a\n  resources: {{max: {{{text}}}}}"))
    assert queue(c, "root.a").max == {kind: amount}


def test_a_guarantee_of_only_zeros_counts_as_unset():
    c = parse(doc("- name: a\n  resources: {guaranteed: {vcore: 0, memory: 0}}"))
    assert queue(c, "root.a").guaranteed == {}


def test_properties_pass_down_as_upstream_does():
    c = parse(
        doc(
            """
- name: p
  properties: {preemption.delay: 5s, preemption.policy: fence, priority.offset: "7", priority.policy: fence}
  queues:
    - name: leaf
- name: quiet
  properties: {preemption.policy: disabled}
  queues:
    - name: leaf
"""
        )
    )
    leaf = queue(c, "root.p.leaf").effective
    assert leaf == {"preemption.delay": "5s"}  # fence and the priority properties stay on the parent
    assert cfg.preemption_policy(queue(c, "root.quiet.leaf").effective) == "disabled"


@pytest.mark.parametrize(
    ("props", "reader", "expected"),
    [
        ({}, cfg.preemption_delay, 30.0),
        ({"preemption.delay": "1m30s"}, cfg.preemption_delay, 90.0),
        ({"preemption.delay": "500ms"}, cfg.preemption_delay, 0.5),
        ({"preemption.delay": "soon"}, cfg.preemption_delay, 30.0),
        ({"preemption.delay": "0s"}, cfg.preemption_delay, 30.0),
        ({"preemption.policy": "FENCE"}, cfg.preemption_policy, "fence"),
        ({"preemption.policy": "other"}, cfg.preemption_policy, "default"),
        ({"priority.offset": "-10"}, cfg.priority_offset, -10),
        ({"priority.offset": "x"}, cfg.priority_offset, 0),
        ({"priority.offset": str(2**31)}, cfg.priority_offset, 0),
        ({"application.sort.policy": "fair"}, cfg.app_sort_policy, "fair"),
        ({"application.sort.priority": "disabled"}, cfg.app_sort_priority, False),
        ({"quota.preemption.delay": "2m"}, cfg.quota_preemption_delay, 120.0),
    ],
)
def test_an_unparsable_property_reads_as_its_default(props, reader, expected):
    assert reader(props) == expected


def test_with_no_configmap_the_default_places_by_namespace():
    p = cfg.DEFAULT.partition()
    assert [(r.name, r.value, r.create) for r in p.rules] == [("tag", "namespace", True)]
    assert p.root.children == () and p.preemption_enabled and p.node_sort_policy == "fair"


def test_a_parent_without_a_guarantee_passes_its_childrens_sum_up():
    text = doc(
        """
- name: top
  resources: {guaranteed: {vcore: 4}}
  queues:
    - name: middle
      queues:
        - {name: a, resources: {guaranteed: {vcore: 3}}}
        - {name: b, resources: {guaranteed: {vcore: 2}}}
"""
    )
    with pytest.raises(ConfigError, match=r"^queue root\.top: resources\.guaranteed\.vcore: the children's"):
        parse(text)


@pytest.mark.parametrize(
    ("queues", "message"),
    [
        (
            "- name: a\n  properties: {preemption.dely: 5s}",
            "queue root.a: properties.preemption.dely: unknown property",
        ),
        (
            "- name: a\n  resources: {guaranteed: {vcore: 3}, max: {vcore: 2}}",
            "queue root.a: resources.guaranteed.vcore: 3000 is above resources.max.vcore 2000",
        ),
        (
            "- name: a\n  parent: false\n  queues: [{name: b}]",
            "queue root.a: queues: a leaf queue (parent: false) cannot have child queues",
        ),
        (
            "- name: a\n  resources: {max: {memory: 2Xi}}",
            "queue root.a: resources.max.memory: '2Xi' is not a quantity",
        ),
        (
            "- name: a\n  resources: {guaranteed: {vcore: -1}}",
            "queue root.a: resources.guaranteed.vcore: -1 is negative",
        ),
        (
            "- name: a\n  resources: {max: {vcore: 2}}\n  queues: [{name: b, resources: {max: {vcore: 3}}}]",
            "queue root.a.b: resources.max.vcore: 3000 is above the parent's max 2000",
        ),
        (
            "- name: a\n  resources: {max: {vcore: 2}}\n  queues: [{name: b, resources: {guaranteed: {vcore: 3}}}]",
            "queue root.a: resources.max.vcore: the children's guaranteed sum 3000 is above the max 2000",
        ),
        ("- name: a\n  resouces: {max: {vcore: 2}}", "queue root.a: resouces: unknown field"),
        ("- name: a.b", "queue under root: name: 'a.b' is not a valid queue name"),
        ("- name: a\n- name: A", "queue root.A: name: 'A' is used twice under root"),
        ("- name: a\n  maxapplications: -1", "queue root.a: maxapplications: -1 must be a non-negative integer"),
    ],
)
def test_bad_queues_are_refused_with_one_line_naming_queue_and_field(queues, message):
    with pytest.raises(ConfigError) as e:
        parse(doc(queues))
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("partitions: [", "queues.yaml: not valid YAML"),
        ("- a", "queues.yaml: must be a mapping with partitions"),
        ("partitions: []", "queues.yaml: partitions: at least one partition is required"),
        ("partitions: [{name: default, queues: [{name: top}]}]", "queue top: name: the top queue must be named root"),
        (
            "partitions: [{name: default, queues: [{name: root, resources: {max: {vcore: 1}}}]}]",
            "queue root: resources: root may not have resources",
        ),
        (
            "partitions: [{name: default, placementrules: [{name: magic}], queues: [{name: root}]}]",
            "partition default: placementrules[0].name: 'magic' is not one of",
        ),
        (
            "partitions: [{name: default, placementrules: [{name: tag}], queues: [{name: root}]}]",
            "partition default: placementrules[0].value: a tag rule needs a value",
        ),
        (
            "partitions: [{name: default, nodesortpolicy: {type: random}, queues: [{name: root}]}]",
            "partition default: nodesortpolicy.type: 'random' is not one of fair, binpacking",
        ),
        (
            "partitions: [{name: default, preemption: {enabled: maybe}, queues: [{name: root}]}]",
            "partition default: preemption.enabled: 'maybe' must be true or false",
        ),
    ],
)
def test_bad_documents_are_refused_with_one_line(text, message):
    with pytest.raises(ConfigError) as e:
        parse(text)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_parse_go_duration():
    assert cfg.parse_go_duration("1h30m") == 5400.0
    assert cfg.parse_go_duration("-1.5s") == -1.5
    assert cfg.parse_go_duration("300us") == pytest.approx(0.0003)
    with pytest.raises(ValueError):
        cfg.parse_go_duration("10 seconds")


# ---- placement rules ---------------------------------------------------------------------

TREE = {"root": "parent", "root.a": "leaf", "root.p": "parent", "root.p.x": "leaf"}


def rules(text: str) -> tuple[cfg.Rule, ...]:
    return parse(f"partitions: [{{name: default, placementrules: {text}, queues: [{{name: root}}]}}]").partition().rules


@pytest.mark.parametrize(
    ("rule_text", "queue_name", "namespace", "expected"),
    [
        ("[{name: provided}]", "root.a", "ns", ("root.a", False)),
        ("[{name: provided}]", "a", "ns", ("root.a", False)),
        ("[{name: provided}]", "root.nope", "ns", None),
        ("[{name: provided, create: true}]", "root.nope", "ns", ("root.nope", True)),
        ("[{name: provided, create: true}]", "root.a.under", "ns", None),  # nothing lives under a leaf
        ("[{name: provided}]", "root.p", "ns", None),  # a parent holds no applications
        ("[{name: provided}]", None, "ns", None),
        ("[{name: tag, value: namespace, create: true}]", None, "team.one", ("root.team_dot_one", True)),
        ("[{name: tag, value: namespace}]", None, "a", ("root.a", False)),
        ("[{name: fixed, value: p.x}]", None, "ns", ("root.p.x", False)),
        ("[{name: provided}, {name: fixed, value: a}]", "root.nope", "ns", ("root.a", False)),
        (
            "[{name: tag, value: namespace, create: true, parent: {name: fixed, value: root.p}}]",
            None,
            "dev",
            ("root.p.dev", True),
        ),
        ("[{name: tag, value: namespace, create: true, parent: {name: fixed, value: root.a}}]", None, "dev", None),
    ],
)
def test_placement_rules_in_order(rule_text, queue_name, namespace, expected):
    got = place(rules(rule_text), queue=queue_name, namespace=namespace, lookup=TREE.get)
    assert (None if got is None else (got.path, got.create)) == expected
