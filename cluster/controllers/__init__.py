"""kube-controller-manager emulation: the controllers that make a cluster heal.

Each module is pure logic fed with watch events and asked for the writes it wants made;
the controller-manager actor shell in ``actors/`` owns the informers, the timers and the
apiserver calls (DESIGN §4, "controller-manager actor"). Modules: ``disruption``
(PodDisruptionBudget status, which the Eviction subresource and preemption read).
"""
from .disruption import DisruptionController, pdb_status, pdbs_for_pod

__all__ = ["DisruptionController", "pdb_status", "pdbs_for_pod"]
