"""The scenario fields for workloads: the ``object`` expectation's reference, and the
``scale`` and ``rollback`` timeline actions (``schema.py`` uses them; ``rollout.py`` and
``objectexpect.py`` give them meaning).

    expect:
    - within: 120s
      object: {kind: Deployment, name: web}          # namespace: default
      field: status.conditions[type=Progressing].reason
      equals: NewReplicaSetAvailable                 # or atLeast / atMost (numbers), exists
    timeline:
    - {at: 60s, scale: {kind: Deployment, name: web, replicas: 20}}
    - {at: 90s, rollback: {name: web}}               # toRevision: N (default: the previous)
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ObjectRef(_Strict):
    kind: str
    namespace: str = "default"  # "" for a cluster-scoped kind
    name: str


class ScaleSpec(_Strict):
    kind: str = "Deployment"
    namespace: str = "default"
    name: str
    replicas: int = Field(ge=0)


class RollbackSpec(_Strict):
    namespace: str = "default"
    name: str
    toRevision: int = Field(default=0, ge=0)  # 0: the revision before the current one
