"""The emulated command runner behind ``kubectl exec``: a small shell over a ``FileTable``.

Owns what a command run in an emulated container prints and exits with. No process runs,
so ``run`` interprets a documented set of forms over the container's files
(``containerfiles.py``) and environment:

- a shell: ``sh -c SCRIPT`` (also ``/bin/sh``, ``bash``, ``ash``; ``-x`` traces each command
  to stderr as ``+ cmd args``, ``-e`` stops at the first failure); a script is commands
  joined by ``;``, ``&&``, ``||`` and newlines, with quotes, ``>`` and ``>>`` into a file
  (``/dev/null`` drops it, ``>&2`` makes it stderr), ``$?``, and ``$NAME`` / ``${NAME}`` from the
  environment (not inside single quotes or after a backslash, as a shell reads them),
  ``NAME=value`` words before a command (its environment) or alone (the shell's); a
  command exec'd without a shell gets its words as given, unexpanded;
- the commands ``true``, ``false``, ``:``, ``exit [N]``, ``echo [-n]``, ``cat``, ``test``
  and ``[`` (``-f``, ``-d``, ``-e``, ``-s``, ``!``), ``ls``, ``mv [-v]``, ``cp [-r] [-v]``,
  ``rm [-f] [-r]``, ``touch``, ``mkdir [-p]``, ``hostname``, ``env``, ``printenv [NAME]``,
  ``pwd``, ``sleep N`` (at most ``MAX_SLEEP`` seconds: the answer waits that long) and
  ``date`` (the emulated time), each with GNU coreutils' messages and exit codes (the
  images kubemu knows, httpd and nginx, are Debian's);
- anything else: exit 127 with ``sh: X: not found`` (busybox's words) inside a shell, and
  ``exec: "X": executable file not found in $PATH`` when it is the command itself; pipes
  (``|``) and background jobs (``&``) exit 2 with a syntax error naming them.

A container that is not running answers every command with exit 126 (the runtime cannot
exec into a stopped container); the kubelet decides that (``cluster/kubelet/containerfiles.py``).
Pure: the same files, command and time give the same answer.
"""

from __future__ import annotations

import math
import posixpath
import re
import shlex
from datetime import timedelta
from typing import NamedTuple

from ..clock import EPOCH
from .containerfiles import FileTable

SHELLS = ("sh", "bash", "ash", "dash")
MAX_SLEEP = 10.0  # emulated seconds a `sleep` may take: the exec waits for it
NOT_RUNNING = 126
NOT_FOUND = 127
_VAR = re.compile(r"\$(?:\{(\w+)\}|(\w+)|(\?))")
_OPS = (";", "&&", "||", "\n")
_LITERAL_DOLLAR = "\x00"  # a ``$`` no expansion may touch (single-quoted or escaped)
STDERR = "&2"  # a redirection to the command's stderr


class ExecResult(NamedTuple):
    stdout: str
    stderr: str
    code: int
    sleep: float = 0.0  # emulated seconds the command slept


class _Exit(Exception):
    def __init__(self, code: int):
        self.code = code


class _Shell:
    """One command's run: its output so far and the time it slept."""

    def __init__(self, files: FileTable, env: dict[str, str], now: float, trace: bool, errexit: bool, max_sleep: float):
        self.files, self.env, self.now = files, env, now
        self.max_sleep = max_sleep
        self.trace, self.errexit = trace, errexit
        self.out: list[str] = []
        self.err: list[str] = []
        self.slept = 0.0
        self.status = 0

    def script(self, text: str) -> None:
        try:
            tokens = _tokens(text)
        except ValueError as e:
            self.err.append(f"sh: syntax error: {e}\n")
            raise _Exit(2) from None
        for op in ("|", "&", "<", "|&"):
            if op in tokens:
                self.err.append(f"sh: syntax error: kubemu's emulated shell has no {op!r}\n")
                raise _Exit(2)
        op, words = ";", list[str]()
        for tok in [*tokens, ";"]:
            if tok in _OPS:
                if words and (op in (";", "\n") or (op == "&&") == (self.status == 0)):
                    self.status = self.simple(words, in_shell=True)
                    if self.errexit and self.status != 0 and tok not in ("&&", "||"):
                        raise _Exit(self.status)
                    if math.isinf(self.slept):  # ``sleep infinity``: nothing after it ever runs
                        raise _Exit(self.status)
                op, words = tok, []
            else:
                words.append(tok)

    def simple(self, words: list[str], in_shell: bool) -> int:
        target, append = None, False
        if in_shell:  # a command exec'd directly has no shell to expand or redirect it
            words = [_VAR.sub(self._expand, w).replace(_LITERAL_DOLLAR, "$") for w in words]
            words, target, append = _redirect(words)
        if self.trace:
            self.err.append("+ " + " ".join(_quoted(w) for w in words) + "\n")
        assigned = _assignments(words) if in_shell else 0
        if assigned == len(words):  # ``A=1``: the shell's own variable from now on
            self.env = {**self.env, **_pairs(words)}
            return 0
        mark = len(self.out)
        saved = self.env
        if assigned:  # ``A=1 cmd``: the command's environment only
            self.env = {**saved, **_pairs(words[:assigned])}
        try:
            code = self.command(words[assigned:], in_shell)
        finally:
            self.env = saved
        if target is not None:
            text = "".join(self.out[mark:])
            del self.out[mark:]
            if target in (STDERR, "/dev/stderr"):
                self.err.append(text)
                return code
            if target == "/dev/null":
                return code
            path = self.path(target)
            if not self.files.is_dir(posixpath.dirname(path)):
                self.err.append(f"sh: cannot create {target}: Directory nonexistent\n")
                return 2
            self.files.write(path, (self.files.files.get(path, "") if append else "") + text)
        return code

    def _expand(self, m: re.Match[str]) -> str:
        return str(self.status) if m.group(3) else self.env.get(m.group(1) or m.group(2), "")

    def path(self, p: str) -> str:
        return posixpath.normpath(posixpath.join("/", p))

    def command(self, words: list[str], in_shell: bool) -> int:
        name, args = words[0], words[1:]
        if name == "exit":
            raise _Exit(_int(args[0]) if args else self.status)
        builtin = COMMANDS.get(posixpath.basename(name))
        if builtin is None:
            if in_shell:
                self.err.append(f"sh: {name}: not found\n")
            else:
                self.err.append(f'exec: "{name}": executable file not found in $PATH\n')
            return NOT_FOUND
        return builtin(self, args)


_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=")


def _assignments(words: list[str]) -> int:
    """How many of the leading words are variable assignments (``NAME=value``)."""
    n = 0
    while n < len(words) and _ASSIGNMENT.match(words[n]):
        n += 1
    return n


def _pairs(words: list[str]) -> dict[str, str]:
    return dict(w.split("=", 1) for w in words)


def _tokens(text: str) -> list[str]:
    lex = shlex.shlex(_protect_single_quoted(text).replace("\n", " \n "), posix=True, punctuation_chars=";&|<>")
    lex.whitespace = " \t\r"
    lex.whitespace_split = True
    return list(lex)


def _protect_single_quoted(text: str) -> str:
    """``text`` with each ``$`` inside single quotes (or escaped by a backslash) marked, so
    expansion leaves it as written, as a shell does."""
    out, quote, escaped = [], "", False
    for ch in text:
        if escaped:
            out.append(_LITERAL_DOLLAR if ch == "$" else "\\" + ch)
            escaped = False
            continue
        if ch == "\\" and quote != "'":
            escaped = True
            continue
        if ch in "'\"" and quote in ("", ch):
            quote = "" if quote else ch
        out.append(_LITERAL_DOLLAR if ch == "$" and quote == "'" else ch)
    return "".join(out) + ("\\" if escaped else "")


def _redirect(words: list[str]) -> tuple[list[str], str | None, bool]:
    """The words without a redirection, its target and whether it appends. ``>&2`` sends
    stdout to stderr (``STDERR``); ``2>&1`` is dropped (the streams stay apart)."""
    if ">&" in words:
        i = words.index(">&")
        fd = words[i + 1] if i + 1 < len(words) else ""
        head = words[:i]
        if fd == "1" and head and head[-1] == "2":
            return head[:-1] + words[i + 2 :], None, False
        return head + words[i + 2 :], STDERR if fd == "2" else None, False
    for op in (">>", ">"):
        if op in words:
            i = words.index(op)
            if i + 1 < len(words):
                return words[:i] + words[i + 2 :], words[i + 1], op == ">>"
    return words, None, False


def _quoted(word: str) -> str:
    return word if word and re.fullmatch(r"[\w@%+=:,./-]+", word) else "'" + word.replace("'", "'\\''") + "'"


def _int(text: str) -> int:
    try:
        return int(text) & 0xFF
    except ValueError:
        return 2


def _flags(args: list[str]) -> tuple[set[str], list[str]]:
    flags: set[str] = set()
    rest: list[str] = []
    for a in args:
        if a.startswith("-") and len(a) > 1 and not rest:
            flags.update(a[1:])
        else:
            rest.append(a)
    return flags, rest


# ---- the commands -------------------------------------------------------------------


def _echo(sh: _Shell, args: list[str]) -> int:
    newline = not (args and args[0] == "-n")
    sh.out.append(" ".join(args[0 if newline else 1 :]) + ("\n" if newline else ""))
    return 0


def _cat(sh: _Shell, args: list[str]) -> int:
    code = 0
    for a in args:
        p = sh.path(a)
        if sh.files.is_file(p):
            sh.out.append(sh.files.files[p])
        else:
            why = "Is a directory" if sh.files.is_dir(p) else "No such file or directory"
            sh.err.append(f"cat: {a}: {why}\n")
            code = 1
    return code


def _test(sh: _Shell, args: list[str]) -> int:
    negate = bool(args) and args[0] == "!"
    args = args[1:] if negate else args
    if len(args) == 1:
        ok = args[0] != ""
    elif len(args) == 2 and args[0] in ("-f", "-d", "-e", "-s"):
        p, f = sh.path(args[1]), sh.files
        ok = {
            "-f": f.is_file(p),
            "-d": f.is_dir(p),
            "-e": f.exists(p),
            "-s": f.is_dir(p) or bool(f.files.get(p)),
        }[args[0]]
    elif len(args) == 3 and args[1] in ("=", "!="):
        ok = (args[0] == args[2]) == (args[1] == "=")
    else:
        sh.err.append(f"sh: test: {' '.join(args)}: kubemu's test knows -f, -d, -e, -s, = and !=\n")
        return 2
    return 0 if ok != negate else 1


def _bracket(sh: _Shell, args: list[str]) -> int:
    if not args or args[-1] != "]":
        sh.err.append("sh: [: missing ]\n")
        return 2
    return _test(sh, args[:-1])


def _ls(sh: _Shell, args: list[str]) -> int:
    _, paths = _flags(args)
    code, many = 0, len(paths) > 1
    for a in paths or ["."]:
        p = sh.path(a)
        if sh.files.is_file(p):
            sh.out.append(a + "\n")
        elif sh.files.is_dir(p):
            names = sh.files.entries(p)
            head = f"{a}:\n" if many else ""
            sh.out.append(head + "".join(n + "\n" for n in names))
        else:
            sh.err.append(f"ls: cannot access '{a}': No such file or directory\n")
            code = 2
    return code


def _target(sh: _Shell, src: str, dst: str) -> str:
    d = sh.path(dst)
    return posixpath.join(d, posixpath.basename(sh.path(src))) if sh.files.is_dir(d) else d


def _copy(sh: _Shell, src: str, dst: str) -> None:
    f = sh.files
    if f.is_dir(src):
        f.mkdir(dst)
        for p in f.under(src):
            q = dst + p[len(src) :]
            f.mkdir(q) if f.is_dir(p) else f.write(q, f.files[p])
    else:
        f.write(dst, f.files[src])


def _move_or_copy(sh: _Shell, args: list[str], tool: str) -> int:
    flags, paths = _flags(args)
    if len(paths) < 2:
        sh.err.append(f"{tool}: missing destination file operand after '{paths[0] if paths else ''}'\n")
        return 1
    *sources, dst = paths
    if len(sources) > 1 and not sh.files.is_dir(sh.path(dst)):
        sh.err.append(f"{tool}: target '{dst}' is not a directory\n")
        return 1
    code = 0
    for s in sources:
        src, to = sh.path(s), _target(sh, s, dst)
        if not sh.files.exists(src):
            sh.err.append(f"{tool}: cannot stat '{s}': No such file or directory\n")
            code = 1
            continue
        if tool == "cp" and sh.files.is_dir(src) and not flags & {"r", "R", "a"}:
            sh.err.append(f"cp: -r not specified; omitting directory '{s}'\n")
            code = 1
            continue
        if not sh.files.is_dir(posixpath.dirname(to)):
            sh.err.append(f"{tool}: cannot create regular file '{dst}': No such file or directory\n")
            code = 1
            continue
        _copy(sh, src, to)
        if tool == "mv":
            sh.files.remove(src)
        if "v" in flags:
            sh.out.append(f"renamed '{s}' -> '{to}'\n" if tool == "mv" else f"'{s}' -> '{to}'\n")
    return code


def _mv(sh: _Shell, args: list[str]) -> int:
    return _move_or_copy(sh, args, "mv")


def _cp(sh: _Shell, args: list[str]) -> int:
    return _move_or_copy(sh, args, "cp")


def _rm(sh: _Shell, args: list[str]) -> int:
    flags, paths = _flags(args)
    code = 0
    for a in paths:
        p = sh.path(a)
        if not sh.files.exists(p):
            if "f" not in flags:
                sh.err.append(f"rm: cannot remove '{a}': No such file or directory\n")
                code = 1
        elif sh.files.is_dir(p) and not flags & {"r", "R"}:
            sh.err.append(f"rm: cannot remove '{a}': Is a directory\n")
            code = 1
        else:
            sh.files.remove(p)
    return code


def _touch(sh: _Shell, args: list[str]) -> int:
    code = 0
    for a in _flags(args)[1]:
        p = sh.path(a)
        if not sh.files.is_dir(posixpath.dirname(p)):
            sh.err.append(f"touch: cannot touch '{a}': No such file or directory\n")
            code = 1
        elif not sh.files.exists(p):
            sh.files.write(p, "")
    return code


def _mkdir(sh: _Shell, args: list[str]) -> int:
    flags, paths = _flags(args)
    code = 0
    for a in paths:
        p = sh.path(a)
        if sh.files.exists(p) and "p" not in flags:
            sh.err.append(f"mkdir: cannot create directory '{a}': File exists\n")
            code = 1
        elif not sh.files.is_dir(posixpath.dirname(p)) and "p" not in flags:
            sh.err.append(f"mkdir: cannot create directory '{a}': No such file or directory\n")
            code = 1
        elif not sh.files.exists(p):
            sh.files.mkdir(p)
    return code


def _env(sh: _Shell, args: list[str]) -> int:
    if args:
        if len(args) == 1 and args[0] in sh.env:
            sh.out.append(sh.env[args[0]] + "\n")
            return 0
        return 1
    sh.out.append("".join(f"{k}={v}\n" for k, v in sh.env.items()))
    return 0


def _sleep(sh: _Shell, args: list[str]) -> int:
    try:
        seconds = float(args[0].rstrip("s")) if len(args) == 1 else -1.0
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # (NaN too; ``infinity`` parses, as GNU sleep reads it)
        sh.err.append(f"sleep: invalid time interval '{' '.join(args)}'\n")
        return 1
    if sh.slept + seconds > sh.max_sleep:
        sh.err.append(f"sleep: kubemu emulates sleeps of at most {sh.max_sleep:g}s in all\n")
        return 1
    sh.slept += seconds
    return 0


def _date(sh: _Shell, args: list[str]) -> int:
    t = EPOCH + timedelta(seconds=sh.now + sh.slept)
    sh.out.append(t.strftime("%a %b ") + f"{t.day:2d}" + t.strftime(" %H:%M:%S UTC %Y") + "\n")
    return 0


COMMANDS = {
    "true": lambda sh, a: 0,
    ":": lambda sh, a: 0,
    "false": lambda sh, a: 1,
    "echo": _echo,
    "cat": _cat,
    "test": _test,
    "[": _bracket,
    "ls": _ls,
    "mv": _mv,
    "cp": _cp,
    "rm": _rm,
    "touch": _touch,
    "mkdir": _mkdir,
    "hostname": lambda sh, a: _env(sh, ["HOSTNAME"]) if "HOSTNAME" in sh.env else 1,
    "env": lambda sh, a: _env(sh, []),
    "printenv": _env,
    "pwd": lambda sh, a: _echo(sh, ["/"]),
    "sleep": _sleep,
    "date": _date,
}


def _shell_of(words: list[str]) -> tuple[bool, set[str], str | None]:
    """Whether ``words`` start a shell, its flags and its ``-c`` script (None: none)."""
    shell = bool(words) and posixpath.basename(words[0]) in SHELLS
    flags: set[str] = set()
    script: str | None = None
    if shell:
        rest = words[1:]
        while rest and rest[0].startswith("-") and rest[0] != "-c":
            flags.update(rest.pop(0)[1:])
        if rest and rest[0] == "-c" and len(rest) > 1:
            script = rest[1]
        elif rest and rest[0].startswith("-"):
            flags.update(rest[0][1:])
    return shell, flags, script


_KEYWORDS = frozenset(("if", "then", "else", "elif", "fi", "while", "until", "for", "do", "done", "case", "esac"))


def knows(argv: list[str] | tuple[str, ...]) -> bool:
    """Whether ``run`` models ``argv`` whole: a shell's ``-c`` script whose every command is
    one of ``COMMANDS`` (no loops, conditionals, pipes or command substitution), or one of
    those commands exec'd directly. The kubelet runs a container's command only then."""
    words = list(argv)
    shell, _, script = _shell_of(words)
    if not shell:
        return bool(words) and (posixpath.basename(words[0]) in COMMANDS or words[0] == "exit")
    if script is None:
        return False  # a shell reading its stdin: a container's would wait for ever
    try:
        tokens = _tokens(script)
    except ValueError:
        return False
    if any(op in tokens for op in ("|", "&", "<", "|&")) or "$(" in script or "`" in script:
        return False
    first = True
    for tok in tokens:
        if tok in _OPS:
            first = True
        elif first and _ASSIGNMENT.match(tok):
            continue  # ``A=1 cmd``: the command comes after
        elif first:
            first = False
            if tok in _KEYWORDS or not (posixpath.basename(tok) in COMMANDS or tok == "exit"):
                return False
    return True


def run(
    argv: list[str] | tuple[str, ...],
    files: FileTable,
    env: dict[str, str],
    now: float,
    max_sleep: float = MAX_SLEEP,
) -> ExecResult:
    """Run ``argv`` in a container with ``files`` (changed in place) and ``env`` at
    emulated time ``now``; what it printed and its exit code. ``max_sleep``: the most its
    sleeps may add up to (an exec's answer waits for them; a container's run need not)."""
    words = list(argv)
    shell, flags, script = _shell_of(words)
    sh = _Shell(files, env, now, "x" in flags, "e" in flags, max_sleep)
    try:
        if not words:
            sh.err.append("exec: no command given\n")
            sh.status = NOT_FOUND
        elif shell and script is None:
            sh.status = 0  # a shell with nothing to read: kubemu gives it no stdin
        elif shell:
            assert script is not None
            sh.script(script)
        else:
            sh.status = sh.simple(words, in_shell=False)
    except _Exit as e:
        sh.status = e.code
    return ExecResult("".join(sh.out), "".join(sh.err), sh.status, sh.slept)
