"""``kubemu serve``: a cluster behind the Kubernetes API, until SIGINT or SIGTERM.

Owns starting the cluster for outside clients: N nodes (``--nodes``, ``--cpu``,
``--memory``, ``--gpus``) on the local runtime, whose virtual clock is paced by the wall
clock (outside clients act in real time; ``--time-scale`` speeds it up) and starts at the
wall time, so ages and timestamps read right; the schedulers ``--schedulers`` names (the
default one, YuniKorn mode or both; a ``--scenario`` brings its own list); the API server
(``cluster/frontend/``) on ``--address:--port`` over TLS with a bearer token, or plain HTTP
on loopback with ``--insecure-http``, with ``/metrics`` and, in YuniKorn mode, YuniKorn's
REST API fed from the live components; and the kubeconfig that reaches it. The apiserver
learns what upstream's flags tell it: the service range (``--service-cluster-ip-range``),
the address and port it is really served at (the ``kubernetes`` Service's endpoints) and
the CA clients trust (``extension-apiserver-authentication``, hence every namespace's
``kube-root-ca.crt``). Nodes clients create through the API get a kubelet as
``--manage-nodes`` says (``cluster/runtime/nodeclaim.py``). Never imports Ray.
"""

from __future__ import annotations

import asyncio
import ipaddress
import signal
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from cluster.apiserver.serviceips import DEFAULT_SERVICE_CIDR, parse_cidr
from cluster.clock import EPOCH
from cluster.frontend import tls
from cluster.frontend.backend import Backend, LocalBackend
from cluster.frontend.handler import Handler
from cluster.frontend.metrics import Metrics, storage_objects
from cluster.frontend.server import start
from cluster.frontend.ui import access as ui_access
from cluster.frontend.yunikorn import YuniKornView
from cluster.kubelet.adopt import adopting_host
from cluster.runtime.cluster import Layout
from cluster.runtime.local import LocalCluster
from cluster.runtime.nodeclaim import POLICIES, NodeClaimer
from cluster.runtime.paced import PacedCluster
from cluster.scenario import report as reports
from cluster.scenario.driver import run_scenario
from cluster.scenario.layout import DEFAULT_SCHEDULER, LOCAL_CPUS, YUNIKORN, expand_pools, layout
from cluster.scenario.schema import NodePool, Scenario, scheduler_config

LOOPBACK = ("127.0.0.1", "localhost", "::1")
SCHEDULERS = (DEFAULT_SCHEDULER, YUNIKORN)


@dataclass(frozen=True)
class ServeOptions:
    nodes: int = 3
    cpu: str = "4"
    memory: str = "16Gi"
    gpus: int = 0
    address: str = "127.0.0.1"
    port: int = 6443
    kubeconfig: str = "kubemu.kubeconfig"
    time_scale: float = 1.0
    insecure_http: bool = False
    scheduler: bool = True  # False (--no-scheduler): no default scheduler, whatever ``schedulers`` says
    schedulers: tuple[str, ...] = (DEFAULT_SCHEDULER,)
    seed: int = 1
    runtime: str = "local"  # or "ray": the components in actors (serve_ray.py)
    job_run_seconds: float = 5.0  # a Job pod without kubemu.io/run-seconds exits 0 after this
    service_cidr: str = DEFAULT_SERVICE_CIDR  # --service-cluster-ip-range
    manage_nodes: str = "all"  # --manage-nodes: which Nodes created through the API get a kubelet


def check(opts: ServeOptions) -> None:
    """Refuse bad options before anything starts (one line, naming the option)."""
    if opts.nodes < 0:
        raise ValueError(f"--nodes: {opts.nodes} must be at least 0")
    if not 0 <= opts.port <= 65535:
        raise ValueError(f"--port: {opts.port} is not a TCP port")
    if not opts.time_scale > 0:
        raise ValueError(f"--time-scale: {opts.time_scale} must be greater than 0")
    if opts.gpus < 0:
        raise ValueError(f"--gpus: {opts.gpus} must be at least 0")
    if not opts.job_run_seconds >= 0:
        raise ValueError(f"--job-run-seconds: {opts.job_run_seconds} must be at least 0")
    if opts.runtime not in ("local", "ray"):
        raise ValueError(f"--runtime: {opts.runtime!r} is not one of local, ray")
    if not opts.schedulers:
        raise ValueError(f"--schedulers: names no scheduler (give one or more of {', '.join(SCHEDULERS)})")
    for name in opts.schedulers:
        if name not in SCHEDULERS:
            raise ValueError(f"--schedulers: {name!r} is not one of {', '.join(SCHEDULERS)}")
    try:
        parse_cidr(opts.service_cidr)
    except ValueError as e:
        raise ValueError(f"--service-cluster-ip-range: {e}") from None
    if opts.runtime == "ray" and opts.service_cidr != DEFAULT_SERVICE_CIDR:
        raise ValueError(f"--service-cluster-ip-range: {opts.service_cidr} is served over the local runtime only")
    if opts.manage_nodes not in POLICIES:
        raise ValueError(f"--manage-nodes: {opts.manage_nodes!r} is not one of {', '.join(POLICIES)}")
    if opts.insecure_http and opts.address not in LOOPBACK:
        raise ValueError(f"--insecure-http: serving plain HTTP on {opts.address} would expose the API; use TLS")


def serve_options_layout(opts: ServeOptions, cpus: int | None = None) -> Layout:
    """The cluster ``--nodes``, ``--cpu``, ``--memory``, ``--gpus``, ``--schedulers`` and
    ``--no-scheduler`` ask for."""
    capacity: dict[str, object] = {"cpu": opts.cpu, "memory": opts.memory}
    if opts.gpus:
        capacity["nvidia.com/gpu"] = str(opts.gpus)
    pools = [NodePool(namePrefix="node", count=opts.nodes, capacity=capacity)]
    plan = layout(
        expand_pools(pools),
        seed=opts.seed,
        cpus=cpus or LOCAL_CPUS,
        schedulers=opts.schedulers,
        job_run_seconds=opts.job_run_seconds,
    )
    if not opts.scheduler:
        plan.control.pop("scheduler", None)
    return plan


def build_cluster(
    opts: ServeOptions, scenario: Scenario | None = None, log: Callable[[str], None] | None = None
) -> PacedCluster:
    """The cluster to serve: N nodes starting at the wall time, or the scenario's cluster
    on its own fixed timeline (so its file reads the same as under ``kubemu run``)."""
    if scenario is not None:
        spec = scenario.spec
        configs = expand_pools(spec.cluster.nodes)
        plan = layout(
            configs,
            seed=spec.seed,
            scheduler_config=scheduler_config(scenario),
            schedulers=spec.cluster.schedulers,
            job_run_seconds=spec.cluster.jobRunSeconds,
        )
        seed, start_at, scale = spec.seed, 0.0, spec.timeScale * opts.time_scale
    else:
        plan = serve_options_layout(opts)
        seed, start_at, scale = opts.seed, time.time() - EPOCH.timestamp(), opts.time_scale
    if not opts.scheduler:
        plan.control.pop("scheduler", None)
    # A component's fault is logged and survived: no client input may stop the server.
    cluster = PacedCluster(plan, seed=seed, start=start_at, time_scale=scale, keep=True, on_fault=log or print)
    cluster.log = log or print
    cluster.manage_nodes(node_claimer(opts))  # a scenario's run sets its own
    return cluster


def node_claimer(opts: ServeOptions) -> NodeClaimer | None:
    """What takes over the Nodes clients create (``--manage-nodes``); None for none."""
    return None if opts.manage_nodes == "none" else NodeClaimer(opts.manage_nodes, adopting_host)


def live_view(cluster: LocalCluster, role: str) -> dict[str, Any] | None:
    """What the live component in ``role`` shows now (its ``inspect``); None when none runs."""
    live = next((m for m in cluster.members if m.alive and m.role == role), None)
    return None if live is None else live.component.inspect(cluster.now())


def scheduler_view(cluster: LocalCluster) -> dict[str, Any] | None:
    """The scheduler's counters for /metrics, across its restarts (as ``scheduler_stats``)."""
    view = live_view(cluster, "scheduler")
    return None if view is None else cluster.with_carried(view)


def yunikorn_view(cluster: LocalCluster) -> dict[str, Any] | None:
    """The YuniKorn-mode scheduler's queues, applications and counters, for its REST API and
    /metrics, its counters across its restarts; None when it does not run."""
    view = live_view(cluster, YUNIKORN)
    return None if view is None else cluster.with_carried(view, YUNIKORN)


async def pace(cluster: PacedCluster, backend: LocalBackend, stop: asyncio.Event) -> None:
    """Move the virtual clock with the wall clock until ``stop`` is set."""
    while not stop.is_set():
        await cluster.settle()
        backend.tick()
        await cluster.advance(None)


# Told where the API listens (advertised IP, real port) and the CA's PEM (None over HTTP).
Listening = Callable[[str, int, "str | None"], Awaitable[None]]


def advertised_address(host: str) -> str:
    """The IP the ``kubernetes`` endpoints name for ``--address`` (upstream's advertise
    address): the address itself when it is one IP, the host's outbound IP when it means
    every interface, a name resolved; 127.0.0.1 when nothing better is known."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        try:
            return socket.gethostbyname(host)
        except OSError:
            return "127.0.0.1"
    if not ip.is_unspecified:
        return str(ip)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))  # a UDP connect sends nothing: it picks the route
            return str(s.getsockname()[0])
        except OSError:
            return "127.0.0.1"


async def listen(
    backend: Backend,
    metrics: Metrics,
    opts: ServeOptions,
    log: Callable[[str], None],
    yunikorn: YuniKornView | None = None,
    refresh: Callable[[], Awaitable[None]] | None = None,
    on_listen: Listening | None = None,
) -> Any:
    """Serve the API from ``backend`` and write the kubeconfig; the runner (to clean up).
    ``yunikorn`` and ``refresh`` are the handler's (``cluster/frontend/handler.py``);
    ``on_listen`` hears the real address, port (``--port 0`` picks a free one) and CA
    before the kubeconfig is written, so a client never sees the defaults."""
    scheme = "http" if opts.insecure_http else "https"
    token, ca, context = "", None, None
    if not opts.insecure_http:
        ca, key = tls.certificate(opts.address)
        context, token = tls.server_context(ca, key), tls.token()
    handler = Handler(backend, token=token, metrics=metrics, yunikorn=yunikorn, refresh=refresh)
    runner = await start(handler, opts.address, opts.port, context)
    port = int(runner.addresses[0][1]) if runner.addresses else opts.port
    handler.address = f"{opts.address}:{port}"
    if on_listen is not None:
        await on_listen(advertised_address(opts.address), port, ca.decode() if ca is not None else None)
    server = f"{scheme}://{opts.address}:{port}"
    tls.write_kubeconfig(opts.kubeconfig, tls.kubeconfig(server, token, ca))
    log(f"kubemu: the Kubernetes API is served at {server}")
    log(f"export KUBECONFIG={opts.kubeconfig}")
    log(f"kubemu: the web view (this link works once): {ui_access(handler).login_url(server)}")
    return runner


async def serve(
    opts: ServeOptions,
    log: Callable[[str], None],
    stop: asyncio.Event | None = None,
    scenario: Scenario | None = None,
    keep_serving: bool = True,
) -> dict[str, Any] | None:
    """Serve until ``stop`` is set (SIGINT/SIGTERM when none is given). With a scenario,
    run it while serving (its report is returned) and, with ``keep_serving``, go on
    serving its cluster afterwards."""
    check(opts)
    stop = stop or _on_signals()
    if opts.runtime == "ray":
        if scenario is not None:
            raise ValueError("--scenario: a scenario is served over the local runtime (drop --runtime ray)")
        from actors.harness.serve_ray import serve_on_ray  # imports Ray: only when asked for

        await serve_on_ray(opts, log, stop)
        return None
    cluster = build_cluster(opts, scenario, log)
    cluster.api.services.configure(opts.service_cidr)
    if scenario is None:
        log(f"kubemu: {await cluster.start()} nodes registered")  # before any client can ask
    backend = LocalBackend(lambda: cluster.api, cluster.now, cluster.poke, cluster.command)  # command: exec, proxy
    metrics = Metrics(
        storage=lambda: storage_objects(cluster.api.count),
        scheduler=lambda: scheduler_view(cluster),
        yunikorn=lambda: yunikorn_view(cluster),
        controllers=lambda: (live_view(cluster, "controller-manager") or {}).get("controllers"),
    )

    async def published(address: str, port: int, ca: str | None) -> None:
        publish(cluster.api, address, port, ca, cluster.now())
        cluster.poke()

    runner = await listen(backend, metrics, opts, log, yunikorn=lambda: yunikorn_view(cluster), on_listen=published)
    report = None
    try:
        if scenario is not None:
            report = await run_scenario(scenario, cluster, log)
            log(reports.summary(report))
            if not keep_serving:
                return report
        await pace(cluster, backend, stop)
    finally:
        await runner.cleanup()
        cluster.keep = False
        await cluster.shutdown()
        log("kubemu: stopped")
    return report


def publish(api: Any, address: str, port: int, ca: str | None, now: float) -> None:
    """Tell the apiserver where it is served and which CA clients trust; its bootstrap
    (``cluster/apiserver/bootstrap_services.py``) writes them out at once."""
    api.masters.advertise(address, port)
    if ca is not None:
        api.masters.publish_ca(ca)
    api.write([], now)


def _on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop
