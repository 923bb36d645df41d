"""The scenario files and which runtime each needs (shared by the scenario tests)."""

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
FOLDERS = ("scheduling", "preemption", "kubelet", "chaos", "yunikorn", "workloads", "services")
# Chaos that stops processes; the local runtime refuses these and the README lists them.
NEEDS_PROCESSES = {"chaos/host-kill": "killHost", "chaos/ray-nodes": "rayNodes"}
ALL = sorted([*ROOT.glob("scenarios/*.yaml"), *(p for d in FOLDERS for p in (ROOT / "scenarios" / d).glob("*.yaml"))])


def key(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT / "scenarios").with_suffix("")
    return str(rel)


def quiet(_line: str) -> None:
    pass


def failed(report: dict) -> list:
    return [(e["spec"], e["detail"]) for e in report["expectations"] if not e["ok"]]
