"""The report's charts and pages without a browser: each chart carries the report's own
numbers, the page is self-contained and escapes what it shows, and the CLI's --html."""

from __future__ import annotations

import json

import pytest
from sampler_builders import big_report

from actors.harness import cli
from cluster.scenario.report import preemptions
from cluster.viz import figures as figs
from cluster.viz.page import script_json
from cluster.viz.reportpage import bench_page, report_page


def _report() -> dict:
    r = big_report(3, observations=5)
    r.update(
        scenario="s<1>",
        description="a <b>bold</b> claim",
        expectations=[{"index": 0, "ok": False, "detail": "want </script>", "decidedAt": 3.0}],
        chaos=[{"time": 2.0, "action": "killNode", "target": "node-1", "detail": ""}],
        events=[
            {"time": 2.5, "reason": "NodeNotReady", "object": "Node/node-1", "message": ""},
            {"time": 3.0, "reason": "FailedScheduling", "object": "Pod/default/p", "message": "0/3 nodes <x>"},
        ],
        pods=[{"namespace": "default", "name": "p", "phase": "Pending"}],
        preemptions=[{"time": 4.0, "preemptor": "uid-1", "node": "node-0", "victims": ["Pod/default/v"]}],
    )
    return r


def test_figures_carry_the_reports_numbers():
    r = _report()
    by_id = {f.id: f for f in figs.report_figures(r)}
    running = next(t for t in by_id["fig-pods"].data if t["name"] == "Running")
    assert (running["x"], running["y"]) == (r["series"]["t"], r["series"]["Running"])
    assert by_id["fig-heat-cpu"].data[0]["z"] == r["heatmap"]["cpu"]
    chaos = {t["name"]: t for t in by_id["fig-chaos"].data}
    assert chaos["chaos killNode"]["x"] == [2.0] and chaos["NodeNotReady"]["x"] == [2.5]
    assert figs.rates([0.0, 2.0, 2.0, 4.0], [0, 10, 12, 12]) == ([2.0, 4.0], [5.0, 0.0])


def test_report_page_is_self_contained_and_escaped():
    page = report_page(_report())
    assert "<b>bold</b>" not in page and "a &lt;b&gt;bold&lt;/b&gt; claim" in page
    assert "want &lt;/script&gt;" in page and "0/3 nodes &lt;x&gt;" in page
    assert 'class="bad">FAIL' in page
    assert "<script src=" not in page  # Plotly is inlined: no network at view time
    assert page.count("Plotly") > 10
    assert "Pod/default/v" in page  # the preemption's victim


def test_script_json_cannot_end_its_script():
    assert "</" not in script_json({"a": "</script><script>alert(1)</script>"})


def test_preemptions_group_victims_by_preemptor():
    events = [
        {
            "reason": "Preempted",
            "message": "Preempted by pod u1 on node n-0",
            "involvedObject": {"kind": "Pod", "namespace": "d", "name": "v1"},
            "lastTimestamp": "2026-01-01T00:00:05Z",
        },
        {
            "reason": "Preempted",
            "message": "Preempted by pod u1 on node n-0",
            "involvedObject": {"kind": "Pod", "namespace": "d", "name": "v2"},
            "lastTimestamp": "2026-01-01T00:00:05Z",
        },
        {"reason": "Scheduled", "message": "", "involvedObject": {"kind": "Pod", "namespace": "d", "name": "x"}},
    ]
    (p,) = preemptions(events)
    assert (p["preemptor"], p["node"], p["victims"]) == ("u1", "n-0", ["Pod/d/v1", "Pod/d/v2"])


def test_bench_page_charts_every_number():
    page = bench_page(
        {"benchmark": "cycle", "nodes": 10, "podsPerSecond": 123.4, "byKind": {"a": 1, "b": 2}, "complete": True}
    )
    specs = json.loads(page.split('id="kubemu-figures">')[1].split("</script>")[0])
    assert [f["title"] for f in specs] == ["headline figures", "byKind"]
    assert dict(zip(specs[0]["data"][0]["y"], specs[0]["data"][0]["x"])) == {"nodes": 10, "podsPerSecond": 123.4}


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["run", "scenarios/quickstart.yaml", "--html", "/no/such/dir/r.html"],
            "--html: cannot write /no/such/dir/r.html: no such directory /no/such/dir",
        ),
        (["bench", "cycle", "--html", "/tmp"], "--html: /tmp is a directory"),
    ],
)
def test_html_path_that_cannot_be_written_is_refused_before_anything_runs(argv, message, capsys):
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.strip() == f"kubemu: {message}"


def test_run_writes_the_html_report(tmp_path, capsys):
    out = tmp_path / "r.html"
    code = cli.main(
        [
            "run",
            "scenarios/quickstart.yaml",
            "--runtime",
            "local",
            "--html",
            str(out),
            "--report",
            str(tmp_path / "r.json"),
        ]
    )
    assert code == 0
    report = json.loads((tmp_path / "r.json").read_text())
    page = out.read_text()
    assert f"<h1>{report['scenario']}</h1>" in page and 'class="badge ok">PASSED' in page
    assert report["series"]["t"] and report["heatmap"]["rows"]


def test_the_report_page_explains_waiting_and_explained_pods_as_kubemu_explain_prints_them():
    from cluster.scheduler.explain_text import render
    from cluster.viz.reportpage import report_page

    waiting = {"namespace": "default", "name": "big", "result": "Unschedulable", "attempts": 1, "history": []}
    placed = {"namespace": "default", "name": "ok", "result": "Scheduled", "node": "n1", "attempts": 1, "history": []}
    report = {
        "scenario": "x",
        "passed": True,
        "expectations": [],
        "pods": [{"namespace": "default", "name": "big", "phase": "Pending"}],
        "events": [],
        "schedulingResults": [waiting, placed],
    }
    page = report_page(report)
    assert page.count("<summary>per-plugin explanation</summary>") == 2
    assert "Pod default/big (uid ), scheduler" in page and "Result: Scheduled on n1" in page
    assert render(placed).splitlines()[1] in page
