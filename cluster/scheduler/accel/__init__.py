"""Everything in the scheduler that exists only for speed, and the one setting that
switches it.

Owns ``Accelerate``: which accelerators a scheduler runs. Each changes how fast a decision
is reached, never which decision (a differential test drives random workloads through
the scheduler with each one on and off and compares every bind, event, nomination and
victim). With all of them off the scheduling cycle is the plain reference path: PreFilter
and Filter over every node, then upstream's round-robin search over those verdicts,
Score, select; preemption dry-runs each candidate node through the plugins.

Read from the scheduler configuration (``accelerate: true | false`` or a mapping naming
accelerators, e.g. ``accelerate: {rowMemo: false}``; a name left out stays on) by
``config.build_config``, and by ``Scheduler``, the queue intake and the preemption host,
which consult one flag each at the point the accelerator plugs in. The accelerators'
code lives beside this module: ``fastfilter`` (the one hook into PreFilter and Filter:
``lazyfilter``'s runs that filter only the rows the search visits, pass 1 by resource
arithmetic, ``veto``'s kept pass 1), ``rowmemo`` (verdicts and scores per kind of pod,
kept across cycles; with ``explain: all`` each Score plugin's own scores too, so the
explanation needs no second cycle), ``kindrun`` (runs of pods of one kind, their
searches planned at once) and ``preemption_fast`` (preemption's dry run as array
operations).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any

# setting name -> (attribute, what it does); the setting's names are camelCase like the
# rest of the configuration.
ACCELERATORS: dict[str, tuple[str, str]] = {
    "lazyFilter": ("lazy_filter", "filter only the nodes the search visits, not every node"),
    "rowMemo": ("row_memo", "keep each node's verdict and score per kind of pod across cycles"),
    "kindRuns": ("kind_runs", "place the next pods of one kind without PreFilter and PreScore"),
    "vetoMemo": ("veto_memo", "keep the nominated pods' veto per kind of pod across cycles"),
    "resourceArithmetic": (
        "resource_arithmetic",
        "judge nominated pods and preemption what-ifs by resource arithmetic when only resources decide",
    ),
    "nominatedFit": ("nominated_fit", "retry a preemptor's nominated node by arithmetic"),
    "fastPreemption": ("fast_preemption", "run preemption's dry run as array operations"),
    "podHeads": ("pod_heads", "queue new pending pods from their head, reusing a parsed template"),
}


@dataclass(frozen=True)
class Accelerate:
    """Which accelerators run (all by default)."""

    lazy_filter: bool = True
    row_memo: bool = True
    kind_runs: bool = True
    veto_memo: bool = True
    resource_arithmetic: bool = True
    nominated_fit: bool = True
    fast_preemption: bool = True
    pod_heads: bool = True

    @classmethod
    def all(cls, on: bool) -> Accelerate:
        return cls(**{f.name: on for f in fields(cls)})

    @classmethod
    def only(cls, name: str, on: bool = True) -> Accelerate:
        """One accelerator ``on`` (its setting name), every other one the opposite."""
        attr = ACCELERATORS[name][0]
        return cls(**{f.name: (on if f.name == attr else not on) for f in fields(cls)})

    @classmethod
    def parse(cls, raw: Any, path: str = "accelerate") -> Accelerate:
        """``true``/``false``/absent, or a mapping of accelerator names to booleans;
        ValueError naming the field and the value otherwise."""
        if raw is None:
            return cls()
        if isinstance(raw, bool):
            return cls.all(raw)
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: {json.dumps(raw, default=str)} must be true, false or a mapping of accelerators")
        values = {}
        for name, on in raw.items():
            if name not in ACCELERATORS:
                known = ", ".join(ACCELERATORS)
                raise ValueError(f"{path}.{name}: unknown accelerator (known: {known})")
            if not isinstance(on, bool):
                raise ValueError(f"{path}.{name}: {json.dumps(on, default=str)} must be true or false")
            values[ACCELERATORS[name][0]] = on
        return cls(**values)

    @property
    def any(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))
