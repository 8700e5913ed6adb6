"""The suites are well formed for every registered family: scenarios build, claims name real policies."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import baselines
import schedenv
from schedenv.leaderboard import suites
from schedenv.leaderboard.scenario import ALL

SCENARIOS = [(name, scenario) for name in suites.SUITES for scenario in suites.suite(name)]


def test_every_available_family_is_in_every_suite_and_labels_are_unique() -> None:
    for name in suites.SUITES:
        scenarios = suites.suite(name)
        assert {s.family for s in scenarios} == set(suites.available_families())
        assert len({s.label for s in scenarios}) == len(scenarios)
        random = [s for s in scenarios if "trace" not in s.env_kwargs]
        assert all(len(set(s.seeds)) == len(s.seeds) > 1 for s in random), "intervals need two seeds or more"


@pytest.mark.parametrize(("suite_name", "scenario"), SCENARIOS, ids=[f"{n}:{s.label}" for n, s in SCENARIOS])
def test_claims_and_exclusions_name_the_familys_policies(suite_name: str, scenario: suites.Scenario) -> None:
    known = set(baselines.available(scenario.env_id))
    for claim in scenario.claims:
        assert claim.better in known
        assert set(claim.worse) - {ALL} <= known, claim
    assert set(scenario.exclude) <= known
    assert scenario.metric.startswith("mean_")
    assert json.loads(scenario.kwargs_json()) == dict(scenario.env_kwargs)


@pytest.mark.parametrize(("suite_name", "scenario"), SCENARIOS, ids=[f"{n}:{s.label}" for n, s in SCENARIOS])
def test_scenarios_build_with_the_envs_documented_arguments(suite_name: str, scenario: suites.Scenario) -> None:
    env = gym.make(scenario.env_id, **scenario.build_kwargs())
    try:
        env.reset(seed=scenario.seeds[0])
    finally:
        env.close()


def test_a_family_whose_env_is_not_registered_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    for env_id in schedenv.ENV_IDS:
        if env_id != "schedenv/Malleable-v0":
            monkeypatch.delitem(gym.registry, env_id)
    assert suites.available_families() == ["malleable"]
    assert {s.family for s in suites.suite("quick")} == {"malleable"}


def test_unknown_suite_or_family_is_an_error() -> None:
    with pytest.raises(ValueError, match="suite"):
        suites.suite("fast")
    with pytest.raises(ValueError, match="family"):
        suites.suite("quick", families=["malleabel"])
