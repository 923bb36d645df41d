"""The Eviction subresource: every refusal, every bypass, and the charged success path."""

import pytest
from store_builders import make_pod

from cluster.api.codec import decode
from cluster.api.errors import InternalError, NotFound
from cluster.api.requests import Evict, UpdateStatus
from cluster.apiserver.eviction import BudgetRefused
from cluster.clock import rfc3339
from cluster.controllers.disruption import MAX_DISRUPTED_PODS, DisruptionController, pdb_status


def violation(needs, has, name="web"):
    return BudgetRefused(f"The disruption budget {name} needs {needs} healthy pods and has {has} currently")


PROCESSING = BudgetRefused("The disruption budget web is still being processed by the server.", 10)
MULTIPLE = InternalError(
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
    retryable=False,
)
WEB = {"app": "web"}


def running(api, name, ready=True, labels=WEB, ns="default", now=0):
    pod = make_pod(name, node="n1", ns=ns)
    pod["metadata"]["labels"] = dict(labels)
    created = api.create(pod, now)
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    assert api.write([UpdateStatus("Pod", ns, name, created["metadata"]["uid"], status)], now) == [None]
    return api.store.get("Pod", ns, name)


def budget(api, name="web", ns="default", selector=None, status=None, policy=None, **spec):
    obj = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"matchLabels": WEB} if selector is None else selector, **spec},
    }
    if selector == "null":
        del obj["spec"]["selector"]
    if policy:
        obj["spec"]["unhealthyPodEvictionPolicy"] = policy
    created = api.create(obj, 0)
    if status is not None:  # observed, unless the status says otherwise
        status = {"observedGeneration": created["metadata"]["generation"], **status}
        api.write([UpdateStatus("PodDisruptionBudget", ns, name, created["metadata"]["uid"], status)], 0)
    return api.store.get("PodDisruptionBudget", ns, name)


def controller_sync(api, now):
    """What the controller-manager will do: compute statuses from the store and write them."""
    pods = list(api.store.objects("Pod"))
    for b in list(api.store.objects("PodDisruptionBudget")):
        m = b["metadata"]
        status = pdb_status(b, pods, now)
        api.write([UpdateStatus("PodDisruptionBudget", m["namespace"], m["name"], m["uid"], status)], now)


def pdb_of(api, name="web", ns="default"):
    return api.store.get("PodDisruptionBudget", ns, name)


def pod_of(api, name, ns="default"):
    return api.store.get("Pod", ns, name)


def disruption_target(pod):
    return next((c for c in pod["status"].get("conditions", ()) if c["type"] == "DisruptionTarget"), None)


# ---- success -----------------------------------------------------------------------------


def test_allowed_eviction_charges_the_budget_then_deletes_gracefully(api):
    for i in range(3):
        running(api, f"p{i}")
    budget(api, minAvailable=2)
    controller_sync(api, now=5)
    assert pdb_of(api)["status"]["disruptionsAllowed"] == 1

    assert api.write([Evict("default", "p0", "", None)], 10) == [None]
    status = pdb_of(api)["status"]
    assert status["disruptionsAllowed"] == 0
    assert status["disruptedPods"] == {"p0": rfc3339(10)}
    (cond,) = status["conditions"]
    assert (cond["status"], cond["reason"], cond["lastTransitionTime"]) == ("False", "InsufficientPods", rfc3339(10))
    m = pod_of(api, "p0")["metadata"]
    assert (m["deletionTimestamp"], m["deletionGracePeriodSeconds"]) == (rfc3339(40), 30)
    target = disruption_target(pod_of(api, "p0"))
    assert (target["status"], target["reason"], target["message"]) == (
        "True",
        "EvictionByEvictionAPI",
        "Eviction API: evicting",
    )

    # The next one is refused until the controller sees a replacement.
    assert api.write([Evict("default", "p1", "", None)], 11) == [violation(2, 3)]
    assert not pod_of(api, "p1")["metadata"].get("deletionTimestamp")


def test_controller_resync_after_eviction_agrees_with_the_apiserver(api):
    for i in range(3):
        running(api, f"p{i}")
    budget(api, minAvailable=2)
    controller_sync(api, now=0)
    api.write([Evict("default", "p0", "", None)], 1)
    dc = DisruptionController()
    for b in api.store.objects("PodDisruptionBudget"):
        dc.on_pdb("ADDED", b)
    for p in api.store.objects("Pod"):
        dc.on_pod("ADDED", p)
    (write,) = dc.sync(now=2)
    status = write[2]
    # p0 is terminating now: out of currentHealthy, and its disruptedPods entry is done.
    assert (status["currentHealthy"], status["disruptionsAllowed"], status["disruptedPods"]) == (2, 0, {})


def test_grace_from_the_eviction_and_the_condition_travel_in_one_write(api):
    running(api, "p0")
    budget(api, maxUnavailable=1)
    controller_sync(api, now=0)
    rv = api.store.rv
    assert api.write([Evict("default", "p0", "", 5)], 3) == [None]
    assert api.store.rv == rv + 2  # the PDB status, then the pod (deletion mark and condition together)
    m = pod_of(api, "p0")["metadata"]
    assert (m["deletionTimestamp"], m["deletionGracePeriodSeconds"]) == (rfc3339(8), 5)


def test_grace_zero_removes_the_pod_at_once_and_still_charges(api):
    running(api, "p0")
    running(api, "p1")
    budget(api, minAvailable=1)
    controller_sync(api, now=0)
    assert api.write([Evict("default", "p0", "", 0)], 1) == [None]
    assert pod_of(api, "p0") is None
    assert pdb_of(api)["status"]["disruptedPods"] == {"p0": rfc3339(1)}


def test_pod_without_budget_is_just_deleted(api):
    running(api, "p0", labels={"app": "db"})
    budget(api, minAvailable=5)
    assert api.write([Evict("default", "p0", "", None)], 1) == [None]
    assert pod_of(api, "p0")["metadata"]["deletionTimestamp"] == rfc3339(31)
    assert "status" not in pdb_of(api)  # nothing charged


# ---- refusals ----------------------------------------------------------------------------


def test_missing_pod_and_wrong_uid(api):
    running(api, "p0")
    rv = api.store.rv
    assert api.write([Evict("default", "nope", "", None)], 1) == [NotFound('pods "nope" not found')]
    (err,) = api.write([Evict("default", "p0", "not-the-uid", None)], 1)
    assert (err.code, err.reason) == (409, "Conflict") and "Precondition failed" in err.message
    assert api.store.rv == rv


def test_budget_at_zero_refuses_and_changes_nothing(api):
    running(api, "p0")
    running(api, "p1")
    budget(api, minAvailable=2)
    controller_sync(api, now=0)
    rv = api.store.rv
    assert api.write([Evict("default", "p0", "", None)], 1) == [violation(2, 2)]
    assert api.store.rv == rv
    assert disruption_target(pod_of(api, "p0")) is None


def test_budget_without_status_refuses(api):
    running(api, "p0")
    budget(api, maxUnavailable=1)  # the controller has not run yet
    assert api.write([Evict("default", "p0", "", None)], 1) == [PROCESSING]


def test_status_older_than_the_spec_refuses(api):
    running(api, "p0")
    budget(
        api,
        maxUnavailable=1,  # created at generation 1, which the status has not observed
        status={"observedGeneration": 0, "disruptionsAllowed": 1, "currentHealthy": 1, "desiredHealthy": 0},
    )
    assert api.write([Evict("default", "p0", "", None)], 1) == [PROCESSING]


def test_two_budgets_refuse_with_500(api):
    running(api, "p0")
    budget(api, "a", maxUnavailable=1, status={"disruptionsAllowed": 1})
    budget(api, "b", selector={}, maxUnavailable=1, status={"disruptionsAllowed": 1})
    rv = api.store.rv
    assert api.write([Evict("default", "p0", "", None)], 1) == [MULTIPLE]
    assert api.store.rv == rv


def test_negative_allowance_and_overfull_disrupted_map_are_forbidden(api):
    running(api, "p0")
    budget(api, "neg", status={"disruptionsAllowed": -1}, maxUnavailable=1)
    (err,) = api.write([Evict("default", "p0", "", None)], 1)
    assert (err.code, err.reason) == (403, "Forbidden")
    assert err.message == 'poddisruptionbudget.policy "neg" is forbidden: pdb disruptions allowed is negative'

    api.delete("PodDisruptionBudget", "default", "neg", None, None, 1)
    full = {f"gone-{i}": rfc3339(0) for i in range(MAX_DISRUPTED_PODS + 1)}
    budget(api, "full", status={"disruptionsAllowed": 5, "disruptedPods": full}, maxUnavailable=1)
    (err,) = api.write([Evict("default", "p0", "", None)], 1)
    assert (err.code, err.reason) == (403, "Forbidden") and "DisruptedPods map too big" in err.message


# ---- which budgets apply -----------------------------------------------------------------


@pytest.mark.parametrize(
    "selector,ns,refused",
    [
        (None, "default", True),  # matchLabels app=web
        ({}, "default", True),  # policy/v1: an empty selector covers every pod of the namespace
        ("null", "default", False),  # no selector covers nothing
        ({"matchLabels": {"app": "db"}}, "default", False),
        (None, "other", False),  # a PDB of another namespace
    ],
)
def test_which_budget_covers_the_pod(api, selector, ns, refused):
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}, 0)
    running(api, "p0")
    budget(api, ns=ns, selector=selector, minAvailable=1, status={"disruptionsAllowed": 0})
    assert api.write([Evict("default", "p0", "", None)], 1) == [violation(0, 0) if refused else None]


# ---- bypasses ----------------------------------------------------------------------------


def test_pending_terminal_and_terminating_pods_skip_the_budget(api):
    budget(api, minAvailable=10, status={"disruptionsAllowed": 0})
    pending = make_pod("pending", node="n1")
    pending["metadata"]["labels"] = dict(WEB)
    api.create(pending, 0)
    failed = running(api, "failed")
    api.write([UpdateStatus("Pod", "default", "failed", failed["metadata"]["uid"], {"phase": "Failed"})], 0)
    running(api, "going")
    api.delete("Pod", "default", "going", None, 30, 0)
    before, rv = pdb_of(api)["metadata"]["resourceVersion"], api.store.rv

    assert api.write([Evict("default", n) for n in ("pending", "failed", "going")], 1) == [None] * 3
    seen = {(t, decode(data)["metadata"]["name"]): decode(data) for t, data in api.store.events_since("Pod", rv)[0]}
    assert set(seen) == {("MODIFIED", "pending"), ("DELETED", "failed"), ("MODIFIED", "going")}
    assert all(disruption_target(p) for p in seen.values())  # watchers see the condition too
    assert pod_of(api, "failed") is None  # terminal: removed at once
    assert pod_of(api, "pending")["metadata"]["deletionTimestamp"] == rfc3339(31)
    going = pod_of(api, "going")
    assert going["metadata"]["deletionTimestamp"] == rfc3339(30)  # a longer grace never extends
    assert disruption_target(going)["reason"] == "EvictionByEvictionAPI"  # stored even so
    assert pdb_of(api)["metadata"]["resourceVersion"] == before


@pytest.mark.parametrize(
    "policy,status,expected",
    [
        # AlwaysAllow: an unready pod never needs the budget.
        ("AlwaysAllow", {"currentHealthy": 0, "desiredHealthy": 2, "disruptionsAllowed": 0}, None),
        # Default (IfHealthyBudget): free while the application is at its budget...
        (None, {"currentHealthy": 2, "desiredHealthy": 2, "disruptionsAllowed": 0}, None),
        ("IfHealthyBudget", {"currentHealthy": 3, "desiredHealthy": 2, "disruptionsAllowed": 1}, None),
        # ...otherwise it must be allowed like any other.
        (None, {"currentHealthy": 1, "desiredHealthy": 2, "disruptionsAllowed": 0}, violation(2, 1)),
        ("IfHealthyBudget", {"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0}, violation(0, 0)),
    ],
)
def test_unhealthy_pod(api, policy, status, expected):
    running(api, "sick", ready=False)
    budget(api, minAvailable=2, policy=policy, status=status)
    before = pdb_of(api)["status"]
    assert api.write([Evict("default", "sick", "", None)], 1) == [expected]
    assert pdb_of(api)["status"] == before  # an unhealthy pod is never charged to the budget
    assert bool(pod_of(api, "sick")["metadata"].get("deletionTimestamp")) == (expected is None)


def test_unhealthy_pod_charged_when_budget_has_room_but_is_not_met(api):
    # desiredHealthy 0 means "not met" to the bypass rule; a positive allowance then pays for it.
    running(api, "sick", ready=False)
    budget(api, maxUnavailable=1, status={"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 1})
    assert api.write([Evict("default", "sick", "", None)], 4) == [None]
    assert pdb_of(api)["status"]["disruptedPods"] == {"sick": rfc3339(4)}


def test_batch_results_in_order_and_independent(api):
    for i in range(3):
        running(api, f"p{i}")
    budget(api, maxUnavailable=1)
    controller_sync(api, now=0)
    results = api.write([Evict("default", "p0"), Evict("default", "nope"), Evict("default", "p1")], 1)
    assert results == [None, NotFound('pods "nope" not found'), violation(2, 3)]


def test_a_refusal_is_upstreams_429_status_with_the_disruption_budget_cause():
    assert violation(2, 1).status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.",
        "reason": "TooManyRequests",
        "code": 429,
        "details": {
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": "The disruption budget web needs 2 healthy pods and has 1 currently",
                }
            ]
        },
    }
    assert PROCESSING.status()["details"]["retryAfterSeconds"] == 10 and PROCESSING.retryable


def test_a_refusal_survives_pickling_with_its_cause_and_retry_hint():
    import pickle

    again = pickle.loads(pickle.dumps(PROCESSING))
    assert again == PROCESSING and again.status() == PROCESSING.status()
    assert again != violation(2, 1)
