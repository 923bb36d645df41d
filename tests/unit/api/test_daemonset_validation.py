"""DaemonSet update strategies the apiserver refuses (upstream's paths and messages, judged
after defaults as upstream judges them), and the defaults it fills in."""

import copy

import pytest

from cluster.api.errors import Invalid
from cluster.apiserver.apiserver import APIServer

POD = {"containers": [{"name": "c", "image": "nginx"}]}


def daemonset(strategy=None, **spec) -> dict:
    base = {"selector": {"matchLabels": {"app": "a"}}, "template": {"metadata": {"labels": {"app": "a"}}, "spec": POD}}
    if strategy is not None:
        base["updateStrategy"] = strategy
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "a"}, "spec": {**base, **spec}}


def rolling(**fields) -> dict:
    return {"type": "RollingUpdate", "rollingUpdate": fields}


RU = "spec.updateStrategy.rollingUpdate"


@pytest.mark.parametrize(
    "obj, message",
    [
        (daemonset(rolling(maxUnavailable=0)), f"{RU}.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"),
        (daemonset(rolling(maxUnavailable="0%", maxSurge=0)),
         f"{RU}.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"),
        (daemonset(rolling(maxSurge=1)),  # maxUnavailable defaults to 1
         f"{RU}.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero"),
        (daemonset(rolling(maxUnavailable="150%")), f'{RU}.maxUnavailable: Invalid value: "150%": must not be greater than 100%'),
        (daemonset(rolling(maxUnavailable=0, maxSurge="101%")),
         f'{RU}.maxSurge: Invalid value: "101%": must not be greater than 100%'),
        (daemonset(rolling(maxUnavailable=-1)), f"{RU}.maxUnavailable: Invalid value: -1: must be greater than or equal to 0"),
        (daemonset({"type": "Recreate"}),
         'spec.updateStrategy: Unsupported value: "Recreate": supported values: "RollingUpdate", "OnDelete"'),
        (daemonset(minReadySeconds=-1), "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"),
        (daemonset(revisionHistoryLimit=-2),
         "spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0"),
    ],
)  # fmt: skip
def test_a_bad_update_strategy_is_refused_and_nothing_is_stored(obj, message):
    api = APIServer()
    rv = api.store.rv
    with pytest.raises(Invalid) as err:
        api.create(obj, 0.0)
    assert message in str(err.value)
    assert api.store.rv == rv and api.store.count("DaemonSet") == 0


@pytest.mark.parametrize(
    "strategy, want",
    [
        (None, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
        (rolling(maxUnavailable=0, maxSurge=1), {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}),
        (rolling(maxUnavailable="20%"), {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "20%", "maxSurge": 0}}),
        ({"type": "OnDelete"}, {"type": "OnDelete"}),
    ],
)  # fmt: skip
def test_defaults_and_template_generation(strategy, want):
    api = APIServer()
    stored = api.create(daemonset(strategy), 0.0)
    assert stored["spec"]["updateStrategy"] == want and stored["spec"]["revisionHistoryLimit"] == 10
    assert stored["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "1"
    changed = copy.deepcopy(stored)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    again = api.update(changed, 1.0)
    assert again["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "2"


def test_a_bad_strategy_on_update_leaves_the_stored_object():
    api = APIServer()
    stored = api.create(daemonset(), 0.0)
    bad = copy.deepcopy(stored)
    bad["spec"]["updateStrategy"] = rolling(maxUnavailable=1, maxSurge=1)
    with pytest.raises(Invalid):
        api.update(bad, 1.0)
    assert api.get("DaemonSet", "default", "a")["spec"]["updateStrategy"] == stored["spec"]["updateStrategy"]
