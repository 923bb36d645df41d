"""The scenario fields for workloads: the ``object`` expectation's reference and its checks
at load, and the ``scale`` and ``rollback`` timeline actions (``schema.py`` uses them;
``rollout.py`` and ``objectexpect.py`` give them meaning).

    expect:
    - within: 120s
      object: {kind: Deployment, name: web}          # namespace: default ("" for cluster-scoped kinds)
      field: status.conditions[type=Progressing].reason
      equals: NewReplicaSetAvailable                 # or atLeast / atMost (numbers), or exists: true|false
    timeline:
    - {at: 60s, scale: {kind: Deployment, name: web, replicas: 20}}
    - {at: 90s, rollback: {name: web}}               # toRevision: N (0 or absent: the previous)
    - {at: 120s, scale: {pool: node, count: 5}}      # a node pool: nodes added, or removed newest first
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from ..api.objects import KINDS
from .objectexpect import PathError, parse_path
from .strict import Strict

COMPARATORS = ("equals", "atLeast", "atMost", "exists")
WORKLOAD_INVARIANTS = ("rolloutBounds", "statefulSetIdentity")  # workloadinvariants.py


class ObjectRef(Strict):
    kind: str
    namespace: str = "default"  # "" for a cluster-scoped kind (a cluster-scoped kind gets "" anyway)
    name: str


class ScaleSpec(Strict):
    kind: Literal["Deployment", "ReplicaSet", "StatefulSet", "Job"] = "Deployment"
    namespace: str = "default"
    name: str
    replicas: int = Field(ge=0)  # a Job's spec.parallelism


class PoolScale(Strict):
    pool: str  # a node pool's namePrefix (spec.cluster.nodes or an addNodes step)
    count: int = Field(ge=0)


def _scale_kind(v: Any) -> str:
    """Which of the two ``scale`` shapes a step holds: a node pool's names ``pool``."""
    if isinstance(v, PoolScale) or (isinstance(v, dict) and "pool" in v):
        return "PoolScale"
    return "ScaleSpec"


# The tags start upper-case, so an error's field path leaves them out (schema._pydantic_line).
AnyScale = Annotated[
    Annotated[ScaleSpec, Tag("ScaleSpec")] | Annotated[PoolScale, Tag("PoolScale")],
    Discriminator(_scale_kind),
]


class RollbackSpec(Strict):
    namespace: str = "default"
    name: str
    toRevision: int = Field(default=0, ge=0)  # 0: the revision before the newest


def number(v: Any) -> Any:
    """``v`` if it is a number (for ``atLeast`` and ``atMost``); raises ValueError."""
    if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
        raise ValueError("must be a number")
    return v


def object_problem(e: Any, path: str) -> str | None:
    """What is wrong with expectation ``e`` (at ``path``) as far as ``object`` goes, as one
    line naming the field and value, or None. Fixes the namespace of a cluster-scoped kind."""
    if e.object is None:
        for f in ("field", "exists"):
            if getattr(e, f) is not None:
                return f"{path}.{f}: only an object expectation takes it"
        for f in ("equals", "atLeast", "atMost"):  # what the others compare are counts
            v = getattr(e, f)
            if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool) or not float(v).is_integer()):
                return f"{path}.{f}: {json.dumps(v)} must be an integer (a count)"
        return None
    ref: ObjectRef = e.object
    if ref.kind not in KINDS:
        return f"{path}.object.kind: {json.dumps(ref.kind)} is not a kind kubemu serves"
    if not KINDS[ref.kind][1]:
        if ref.namespace and "namespace" in ref.model_fields_set:
            return f"{path}.object.namespace: {json.dumps(ref.namespace)} names a namespace, but {ref.kind} is cluster-scoped"
        ref.namespace = ""
    elif not ref.namespace:
        return f'{path}.object.namespace: "" names no namespace, but {ref.kind} is namespaced'
    if e.field is None:
        return f"{path}.field: an object expectation needs the field to compare"
    try:
        parse_path(e.field)
    except PathError as err:
        return f"{path}.field: {err}"
    given = [f for f in COMPARATORS if getattr(e, f) is not None]
    if not given:
        return f"{path}: an object expectation needs equals, atLeast, atMost or exists"
    if "exists" in given and len(given) > 1:
        return f"{path}.exists: takes no other comparator"
    return None
