"""Table cells of the workload kinds kubemu runs: StatefulSet, Job, CronJob and
HorizontalPodAutoscaler, after upstream's printers (printStatefulSet, printJob,
printCronJob, printHorizontalPodAutoscaler). ``tables.py`` owns the columns; cells never
raise on a sparse object.
"""

from __future__ import annotations

from typing import Any

from ..clock import parse_timestamp
from .tables_kinds import (
    NONE,
    _age,
    _d,
    _i,
    _l,
    _meta,
    _name,
    _s,
    _spec,
    _status,
    _template_containers,
    human_duration,
    selector_string,
    since,
)


def statefulset_cells(s: dict[str, Any], now: float) -> list[Any]:
    spec, status = _spec(s), _status(s)
    ready = f"{_i(status.get('readyReplicas'))}/{_i(spec.get('replicas'), 1)}"
    return [_name(s), ready, _age(s, now), *_template_containers(s)]


def _has(status: dict[str, Any], kind: str) -> bool:
    return any(_d(c).get("type") == kind and _d(c).get("status") == "True" for c in _l(status.get("conditions")))


def _job_status(job: dict[str, Any]) -> str:
    status = _status(job)
    for kind, shown in (("Complete", "Complete"), ("Failed", "Failed")):
        if _has(status, kind):
            return shown
    if _meta(job).get("deletionTimestamp"):
        return "Terminating"
    for kind in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if _has(status, kind):
            return kind
    return "Running"


def job_cells(job: dict[str, Any], now: float) -> list[Any]:
    spec, status = _spec(job), _status(job)
    succeeded = _i(status.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{_i(spec.get('completions'))}"
    else:
        completions = f"{succeeded}/1 of {_i(spec.get('parallelism'), 1)}"
    start, end = parse_timestamp(_s(status.get("startTime"))), parse_timestamp(_s(status.get("completionTime")))
    duration = "" if start is None else human_duration((end if end is not None else now) - start)
    return [
        _name(job),
        _job_status(job),
        completions,
        duration,
        _age(job, now),
        *_template_containers(job),
        selector_string(spec.get("selector")),
    ]


def cronjob_cells(cj: dict[str, Any], now: float) -> list[Any]:
    spec, status = _spec(cj), _status(cj)
    suspend = spec.get("suspend")
    last = status.get("lastScheduleTime")
    template = _d(_d(spec.get("jobTemplate")).get("spec"))
    return [
        _name(cj),
        _s(spec.get("schedule")),
        _s(spec.get("timeZone")) or NONE,
        "<unset>" if suspend is None else ("True" if suspend else "False"),
        len(_l(status.get("active"))),
        since(last, now) if last else NONE,
        _age(cj, now),
        *_template_containers({"spec": template}),
        selector_string(template.get("selector")),
    ]


_HPA_SOURCES = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods"}
_HPA_SOURCES.update(Object="object", External="external")


def _hpa_metric(spec: dict[str, Any], current: dict[str, Any] | None) -> str:
    kind = spec.get("type")
    field = _HPA_SOURCES.get(kind) if isinstance(kind, str) else None
    if field is None:
        return "<unknown type>"
    res, cur = _d(spec.get(field)), _d(_d(_d(current).get(field)).get("current"))
    target = _d(res.get("target"))
    if kind == "Pods":
        return f"{_s(cur.get('averageValue')) or '<unknown>'}/{_s(target.get('averageValue'))}"
    if kind in ("Object", "External"):
        if target.get("averageValue") is not None:
            return f"{_s(cur.get('averageValue')) or '<unknown>'}/{target['averageValue']} (avg)"
        return f"{_s(cur.get('value')) or '<unknown>'}/{_s(target.get('value'))}"
    name = _s(res.get("name"))
    if target.get("averageValue") is not None:
        return f"{name}: {_s(cur.get('averageValue')) or '<unknown>'}/{target['averageValue']}"
    shown = f"{cur['averageUtilization']}%" if cur.get("averageUtilization") is not None else "<unknown>"
    wanted = f"{target['averageUtilization']}%" if target.get("averageUtilization") is not None else "<auto>"
    return f"{name}: {shown}/{wanted}"


def _hpa_metrics(specs: list[Any], statuses: list[Any]) -> str:
    if not specs:
        return "<none>"
    shown = [_hpa_metric(_d(m), _d(statuses[i]) if i < len(statuses) else None) for i, m in enumerate(specs)]
    if len(shown) > 3:  # upstream shows three and counts the rest
        return ", ".join(shown[:3]) + f" + {len(shown) - 3} more..."
    return ", ".join(shown)


def hpa_cells(hpa: dict[str, Any], now: float) -> list[Any]:
    spec, status = _spec(hpa), _status(hpa)
    ref = _d(spec.get("scaleTargetRef"))
    low = spec.get("minReplicas")
    return [
        _name(hpa),
        f"{_s(ref.get('kind'))}/{_s(ref.get('name'))}",
        _hpa_metrics(_l(spec.get("metrics")), _l(status.get("currentMetrics"))),
        "<unset>" if low is None else str(low),
        _i(spec.get("maxReplicas")),
        _i(status.get("currentReplicas")),
        _age(hpa, now),
    ]
