"""The ``schedenv`` command (``schedenv.cli.main``): listing, evaluation tables, error messages."""

from __future__ import annotations

import json
import math

import pytest

import baselines
from schedenv.cli import main, parse_env_kwargs
from schedenv.evaluation import evaluate
from schedenv.workloads import Pareto

ENV_ID = "schedenv/Malleable-v0"


def test_list_names_the_malleable_env_and_its_baselines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert ENV_ID in out
    block = out[out.index(ENV_ID) :].splitlines()[1]
    assert "hesrpt*" in block  # the paper policy is starred
    for name in baselines.available(ENV_ID):
        assert name in block
    assert "equi" in block
    assert "reproductions:" in out


def _evaluate_json(capsys: pytest.CaptureFixture[str], env_kwargs: str, episodes: int = 3) -> dict:
    code = main(["evaluate", "--env", ENV_ID, "--env-kwargs", env_kwargs, "--episodes", str(episodes), "--json"])
    assert code == 0
    return json.loads(capsys.readouterr().out)  # --json: stdout is exactly one JSON document


def test_evaluate_json_rows_and_optimality_of_hesrpt(capsys: pytest.CaptureFixture[str]) -> None:
    table = _evaluate_json(capsys, '{"n_jobs": 6}')
    assert table["env_id"] == ENV_ID
    assert table["reference"] == "hesrpt"
    assert table["metric"] == "mean_slowdown"  # the env's default objective
    rows = {row["contender"]: row for row in table["rows"]}
    assert set(rows) == set(baselines.available(ENV_ID))
    assert table["rows"][0]["contender"] == "hesrpt"  # the reference comes first
    reference_mean = rows["hesrpt"]["mean"]
    for row in table["rows"]:
        assert set(row) == {"contender", "env_id", "mean", "ci95", "reference", "reference_mean", "ratio", "seeds"}
        # heSRPT is optimal on every seed, not only on average: no seed below it (3 seeds: 6 jobs at time 0)
        assert row["seeds"]["below"] == 0 and sum(row["seeds"].values()) == 3
        assert row["env_id"] == ENV_ID
        assert row["reference"] == "hesrpt"
        assert row["reference_mean"] == reference_mean
        assert math.isfinite(row["ci95"]) and row["ci95"] >= 0
        assert row["ratio"] == pytest.approx(row["mean"] / reference_mean, rel=1e-12)
        # heSRPT is the optimal offline policy for mean slowdown (Theorem 5): nobody beats it.
        assert row["ratio"] >= 1 - 1e-9
    assert rows["hesrpt"]["ratio"] == 1.0 and rows["hesrpt"]["seeds"] == {"below": 0, "equal": 3, "above": 0}
    assert rows["equi"]["ratio"] > 1.0 and rows["equi"]["seeds"]["above"] == 3


def test_evaluate_flow_time_metric_and_contender_subset(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["evaluate", "--env", ENV_ID, "--env-kwargs", '{"n_jobs": 4, "objective": "flow_time"}']
    assert main([*argv, "--episodes", "2", "--contenders", "equi", "--seed", "10", "--json"]) == 0
    captured = capsys.readouterr()
    assert "seeds 10..11" in captured.err  # the table goes to stderr with --json
    table = json.loads(captured.out)
    assert table["metric"] == "mean_response_time"
    assert [row["contender"] for row in table["rows"]] == ["hesrpt", "equi"]
    assert table["rows"][1]["ratio"] > 1.0


def test_dispatch_defaults_list_size_aware_baselines_as_not_applicable(capsys: pytest.CaptureFixture[str]) -> None:
    # Dispatch-v0 hides job sizes by default: LWR and SITA-E cannot act, which is not an error
    assert main(["evaluate", "--env", "schedenv/Dispatch-v0", "--episodes", "2", "--json"]) == 0
    captured = capsys.readouterr()
    table = json.loads(captured.out)
    assert set(table["skipped_baselines"]) == {"least-work-remaining", "sita-e"}
    assert all("size_known=True" in reason for reason in table["skipped_baselines"].values())
    listed = [row["contender"] for row in table["rows"]]
    assert listed[0] == "tags-slowdown" and "round-robin" in listed and "sita-e" not in listed
    assert set(listed) | set(table["skipped_baselines"]) == set(baselines.available("schedenv/Dispatch-v0"))
    line = next(line for line in captured.err.splitlines() if line.startswith("sita-e"))
    assert "n/a" in line and "needs job sizes" in line


def test_pareto_spec_in_env_kwargs(capsys: pytest.CaptureFixture[str]) -> None:
    table = _evaluate_json(capsys, '{"n_jobs": 5, "size_dist": {"type": "Pareto", "alpha": 0.8}}', episodes=2)
    rows = {row["contender"]: row for row in table["rows"]}
    assert rows["hesrpt"]["ratio"] == 1.0
    assert all(row["ratio"] >= 1 - 1e-9 for row in table["rows"])
    direct = evaluate(ENV_ID, "hesrpt", [0, 1], n_jobs=5, size_dist=Pareto(alpha=0.8))
    assert rows["hesrpt"]["mean"] == pytest.approx(direct.summary["mean_slowdown"].mean, rel=1e-12)


def _user_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``argv``; assert exit status 2 and exactly one line on stderr, and return that line."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("schedenv: error: ")
    assert "Traceback" not in err
    return err


def test_unknown_env_id_suggests_the_near_match(capsys: pytest.CaptureFixture[str]) -> None:
    message = _user_error(capsys, ["evaluate", "--env", "schedenv/Maleable-v0"])
    assert "unknown env id 'schedenv/Maleable-v0'" in message
    assert "did you mean 'schedenv/Malleable-v0'" in message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{n_jobs: 6}", "--env-kwargs is not valid JSON"),
        ('{"n_jobs": 6', "--env-kwargs is not valid JSON"),
        ("[1, 2]", "--env-kwargs must be a JSON object, got list"),
    ],
)
def test_invalid_env_kwargs_exit_with_a_clear_message(
    capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    assert message in _user_error(capsys, ["evaluate", "--env", ENV_ID, "--env-kwargs", text])


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["evaluate", "--env", ENV_ID, "--env-kwargs", '{"n_job": 8}'], ["n_job", "did you mean 'n_jobs'", "accepts"]),
        (["evaluate", "--env", ENV_ID, "--seed", "-1"], ["--seed=-1", ">= 0"]),
        (["evaluate", "--env", ENV_ID, "--episodes", "0"], ["--episodes=0", ">= 1"]),
        (["evaluate", "--env", ENV_ID, "--episodes", "1", "--metric", "nope"], ["--metric 'nope'", "mean_slowdown"]),
        (["evaluate"], ["--env is required"]),
        (["leaderboard", "--out", "/proc/schedenv-test", "--no-progress"], ["--out '/proc/schedenv-test'"]),
        (["leaderboard", "--workers", "0", "--no-progress", "--out", "{tmp}/lb"], ["--workers=0"]),
        (["train", "--env", ENV_ID, "--out", "/proc/schedenv-test"], ["--out '/proc/schedenv-test'"]),
        (["evaluate", "--agent", "{tmp}/missing"], ["no such file or folder"]),
    ],
)
def test_user_errors_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: object, argv: list[str], names: list[str]
) -> None:
    message = _user_error(capsys, [arg.replace("{tmp}", str(tmp_path)) for arg in argv])
    for name in names:
        assert name in message


@pytest.mark.parametrize("flag", ["leaderboard", "train"])
def test_out_under_a_file_is_a_user_error(capsys: pytest.CaptureFixture[str], tmp_path: object, flag: str) -> None:
    blocker = f"{tmp_path}/a-file"
    with open(blocker, "w") as handle:
        handle.write("x")
    argv = ["leaderboard", "--no-progress"] if flag == "leaderboard" else ["train", "--env", ENV_ID]
    message = _user_error(capsys, [*argv, "--out", f"{blocker}/run"])
    assert f"--out '{blocker}/run' cannot be created: Not a directory" in message


def test_a_bug_is_labelled_internal_with_its_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import schedenv.cli

    def broken(*_: object, **__: object) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(schedenv.cli, "objective_metric", broken)
    assert main(["evaluate", "--env", ENV_ID, "--episodes", "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("schedenv: internal error (a bug; please report): KeyError: 'boom'")
    assert "Traceback (most recent call last)" in err


def test_bad_spec_in_env_kwargs_is_reported_not_raised(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["evaluate", "--env", ENV_ID, "--env-kwargs", '{"size_dist": {"type": "Pareto", "alfa": 0.8}}'])
    assert code == 2
    err = capsys.readouterr().err
    assert "schedenv: error:" in err
    assert "did you mean 'alpha'" in err


def test_bad_env_argument_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["evaluate", "--env", ENV_ID, "--env-kwargs", '{"n_jobs": 0}', "--episodes", "1"])
    assert code == 2
    assert "n_jobs=0" in capsys.readouterr().err


def test_parse_env_kwargs_builds_objects_and_keeps_plain_values() -> None:
    kwargs = parse_env_kwargs('{"n_jobs": 6, "speedup": 0.5, "size_dist": {"type": "Pareto", "alpha": 0.8}}')
    assert kwargs["n_jobs"] == 6
    assert kwargs["speedup"] == 0.5
    assert isinstance(kwargs["size_dist"], Pareto)
    assert kwargs["size_dist"].alpha == 0.8
    assert parse_env_kwargs(None) == {}
    assert parse_env_kwargs("") == {}


def test_version_comes_from_the_package_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"schedenv {metadata.version('schedenv')}\n"


def test_big_results_have_short_reprs_with_their_key_numbers() -> None:
    from schedenv.fastpath import run_fast

    result = evaluate(ENV_ID, "hesrpt", range(20), n_jobs=50)
    text = repr(result)
    assert len(text) < 300 and len(repr(result.episodes[0].records)) > 2000  # 50 job records each, not dumped
    assert "contender='hesrpt'" in text and "episodes=20" in text and "seeds=0..19" in text
    assert f"mean_slowdown={result.summary['mean_slowdown']}" in text
    episode = repr(result.episodes[3])
    assert len(episode) < 200 and "seed=3" in episode and "records=50" in episode
    assert f"mean_slowdown={result.episodes[3].metrics['mean_slowdown']:.6g}" in episode
    run = run_fast("schedenv/Dispatch-v0", "tags-slowdown", 0, n_arrivals=2000, keep_completions=True)
    text = repr(run)
    assert text.startswith("DispatchFastRun(seed=0,") and len(text) < 250 and "n_events=" in text
    assert f"mean_slowdown={run.metrics['mean_slowdown']:.6g}" in text
