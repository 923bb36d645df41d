"""The emulated command runner of ``kubectl exec`` and what known images serve: table tests."""

import pytest

from cluster.api.containerfiles import HTTPD_INDEX, FileTable, HTTPAnswer, http_get, image_name, seed
from cluster.api.emulatedshell import MAX_SLEEP, ExecResult, run

HTTPD = "registry.k8s.io/e2e-test-images/httpd:2.4.38-4"
DOCROOT = "/usr/local/apache2/htdocs"
ENV = {"PATH": "/bin", "HOSTNAME": "web-0", "HOME": "/root", "GREETING": "hello"}


def sh(script, *flags):
    return ["/bin/sh", *flags, "-c", script]


@pytest.mark.parametrize(
    "argv, stdout, stderr, code",
    [
        (sh("echo hi; exit 3"), "hi\n", "", 3),
        (sh("true && echo yes || echo no"), "yes\n", "", 0),
        (sh("false && echo yes || echo no"), "no\n", "", 0),
        (sh("false; echo $?x $NOPE."), "1x .\n", "", 0),  # an unknown name is empty
        (sh("false"), "", "", 1),
        (sh("exit"), "", "", 0),
        (sh("false; exit"), "", "", 1),
        (sh("exit 300"), "", "", 44),  # the low 8 bits, as a shell's status
        (sh("echo -n a; echo b"), "ab\n", "", 0),
        (sh("echo 'a  b' \"c d\""), "a  b c d\n", "", 0),
        (sh("echo $GREETING ${HOSTNAME}"), "hello web-0\n", "", 0),
        (sh("echo '$GREETING' \"$GREETING\" \\$GREETING"), "$GREETING hello $GREETING\n", "", 0),
        (sh("echo 'it''s $HOME'"), "its $HOME\n", "", 0),
        (["echo", "$GREETING", ">", "/tmp/x"], "$GREETING > /tmp/x\n", "", 0),  # no shell: words as given
        (sh("hostname; printenv HOME"), "web-0\n/root\n", "", 0),
        (sh("printenv NOPE"), "", "", 1),
        (sh("echo one\necho two"), "one\ntwo\n", "", 0),
        (sh("cat /etc/hostname /nope"), "web-0\n", "cat: /nope: No such file or directory\n", 1),
        (sh("cat /tmp"), "", "cat: /tmp: Is a directory\n", 1),
        (sh("test -f /etc/hostname && test -d /tmp && test -e /tmp && [ ! -f /tmp ]"), "", "", 0),
        (sh("test -f /tmp"), "", "", 1),
        (sh("test -x /tmp"), "", "sh: test: -x /tmp: kubemu's test knows -f, -d, -e, -s, = and !=\n", 2),
        (sh("[ -f /etc/hostname"), "", "sh: [: missing ]\n", 2),
        (sh("ls /"), "", "", 0),
        (sh("ls /nope"), "", "ls: cannot access '/nope': No such file or directory\n", 2),
        (sh("frobnicate; echo after"), "after\n", "sh: frobnicate: not found\n", 0),
        (sh("frobnicate"), "", "sh: frobnicate: not found\n", 127),
        (["frobnicate"], "", 'exec: "frobnicate": executable file not found in $PATH\n', 127),
        ([], "", "exec: no command given\n", 127),
        (sh("echo a | cat"), "", "sh: syntax error: kubemu's emulated shell has no '|'\n", 2),
        (sh("sleep 100 &"), "", "sh: syntax error: kubemu's emulated shell has no '&'\n", 2),
        (sh("echo 'open"), "", "sh: syntax error: No closing quotation\n", 2),
        (sh("false; echo no", "-e"), "", "", 1),
        (sh("echo hi; exit 2", "-x"), "hi\n", "+ echo hi\n+ exit 2\n", 2),
        (sh("echo 'a b'", "-x"), "a b\n", "+ echo 'a b'\n", 0),
        (sh("echo oops >&2; echo out"), "out\n", "oops\n", 0),
        (sh("echo gone > /dev/null"), "", "", 0),
        (sh("sleep 2; date"), "Thu Jan  1 00:01:02 UTC 2026\n", "", 0),
        (sh(f"sleep {MAX_SLEEP + 1:g}"), "", f"sleep: kubemu emulates sleeps of at most {MAX_SLEEP:g}s in all\n", 1),
        (sh("sleep soon"), "", "sleep: invalid time interval 'soon'\n", 1),
        (["pwd"], "/\n", "", 0),
        (["/bin/sh"], "", "", 0),
    ],
)
def test_commands(argv, stdout, stderr, code):
    files = seed("busybox", "web-0")
    if argv[-1:] == ["ls /"]:
        stdout = "etc\nroot\ntmp\n"
    got = run(argv, files, dict(ENV), 60.0)
    assert (got.stdout, got.stderr, got.code) == (stdout, stderr, code)


def test_sleep_is_reported_for_the_answer_to_wait():
    assert run(sh("sleep 1.5; sleep 2s"), seed("x", "p"), {}, 0.0) == ExecResult("", "", 0, 3.5)


@pytest.mark.parametrize(
    "script, stdout, stderr, code, files",
    [
        (
            f"mv -v {DOCROOT}/index.html /tmp/ || true",
            f"renamed '{DOCROOT}/index.html' -> '/tmp/index.html'\n",
            f"+ mv -v {DOCROOT}/index.html /tmp/\n",
            0,
            {"/tmp/index.html"},
        ),
        (
            "mv -v /tmp/index.html /usr/ || true",
            "",
            "+ mv -v /tmp/index.html /usr/\nmv: cannot stat '/tmp/index.html': No such file or directory\n+ true\n",
            0,
            {f"{DOCROOT}/index.html"},
        ),
        ("cp /etc/hostname /tmp/h && cat /tmp/h", "web-0\n", "+ cp /etc/hostname /tmp/h\n+ cat /tmp/h\n", 0, None),
        ("cp /tmp /x", "", "+ cp /tmp /x\ncp: -r not specified; omitting directory '/tmp'\n", 1, None),
        ("mkdir /a/b", "", "+ mkdir /a/b\nmkdir: cannot create directory '/a/b': No such file or directory\n", 1, None),
        ("mkdir /tmp", "", "+ mkdir /tmp\nmkdir: cannot create directory '/tmp': File exists\n", 1, None),
        ("touch /no/f", "", "+ touch /no/f\ntouch: cannot touch '/no/f': No such file or directory\n", 1, None),
        ("rm /tmp", "", "+ rm /tmp\nrm: cannot remove '/tmp': Is a directory\n", 1, None),
        ("rm /nope", "", "+ rm /nope\nrm: cannot remove '/nope': No such file or directory\n", 1, None),
        ("rm -f /nope", "", "+ rm -f /nope\n", 0, None),
        ("mv /a", "", "+ mv /a\nmv: missing destination file operand after '/a'\n", 1, None),
        ("echo x > /no/f", "", "+ echo x\nsh: cannot create /no/f: Directory nonexistent\n", 2, None),
    ],
)
def test_file_commands_trace_and_change_the_table(script, stdout, stderr, code, files):
    table = seed(HTTPD, "web-0")
    got = run(sh(script, "-x"), table, dict(ENV), 0.0)
    assert (got.stdout, got.stderr, got.code) == (stdout, stderr, code)
    if files is not None:
        assert {p for p in table.files if p.endswith("index.html")} == files


def test_a_script_of_file_commands():
    table = seed("busybox", "p")
    script = "mkdir -p /data/x && touch /data/x/a && echo 1 > /data/b && echo 2 >> /data/b; ls /data; cat /data/b"
    assert run(sh(script), table, {}, 0.0) == ExecResult("b\nx\n1\n2\n", "", 0)
    assert run(sh("cp -r /data /copy && rm -r /data && ls /copy/x && test -d /data"), table, {}, 0.0).code == 1
    assert sorted(p for p in table.files if p.startswith("/copy")) == ["/copy/b", "/copy/x/a"]
    assert not any(p.startswith("/data") for p in (*table.files, *table.dirs))


@pytest.mark.parametrize(
    "ref, name",
    [
        (HTTPD, "httpd"),
        ("nginx", "nginx"),
        ("nginx:1.25@sha256:abc", "nginx"),
        ("localhost:5000/a/agnhost:2.43", "agnhost"),
    ],
)
def test_image_names(ref, name):
    assert image_name(ref) == name


@pytest.mark.parametrize(
    "image, args, port, path, answer",
    [
        (HTTPD, (), "80", "/index.html", HTTPAnswer(200, HTTPD_INDEX)),
        (HTTPD, (), "80", "/", HTTPAnswer(200, HTTPD_INDEX)),
        (HTTPD, (), "80", "/index.html?x=1", HTTPAnswer(200, HTTPD_INDEX)),
        (HTTPD, (), "80", "/missing", 404),
        (HTTPD, (), "80", "/../../etc/hostname", 404),
        (HTTPD, (), "8080", "/", None),
        ("nginx:1.14-4", (), "80", "/index.html", 200),
        (
            "agnhost:2.43",
            ("serve-hostname",),
            "9376",
            "/anything",
            HTTPAnswer(200, "web-0", "text/plain; charset=utf-8"),
        ),
        ("agnhost:2.43", ("serve-hostname", "--port=8000"), "8000", "/", 200),
        ("agnhost:2.43", ("serve-hostname",), "80", "/", None),
        ("agnhost:2.43", ("netexec",), "9376", "/", None),
        ("busybox", (), "80", "/", None),
    ],
)
def test_what_known_images_serve(image, args, port, path, answer):
    got = http_get(image, args, seed(image, "web-0"), "web-0", port, path)
    assert (got.code if isinstance(answer, int) and got else got) == answer


def test_a_file_table_keeps_parents_as_directories():
    t = FileTable({"/a/b/c.txt": "x"})
    assert t.is_dir("/a") and t.is_dir("/a/b") and t.entries("/a") == ["b"] and t.under("/a") == ["/a/b", "/a/b/c.txt"]
    t.remove("/a/b")
    assert t.files == {} and t.dirs == {"/", "/a"}
