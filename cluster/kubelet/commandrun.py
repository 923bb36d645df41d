"""What a container's own command does when the kubelet starts it: run by the emulated shell.

Owns ``Commands`` (kept in ``PodRecord.cmds``; None for a pod none of whose containers'
commands the shell knows, so such a pod costs one look at each container), its
construction from the pod's spec (``commands_of``), one run of a container's command
(``run_command``) and the container's termination message. ``kubelet.py`` runs the app
containers' commands at each start, ``probes.py`` the init containers'; ``pods.py``
renders the recorded exit codes and messages, and ``answer_call`` hands the recorded
output to the apiserver's log requests (``cluster/api/kubeletcalls.py`` ``ContainerLogs``).

A container's argv is its ``command`` then its ``args``, ``$(VAR)`` references expanded
from its environment as upstream's kubelet expands them (an unresolved one stays as
written, ``$$`` is one ``$``). The environment is the container's ``envFrom`` and ``env``
(values, ``fieldRef``, ConfigMap and Secret keys: ``creation.environment``) read at the
start, plus ``HOSTNAME``. Only a form ``emulatedshell.knows`` models is run: a shell's
``-c`` script of known commands, or one such command (``/bin/true``, ``echo``, ``env``,
``sleep`` ...). Any other command, and a container with no command (its image's
entrypoint), is not run: it runs until stopped, as before. The run is instant but for its
sleeps, which take their emulated seconds (uncapped: nothing waits for the answer); a
``sleep infinity`` runs until stopped. Everything it printed (stdout, then stderr) is the
run's log, written at its start.

The termination message is the file at ``terminationMessagePath`` (default
``/dev/termination-log``) as the run left it, at most 4096 bytes; with
``terminationMessagePolicy: FallbackToLogsOnError`` an empty one of a failed run is the
log's last 80 lines, at most 2048 bytes (upstream's limits).
"""

from __future__ import annotations

import math
import posixpath
import re
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple

from ..api.containerfiles import FileTable
from ..api.emulatedshell import knows, run
from ..api.kubeletcalls import ContainerLogs
from ..api.quantity import parse
from .creation import Lookup, Needs, environment, field_values, needs_of
from .pods import PodRecord

if TYPE_CHECKING:
    from .kubeletself import KubeletSelf

DEFAULT_MESSAGE_PATH = "/dev/termination-log"
MAX_MESSAGE_BYTES = 4096  # upstream's maxTerminationMessageLength... of a file
FALLBACK_LINES, FALLBACK_BYTES = 80, 2048  # ... and of FallbackToLogsOnError's log tail
_REF = re.compile(r"\$\$|\$\(([^)]*)\)")


class Command(NamedTuple):
    """A container whose command the shell models."""

    name: str
    argv: tuple[str, ...]  # command then args, not yet expanded
    needs: Needs  # its environment's sources
    message_path: str
    fallback: bool  # terminationMessagePolicy FallbackToLogsOnError


class Ran(NamedTuple):
    """One run of a container's command."""

    started: float
    log: str  # what it printed: stdout, then stderr
    code: int
    seconds: float  # how long it ran (inf: until stopped)
    message: str  # its termination message


class Commands:
    """The pod's containers that run their commands, and what their runs did."""

    __slots__ = ("known", "fields", "resources", "runs", "previous", "ended")

    def __init__(self, known: dict[str, Command], fields: dict[str, str], resources: dict[str, dict] | None = None):
        self.known = known
        self.fields = fields  # fieldRef path -> value, for the paths their env reads
        self.resources = resources or {}  # container -> its spec's resources (for resourceFieldRef)
        self.runs: dict[str, Ran] = {}  # container -> its latest run
        self.previous: dict[str, Ran] = {}  # container -> the run before that
        self.ended: tuple[float, ...] = ()  # starts of the latest two pod runs their commands ended

    def record(self, name: str, ran: Ran) -> None:
        if name in self.runs:
            self.previous[name] = self.runs[name]
        self.runs[name] = ran

    def ended_by_commands(self, started: float) -> None:
        self.ended = (*self.ended[-1:], started)

    def app_run(self, names: list[str]) -> tuple[float, int] | None:
        """(seconds, exit code) of the pod's shared run when every container in ``names``
        ran its command (the longest ends it; the first failure is its code); None when
        one runs until stopped."""
        ran = [self.runs.get(n) for n in names]
        if not names or any(r is None for r in ran):
            return None
        seconds = max(r.seconds for r in ran if r is not None)
        if math.isinf(seconds):
            return None
        return seconds, next((r.code for r in ran if r is not None and r.code != 0), 0)


def commands_of(pod: dict[str, Any]) -> Commands | None:
    """The pod's containers whose commands the shell knows, or None when there are none."""
    spec = pod.get("spec") or {}
    known = {}
    for c in _all(spec):
        if not c.get("command"):
            continue  # an image's entrypoint is not known (and most pods have none: no more work)
        argv = tuple(str(w) for w in [*c["command"], *(c.get("args") or ())])
        n = needs_of(c)
        # a ``$(VAR)`` of its env is the kubelet's to expand, not the shell's
        if not knows(expand(argv, {var: "x" for var, _ in n.env})):
            continue
        path = str(c.get("terminationMessagePath") or DEFAULT_MESSAGE_PATH)
        known[n.name] = Command(n.name, argv, n, path, c.get("terminationMessagePolicy") == "FallbackToLogsOnError")
    if not known:
        return None
    resources = {str(c.get("name", "")): c.get("resources") or {} for c in _all(spec)}
    return Commands(known, field_values(pod, {c.name: c.needs for c in known.values()}), resources)


def _all(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())] if isinstance(c, dict)]


def resource_value(key: str, resources: dict[str, dict], allocatable: dict[str, int]) -> str:
    """A resourceFieldRef's value (``creation.resource_key``) as upstream's kubelet gives
    it: the container's limit (the node's allocatable when it sets none) or request, in
    units of the divisor, rounded up ("" for a quantity that does not parse)."""
    _, container, field, divisor = key.split(":", 3)
    kind, _, resource = field.partition(".")
    spec = resources.get(container) or {}
    raw = (spec.get(kind) or {}).get(resource) if kind in ("limits", "requests") else None
    try:
        if raw is None:  # (kubemu keeps allocatable in millicores for cpu, units otherwise)
            amount = Fraction(allocatable.get(resource, 0), 1000 if resource == "cpu" else 1)
            amount = amount if kind == "limits" else Fraction(0)
        else:
            amount = parse(raw)
        return str(math.ceil(amount / (parse(divisor) or 1)))  # the apiserver defaults a divisor to 0: 1
    except ValueError:
        return ""


def expand(argv: tuple[str, ...], env: dict[str, str]) -> tuple[str, ...]:
    """``$(VAR)`` in each word from ``env`` as upstream's kubelet expands command and args."""
    return tuple(_REF.sub(lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), w) for w in argv)


def run_command(
    cmd: Command, namespace: str, lookup: Lookup, fields: dict[str, str], files: FileTable, hostname: str, now: float
) -> Ran:
    """Run the container's command at ``now`` over its ``files``."""
    env = environment(cmd.needs, namespace, lookup, fields)
    if isinstance(env, str):  # (creation held the container until this could be built)
        env = {}
    env = {"HOSTNAME": hostname, **env}
    path = posixpath.normpath(cmd.message_path)
    if not files.exists(path):  # the runtime mounts it, empty
        files.mkdir(posixpath.dirname(path))
        files.write(path, "")
    result = run(expand(cmd.argv, env), files, env, now, max_sleep=math.inf)
    log = result.stdout + result.stderr
    return Ran(now, log, result.code, result.sleep, _message(cmd, files, log, result.code))


def _message(cmd: Command, files: FileTable, log: str, code: int) -> str:
    text = files.files.get(posixpath.normpath(cmd.message_path), "")
    text = text.encode()[:MAX_MESSAGE_BYTES].decode(errors="ignore")
    if text or not cmd.fallback or code == 0:
        return text
    tail = "".join(log.splitlines(keepends=True)[-FALLBACK_LINES:])
    return tail.encode()[-FALLBACK_BYTES:].decode(errors="ignore")


def _no_objects(kind: str, namespace: str, name: str) -> dict[str, str] | None:
    return None


def _image(rec: PodRecord, name: str) -> str:
    for n, image in rec.containers:
        if n == name:
            return str(image)
    return next((str(image) for n, image, _ in rec.init if n == name), "")


class CommandMixin:
    """The part of ``Kubelet`` that runs its containers' commands; see the module docstring."""

    __slots__ = ()

    def _run_commands(self: KubeletSelf, rec: PodRecord, names: list[str], t: float) -> None:
        """Run the commands of the containers ``names`` that have known ones, starting at ``t``."""
        cmds = rec.cmds
        if cmds is None:
            return
        ips = {"status.podIP": rec.pod_ip, "status.podIPs": rec.pod_ip}
        fields = {**cmds.fields, **ips, "status.hostIP": self.host_ip, "status.hostIPs": self.host_ip}
        for each in cmds.known.values():
            for _, source in each.needs.env:
                if source[0] == "field" and source[1].startswith("resource:"):
                    fields[source[1]] = resource_value(source[1], cmds.resources, self.allocatable)
        for name in names:
            cmd = cmds.known.get(name)
            if cmd is not None:
                files = self.files.table(rec, name, _image(rec, name), self._pods)
                lookup = self.objects or _no_objects
                cmds.record(name, run_command(cmd, rec.namespace, lookup, fields, files, rec.name, t))

    def _app_run_seconds(self: KubeletSelf, rec: PodRecord, t: float) -> float | None:
        """The containers started at ``t``: run their commands; how long the pod's run
        lasts (None: until stopped). ``kubemu.io/run-seconds`` wins when given."""
        names = rec.app_names()
        self._run_commands(rec, names, t)
        if rec.emu.run_seconds is not None or rec.cmds is None:
            return rec.emu.run_seconds
        got = rec.cmds.app_run(names)
        return None if got is None else got[0]

    def _own_exit_code(self: KubeletSelf, rec: PodRecord) -> int:
        """The exit code of a run that ended by itself: its commands', else the declared one."""
        cmds = rec.cmds
        got = None if cmds is None or rec.emu.run_seconds is not None else cmds.app_run(rec.app_names())
        if cmds is None or got is None or rec.started_at is None:
            return rec.emu.exit_code
        cmds.ended_by_commands(rec.started_at)
        return got[1]

    def container_log(self: KubeletSelf, call: ContainerLogs) -> str | None:
        """What the container's run started at ``call.started`` printed; None when the
        kubelet has no output of it (its command is not run: the front end renders it)."""
        rec = self._pods.get(call.uid)
        if rec is None or rec.cmds is None:
            return None
        for runs in (rec.cmds.runs, rec.cmds.previous):
            ran = runs.get(call.container)
            if ran is not None and int(ran.started) == int(call.started):
                return ran.log
        return None
