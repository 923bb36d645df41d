"""A ``kubemu serve`` for the tests of this folder: a real process on a free port, over
TLS with a token, reached through the kubeconfig it writes, as a user would."""

import os
import pathlib
import shutil
import socket
import ssl
import subprocess
import sys
import time
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    def __init__(self, tmp: pathlib.Path, nodes: int = 3, extra: tuple = ()):
        self.port = free_port()
        self.kubeconfig = tmp / "kubemu.kubeconfig"
        self.cache = tmp / "kube-cache"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "actors.harness.cli",
                "serve",
                "--nodes",
                str(nodes),
                "--port",
                str(self.port),
                "--kubeconfig",
                str(self.kubeconfig),
                *extra,
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._wait()
        import yaml

        self.token = yaml.safe_load(self.kubeconfig.read_text())["users"][0]["user"]["token"]

    def _wait(self) -> None:
        ctx = ssl.create_default_context()
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"kubemu serve exited: {self.proc.stderr.read()[-2000:]}")
            try:
                urllib.request.urlopen(f"https://127.0.0.1:{self.port}/healthz", context=ctx, timeout=1)
                if self.kubeconfig.exists():
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("kubemu serve did not answer within 60 s")

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), "KUBECACHEDIR": str(self.cache)}
        proc = subprocess.run(["kubectl", *args], env=env, input=input, capture_output=True, text=True, timeout=60)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
        return proc

    def stop(self) -> str:
        self.proc.terminate()
        try:
            out, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        return out + err


def until(check, seconds: float = 15.0):
    """Poll ``check`` every 0.2 s until it returns something true or ``seconds`` pass; its
    last answer."""
    deadline = time.time() + seconds
    while True:
        got = check()
        if got or time.time() > deadline:
            return got
        time.sleep(0.2)


needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")


def kubectl_path(version: str) -> str:
    """The versioned kubectl beside the dispatcher on PATH (``kubectl.1.27`` ... ``kubectl.1.32``)."""
    dispatcher = shutil.which("kubectl")
    folder = os.path.dirname(os.path.realpath(dispatcher)) if dispatcher else ""
    return os.path.join(folder, f"kubectl.{version}")


def kubectl_binary(version: str) -> str:
    """``kubectl_path(version)``, or the test is skipped: an older kubectl is installed beside the
    dispatcher on the machines that have one, and a test of the skew cannot run without it."""
    path = kubectl_path(version)
    if not os.access(path, os.X_OK):
        pytest.skip(f"{path} is not installed")
    return path
