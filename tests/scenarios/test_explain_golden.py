"""``kubemu explain`` on the shipped scheduling scenarios (local runtime, ``explain: all``).

Golden files (``golden/explain/<scenario>.txt``: every pod's explanation as ``kubemu explain
pod`` prints it, uids masked) pin the per-plugin figures. Beside them, checks that cannot
drift with a golden update: a failed attempt's per-reason counts are those of the pod's
FailedScheduling event, a placed pod's explanation names the node it was bound to at the top
of its ranking, and explaining every attempt changes no placement.
Regenerate with ``KUBEMU_UPDATE_GOLDEN=1 pytest tests/scenarios/test_explain_golden.py``.
"""

from __future__ import annotations

import os
import pathlib
import re

import pytest
from scenariofiles import ROOT, quiet

from cluster.scenario.local import run_local
from cluster.scenario.schema import load_file
from cluster.scheduler.explain_cycle import reason_counts
from cluster.scheduler.explain_text import render

GOLDEN = pathlib.Path(__file__).parent / "golden" / "explain"
SCENARIOS = sorted((ROOT / "scenarios" / "scheduling").glob("*.yaml"))
UID = re.compile(r"uid [0-9a-f-]{36}")


@pytest.fixture(scope="module")
def reports() -> dict[str, tuple[dict, dict]]:
    """scenario name -> (report with explain: all, report with explain: none)."""
    out = {}
    for path in SCENARIOS:
        runs = [run_local(load_file(str(path), [f"spec.scheduler.explain={m}"]), quiet) for m in ("all", "none")]
        out[path.stem] = (runs[0], runs[1])
    return out


def message_counts(message: str) -> dict[str, int]:
    """The "<count> <reason>" histogram of a FitError message, preemption's part left out."""
    body = message.split(" nodes are available: ", 1)[1].split(" preemption: ", 1)[0].rstrip(".")
    counts: dict[str, int] = {}
    for part in re.split(r", (?=\d+ )", body):
        n, _, reason = part.partition(" ")
        counts[reason] = counts.get(reason, 0) + int(n)
    return counts


def test_message_counts_reads_the_fit_error_shape():
    msg = (
        "0/5 nodes are available: 1 node(s) had untolerated taint {a: b}, 4 Insufficient cpu. "
        "preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod."
    )
    assert message_counts(msg) == {"node(s) had untolerated taint {a: b}": 1, "Insufficient cpu": 4}


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_explanations_match_the_golden_file(reports, path):
    results = reports[path.stem][0]["schedulingResults"]
    text = "".join(UID.sub("uid <uid>", render(r)) + "\n" for r in results)
    golden = GOLDEN / f"{path.stem}.txt"
    if os.environ.get("KUBEMU_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert text == golden.read_text()


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_failed_attempts_count_what_the_failed_scheduling_event_says(reports, path):
    report = reports[path.stem][0]
    said = {
        (ev["object"], ev["message"]) for ev in report["events"] if ev["reason"] == "FailedScheduling"
    }  # object: Pod/ns/name
    failed = [
        (r, a)
        for r in report["schedulingResults"]
        for a in r["history"]
        if a["result"] in ("Unschedulable", "Preempting")
    ]
    for r, a in failed:
        assert (f"Pod/{r['namespace']}/{r['name']}", a["message"]) in said
        if "filters" in a and " nodes are available: " in a["message"]:
            assert reason_counts(a["filters"]) == message_counts(a["message"]), (r["name"], a)


def test_some_scenario_explains_a_failure_and_a_placement(reports):
    kinds = {a["result"] for rep, _ in reports.values() for r in rep["schedulingResults"] for a in r["history"]}
    assert {"Scheduled", "Unschedulable"} <= kinds


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_a_placed_pod_is_explained_by_the_node_it_was_bound_to(reports, path):
    report = reports[path.stem][0]
    bound = {(p["namespace"], p["name"]): p["nodeName"] for p in report["pods"] if p.get("nodeName")}
    for r in report["schedulingResults"]:
        last = r["history"][-1]
        if last["result"] != "Scheduled" or (r["namespace"], r["name"]) not in bound:
            continue
        assert last["node"] == bound[(r["namespace"], r["name"])]
        if last["ranking"]:
            assert last["ranking"][0]["total"] == last["chosenTotal"]
            assert "note" not in last  # the reference cycle agrees with the choice
            for entry in last["scores"]:
                for top in entry["top"]:
                    assert top["weighted"] == top["normalized"] * entry["weight"]


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_explaining_every_attempt_changes_no_placement(reports, path):
    with_all, without = reports[path.stem]
    assert without["schedulingResults"] == []
    placed = [{(p["namespace"], p["name"]): p.get("nodeName") for p in rep["pods"]} for rep in (with_all, without)]
    assert placed[0] == placed[1]
    assert with_all["passed"] and without["passed"]
