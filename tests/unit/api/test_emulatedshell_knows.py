"""Which commands the kubelet may run in the emulated shell (``knows``), and the sleeps of
a container's run (uncapped, ``infinity``) against an exec's (capped)."""

import math

import pytest

from cluster.api.containerfiles import FileTable
from cluster.api.emulatedshell import MAX_SLEEP, ExecResult, knows, run


@pytest.mark.parametrize(
    "argv, known",
    [
        (["/bin/true"], True),
        (["false"], True),
        (["echo", "a", "b"], True),
        (["exit", "3"], True),
        (["sh", "-c", "env; echo x > /dev/termination-log && exit 1"], True),
        (["/bin/sh", "-xe", "-c", "sleep 5\necho done"], True),
        (["sh", "-c", "cat /etc/hosts || sleep infinity"], True),
        (["sh", "-c", 'TEST_VAR=wrong echo "test-value"'], True),
        (["sh", "-c", "A=1; B=2 env"], True),
        (["sh", "-c", "A=1 nginx"], False),
        (["sh"], False),  # reads its stdin
        (["sh", "-c", "while true; do sleep 1; done"], False),
        (["sh", "-c", "if [ -f x ]; then echo y; fi"], False),
        (["sh", "-c", "echo $(hostname)"], False),
        (["sh", "-c", "echo `hostname`"], False),
        (["sh", "-c", "ls | wc -l"], False),
        (["sh", "-c", "sleep 1 &"], False),
        (["sh", "-c", "nginx -g 'daemon off;'"], False),
        (["sh", "-c", "echo 'unclosed"], False),
        (["nginx"], False),
        ([], False),
    ],
)
def test_knows(argv, known):
    assert knows(argv) is known


def test_an_exec_caps_its_sleeps_and_a_run_does_not():
    capped = run(["sh", "-c", "sleep 11"], FileTable(), {}, 0.0)
    assert capped == ExecResult("", f"sleep: kubemu emulates sleeps of at most {MAX_SLEEP:g}s in all\n", 1, 0.0)
    assert run(["sh", "-c", "sleep 600; sleep 5"], FileTable(), {}, 0.0, max_sleep=math.inf).sleep == 605.0


def test_sleep_infinity_ends_the_script_there():
    got = run(["sh", "-c", "echo a; sleep infinity; echo never"], FileTable(), {}, 0.0, max_sleep=math.inf)
    assert got == ExecResult("a\n", "", 0, math.inf)
    assert run(["sleep", "nan"], FileTable(), {}, 0.0, max_sleep=math.inf).stderr == (
        "sleep: invalid time interval 'nan'\n"
    )


@pytest.mark.parametrize(
    "script, stdout",
    [
        ('TEST_VAR=wrong echo "$TEST_VAR"', "right\n"),  # expanded before the assignment, as sh does
        ("TEST_VAR=wrong printenv TEST_VAR", "wrong\n"),  # the command's environment
        ("TEST_VAR=wrong printenv TEST_VAR; echo $TEST_VAR", "wrong\nright\n"),  # for that command only
        ("A=1; B=$A; echo $A$B", "11\n"),  # alone: the shell's own
        ("A=x=y; echo $A", "x=y\n"),
    ],
)
def test_assignments(script, stdout):
    env = {"TEST_VAR": "right"}
    assert run(["sh", "-c", script], FileTable(), env, 0.0).stdout == stdout
    assert env == {"TEST_VAR": "right"}  # the caller's environment is left alone
