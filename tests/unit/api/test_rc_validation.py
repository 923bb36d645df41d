"""ReplicationController validation as upstream: the selector (defaulted from the template's
labels) must be non-empty and matched by the template; replicas and minReadySeconds >= 0;
restartPolicy Always."""

from __future__ import annotations

import pytest

from cluster.api.validation import ValidationError, validate


def _rc(selector=None, labels=None, replicas=1, restart=None, min_ready=None) -> dict:
    spec: dict = {
        "replicas": replicas,
        "template": {
            "metadata": {"labels": labels if labels is not None else {"app": "a"}},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        },
    }
    if selector is not None:
        spec["selector"] = selector
    if restart is not None:
        spec["template"]["spec"]["restartPolicy"] = restart
    if min_ready is not None:
        spec["minReadySeconds"] = min_ready
    return {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "r", "namespace": "d"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    "rc",
    [
        _rc(),  # no selector: the template's labels
        _rc(selector={"app": "a"}),
        _rc(selector={"app": "a"}, labels={"app": "a", "tier": "web"}),  # the template may carry more
        _rc(replicas=0),
    ],
)
def test_accepted(rc):
    validate(rc)


@pytest.mark.parametrize(
    "rc, path, detail",
    [
        (_rc(selector={"app": "b"}), "spec.template.metadata.labels", "selector does not match template labels"),
        (
            _rc(selector={"app": "a", "x": "y"}),
            "spec.template.metadata.labels",
            "selector does not match template labels",
        ),
        (_rc(labels={}), "spec.selector", ""),
        (_rc(replicas=-1), "spec.replicas", ""),
        (_rc(min_ready=-5), "spec.minReadySeconds", ""),
        (_rc(restart="OnFailure"), "spec.template.spec.restartPolicy", ""),
    ],
)
def test_refused_naming_the_field(rc, path, detail):
    with pytest.raises(ValidationError) as e:
        validate(rc)
    assert path in str(e.value) and detail in str(e.value)
