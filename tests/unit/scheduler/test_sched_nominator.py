"""PodNominator: nominations from status and from the scheduler, updates, deletes, and the
queue keeping it in step with pending pods."""

from __future__ import annotations

from sched_builders import make_node, make_pod, make_scheduler

from cluster.scheduler.cache import Cache
from cluster.scheduler.nominator import MODE_NOOP, MODE_OVERRIDE, NominatingInfo, PodNominator


def info(pod):
    return Cache().new_pod_info(pod)


def names(nom, node):
    return [p.name for p in nom.pods_for_node(node)]


def test_nomination_from_status_in_insertion_order():
    nom = PodNominator()
    for name in ("a", "b", "c"):
        nom.add(info(make_pod(name).nominated("n1")))
    nom.add(info(make_pod("d")))  # no nomination: not recorded
    assert names(nom, "n1") == ["a", "b", "c"] and len(nom) == 3
    assert nom.node_of("uid-default-d") is None


def test_override_moves_and_clears():
    nom = PodNominator()
    a = info(make_pod("a").nominated("n1"))
    nom.add(a)
    nom.add(a, NominatingInfo("n2", MODE_OVERRIDE))
    assert (names(nom, "n1"), names(nom, "n2")) == ([], ["a"])
    nom.add(a, NominatingInfo("", MODE_OVERRIDE))  # an empty override clears it
    assert len(nom) == 0 and nom.node_of(a.uid) is None


def test_noop_mode_reads_the_status():
    nom = PodNominator()
    nom.add(info(make_pod("a").nominated("n3")), NominatingInfo("n9", MODE_NOOP))
    assert names(nom, "n3") == ["a"]


def test_bound_pod_is_never_nominated():
    nom = PodNominator()
    nom.add(info(make_pod("a").nominated("n1").node("n1")))
    assert len(nom) == 0


def test_no_duplicates_and_readding_goes_last():
    nom = PodNominator()
    a, b = info(make_pod("a").nominated("n1")), info(make_pod("b").nominated("n1"))
    nom.add(a)
    nom.add(b)
    nom.add(a)
    assert names(nom, "n1") == ["b", "a"]


def test_update_keeps_the_schedulers_own_unwritten_nomination():
    nom = PodNominator()
    old = make_pod("a")
    nom.add(info(old), NominatingInfo("n1", MODE_OVERRIDE))  # the scheduler nominated; not yet in the API
    new = make_pod("a").label("x", "y")  # an unrelated update arrives first
    nom.update(old, info(new))
    assert names(nom, "n1") == ["a"]


def test_update_follows_the_status_once_written():
    nom = PodNominator()
    old = make_pod("a").nominated("n1")
    nom.add(info(old))
    nom.update(old, info(make_pod("a").nominated("n2")))
    assert (names(nom, "n1"), names(nom, "n2")) == ([], ["a"])
    # The nomination removed from the status (old had one): cleared.
    nom.update(make_pod("a").nominated("n2"), info(make_pod("a")))
    assert len(nom) == 0


def test_delete():
    nom = PodNominator()
    nom.add(info(make_pod("a").nominated("n1")))
    nom.delete("uid-default-a")
    nom.delete("uid-default-a")  # twice is harmless
    assert names(nom, "n1") == [] and len(nom) == 0


def test_queue_and_scheduler_keep_the_nominator_in_step():
    s = make_scheduler([make_node("n1", cpu="1")], [make_pod("a").req(cpu="2").nominated("n1")])
    nom = s.queue.nominator
    assert names(nom, "n1") == ["a"]
    out = s.schedule(0.0)  # does not fit, and preemption finds no victims: the nomination is cleared
    assert len(nom) == 0
    assert out.nominations == [("default", "a", "uid-default-a", "")]
    s.on_pod("ADDED", make_pod("c").req(cpu="2").nominated("n1"), 1.0)
    assert names(nom, "n1") == ["c"]
    s.on_pod("DELETED", make_pod("c").req(cpu="2").nominated("n1"), 1.0)
    assert len(nom) == 0
    s.on_pod("ADDED", make_pod("b").nominated("n1"), 2.0)
    assert names(nom, "n1") == ["b"]
    s.schedule(2.0)  # b fits and is assumed: its nomination is done
    assert len(nom) == 0


def test_nominated_load_follows_nominations_rows_and_priorities():
    s = make_scheduler([make_node("n1"), make_node("n2"), make_node("n3")])
    nom, load = s.queue.nominator, s.queue.nominator.load
    a = s.cache.new_pod_info(make_pod("a").prio(100).req(cpu="1").nominated("n3"))
    b = s.cache.new_pod_info(make_pod("b").prio(10).req(cpu="2").nominated("n3"))
    nom.add(a)
    nom.add(b)
    cpu = s.cache.columns.get("cpu")

    def cpu_by_node(prio, exclude=""):
        totals = load.totals([cpu], at_least=prio, exclude_uid=exclude)
        if totals is None:
            return None
        req, count = totals
        snap = s.cache.snapshot()
        return {snap.node_name(i): (int(req[i, 0]), int(count[i])) for i in range(snap.num_nodes) if count[i]}

    assert cpu_by_node(50) == {"n3": (1000, 1)}
    assert cpu_by_node(5) == {"n3": (3000, 2)}
    assert cpu_by_node(5, exclude="uid-default-a") == {"n3": (2000, 1)}
    assert cpu_by_node(500) is None
    s.on_node("DELETED", make_node("n1"), 1.0)  # n3 moves into n1's row
    assert cpu_by_node(5) == {"n3": (3000, 2)}
    nom.delete("uid-default-b")
    assert cpu_by_node(5) == {"n3": (1000, 1)}
    nom.add(s.cache.new_pod_info(make_pod("c").prio(100).req(cpu="1").nominated("n9")))  # unknown node
    assert cpu_by_node(5) == {"n3": (1000, 1)}
    s.on_node("ADDED", make_node("n9"), 2.0)  # known now: counted
    assert cpu_by_node(5) == {"n3": (1000, 1), "n9": (1000, 1)}
    assert not load.special_at_or_above(0)
    nom.add(s.cache.new_pod_info(make_pod("d").prio(7).host_port(80).nominated("n2")))
    assert load.special_at_or_above(5) and not load.special_at_or_above(8)
