"""The schema of kubemu's own kinds (``kinds.OWN_GROUP``, ``kubemu.io``), in the generated table's form.

Upstream's definitions, from which ``schema_table.py`` is generated, know nothing of kubemu's
own group, so its kinds are written here by hand in the same notation (``STRUCTS``: struct ->
space-separated ``jsonName:type``; see ``cluster/api/schema.py``) and ``schema.py`` reads them
beside the generated table. One kind today: ``SchedulingResult``, the scheduler's read-only
explanation of a pod (``cluster/scheduler/explain.py`` writes exactly these fields). The
OpenAPI documents (``kubectl explain schedulingresults.status.history``) take the field
descriptions from ``DESCRIPTIONS``; the HTTP front end's field validation and the protobuf
answer read the kind like any other (it has no protobuf message: JSON only, as a custom
resource).
"""

from __future__ import annotations

_V = "kubemu.v1alpha1."

KINDS: dict[str, str] = {
    "SchedulingResult": _V + "SchedulingResult",
}

STRUCTS: dict[str, str] = {
    _V + "SchedulingResult": (
        f"apiVersion:string kind:string metadata:meta.v1.ObjectMeta status:{_V}SchedulingResultStatus"
    ),
    _V + "SchedulingResultStatus": (
        "podUID:string schedulerName:string attempts:int32 result:string node:string reason:string "
        f"lastAttemptTime:Time history:[{_V}SchedulingAttempt]"
    ),
    _V + "SchedulingAttempt": (
        "attempt:int32 time:Time result:string node:string message:string note:string nodes:int32 "
        f"evaluated:int32 feasible:int32 filters:[{_V}FilterResult] scores:[{_V}ScoreResult] "
        f"ranking:[{_V}RankedNode] chosenTotal:int64 preemption:{_V}PreemptionResult"
    ),
    _V + "FilterResult": f"plugin:string point:string rejected:int32 reasons:[{_V}FilterReason]",
    _V + "FilterReason": "reason:string count:int32 nodes:[string]",
    _V + "ScoreResult": f"plugin:string weight:int32 top:[{_V}NodeScore]",
    _V + "NodeScore": "node:string raw:int64 normalized:int64 weighted:int64",
    _V + "RankedNode": "node:string total:int64 byPlugin:{int64}",
    _V + "PreemptionResult": (
        f"message:string nominatedNode:string victimCount:int32 victims:[{_V}Victim] clearedNominations:[string]"
    ),
    _V + "Victim": "namespace:string name:string priority:int32 why:string",
}

REQUIRED: dict[str, str] = {}
PATCH: dict[str, str] = {}

# What ``kubectl explain`` prints for each kind and field.
KIND_DESCRIPTIONS: dict[str, str] = {
    "SchedulingResult": (
        "SchedulingResult explains why the scheduler placed a pod where it did, or could not place it: per "
        "attempt, each Filter plugin's verdicts by reason, each Score plugin's top nodes, the ranking and "
        "the preemption outcome. One per explained pod (same namespace and name, owned by it); written by "
        "the scheduler only (its profile's explain setting: failed, all or none), read-only to clients."
    ),
}
_S, _A = _V + "SchedulingResultStatus", _V + "SchedulingAttempt"
DESCRIPTIONS: dict[tuple[str, str], str] = {
    (_V + "SchedulingResult", "status"): "The pod's explanation, as the scheduler last wrote it.",
    (_S, "podUID"): "The uid of the pod explained.",
    (_S, "schedulerName"): "The scheduler profile that tried the pod.",
    (_S, "attempts"): "How many attempts were explained, including those no longer kept.",
    (_S, "result"): "The last attempt's result: Scheduled, Unschedulable, Preempting or Error.",
    (_S, "node"): "The node the last attempt chose, or nominated by preemption.",
    (_S, "reason"): "Why, in short: the chosen node's score, or the FailedScheduling message.",
    (_S, "lastAttemptTime"): "When the last attempt was (emulated time).",
    (_S, "history"): "The last attempts, oldest first (a bounded number per pod).",
    (_A, "attempt"): "The attempt's number, counting from 1.",
    (_A, "time"): "When the attempt was (emulated time).",
    (_A, "result"): "Scheduled, Unschedulable, Preempting or Error.",
    (_A, "node"): "The node chosen.",
    (_A, "message"): "The FailedScheduling message of a failed attempt.",
    (_A, "note"): "Why scores are missing or differ (one feasible node, the nominated node fit, ...).",
    (_A, "nodes"): "Nodes in the cluster's snapshot.",
    (_A, "evaluated"): "Nodes the search filtered before it stopped (percentageOfNodesToScore).",
    (_A, "feasible"): "Nodes that passed every Filter plugin among those evaluated.",
    (_A, "filters"): "Per Filter (or PreFilter) plugin, the nodes it rejected by reason.",
    (_A, "scores"): "Per Score plugin, its weight and its best nodes (raw, normalized, weighted score).",
    (_A, "ranking"): "The best nodes by total weighted score, each with its score per plugin.",
    (_A, "chosenTotal"): "The total weighted score of the chosen node.",
    (_A, "preemption"): "What preemption did after a failed attempt: the nominated node and victims, or why not.",
    (_V + "FilterResult", "plugin"): "The plugin (or plugins, comma-separated) that rejected the nodes.",
    (_V + "FilterResult", "point"): "The extension point when not Filter (PreFilter).",
    (_V + "FilterResult", "rejected"): "Nodes the plugin rejected.",
    (_V + "FilterResult", "reasons"): "The plugin's reasons, the most frequent first.",
    (_V + "FilterReason", "reason"): "The reason, as the FailedScheduling message counts it.",
    (_V + "FilterReason", "count"): "Nodes rejected for it.",
    (_V + "FilterReason", "nodes"): "The first nodes rejected for it (a bounded number).",
    (_V + "ScoreResult", "weight"): "The plugin's weight in the profile.",
    (_V + "ScoreResult", "top"): "The plugin's best nodes by weighted score (a bounded number).",
    (_V + "NodeScore", "raw"): "The plugin's score before normalization.",
    (_V + "NodeScore", "normalized"): "The score after NormalizeScore (0-100).",
    (_V + "NodeScore", "weighted"): "The normalized score times the plugin's weight.",
    (_V + "RankedNode", "total"): "The sum of the weighted scores.",
    (_V + "RankedNode", "byPlugin"): "The weighted score of each Score plugin.",
    (_V + "PreemptionResult", "message"): "The outcome, as the FailedScheduling message's preemption part.",
    (_V + "PreemptionResult", "nominatedNode"): "The node nominated for the pod once its victims are gone.",
    (_V + "PreemptionResult", "victimCount"): "How many pods are preempted.",
    (_V + "PreemptionResult", "victims"): "The victims (a bounded number).",
    (_V + "PreemptionResult", "clearedNominations"): "Lower-priority pods whose nomination to that node was cleared.",
    (_V + "Victim", "why"): "Why the pod was chosen as a victim.",
}
