"""``kubemu serve`` refuses bad options with one line and exit 2, before anything starts."""

import socket

import pytest

from actors.harness.cli import main


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--nodes", "-1"], "--nodes: -1 must be at least 0"),
        (["--port", "70000"], "--port: 70000 is not a TCP port"),
        (["--time-scale", "0"], "--time-scale: 0.0 must be greater than 0"),
        (["--gpus", "-2"], "--gpus: -2 must be at least 0"),
        (["--job-run-seconds", "-1"], "--job-run-seconds: -1.0 must be at least 0"),
        (
            ["--insecure-http", "--address", "0.0.0.0"],
            "--insecure-http: serving plain HTTP on 0.0.0.0 would expose the API; use TLS",
        ),
    ],
)
def test_bad_options_exit_2_with_one_line(capsys, tmp_path, argv, message):
    assert main(["serve", "--kubeconfig", str(tmp_path / "k"), *argv]) == 2
    assert capsys.readouterr().err.strip() == f"kubemu: {message}"
    assert not (tmp_path / "k").exists()


def test_a_taken_port_is_one_line(capsys, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert main(["serve", "--nodes", "1", "--port", str(port), "--kubeconfig", str(tmp_path / "k")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"kubemu: --address/--port: cannot listen on 127.0.0.1:{port}: ") and "\n" not in err
    assert not (tmp_path / "k").exists()


def test_run_serve_refuses_the_ray_runtime(capsys):
    assert main(["run", "--serve", "--runtime", "ray", "scenarios/quickstart.yaml"]) == 2
    assert (
        capsys.readouterr().err.strip()
        == "kubemu: --serve: the API is served over the local runtime (drop --runtime ray)"
    )


def test_serve_refuses_a_scenario_it_cannot_read(capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubemu.io/v1alpha1\nkind: Scenario\nmetadata: {name: x}\nspec: {duration: soon}\n")
    assert main(["serve", "--scenario", str(bad), "--kubeconfig", str(tmp_path / "k")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kubemu: ") and "spec.duration" in err and "\n" not in err


def test_a_scenario_is_not_served_over_ray(capsys, tmp_path):
    argv = ["serve", "--runtime", "ray", "--scenario", "scenarios/quickstart.yaml", "--kubeconfig", str(tmp_path / "k")]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == (
        "kubemu: --scenario: a scenario is served over the local runtime (drop --runtime ray)"
    )
