import pytest

from cluster.api.annotations import CPU_USAGE, MEMORY_USAGE, AnnotationError
from cluster.api.usage import container_usage, crossing_time, parse_usage, pod_usage, total

MI, GI = 2**20, 2**30


def mem(raw):
    return parse_usage(MEMORY_USAGE, raw)


def cpu(raw):
    return parse_usage(CPU_USAGE, raw)


@pytest.mark.parametrize(
    "profile, samples",
    [
        (mem("300Mi"), {0: 300 * MI, 1e6: 300 * MI}),
        (cpu("500m"), {0: 500, 99: 500}),
        (cpu("1.5"), {0: 1500}),
        (cpu(2), {0: 2000}),
        (mem("ramp(100Mi, 1Gi, 60s)"), {-5: 100 * MI, 0: 100 * MI, 30: (100 * MI + GI) // 2, 60: GI, 600: GI}),
        (mem("ramp(1Gi, 0, 1m)"), {0: GI, 45: GI // 4, 60: 0}),
        (cpu(" ramp( 0 , 1 , 1m30s ) "), {0: 0, 45: 500, 90: 1000}),
        (cpu("ramp(0, 1, 3s)"), {1: 333, 2: 666}),  # rounded down
        (mem("ramp(100Mi, 1Gi, 0s)"), {0: GI}),
        (mem("spike(100Mi, 2Gi, 30s, 10s)"), {0: 100 * MI, 29.999: 100 * MI, 30: 2 * GI, 39.999: 2 * GI, 40: 100 * MI}),
        (cpu("spike(1, 4, 0, 2m)"), {0: 4000, 119: 4000, 120: 1000}),
        (cpu("spike(100m, 50m, 10s, 5s)"), {9: 100, 10: 50, 15: 100}),  # a dip
        (mem("spike(1Mi, 2Mi, 5s, 0s)"), {5: MI}),
    ],
)
def test_values_over_time(profile, samples):
    assert {t: profile.at(t) for t in samples} == samples


@pytest.mark.parametrize(
    "profile, checks",
    [
        (mem("300Mi"), {0: None}),
        (mem("ramp(1Mi, 2Mi, 60s)"), {-1: 60.0, 0: 60.0, 59.9: 60.0, 60: None}),
        (mem("spike(1Mi, 2Mi, 30s, 10s)"), {0: 30.0, 30: 40.0, 35: 40.0, 40: None}),
        (mem("spike(1Mi, 2Mi, 0s, 10s)"), {0: 10.0, 10: None}),
    ],
)
def test_next_change(profile, checks):
    assert {t: profile.next_change(t) for t in checks} == checks


@pytest.mark.parametrize(
    "key, raw, message",
    [
        (MEMORY_USAGE, "lots", "is not a quantity or a usage profile (ramp(...), spike(...))"),
        (MEMORY_USAGE, "", "is not a quantity or a usage profile (ramp(...), spike(...))"),
        (MEMORY_USAGE, None, "is not a quantity or a usage profile (ramp(...), spike(...))"),
        (CPU_USAGE, "-1", "must be greater than or equal to 0"),
        (MEMORY_USAGE, "ramp(100Mi, 1Gi)", "has 2 arguments; ramp(from, to, over) takes 3"),
        (CPU_USAGE, "spike(1, 10s)", "has 2 arguments; spike(base, peak, at, for) takes 4"),
        (
            MEMORY_USAGE,
            "wave(1Mi, 2Mi)",
            "uses an unknown profile 'wave' (use ramp(from, to, over) or spike(base, peak, at, for))",
        ),
        (MEMORY_USAGE, "ramp(1x, 1Gi, 60s)", "ramp argument from: '1x' is not a quantity"),
        (MEMORY_USAGE, "ramp(1Mi, -1Gi, 60s)", "ramp argument to: '-1Gi' must be greater than or equal to 0"),
        (
            MEMORY_USAGE,
            "ramp(1Mi, 1Gi, soon)",
            "ramp argument over: 'soon' is not a duration (use e.g. 30s, 5m, 1h30m)",
        ),
        (MEMORY_USAGE, "ramp(1Mi, 1Gi, -5s)", "ramp argument over: '-5s' is not a duration (use e.g. 30s, 5m, 1h30m)"),
        (CPU_USAGE, "spike(1, 2, inf, 1s)", "spike argument at: 'inf' is not a finite duration"),
        (CPU_USAGE, "spike(1, 2, 1s, )", "spike argument for: '' is not a duration"),
    ],
)
def test_bad_values_name_key_and_value(key, raw, message):
    with pytest.raises(AnnotationError) as e:
        parse_usage(key, raw)
    assert (e.value.key, e.value.value) == (key, raw)
    assert e.value.message == message


def test_a_non_usage_key_is_refused():
    with pytest.raises(AnnotationError, match="is not a usage annotation"):
        parse_usage("kubemu.io/run-seconds", "5")


def test_per_container_key_picks_the_resource():
    assert parse_usage(CPU_USAGE + ".web", "1").at(0) == 1000
    assert parse_usage(MEMORY_USAGE + ".web", "1").at(0) == 1


# ---- crossing a limit ------------------------------------------------------------------------


def test_crossing_a_ramp_is_exact_to_the_byte():
    p = mem("ramp(100Mi, 1Gi, 60s)")
    limit = 512 * MI
    t = crossing_time(p, limit)
    assert 26.75 < t < 26.76
    assert p.at(t) > limit
    assert p.at(t - 1e-6) <= limit


@pytest.mark.parametrize(
    "raw, limit, since, want",
    [
        ("300Mi", 256 * MI, 0, 0),
        ("300Mi", 300 * MI, 0, None),  # equal is not above
        ("300Mi", 256 * MI, 12.5, 12.5),
        ("spike(100Mi, 2Gi, 30s, 10s)", GI, 0, 30.0),
        ("spike(100Mi, 2Gi, 30s, 10s)", GI, 35, 35),
        ("spike(100Mi, 2Gi, 30s, 10s)", GI, 40, None),
        ("spike(100Mi, 2Gi, 30s, 10s)", 3 * GI, 0, None),
        ("ramp(0, 100, 100s)", 99, 0, 100.0),  # reached exactly at the end of the ramp
        ("ramp(0, 100, 100s)", 100, 0, None),
        ("ramp(0, 100, 100s)", 49, 70, 70),
        ("ramp(0, 100, 100s)", 49, 20, 50.0),
        ("ramp(200, 0, 10s)", 100, 0, 0),
        ("ramp(200, 0, 10s)", 100, 6, None),
    ],
)
def test_crossing_time(raw, limit, since, want):
    assert crossing_time(mem(raw), limit, since) == want


# ---- pods ------------------------------------------------------------------------------------


def pod(annotations, containers=("web",), sidecars=(), inits=()):
    spec = {"containers": [{"name": n} for n in containers]}
    spec["initContainers"] = [{"name": n, "restartPolicy": "Always"} for n in sidecars] + [{"name": n} for n in inits]
    return {"metadata": {"annotations": annotations}, "spec": spec}


def test_pod_without_annotations_has_no_usage():
    assert pod_usage(pod({})) == (None, None)
    assert pod_usage({"spec": {}}) == (None, None)


def test_single_container_pod_uses_the_annotated_amount():
    m, c = pod_usage(pod({MEMORY_USAGE: "ramp(100Mi, 1Gi, 60s)", CPU_USAGE: "250m"}))
    assert (m.at(60), c.at(0)) == (GI, 250)
    assert m.text == "ramp(100Mi, 1Gi, 60s)"


def test_the_pod_wide_value_applies_to_each_container_with_overrides():
    p = pod(
        {MEMORY_USAGE: "100Mi", MEMORY_USAGE + ".db": "spike(1Gi, 2Gi, 10s, 5s)", CPU_USAGE + ".log": "100m"},
        containers=("web", "db"),
        sidecars=("log",),
        inits=("setup",),
    )
    per = container_usage(p)
    assert list(per) == ["log", "web", "db"]  # init containers do not run alongside
    assert {n: (u.memory.at(12), u.cpu and u.cpu.at(0)) for n, u in per.items()} == {
        "log": (100 * MI, 100),
        "web": (100 * MI, None),
        "db": (2 * GI, None),
    }
    m, c = pod_usage(p)
    assert (m.at(0), m.at(12), m.at(15)) == (200 * MI + GI, 200 * MI + 2 * GI, 200 * MI + GI)
    assert m.next_change(0) == 10.0
    assert c.at(0) == 100


def test_sum_of_ramp_and_spike_is_piecewise_linear():
    s = total([mem("ramp(0, 100, 10s)"), mem("spike(0, 1000, 5s, 10s)")])
    assert [s.at(t) for t in (0, 5, 7.5, 10, 14, 15, 20)] == [0, 1050, 1075, 1100, 1100, 100, 100]
    assert [s.next_change(t) for t in (0, 5, 10, 15)] == [5.0, 10.0, 15.0, None]
    t = crossing_time(s, 1080)
    assert t == pytest.approx(8.1) and s.at(t) == 1081  # the float just above 8.1: already over
    assert crossing_time(s, 99, since=16) == 16


def test_bad_annotation_in_a_pod_raises():
    with pytest.raises(AnnotationError) as e:
        container_usage(pod({MEMORY_USAGE + ".web": "ramp(1)"}))
    assert e.value.key == MEMORY_USAGE + ".web"
