"""kube-controller-manager emulation: the controllers that make a cluster heal.

Each module is pure logic fed with watch events and asked for the writes it wants made;
the controller-manager actor shell in ``actors/`` owns the informers, the timers and the
apiserver calls (docs/architecture.md §8). Modules:

- ``disruption``: PodDisruptionBudget status, which the Eviction subresource and
  preemption read;
- ``nodelifecycle``: node health from Lease renewals and status heartbeats, Unknown
  conditions after the grace period, the NoExecute ``unreachable``/``not-ready`` taints;
- ``nodetaints``: Taint Nodes by Condition (the NoSchedule taints);
- ``tainteviction``: the NoExecute taint manager (deletes pods after their
  tolerationSeconds);
- ``podgc``: pod garbage collection (orphans, terminated pods beyond the threshold,
  unscheduled or out-of-service terminating pods);
- ``garbagecollector``: ownerReferences: dependents of deleted owners, Foreground and
  Orphan propagation;
- ``namespace``: a deleted namespace's content, then its ``kubernetes`` finalizer;
- ``writes``: the ``Writes`` a controller's sync returns and the order they are sent in;
- ``manager``: the controller contract and the routing of watch events to controllers.
"""

from .disruption import DisruptionController, pdb_status, pdbs_for_pod

__all__ = ["DisruptionController", "pdb_status", "pdbs_for_pod"]
