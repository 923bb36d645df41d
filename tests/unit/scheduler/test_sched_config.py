"""KubeSchedulerConfiguration -> SchedulerConfig: merging with defaults, weights, errors."""

from __future__ import annotations

import pytest

from cluster.scheduler import Scheduler
from cluster.scheduler.config import ConfigError, build_config
from cluster.scheduler.plugins import DEFAULT_PLUGINS


def plugin_map(config, profile=0):
    return {s.name: s for s in config.profiles[profile].plugins}


def framework(config, name="default-scheduler"):
    return Scheduler(config).frameworks[name]


def test_empty_config_is_the_default_profile():
    c = build_config(None)
    assert [p.scheduler_name for p in c.profiles] == ["default-scheduler"]
    assert [s.name for s in c.profiles[0].plugins] == [s.name for s in DEFAULT_PLUGINS]
    assert (c.pod_initial_backoff_seconds, c.pod_max_backoff_seconds, c.percentage_of_nodes_to_score) == (1, 10, 0)


def test_top_level_fields():
    c = build_config({"percentageOfNodesToScore": 30, "podInitialBackoffSeconds": 2, "podMaxBackoffSeconds": 20})
    assert (c.percentage_of_nodes_to_score, c.pod_initial_backoff_seconds, c.pod_max_backoff_seconds) == (30, 2, 20)


def test_score_weight_override_and_plugin_args():
    c = build_config(
        {
            "profiles": [
                {
                    "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}},
                    "pluginConfig": [
                        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
                    ],
                }
            ]
        }
    )
    spec = plugin_map(c)["NodeResourcesFit"]
    assert spec.weight == 5 and spec.args == {"scoringStrategy": {"type": "MostAllocated"}}
    fwk = framework(c)
    assert [(p.NAME, w) for p, w, _ in fwk.score_plugins if p.NAME == "NodeResourcesFit"] == [("NodeResourcesFit", 5)]
    assert fwk.plugins["NodeResourcesFit"].strategy == "MostAllocated"


def test_disable_at_one_point_keeps_the_others():
    c = build_config({"profiles": [{"plugins": {"score": {"disabled": [{"name": "NodeResourcesFit"}]}}}]})
    fwk = framework(c)
    assert "NodeResourcesFit" in [p.NAME for p in fwk.filter_plugins]
    assert "NodeResourcesFit" not in [p.NAME for p, _, _ in fwk.score_plugins]


def test_disable_all_scores_with_star():
    c = build_config({"profiles": [{"plugins": {"score": {"disabled": [{"name": "*"}]}}}]})
    assert framework(c).score_plugins == []


def test_multipoint_disable_removes_the_plugin():
    c = build_config({"profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}}]})
    assert "NodeResourcesFit" not in plugin_map(c)


def test_two_profiles():
    c = build_config({"profiles": [{}, {"schedulerName": "batch", "percentageOfNodesToScore": 20}]})
    s = Scheduler(c)
    assert sorted(s.frameworks) == ["batch", "default-scheduler"]
    assert s.frameworks["batch"].percentage_of_nodes_to_score == 20


@pytest.mark.parametrize(
    "raw,match",
    [
        ([], r"^spec.scheduler: \[\] must be a mapping"),
        ({"bogus": 1}, r"^spec.scheduler.bogus: unknown field"),
        (
            {"percentageOfNodesToScore": 101},
            r"^spec.scheduler.percentageOfNodesToScore: 101 must be an integer between 0 and 100",
        ),
        ({"podInitialBackoffSeconds": 0}, r"^spec.scheduler.podInitialBackoffSeconds: 0 must be an integer at least 1"),
        (
            {"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2},
            r"podMaxBackoffSeconds: 2 must be >= podInitialBackoffSeconds",
        ),
        ({"profiles": "x"}, r"^spec.scheduler.profiles: \"x\" must be a list"),
        (
            {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}}]},
            r"^spec.scheduler.profiles\[0\].plugins.filter.enabled\[0\].name: \"Nope\" is not a known plugin",
        ),
        ({"profiles": [{"plugins": {"scoring": {}}}]}, r"^spec.scheduler.profiles\[0\].plugins.scoring: unknown field"),
        ({"profiles": [{"plugins": {"score": {"enabled": [{"name": "*"}]}}}]}, r"can only be disabled"),
        (
            {"profiles": [{"plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 101}]}}}]},
            r"weight: 101 must be an integer between 0 and 100",
        ),
        (
            {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"nope": 1}}]}]},
            r"^spec.scheduler: NodeResourcesFit: unknown arguments \['nope'\]",
        ),
        (
            {"profiles": [{"pluginConfig": [{"name": "Nope"}]}]},
            r"pluginConfig\[0\].name: \"Nope\" is not a known plugin",
        ),
        (
            {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit"}, {"name": "NodeResourcesFit"}]}]},
            r"pluginConfig\[1\].name: \"NodeResourcesFit\" is configured twice",
        ),
        ({"profiles": [{}, {}]}, r"schedulerName 'default-scheduler' is used twice"),
        ({"profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "*"}]}}}]}, r"no QueueSort plugin"),
    ],
)
def test_bad_configs(raw, match):
    with pytest.raises(ConfigError, match=match):
        build_config(raw)


def weights(config):
    return {p.NAME: w for p, w, _ in framework(config).score_plugins}


def filters(config):
    return [p.NAME for p in framework(config).filter_plugins]


@pytest.mark.parametrize(
    "plugins,expected",
    [
        (
            {},
            {
                "TaintToleration": 3,
                "NodeAffinity": 2,
                "NodeResourcesFit": 1,
                "PodTopologySpread": 2,
                "InterPodAffinity": 2,
                "NodeResourcesBalancedAllocation": 1,
                "ImageLocality": 1,
            },
        ),
        # Listed under score without a weight: 1, not the default 3.
        ({"score": {"enabled": [{"name": "TaintToleration"}]}}, {"TaintToleration": 1}),
        ({"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 5}]}}, {"ImageLocality": 5}),
        (
            {
                "multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 5}]},
                "score": {"enabled": [{"name": "ImageLocality"}]},
            },
            {"ImageLocality": 1},
        ),
        ({"score": {"enabled": [{"name": "NodeAffinity", "weight": 7}]}}, {"NodeAffinity": 7}),
    ],
)
def test_score_weights(plugins, expected):
    got = weights(build_config({"profiles": [{"plugins": plugins}]}))
    assert {k: got[k] for k in expected} == expected


def test_default_filter_order():
    assert filters(build_config(None)) == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
    ]


def test_point_list_with_star_is_taken_as_written():
    c = build_config(
        {
            "profiles": [
                {
                    "plugins": {
                        "filter": {
                            "disabled": [{"name": "*"}],
                            "enabled": [{"name": "NodeResourcesFit"}, {"name": "TaintToleration"}],
                        }
                    }
                }
            ]
        }
    )
    assert filters(c) == ["NodeResourcesFit", "TaintToleration"]


def test_relisted_default_runs_first_at_its_point():
    c = build_config({"profiles": [{"plugins": {"filter": {"enabled": [{"name": "InterPodAffinity"}]}}}]})
    assert filters(c)[0] == "InterPodAffinity" and len(filters(c)) == 9


def test_plugin_enabled_at_a_point_it_does_not_implement():
    with pytest.raises(
        ConfigError, match=r"plugins.filter.enabled\[0\].name: \"ImageLocality\" is not a filter plugin"
    ):
        build_config({"profiles": [{"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}}]})


def test_args_for_a_disabled_plugin_are_ignored():
    c = build_config(
        {
            "profiles": [
                {
                    "plugins": {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}},
                    "pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}],
                }
            ]
        }
    )
    assert "PodTopologySpread" not in framework(c).plugins
