"""The family registry (``schedenv.family``, docs/families.md): the descriptors agree with the code they
name, every consumer reads them, and a new family is one folder plus one registry entry.

The toy family of ``tests/toyfamily`` is registered for the tests that need it and unregistered after;
no module outside that folder names it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import tomllib
import yaml

import baselines
import schedenv
from schedenv import family
from schedenv.cli import main
from schedenv.comparison import objective_metric
from schedenv.evaluation import evaluate
from schedenv.fastpath import evaluate_fast, run_fast, supports
from schedenv.leaderboard import suites
from schedenv.leaderboard.runner import run_leaderboard

ROOT = Path(__file__).resolve().parents[1]
BUILTIN = family.BUILTIN
IDS = [f.name for f in BUILTIN]

TOY = family.Family(
    name="toy",
    env_id="toy/Queue-v0",
    env="tests.toyfamily.env:ToyQueueEnv",
    paper="none (a test family)",
    paper_policy="toy-shorter",
    objective_metric="mean_response_time",
    metrics=("n_completed", "mean_response_time", "makespan"),
    baselines="tests.toyfamily.baselines",
    scenarios="tests.toyfamily.scenarios:scenarios",
)


@pytest.fixture
def toy() -> Iterator[family.Family]:
    family.register(TOY)
    try:
        yield TOY
    finally:
        family.unregister(TOY.name)


# ----------------------------------------------------------------------------- the built-in descriptors
def test_the_registry_holds_the_four_families_and_their_env_ids() -> None:
    assert [f.name for f in family.families()] == ["malleable", "dispatch", "moldable", "multiserver"]
    assert tuple(f.env_id for f in family.families()) == schedenv.ENV_IDS


@pytest.mark.parametrize("entry", BUILTIN, ids=IDS)
def test_gymnasium_builds_the_classes_the_descriptor_names(entry: family.Family) -> None:
    spec = gym.spec(entry.env_id)
    assert (spec.entry_point, spec.vector_entry_point) == (entry.env, entry.vector_env)
    assert isinstance(gym.make(entry.env_id).unwrapped, family.resolve(entry.env))
    assert entry.vector_env is not None
    vector = gym.make_vec(entry.env_id, num_envs=2)
    assert isinstance(vector, family.resolve(entry.vector_env))
    vector.close()


@pytest.mark.parametrize("entry", BUILTIN, ids=IDS)
def test_the_baselines_module_and_paper_policy_agree_with_the_descriptor(entry: family.Family) -> None:
    assert entry.baselines is not None
    module = family.resolve(entry.baselines)
    assert (entry.env_id, entry.paper_policy) == (module.ENV_ID, module.REFERENCE)
    assert baselines.reference(entry.env_id) == entry.paper_policy
    assert set(baselines.available(entry.env_id)) == set(module.POLICIES)


def test_every_baseline_belongs_to_a_registered_family() -> None:
    env_ids = {f.env_id for f in family.families()}
    assert {baselines.env_id_of(name) for name in baselines.available()} == env_ids


@pytest.mark.parametrize("entry", BUILTIN, ids=IDS)
def test_the_objective_and_metrics_are_those_an_episode_reports(entry: family.Family) -> None:
    assert objective_metric(entry.env_id, {}) == entry.objective_metric
    episode = evaluate(entry.env_id, entry.paper_policy, [0], keep_records=False).episodes[0]
    assert set(entry.metrics) <= set(episode.metrics)
    assert entry.objective_metric in entry.metrics


@pytest.mark.parametrize("entry", BUILTIN, ids=IDS)
def test_the_rl_configs_exist_and_train_the_family_with_their_algorithm(entry: family.Family) -> None:
    pytest.importorskip("torch", reason="the rl extra is not installed: pip install -e '.[rl]'")
    from agents.train import CONFIG_DIR, family_config

    for algo, name in entry.rl_configs.items():
        config = yaml.safe_load((CONFIG_DIR / name).read_text())
        assert (config["env_id"], config["algo"]) == (entry.env_id, algo)
        assert family_config(entry.env_id, algo) == CONFIG_DIR / name
    assert family_config(entry.env_id, "no-such-algo") is None


def test_every_shipped_config_is_a_registered_familys() -> None:
    pytest.importorskip("torch", reason="the rl extra is not installed: pip install -e '.[rl]'")
    from agents.train import CONFIG_DIR

    env_ids = {f.env_id for f in family.families()}
    for path in CONFIG_DIR.glob("*.yaml"):
        assert yaml.safe_load(path.read_text())["env_id"] in env_ids, path.name


@pytest.mark.parametrize("entry", BUILTIN, ids=IDS)
def test_the_fast_path_and_scenarios_resolve(entry: family.Family) -> None:
    if entry.fast_path is not None:
        module = family.resolve(entry.fast_path)
        assert callable(module.supports) and callable(module.run)
        assert {"emulate_env", "chunk", "keep_completions"} >= module.OPTIONS
        assert supports(entry.env_id, entry.paper_policy)
    assert entry.scenarios is not None
    assert suites.FAMILIES[entry.name] == (entry.env_id, family.resolve(entry.scenarios))
    assert {s.env_id for s in suites.suite("quick", [entry.name])} == {entry.env_id}


def test_the_multiserver_family_has_no_evaluate_equal_fast_path() -> None:
    """Its own ``run_fast`` serves every job, outside the env's window (docs/families.md)."""
    assert family.get("multiserver").fast_path is None
    assert not supports("schedenv/MultiserverJob-v0", "serverfilling-srpt")


def test_the_import_contracts_cover_exactly_the_registered_family_folders() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layout = next(c for c in contracts if c["id"] == "family-layout")
    assert set(layout["containers"]) == {f"schedenv.{f.name}" for f in BUILTIN}


def test_the_docs_family_table_is_the_registry() -> None:
    rows = [
        "| family | env id | paper | paper policy | objective | fast path | RL configs |",
        "|---|---|---|---|---|---|---|",
    ] + [
        f"| {f.name} | `{f.env_id}` | {f.paper} | `{f.paper_policy}` | `{f.objective_metric}` | "
        f"{'yes' if f.fast_path else 'no'} | {', '.join(f'`{n}`' for n in f.rl_configs.values())} |"
        for f in family.families()
    ]
    assert "\n".join(rows) in (ROOT / "docs" / "families.md").read_text()


# ----------------------------------------------------------------------------- registry errors
def test_a_second_family_with_a_taken_name_or_env_id_is_refused(toy: family.Family) -> None:
    with pytest.raises(ValueError, match="name='toy' is already registered"):
        family.register(toy)
    with pytest.raises(ValueError, match="env_id='toy/Queue-v0' already belongs to the family 'toy'"):
        family.register(family.Family(**{**toy.__dict__, "name": "toy2"}))


def test_unknown_names_and_env_ids_suggest_near_matches() -> None:
    with pytest.raises(ValueError, match=r"unknown family 'maleable'.*malleable"):
        family.get("maleable")
    with pytest.raises(ValueError, match=r"unknown env id 'schedenv/Malleable-v1'.*Malleable-v0"):
        family.of_env("schedenv/Malleable-v1")


# ----------------------------------------------------------------------------- a new family: one entry
def test_the_toy_family_is_listed_by_the_cli(toy: family.Family, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "toy/Queue-v0\n  baselines (* = paper policy): toy-fcfs, toy-shorter*\n" in out
    assert "  family toy: none (a test family); objective mean_response_time\n" in out


def test_the_toy_family_is_evaluated_without_a_fast_path(toy: family.Family) -> None:
    """Jobs 3, 1, 2: FCFS completes at 3, 4, 6 (mean 13/3); the shorter-of-two rule at 1, 3, 6 (10/3)."""
    assert not supports(toy.env_id, "toy-shorter")
    with pytest.raises(ValueError, match="no compiled path"):
        run_fast(toy.env_id, "toy-shorter", 0)
    for name, mean in (("toy-fcfs", 13 / 3), ("toy-shorter", 10 / 3)):
        result = evaluate_fast(toy.env_id, name, [0], jobs=[3.0, 1.0, 2.0])
        episode = result.episodes[0]
        assert episode.metrics == {"n_completed": 3.0, "mean_response_time": mean, "makespan": 6.0}
        assert episode.episode_return == -3 * mean
        assert result.episodes == evaluate(toy.env_id, name, [0], keep_records=False, jobs=[3.0, 1.0, 2.0]).episodes


def test_the_toy_family_runs_batched_through_gymnasium(toy: family.Family) -> None:
    vector = gym.make_vec(toy.env_id, num_envs=2, jobs=[3.0, 1.0])
    observations, _ = vector.reset(seed=0)
    np.testing.assert_array_equal(observations, [[3.0, 1.0], [3.0, 1.0]])
    _, rewards, terminated, _, _ = vector.step(np.array([0, 1]))
    np.testing.assert_array_equal(rewards, [-6.0, -2.0])
    assert not terminated.any()
    vector.close()


def test_the_toy_family_takes_part_in_the_leaderboard(toy: family.Family, tmp_path: Path) -> None:
    assert "toy" in suites.available_families()
    chosen = suites.suite("quick", ["toy"])
    assert [s.label for s in chosen] == ["toy/six-jobs"]
    result = run_leaderboard("quick", out=tmp_path, scenario_list=chosen, workers=1, progress=False)
    means = {row["contender"]: row["mean"] for row in result.rows}
    for name in ("toy-fcfs", "toy-shorter"):
        expected = evaluate(toy.env_id, name, range(4), keep_records=False, n_jobs=6)
        assert means[name] == expected.summary["mean_response_time"].mean
    assert means["toy-shorter"] <= means["toy-fcfs"]
    assert all(check["holds"] for check in result.claims)


def test_unregistering_the_toy_family_removes_it_everywhere() -> None:
    family.register(TOY)
    family.unregister(TOY.name)
    assert TOY.env_id not in gym.registry
    assert "toy" not in suites.FAMILIES
    assert not any(name.startswith("toy-") for name in baselines.available())


# ----------------------------------------------------------------------------- one vocabulary
@pytest.mark.parametrize(
    ("env_id", "old", "kwargs"),
    [
        ("schedenv/Malleable-v0", "scenario_features", {}),
        ("schedenv/MultiserverJob-v0", "scenario_parameters", {}),
        ("schedenv/Moldable-v0", "params", {"n_jobs": 8}),
    ],
)
def test_old_names_of_the_scenario_parameters_warn_and_give_the_same_values(
    env_id: str, old: str, kwargs: dict[str, object]
) -> None:
    """docs/glossary.md: one name, ``scenario_params``; the old public names are deprecated aliases."""
    env = gym.make(env_id, observe_params=True, **kwargs)
    observation, _ = env.reset(seed=1)
    inner = env.unwrapped
    expected = np.asarray(inner.scenario_params, dtype=np.float32)
    np.testing.assert_array_equal(observation[-expected.size :], expected)
    with pytest.warns(DeprecationWarning, match=f"{old}.* is deprecated; use .*scenario_params"):
        value = getattr(inner, old)
        value = value() if callable(value) else value
    np.testing.assert_array_equal(value, inner.scenario_params)
    env.close()


def test_the_toy_family_is_scored_by_schedenv_evaluate(toy: family.Family, capsys: pytest.CaptureFixture[str]) -> None:
    arguments = ["--env", toy.env_id, "--env-kwargs", '{"jobs": [3, 1, 2]}', "--episodes", "2", "--json"]
    assert main(["evaluate", *arguments]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["metric"], document["reference"]) == ("mean_response_time", "toy-shorter")
    means = {row["contender"]: row["mean"] for row in document["rows"]}
    assert means == pytest.approx({"toy-shorter": 10 / 3, "toy-fcfs": 13 / 3}, rel=1e-12)


def test_unregister_leaves_a_gymnasium_id_that_register_did_not_add() -> None:
    gym.register(id=TOY.env_id, entry_point=TOY.env)
    try:
        family.register(TOY)
        family.unregister(TOY.name)
        assert TOY.env_id in gym.registry and "toy" not in suites.FAMILIES
    finally:
        gym.registry.pop(TOY.env_id, None)
