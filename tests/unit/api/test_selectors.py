"""Label selectors and node-selector matching (cluster/api/selectors.py)."""

import pytest

from cluster.api.selectors import (
    LabelSelector,
    SelectorError,
    is_dns_label,
    is_dns_subdomain,
    is_label_value,
    is_qualified_name,
    node_selector_matches,
    node_selector_requirement_matches,
    node_selector_term_matches,
    required_node_affinity_matches,
)

WEB = {"app": "web", "tier": "front"}


def expr(key, op, *values):
    e = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


# ---- LabelSelector.from_dict -------------------------------------------------------------


@pytest.mark.parametrize(
    "selector, labels, expected",
    [
        ({}, {}, True),
        ({}, WEB, True),
        ({"matchLabels": {}}, WEB, True),
        ({"matchLabels": {"app": "web"}}, WEB, True),
        ({"matchLabels": {"app": "db"}}, WEB, False),
        ({"matchLabels": {"app": "web", "tier": "back"}}, WEB, False),
        ({"matchLabels": {"app": "web"}}, {}, False),
        ({"matchLabels": {"app": "web"}}, None, False),
        ({"matchExpressions": [expr("app", "In", "web", "api")]}, WEB, True),
        ({"matchExpressions": [expr("app", "In", "api")]}, WEB, False),
        ({"matchExpressions": [expr("missing", "In", "x")]}, WEB, False),
        ({"matchExpressions": [expr("app", "NotIn", "db")]}, WEB, True),
        ({"matchExpressions": [expr("app", "NotIn", "web")]}, WEB, False),
        ({"matchExpressions": [expr("missing", "NotIn", "x")]}, WEB, True),  # absent key matches NotIn
        ({"matchExpressions": [expr("app", "Exists")]}, WEB, True),
        ({"matchExpressions": [expr("missing", "Exists")]}, WEB, False),
        ({"matchExpressions": [expr("missing", "DoesNotExist")]}, WEB, True),
        ({"matchExpressions": [expr("app", "DoesNotExist")]}, WEB, False),
        ({"matchLabels": {"app": "web"}, "matchExpressions": [expr("tier", "In", "back")]}, WEB, False),
        ({"matchLabels": {"app": "web"}, "matchExpressions": [expr("tier", "In", "front")]}, WEB, True),
        ({"matchLabels": {"app": ""}}, {"app": ""}, True),
    ],
)
def test_from_dict_matches(selector, labels, expected):
    assert LabelSelector.from_dict(selector).matches(labels) is expected


def test_none_and_nothing_match_nothing():
    for sel in (LabelSelector.from_dict(None), LabelSelector.nothing()):
        assert not sel.matches({})
        assert not sel.matches(WEB)
        assert sel.matches_nothing and not sel.empty


def test_empty_selector_is_empty():
    assert LabelSelector.from_dict({}).empty
    assert LabelSelector.everything().empty
    assert not LabelSelector.from_dict({"matchLabels": {"a": "b"}}).empty


@pytest.mark.parametrize(
    "selector, field",
    [
        ([], ""),
        ({"matchLabels": ["a"]}, "matchLabels"),
        ({"matchLabels": {"a": 1}}, "matchLabels[a]"),
        ({"matchExpressions": {}}, "matchExpressions"),
        ({"matchExpressions": ["x"]}, "matchExpressions[0]"),
        ({"matchExpressions": [{"operator": "Exists"}]}, "matchExpressions[0].key"),
        ({"matchExpressions": [expr("a", "Gt", "1")]}, "matchExpressions[0].operator"),
        ({"matchExpressions": [expr("a", "in", "x")]}, "matchExpressions[0].operator"),
        ({"matchExpressions": [expr("a", "In")]}, "matchExpressions[0].values"),
        ({"matchExpressions": [expr("a", "NotIn")]}, "matchExpressions[0].values"),
        ({"matchExpressions": [expr("a", "Exists", "x")]}, "matchExpressions[0].values"),
        ({"matchExpressions": [expr("a", "DoesNotExist", "x")]}, "matchExpressions[0].values"),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": "x"}]}, "matchExpressions[0].values"),
        ({"matchExpressions": [expr("ok", "Exists"), expr("a", "In")]}, "matchExpressions[1].values"),
        ({"matchLabels": {"bad key": "x"}}, "matchLabels[bad key]"),
        ({"matchLabels": {"app": "not ok"}}, "matchLabels[app]"),
        ({"matchExpressions": [expr("-app", "Exists")]}, "matchExpressions[0].key"),
        ({"matchExpressions": [expr("app", "In", "ok", "-no")]}, "matchExpressions[0].values[1]"),
    ],
)
def test_from_dict_rejects(selector, field):
    with pytest.raises(SelectorError) as info:
        LabelSelector.from_dict(selector)
    assert info.value.field == field
    assert isinstance(info.value, ValueError)


def test_selector_error_value():
    with pytest.raises(SelectorError) as info:
        LabelSelector.from_dict({"matchExpressions": [expr("a", "Gt", "1")]})
    assert info.value.has_value and info.value.value == "Gt"
    with pytest.raises(SelectorError) as info:
        LabelSelector.from_dict({"matchExpressions": [expr("a", "In")]})
    assert not info.value.has_value
    assert str(info.value) == "matchExpressions[0].values: must be non-empty when operator is In"


# ---- LabelSelector.parse -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text, labels, expected",
    [
        ("", WEB, True),
        ("   ", {}, True),
        ("app=web", WEB, True),
        ("app==web", WEB, True),
        ("app=db", WEB, False),
        ("app!=db", WEB, True),
        ("app!=web", WEB, False),
        ("missing!=x", WEB, True),  # != matches an absent key, as upstream
        ("app in (web,api)", WEB, True),
        ("app in (api)", WEB, False),
        ("app notin (db)", WEB, True),
        ("app notin (web)", WEB, False),
        ("missing notin (x)", WEB, True),
        ("app", WEB, True),
        ("missing", WEB, False),
        ("!missing", WEB, True),
        ("!app", WEB, False),
        ("app=web,tier=front", WEB, True),
        ("app=web,tier=back", WEB, False),
        (" app = web , tier in ( front , back ) , !gpu ", WEB, True),
        ("app=", {"app": ""}, True),
        ("app=", WEB, False),
        ("in in (x)", {"in": "x"}, True),  # keywords are only keywords in operator position
    ],
)
def test_parse_matches(text, labels, expected):
    assert LabelSelector.parse(text).matches(labels) is expected


@pytest.mark.parametrize(
    "text",
    [
        "a in ()",
        "a notin ()",
        "-a=b",
        "a=b-",
        "a in (x,-y)",
        "Example.com/a",
        "a/b/c",
        "a>1",
        "a<1",
        "a b",
        "a=b,",
        ",a",
        "(a)",
        "a in (x y)",
        "a in x",
        "a in (x",
        "!",
        "a=b=c",
        "=b",
    ],
)
def test_parse_rejects(text):
    with pytest.raises(SelectorError):
        LabelSelector.parse(text)


def test_parse_rejects_non_strings():
    with pytest.raises(SelectorError):
        LabelSelector.parse(None)


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("", ""),
        ("b=2,a=1", "a=1,b=2"),
        ("a==1", "a=1"),
        ("x in (c, a, b),!y,z", "x in (a,b,c),!y,z"),
        ("a notin (x,x)", "a notin (x)"),
        ("a!=b", "a!=b"),
        ("a=", "a="),
    ],
)
def test_canonical_string(text, canonical):
    sel = LabelSelector.parse(text)
    assert str(sel) == canonical
    assert LabelSelector.parse(str(sel)) == sel


def test_from_dict_string_form_round_trips():
    sel = LabelSelector.from_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                expr("tier", "In", "front", "back"),
                expr("gpu", "DoesNotExist"),
                expr("zone", "Exists"),
            ],
        }
    )
    assert str(sel) == "app=web,!gpu,tier in (back,front),zone"
    assert LabelSelector.parse(str(sel)) == sel
    assert hash(LabelSelector.parse(str(sel))) == hash(sel)


# ---- node selectors ----------------------------------------------------------------------

NODE_LABELS = {"zone": "a", "cores": "16", "gpu": "true", "bad": "x1"}


@pytest.mark.parametrize(
    "req, expected",
    [
        (expr("zone", "In", "a", "b"), True),
        (expr("zone", "In", "b"), False),
        (expr("missing", "In", "a"), False),
        (expr("zone", "In"), False),  # In needs values
        (expr("zone", "NotIn", "b"), True),
        (expr("zone", "NotIn", "a"), False),
        (expr("missing", "NotIn", "a"), True),
        (expr("zone", "NotIn"), False),
        (expr("gpu", "Exists"), True),
        (expr("missing", "Exists"), False),
        (expr("gpu", "Exists", "true"), False),  # Exists takes no values
        (expr("missing", "DoesNotExist"), True),
        (expr("gpu", "DoesNotExist"), False),
        (expr("cores", "Gt", "8"), True),
        (expr("cores", "Gt", "16"), False),
        (expr("cores", "Lt", "32"), True),
        (expr("cores", "Lt", "16"), False),
        (expr("cores", "Gt", "-1"), True),
        (expr("cores", "Gt", "eight"), False),  # unparsable operand
        (expr("bad", "Gt", "0"), False),  # unparsable label
        (expr("missing", "Gt", "0"), False),
        (expr("cores", "Gt", "1", "2"), False),  # exactly one value
        (expr("cores", "Gt"), False),
        (expr("cores", "Gt", " 8"), False),
        (expr("zone", "Equals", "a"), False),
    ],
)
def test_node_selector_requirement(req, expected):
    assert node_selector_requirement_matches(req, NODE_LABELS) is expected


@pytest.mark.parametrize(
    "term, expected",
    [
        ({}, False),  # an empty term matches nothing
        ({"matchExpressions": [], "matchFields": []}, False),
        ({"matchExpressions": [expr("zone", "In", "a")]}, True),
        ({"matchExpressions": [expr("zone", "In", "a"), expr("gpu", "DoesNotExist")]}, False),
        ({"matchFields": [expr("metadata.name", "In", "node-1")]}, True),
        ({"matchFields": [expr("metadata.name", "In", "node-2")]}, False),
        ({"matchFields": [expr("metadata.name", "NotIn", "node-2")]}, True),
        ({"matchFields": [expr("metadata.name", "NotIn", "node-1")]}, False),
        ({"matchFields": [expr("metadata.name", "In", "node-1", "node-2")]}, False),  # one value only
        ({"matchFields": [expr("metadata.name", "Exists")]}, False),
        ({"matchExpressions": [expr("zone", "In", "a")], "matchFields": [expr("metadata.name", "In", "node-1")]}, True),
        (
            {"matchExpressions": [expr("zone", "In", "b")], "matchFields": [expr("metadata.name", "In", "node-1")]},
            False,
        ),
    ],
)
def test_node_selector_term(term, expected):
    assert node_selector_term_matches(term, NODE_LABELS, "node-1") is expected


def test_node_selector_terms_are_ored():
    a = {"matchExpressions": [expr("zone", "In", "a")]}
    b = {"matchExpressions": [expr("zone", "In", "b")]}
    assert node_selector_matches({"nodeSelectorTerms": [b, a]}, NODE_LABELS)
    assert not node_selector_matches({"nodeSelectorTerms": [b]}, NODE_LABELS)
    assert not node_selector_matches({"nodeSelectorTerms": []}, NODE_LABELS)


def _pod(node_selector=None, terms=None):
    spec = {"containers": [{"name": "c"}]}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if terms is not None:
        spec["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
    return {"kind": "Pod", "spec": spec}


NODE = {"kind": "Node", "metadata": {"name": "node-1", "labels": NODE_LABELS}}


@pytest.mark.parametrize(
    "pod, expected",
    [
        (_pod(), True),
        (_pod({}), True),
        (_pod({"zone": "a"}), True),
        (_pod({"zone": "b"}), False),
        (_pod({"zone": "a", "gpu": "false"}), False),
        (_pod({"missing": ""}), False),
        (_pod(terms=[{"matchExpressions": [expr("zone", "In", "a")]}]), True),
        (
            _pod(
                terms=[
                    {"matchExpressions": [expr("zone", "In", "b")]},
                    {"matchFields": [expr("metadata.name", "In", "node-1")]},
                ]
            ),
            True,
        ),
        (_pod(terms=[]), False),
        (_pod(terms=[{}]), False),
        (_pod({"zone": "b"}, terms=[{"matchExpressions": [expr("zone", "In", "a")]}]), False),  # both must hold
        (_pod({"zone": "a"}, terms=[{"matchExpressions": [expr("cores", "Gt", "32")]}]), False),
        ({"spec": {"affinity": {"nodeAffinity": {}}}}, True),
    ],
)
def test_required_node_affinity(pod, expected):
    assert required_node_affinity_matches(pod, NODE) is expected


def test_required_node_affinity_with_unlabelled_node():
    assert required_node_affinity_matches(_pod(), {"metadata": {"name": "n"}})
    assert not required_node_affinity_matches(_pod({"zone": "a"}), {"metadata": {"name": "n"}})


# ---- label syntax ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn, text, expected",
    [
        (is_dns_label, "web-1", True),
        (is_dns_label, "a" * 63, True),
        (is_dns_label, "a" * 64, False),
        (is_dns_label, "web.1", False),
        (is_dns_label, "Web", False),
        (is_dns_label, "-web", False),
        (is_dns_label, "web\n", False),
        (is_dns_label, "", False),
        (is_dns_subdomain, "web.example.com", True),
        (is_dns_subdomain, "a" * 253, True),
        (is_dns_subdomain, "a" * 254, False),
        (is_dns_subdomain, "a..b", False),
        (is_dns_subdomain, "a.-b", False),
        (is_dns_subdomain, None, False),
        (is_qualified_name, "app", True),
        (is_qualified_name, "app.kubernetes.io/name", True),
        (is_qualified_name, "A_b.C-1", True),
        (is_qualified_name, "example.com/" + "n" * 63, True),
        (is_qualified_name, "example.com/" + "n" * 64, False),
        (is_qualified_name, "Example.com/name", False),
        (is_qualified_name, "/name", False),
        (is_qualified_name, "example.com/", False),
        (is_qualified_name, "a/b/c", False),
        (is_qualified_name, "_app", False),
        (is_label_value, "", True),
        (is_label_value, "v1.2_beta-3", True),
        (is_label_value, "x" * 64, False),
        (is_label_value, "has space", False),
        (is_label_value, 1, False),
    ],
)
def test_label_syntax(fn, text, expected):
    assert fn(text) is expected
