"""``rollback`` as ``kubectl rollout undo``: which ReplicaSet's revision
is restored, kubectl's refusals in kubectl's order, the template and annotations written;
``scale``; and both steps through the driver's timeline (logged refusals, the update sent)
and one whole local run."""

import asyncio

import pytest
import yaml

from cluster.api.errors import NotFound
from cluster.scenario.driver import Timeline
from cluster.scenario.local import run_local
from cluster.scenario.mirror import Mirror
from cluster.scenario.rollout import Refused, revision_to_restore, rolled_back, scaled
from cluster.scenario.schema import ScenarioError, load
from cluster.scenario.schema_workloads import RollbackSpec, ScaleSpec

HASH = "pod-template-hash"
REV = "deployment.kubernetes.io/revision"


def template(image: str, hash_: str | None = None) -> dict:
    labels = {"app": "web", **({HASH: hash_} if hash_ else {})}
    return {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": image}]}}


def rs(name: str, rev: str | None, image: str, owner: str = "d-uid", ns: str = "default", **annotations) -> dict:
    ann = {**({REV: rev} if rev is not None else {}), **annotations}
    return {
        "kind": "ReplicaSet",
        "metadata": {
            "namespace": ns,
            "name": name,
            "annotations": ann,
            "ownerReferences": [{"kind": "Deployment", "name": "web", "uid": owner, "controller": True}],
        },
        "spec": {"template": template(image, name.rsplit("-", 1)[-1])},
    }


def deployment(image: str = "nginx:3", paused: bool = False, **annotations) -> dict:
    return {
        "kind": "Deployment",
        "metadata": {
            "namespace": "default",
            "name": "web",
            "uid": "d-uid",
            "resourceVersion": "7",
            "annotations": {REV: "3", **annotations},
        },
        "spec": {"replicas": 3, "paused": paused, "template": template(image)},
        "status": {"replicas": 3},
    }


A, B, C = rs("web-a", "1", "nginx:1"), rs("web-b", "2", "nginx:2"), rs("web-c", "3", "nginx:3")


@pytest.mark.parametrize(
    "replicasets, to, chosen",
    [
        ([A, B, C], 0, "web-b"),  # the second-newest revision
        ([C, A, B], 0, "web-b"),  # whatever the order
        ([A, B, C], 1, "web-a"),
        ([A, B, C], 3, "web-c"),
        ([A, C], 0, "web-a"),  # revisions need not be consecutive
        ([rs("web-x", None, "x"), C], 0, "web-x"),  # no annotation: revision 0, still history
        ([rs("web-x", "two", "x"), A, C], 0, "web-a"),  # an unreadable annotation: passed over
        ([A, rs("web-d", "1", "d"), C], 1, "web-a"),  # a tie: the first in list order
        ([A, rs("web-0", "3", "z"), C], 0, "web-c"),  # two at the newest: the later is "previous"
        ([rs("web-z", "2", "z", owner="other"), A, C], 0, "web-a"),  # another owner's
    ],
)
def test_which_revision_is_restored(replicasets, to, chosen):
    assert revision_to_restore(deployment(), replicasets, to)["metadata"]["name"] == chosen


@pytest.mark.parametrize(
    "d, replicasets, to, message",
    [
        (deployment(), [A, B, C], 9, "unable to find specified revision 9 in history"),
        (deployment(), [C], 0, 'no rollout history found for deployment "web"'),
        (deployment(), [], 0, 'no rollout history found for deployment "web"'),
        (deployment(), [rs("web-z", "2", "z", owner="other"), C], 0, 'no rollout history found for deployment "web"'),
        (deployment(), [rs("web-x", "x", "x"), C], 0, 'no rollout history found for deployment "web"'),
        # kubectl finds the revision before it looks at spec.paused
        (deployment(paused=True), [C], 0, 'no rollout history found for deployment "web"'),
        (deployment(paused=True), [A, B, C], 7, "unable to find specified revision 7 in history"),
        (
            deployment(paused=True),
            [A, B, C],
            0,
            "you cannot rollback a paused deployment; resume it first with "
            "'kubectl rollout resume deployment/web' and try again",
        ),
        (deployment(), [A, B, C], 3, "skipped rollback (current template already matches revision 3)"),
        # N as asked: 0 when the previous revision's template is already the Deployment's
        (deployment("nginx:2"), [A, B, C], 0, "skipped rollback (current template already matches revision 0)"),
    ],
)
def test_kubectls_refusals_in_kubectls_order(d, replicasets, to, message):
    with pytest.raises(Refused) as err:
        rolled_back(d, replicasets, to)
    assert str(err.value) == message


def test_the_template_loses_the_hash_and_the_annotations_are_the_replicasets():
    target = rs(
        "web-a",
        "1",
        "nginx:1",
        **{
            "kubernetes.io/change-cause": "first",
            "deployment.kubernetes.io/revision-history": "4",
            "deployment.kubernetes.io/desired-replicas": "3",
            "deployment.kubernetes.io/max-replicas": "4",
            "kubectl.kubernetes.io/last-applied-configuration": "{rs}",
            "deprecated.deployment.rollback.to": "1",
        },
    )
    d = deployment(note="gone", **{"kubectl.kubernetes.io/last-applied-configuration": "{d}"})
    new = rolled_back(d, [target, C], 1)
    assert new["spec"]["template"] == template("nginx:1")  # no pod-template-hash
    assert new["metadata"]["annotations"] == {
        REV: "3",  # the Deployment's own, as kubectl keeps it
        "kubectl.kubernetes.io/last-applied-configuration": "{d}",
        "kubernetes.io/change-cause": "first",  # copied from the ReplicaSet
    }
    assert "status" not in new and new["metadata"]["resourceVersion"] == "7"  # an update of what was read
    assert d["spec"]["template"] == template("nginx:3") and target["spec"]["template"]["metadata"]["labels"][HASH]


def test_scale_sets_replicas_or_a_jobs_parallelism():
    assert scaled({"kind": "Deployment", "spec": {"replicas": 1}}, 0)["spec"] == {"replicas": 0}
    assert scaled({"kind": "Job", "spec": {"parallelism": 1, "completions": 4}}, 3)["spec"] == {
        "parallelism": 3,
        "completions": 4,
    }


@pytest.mark.parametrize(
    "step, message",
    [
        (
            {"scale": {"kind": "Pod", "name": "p", "replicas": 1}},
            """spec.timeline[0].scale.kind: "Pod" Input should be 'Deployment', 'ReplicaSet', 'StatefulSet' or 'Job'""",
        ),
        ({"scale": {"name": "p"}}, "spec.timeline[0].scale.replicas: Required value"),
        (
            {"rollback": {"name": "web", "toRevision": -1}},
            "spec.timeline[0].rollback.toRevision: -1 Input should be greater than or equal to 0",
        ),
        ({"rollback": {"name": "web", "kind": "StatefulSet"}}, "spec.timeline[0].rollback.kind: unknown field"),
    ],
)
def test_bad_steps_are_refused_at_load(step, message):
    from test_scenario_schema import scenario

    with pytest.raises(ScenarioError) as err:
        load(scenario(timeline=[{"at": "1s", **step}]))
    assert str(err.value).startswith(message), str(err.value)


# ---- through the driver's timeline --------------------------------------------------------


class FakeCluster:
    """``get`` and ``write`` as the driver uses them; records the updates."""

    def __init__(self, objects: dict):
        self.objects = objects
        self.written: list[dict] = []

    async def get(self, kind, ns, name):
        if (kind, ns, name) not in self.objects:
            raise NotFound(f'deployments.apps "{name}" not found')
        return self.objects[(kind, ns, name)]

    async def write(self, requests):
        self.written += [r.obj for r in requests]
        return [None for _ in requests]


def timeline(objects: dict, replicasets=()) -> tuple[Timeline, FakeCluster, list[str]]:
    mirror, logs = Mirror(), list[str]()
    for r in replicasets:
        mirror.apply("ReplicaSet", "ADDED", r, 0.0, 0.0)
    cluster = FakeCluster(objects)
    return Timeline(cluster, logs.append, mirror=mirror), cluster, logs  # type: ignore[arg-type]


def test_the_timeline_rolls_back_with_the_watched_replicasets():
    other_ns = rs("web-b", "2", "nginx:9", ns="team")  # same owner uid, other namespace: not listed
    t, cluster, logs = timeline({("Deployment", "default", "web"): deployment()}, [A, B, C, other_ns])
    asyncio.run(t.rollback(RollbackSpec(name="web")))
    (written,) = cluster.written
    assert written["spec"]["template"] == template("nginx:2")
    assert logs == ["rollback Deployment/default/web: done"]


def test_the_timeline_logs_refusals_and_goes_on():
    t, cluster, logs = timeline({("Deployment", "default", "web"): deployment(paused=True)}, [A, B, C])
    asyncio.run(t.rollback(RollbackSpec(name="web")))
    asyncio.run(t.rollback(RollbackSpec(name="api", toRevision=2)))
    asyncio.run(t.scale(ScaleSpec(name="web", replicas=5)))
    assert logs == [
        "rollback Deployment/default/web: you cannot rollback a paused deployment; resume it first with "
        "'kubectl rollout resume deployment/web' and try again",
        'rollback Deployment/default/api: NotFound: deployments.apps "api" not found',
        "scale Deployment/default/web: done",
    ]
    (written,) = cluster.written
    assert written["spec"]["replicas"] == 5


WHOLE = yaml.safe_load("""
apiVersion: kubemu.io/v1alpha1
kind: Scenario
metadata: {name: undo}
spec:
  runtime: local
  duration: 120s
  cluster:
    nodes: [{namePrefix: node, count: 2, capacity: {cpu: "4", memory: 8Gi}}]
  objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          terminationGracePeriodSeconds: 1
          containers: [{name: c, image: "nginx:1", resources: {requests: {cpu: 100m}}}]
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: cfg}, data: {mode: slow}}
  timeline:
  - at: 10s
    patch:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      type: merge
      patch: {spec: {template: {spec: {containers: [{name: c, image: "nginx:2", resources: {requests: {cpu: 100m}}}]}}}}
  - {at: 30s, rollback: {name: web, toRevision: 9}}
  - {at: 31s, rollback: {name: web}}
  - {at: 50s, scale: {name: web, replicas: 3}}
  expect:
  - within: 30s
    object: {kind: Deployment, name: web}
    field: metadata.annotations["deployment.kubernetes.io/revision"]
    equals: "2"
  - at: end
    object: {kind: Deployment, name: web}
    field: metadata.annotations["deployment.kubernetes.io/revision"]
    equals: "3"
  - at: end
    object: {kind: Deployment, name: web}
    field: spec.template.spec.containers[name=c].image
    equals: "nginx:1"
  - at: end
    object: {kind: Deployment, name: web}
    field: status.availableReplicas
    atLeast: 3
  - at: end
    object: {kind: ConfigMap, name: cfg}
    field: data.mode
    equals: slow
""")


def test_a_whole_run_undoes_a_rollout_and_scales():
    logs: list[str] = []
    report = run_local(load(WHOLE), logs.append)
    assert report["passed"], [(e["spec"], e["detail"]) for e in report["expectations"] if not e["ok"]]
    assert "rollback Deployment/default/web: unable to find specified revision 9 in history" in logs
    assert "rollback Deployment/default/web: done" in logs and "scale Deployment/default/web: done" in logs
