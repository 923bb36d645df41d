"""A deleted namespace's status conditions, as upstream's namespace deleter writes them:
the five types, their messages while content remains or a delete is refused, their
transition times, and the controller writing them only after its deletes are answered."""

import pytest
from gc_builders import feed, obj

from cluster.api.errors import Forbidden
from cluster.api.requests import UpdateStatus
from cluster.clock import rfc3339
from cluster.controllers.manager import ControllerManager
from cluster.controllers.namespace import NamespaceReconciler
from cluster.controllers.namespaceconditions import conditions
from cluster.controllers.reconciler import ReconcilerStep
from cluster.controllers.writes import requests

ALL_OK = [
    ("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered", "All resources successfully discovered"),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "False",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "False",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    ("NamespaceContentRemaining", "False", "ContentRemoved", "All content successfully removed"),
    ("NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
]


def rows(conds):
    return [(c["type"], c["status"], c["reason"], c["message"]) for c in conds]


def with_row(i, row):
    out = list(ALL_OK)
    out[i] = row
    return out


CASES = [
    # (case, kinds left, refused deletes' errors, expected rows)
    ("nothing left", [], [], ALL_OK),
    (
        "objects left, counted by resource, sorted",
        ["Pod", "Deployment", "Pod", "ConfigMap", "Deployment"],
        [],
        with_row(
            3,
            (
                "NamespaceContentRemaining",
                "True",
                "SomeResourcesRemain",
                "Some resources are remaining: configmaps. has 1 resource instances, "
                "deployments.apps has 2 resource instances, pods. has 2 resource instances",
            ),
        ),
    ),
    (
        "a refused delete",
        [],
        ['pods "b" is forbidden: no', 'configmaps "a" is forbidden: no'],
        with_row(
            2,
            (
                "NamespaceDeletionContentFailure",
                "True",
                "ContentDeletionFailed",
                'Failed to delete all resource types, 2 remaining: configmaps "a" is forbidden: no, '
                'pods "b" is forbidden: no',
            ),
        ),
    ),
]


@pytest.mark.parametrize("case,kinds,errors,expected", CASES, ids=[c[0] for c in CASES])
def test_the_conditions_of_a_pass(case, kinds, errors, expected):
    conds = conditions(kinds, errors, None, 5.0)
    assert rows(conds) == expected
    assert all(c["lastTransitionTime"] == rfc3339(5.0) for c in conds)


def test_an_unchanged_pass_writes_nothing_and_a_transition_moves_only_its_time():
    first = conditions(["Pod", "Pod"], [], None, 1.0)
    assert conditions(["Pod", "Pod"], [], first, 2.0) is None
    fewer = conditions(["Pod"], [], first, 3.0)  # same status, new message: the time stays
    assert fewer is not None and fewer[3]["message"].endswith("pods. has 1 resource instances")
    assert fewer[3]["lastTransitionTime"] == rfc3339(1.0)
    done = conditions([], [], fewer, 4.0)
    assert done is not None and rows(done) == ALL_OK
    assert [c["lastTransitionTime"] for c in done] == [rfc3339(1.0)] * 3 + [rfc3339(4.0), rfc3339(1.0)]


TERMINATING = obj("Namespace", "team", ns="")
TERMINATING["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:01Z"
TERMINATING["spec"] = {"finalizers": ["kubernetes"]}
TERMINATING["status"] = {"phase": "Terminating"}


def status_writes(w):
    return [r.status for r in requests(w) if isinstance(r, UpdateStatus) and r.kind == "Namespace"]


def test_the_controller_writes_them_once_its_deletes_are_answered():
    nc = ReconcilerStep(NamespaceReconciler, sort_keys=True)
    feed(nc, ("ADDED", obj("Pod", "a", ns="team")), ("ADDED", obj("Pod", "b", ns="team")), ("ADDED", TERMINATING))
    assert status_writes(nc.sync(0.0)) == []  # deletes sent: their outcome is not known yet
    feed(nc, ("DELETED", obj("Pod", "a", ns="team")))
    (status,) = status_writes(nc.sync(1.0))
    assert status["phase"] == "Terminating"
    assert rows(status["conditions"])[3] == (
        "NamespaceContentRemaining",
        "True",
        "SomeResourcesRemain",
        "Some resources are remaining: pods. has 1 resource instances",
    )


def test_a_delete_refused_for_good_is_a_content_failure_while_its_object_is_there():
    m = ControllerManager([ReconcilerStep(NamespaceReconciler, sort_keys=True)])
    m.on_events([("Pod", "ADDED", obj("Pod", "p", ns="team"), None), ("Namespace", "ADDED", TERMINATING, None)], 0.0)
    (sent,) = requests(m.sync(0.0))
    m.on_failed(sent, Forbidden('pods "p" is forbidden: not today'), 0.0)
    (status,) = status_writes(m.sync(0.005))
    assert rows(status["conditions"])[2:4] == [
        (
            "NamespaceDeletionContentFailure",
            "True",
            "ContentDeletionFailed",
            'Failed to delete all resource types, 1 remaining: pods "p" is forbidden: not today',
        ),
        (
            "NamespaceContentRemaining",
            "True",
            "SomeResourcesRemain",
            "Some resources are remaining: pods. has 1 resource instances",
        ),
    ]
