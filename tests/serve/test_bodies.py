"""Request bodies arrive whole however they are sent: over raw TLS sockets, with
``Content-Length`` or ``Transfer-Encoding: chunked``, in pieces of 1 byte to 64 KB, some
with pauses between them. What is stored is what was sent, byte for byte; a body of
exactly 3 MiB is taken and one byte more is a 413 ``Status``.

Every random choice comes from ``random.Random(SEED)``: a failure names the request's
index, size and how it was sent, and the same seed sends the same bytes again."""

from __future__ import annotations

import json
import math
import random
import socket
import ssl
import time
from base64 import b64encode
from dataclasses import dataclass

SEED = 20261205
COUNT = 1000
MIN_BODY = 1024
MAX_BODY = 3 * 1024 * 1024  # the server's limit on a request body, in bytes
MAX_PIECE = 64 * 1024
PAUSED = 0.06  # the share of requests that pause between some of their pieces
PATH = "/api/v1/namespaces/default/configmaps"
# Characters a JSON encoder must escape, or that are more than one byte in UTF-8.
AWKWARD = ['"', "\\", "\n", "\r", "\t", "/", "\x00", "\x1f", "\x7f", "é", "ß", "日本", "\u2028", "\u2029", "😀", " "]

CTX = ssl.create_default_context()
CTX.check_hostname, CTX.verify_mode = False, ssl.CERT_NONE


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


class Conn:
    """One keep-alive HTTP/1.1 connection over TLS whose request bytes go out exactly in
    the pieces given, so the server sees them in as many reads as we like."""

    def __init__(self, port: int, token: str):
        self.port, self.token = port, token
        self.sock: ssl.SSLSocket | None = None
        self._open()

    def _open(self) -> None:
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=60)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = CTX.wrap_socket(raw)
        self.buf = b""

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def head(self, method: str, path: str, framing: dict[str, str]) -> bytes:
        lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Authorization: Bearer {self.token}"]
        lines += [f"{k}: {v}" for k, v in framing.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def send(self, pieces: list[bytes], pauses: dict[int, float] | None = None) -> None:
        """Writes each piece with one ``sendall``; sleeps ``pauses[i]`` seconds before piece i."""
        if self.sock is None:  # the server closed the last one (``Connection: close``)
            self._open()
        for i, piece in enumerate(pieces):
            if pauses and i in pauses:
                time.sleep(pauses[i])
            self.sock.sendall(piece)

    def simple(self, method: str, path: str) -> Answer:
        self.send([self.head(method, path, {"Content-Length": "0"})])
        return self.answer()

    def answer(self) -> Answer:
        while b"\r\n\r\n" not in self.buf:
            self._more()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = bytearray()
            while True:
                while b"\r\n" not in self.buf:
                    self._more()
                size_line, self.buf = self.buf.split(b"\r\n", 1)
                size = int(size_line.split(b";")[0], 16)
                while len(self.buf) < size + 2:
                    self._more()
                body += self.buf[:size]
                self.buf = self.buf[size + 2 :]
                if size == 0:
                    break
            self._closing(headers)
            return Answer(status, headers, bytes(body))
        length = int(headers.get("content-length", "0"))
        while len(self.buf) < length:
            self._more()
        body, self.buf = self.buf[:length], self.buf[length:]
        self._closing(headers)
        return Answer(status, headers, body)

    def _closing(self, headers: dict[str, str]) -> None:
        if headers.get("connection", "").lower() == "close":
            self.close()

    def _more(self) -> None:
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError(f"the server closed the connection mid-answer (have {self.buf[:200]!r})")
        self.buf += data


def log_uniform(rng: random.Random, low: int, high: int) -> int:
    return min(high, int(math.exp(rng.uniform(math.log(low), math.log(high + 1)))))


def configmap_body(rng: random.Random, name: str, size: int) -> tuple[bytes, dict[str, str]]:
    """A ConfigMap whose JSON is exactly ``size`` bytes, and its ``data``: awkward
    characters in one value, random base64 filling the rest (so a lost, doubled or
    reordered piece cannot go unseen)."""
    awkward = "".join(rng.choice(AWKWARD) for _ in range(rng.randint(1, 40)))
    ascii_only = rng.random() < 0.5  # \\uXXXX escapes, or raw UTF-8
    indent = rng.choice([None, None, 1, 2])

    def render(blob: str) -> bytes:
        data = {"awkward": awkward, "blob": blob, "k.-_0": ""}
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}
        seps = (",", ":") if indent is None else (",", ": ")
        return json.dumps(obj, ensure_ascii=ascii_only, indent=indent, separators=seps).encode()

    missing = size - len(render(""))
    assert missing >= 0, f"{size} bytes is too small for the fixed part of the body"
    blob = b64encode(rng.randbytes(missing * 3 // 4 + 3)).decode()[:missing]
    body = render(blob)
    assert len(body) == size
    return body, {"awkward": awkward, "blob": blob, "k.-_0": ""}


def split(rng: random.Random, data: bytes) -> list[bytes]:
    """``data`` in pieces of 1 byte to 64 KB: mostly large, sometimes many tiny ones."""
    pieces, at = [], 0
    tiny = rng.random() < 0.2
    while at < len(data):
        n = log_uniform(rng, 1, MAX_PIECE) if tiny else rng.randint(1, MAX_PIECE)
        pieces.append(data[at : at + n])
        at += n
    return pieces


def chunked(rng: random.Random, body: bytes) -> bytes:
    """``body`` in chunked transfer coding, in chunks of random sizes (hex in either case)."""
    out, at = bytearray(), 0
    while at < len(body):
        n = min(len(body) - at, log_uniform(rng, 1, 256 * 1024))
        size = f"{n:x}" if rng.random() < 0.8 else f"{n:X}"
        out += size.encode() + b"\r\n" + body[at : at + n] + b"\r\n"
        at += n
    return bytes(out + b"0\r\n\r\n")


def post(
    conn: Conn, rng: random.Random, body: bytes, use_chunked: bool, pause: tuple[float, float] | None = None
) -> Answer:
    """POSTs ``body`` as a ConfigMap; the head and body go out in random pieces (the head
    is sometimes split too). ``pause``: (seconds, share of piece boundaries) to sleep at."""
    framing = {"Content-Type": "application/json"}
    if use_chunked:
        framing["Transfer-Encoding"] = "chunked"
        wire = chunked(rng, body)
    else:
        framing["Content-Length"] = str(len(body))
        wire = body
    head = conn.head("POST", PATH, framing)
    pieces = split(rng, wire)
    if rng.random() < 0.3:  # the head in two writes, the second one glued to the body's start
        cut = rng.randint(1, len(head) - 1)
        pieces = [head[:cut], head[cut:] + pieces[0], *pieces[1:]]
    else:
        pieces = [head, *pieces]
    pauses = None
    if pause is not None:
        seconds, share = pause
        pauses = {i: rng.uniform(0, seconds) for i in range(1, len(pieces)) if rng.random() < share}
        pauses[1] = seconds  # always once between the head and the body
    conn.send(pieces, pauses)
    return conn.answer()


def check_round_trip(conn: Conn, rng: random.Random, i: int, size: int, use_chunked: bool, pause=None):
    how = f"#{i}: {size} bytes, {'chunked' if use_chunked else 'Content-Length'}, pause={pause}"
    name = f"body-{i:04d}"
    body, data = configmap_body(rng, name, size)
    created = post(conn, rng, body, use_chunked, pause)
    assert created.status == 201, f"{how}: create answered {created.status}: {created.body[:500]!r}"
    assert created.json()["data"] == data, f"{how}: the create's answer differs from what was sent"
    got = conn.simple("GET", f"{PATH}/{name}")
    assert got.status == 200, f"{how}: read answered {got.status}: {got.body[:500]!r}"
    stored = got.json()["data"]
    assert stored.keys() == data.keys(), f"{how}: stored keys {sorted(stored)} != sent {sorted(data)}"
    for key, value in data.items():
        sent, back = value.encode(), stored[key].encode()
        if sent != back:
            at = next((j for j, (a, b) in enumerate(zip(sent, back)) if a != b), min(len(sent), len(back)))
            raise AssertionError(
                f"{how}: data[{key!r}] differs at byte {at} (sent {len(sent)} bytes, stored {len(back)}): "
                f"sent {sent[at : at + 40]!r}, stored {back[at : at + 40]!r}"
            )
    gone = conn.simple("DELETE", f"{PATH}/{name}")
    assert gone.status == 200, f"{how}: delete answered {gone.status}: {gone.body[:500]!r}"


def test_a_thousand_bodies_arrive_whole_however_they_are_sent(served):
    rng = random.Random(SEED)
    sizes = [log_uniform(rng, MIN_BODY, MAX_BODY) for _ in range(COUNT)]
    framings = [i % 2 == 1 for i in range(COUNT)]  # half Content-Length, half chunked
    rng.shuffle(framings)
    conn = Conn(served.port, served.token)
    try:
        for i, (size, use_chunked) in enumerate(zip(sizes, framings)):
            pause = (rng.uniform(0.001, 0.02), 0.05) if rng.random() < PAUSED else None
            check_round_trip(conn, rng, i, size, use_chunked, pause)
    finally:
        conn.close()
    assert served.proc.poll() is None


def too_large(served, use_chunked: bool) -> Answer:
    rng = random.Random(SEED + 1)
    body, _ = configmap_body(rng, "body-too-large", MAX_BODY + 1)
    conn = Conn(served.port, served.token)
    try:
        return post(conn, rng, body, use_chunked)
    finally:
        conn.close()


def test_exactly_3_mib_is_taken_with_either_framing(served):
    rng = random.Random(SEED + 2)
    conn = Conn(served.port, served.token)
    try:
        check_round_trip(conn, rng, 9001, MAX_BODY, use_chunked=False)
        check_round_trip(conn, rng, 9002, MAX_BODY, use_chunked=True)
    finally:
        conn.close()


def test_one_byte_more_than_3_mib_is_a_413_status_with_either_framing(served):
    for use_chunked in (False, True):
        answer = too_large(served, use_chunked)
        framing = "chunked" if use_chunked else "Content-Length"
        assert answer.status == 413, f"{framing}: {answer.status} {answer.body[:300]!r}"
        assert answer.headers.get("content-type", "").startswith("application/json"), (framing, answer.headers)
        status = answer.json()
        assert status["kind"] == "Status" and status["code"] == 413, (framing, status)
        assert status["apiVersion"] == "v1" and status["status"] == "Failure", (framing, status)
        assert status.get("reason") == "RequestEntityTooLarge", (framing, status)
    conn = Conn(served.port, served.token)
    try:
        missing = conn.simple("GET", f"{PATH}/body-too-large")
    finally:
        conn.close()
    assert missing.status == 404, "a refused body must store nothing"


def test_a_slow_sender_is_waited_for(served):
    """One piece every 0.2 s for about 2 s, with either framing."""
    rng = random.Random(SEED + 3)
    for i, use_chunked in enumerate((False, True)):
        name = f"body-slow-{i}"
        body, data = configmap_body(rng, name, 20_000)
        conn = Conn(served.port, served.token)
        try:
            framing = {"Content-Type": "application/json"}
            if use_chunked:
                framing["Transfer-Encoding"] = "chunked"
                wire = chunked(rng, body)
            else:
                framing["Content-Length"] = str(len(body))
                wire = body
            step = math.ceil(len(wire) / 10)
            pieces = [conn.head("POST", PATH, framing)] + [wire[j : j + step] for j in range(0, len(wire), step)]
            started = time.monotonic()
            conn.send(pieces, {j: 0.2 for j in range(1, len(pieces))})
            created = conn.answer()
            assert time.monotonic() - started >= 1.9
            assert created.status == 201, (use_chunked, created.status, created.body[:300])
            got = conn.simple("GET", f"{PATH}/{name}")
            assert got.status == 200 and got.json()["data"] == data, use_chunked
            assert conn.simple("DELETE", f"{PATH}/{name}").status == 200
        finally:
            conn.close()
