"""kube-controller-manager emulation: the controllers that make a cluster heal.

Each module is pure logic: a ``Reconciler`` (``reconciler.py``) fed by its work queue
(``workqueue.py``) returns typed writes for a key; the controller-manager component
(``component.py``) runs them all over one set of informers (``manager.py``). Modules:

- ``reconciler``, ``workqueue``: the controller runtime (keys, cache, indexers, back-off);
- ``writes``: the writes of a sync and the order they land in;
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
- the workload controllers (``replicaset``, ``daemonset``, ``deployment``,
  ``statefulset``, ``batchjob``, ``cronjobs``, ``jobttl``, ``hpa``);
- ``manager``: the routing of watch events to controllers and the merge of their writes.
"""

from .disruption import DisruptionController, pdb_status, pdbs_for_pod

__all__ = ["DisruptionController", "pdb_status", "pdbs_for_pod"]
