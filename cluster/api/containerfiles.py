"""The files of one emulated container, and what a known image serves over HTTP from them.

Owns ``FileTable`` (a container's filesystem as data: file paths to text, and the
directories) and the image table: which files each known image starts with and what it
answers over HTTP. No container runs, so an image is known by its name (the last part of
the reference, without tag or digest):

| image     | starts with | serves |
|-----------|-------------|--------|
| ``httpd`` | ``/usr/local/apache2/htdocs/index.html`` (``<html><body><h1>It works!</h1></body></html>``) | port 80: the files under ``/usr/local/apache2/htdocs`` |
| ``nginx`` | ``/usr/share/nginx/html/index.html`` (a welcome page) | port 80: the files under ``/usr/share/nginx/html`` |
| ``agnhost`` with ``serve-hostname`` | | port 9376 (or ``--port``): the pod's hostname, at every path |
| anything  | ``/etc/hostname``, ``/etc/hosts``, ``/tmp``, ``/root`` | nothing |

A static server answers a path that names a file under its docroot with 200 and the file
(a directory: its ``index.html``), anything else with 404. The kubelet keeps one table per
container run (``cluster/kubelet/containerfiles.py``); the emulated shell of ``kubectl
exec`` (``emulatedshell.py``) changes it, and the container's httpGet probes and the pod
proxy read it through ``http_get``.
"""

from __future__ import annotations

import posixpath
from typing import NamedTuple

HTTPD_INDEX = "<html><body><h1>It works!</h1></body></html>\n"
NGINX_INDEX = (
    "<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n</head>\n<body>\n"
    "<h1>Welcome to nginx!</h1>\n<p>If you see this page, the nginx web server is successfully installed "
    "and working.</p>\n</body>\n</html>\n"
)
NOT_FOUND = (
    "<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>"
    "<p>The requested URL was not found on this server.</p></body></html>\n"
)
SERVE_HOSTNAME_PORT = "9376"  # agnhost serve-hostname's default --port


class Image(NamedTuple):
    docroot: str = ""  # a static server's document root ("" for none)
    port: str = ""  # the port it serves on
    files: tuple[tuple[str, str], ...] = ()  # what the image holds beyond every container's files


IMAGES = {
    "httpd": Image("/usr/local/apache2/htdocs", "80", (("/usr/local/apache2/htdocs/index.html", HTTPD_INDEX),)),
    "nginx": Image("/usr/share/nginx/html", "80", (("/usr/share/nginx/html/index.html", NGINX_INDEX),)),
}


class HTTPAnswer(NamedTuple):
    code: int
    body: str
    content_type: str = "text/html"


class FileTable:
    """A container's files: absolute paths to text, and the directories (every file's
    parents are directories too)."""

    __slots__ = ("files", "dirs")

    def __init__(self, files: dict[str, str] | None = None, dirs: set[str] | None = None):
        self.files: dict[str, str] = dict(files or {})
        self.dirs: set[str] = {"/"} | set(dirs or ())
        for path in list(self.files) + list(self.dirs):
            self._parents(path)

    def _parents(self, path: str) -> None:
        parent = posixpath.dirname(path)
        while parent not in self.dirs:
            self.dirs.add(parent)
            parent = posixpath.dirname(parent)

    def is_file(self, path: str) -> bool:
        return path in self.files

    def is_dir(self, path: str) -> bool:
        return path in self.dirs

    def exists(self, path: str) -> bool:
        return path in self.files or path in self.dirs

    def write(self, path: str, text: str) -> None:
        self.files[path] = text

    def mkdir(self, path: str) -> None:
        self.dirs.add(path)
        self._parents(path)

    def under(self, path: str) -> list[str]:
        """Every file and directory below ``path`` (not ``path`` itself)."""
        prefix = path.rstrip("/") + "/"
        return sorted(p for p in (*self.files, *self.dirs) if p.startswith(prefix) and p != path)

    def entries(self, path: str) -> list[str]:
        """The names directly inside directory ``path``, sorted as ``ls`` sorts them."""
        return sorted({posixpath.basename(p) for p in self.under(path) if posixpath.dirname(p) == path})

    def remove(self, path: str) -> None:
        """Remove ``path`` and everything below it."""
        for p in [path, *self.under(path)]:
            self.files.pop(p, None)
            self.dirs.discard(p)


def image_name(ref: str) -> str:
    """``registry.k8s.io/e2e-test-images/httpd:2.4.38-4`` -> ``httpd``."""
    ref = ref.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    return last.split(":", 1)[0]


def seed(image: str, hostname: str, pod_ip: str = "") -> FileTable:
    """The files a container of ``image`` starts with."""
    files = {"/etc/hostname": f"{hostname}\n", "/etc/hosts": "127.0.0.1\tlocalhost\n"}
    if pod_ip:
        files["/etc/hosts"] += f"{pod_ip}\t{hostname}\n"
    files.update(IMAGES.get(image_name(image), Image()).files)
    return FileTable(files, {"/tmp", "/root"})


def serve_hostname_port(args: tuple[str, ...]) -> str | None:
    """The port agnhost serves its hostname on, when its arguments say ``serve-hostname``."""
    if not args or args[0] != "serve-hostname":
        return None
    for arg in args[1:]:
        if arg.startswith("--port="):
            return arg.split("=", 1)[1]
    return SERVE_HOSTNAME_PORT


def serves(image: str, args: tuple[str, ...], port: str) -> bool:
    """Whether a container of ``image`` run with ``args`` answers HTTP on ``port``."""
    name = image_name(image)
    if name == "agnhost":
        return serve_hostname_port(args) == port
    known = IMAGES.get(name)
    return known is not None and bool(known.docroot) and known.port == port


def http_get(
    image: str, args: tuple[str, ...], files: FileTable, hostname: str, port: str, path: str
) -> HTTPAnswer | None:
    """What the container answers to ``GET path`` on ``port``; None when nothing known
    listens there (the caller keeps its own answer)."""
    if not serves(image, args, port):
        return None
    if image_name(image) == "agnhost":
        return HTTPAnswer(200, hostname, "text/plain; charset=utf-8")
    docroot = IMAGES[image_name(image)].docroot
    local = posixpath.normpath(posixpath.join(docroot, "./" + path.split("?", 1)[0].lstrip("/")))
    if local != docroot and not local.startswith(docroot + "/"):
        return HTTPAnswer(404, NOT_FOUND)  # a path climbing out of the docroot
    if files.is_dir(local):
        local = posixpath.join(local, "index.html")
    if files.is_file(local):
        return HTTPAnswer(200, files.files[local])
    return HTTPAnswer(404, NOT_FOUND)
