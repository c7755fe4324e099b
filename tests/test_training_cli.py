"""Training CLIs on bad input: one line naming the argument, exit 2, no traceback, nothing on disk.

Also: evaluation results independent of workers and backend, the training
progress line, and the wall budget shared by the warm start and PPO.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as hs  # noqa: E402

from agents.nets.checkpoint import model_zip_problem  # noqa: E402
from training import (
    evaluate,
    gym_quickstart,
    tournament,  # noqa: E402
)
from training import train as train_mod  # noqa: E402
from training.common import budgets  # noqa: E402
from training.common.cli import CliError, run_cli  # noqa: E402
from training.matches import evaluate as evaluation  # noqa: E402
from training.ppo import config as C  # noqa: E402
from training.ppo.loop import train  # noqa: E402
from training.speed import policies as speed_policies

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "agents" / "shipped" / "ppo_2p.zip"
CONFIG = ROOT / "configs" / "ppo_2p.yaml"


def _bad_files(tmp: Path) -> dict[str, Path]:
    """Broken inputs: binary/empty configs, a truncated zip, a zip with no model, a model for other observations."""
    files = {
        "binary.yaml": b"\xff\xfe\x00\x01\x89PNG",
        "empty.yaml": b"",
        "nul.yaml": b"players: 2\x00",
        "truncated.zip": MODEL.read_bytes()[:20_000],
        "junk.zip": b"PK\x03\x04 not really a zip",
    }
    for name, data in files.items():
        (tmp / name).write_bytes(data)
    with zipfile.ZipFile(tmp / "nomodel.zip", "w") as z:
        z.writestr("hello.txt", "hi")
    with zipfile.ZipFile(MODEL) as src, zipfile.ZipFile(tmp / "other_obs.zip", "w") as dst:
        for item in src.namelist():
            data = src.read(item)
            if item == "data":
                meta = json.loads(data)
                meta["observation_space"]["_shape"] = [100]
                data = json.dumps(meta).encode()
            dst.writestr(item, data)
    (tmp / "ok.yaml").write_text(f"output_dir: {tmp / 'run'}\n")
    return {p.name: p for p in tmp.iterdir()}


def _run(main, argv, capsys) -> tuple[int, str]:
    try:
        rc = run_cli(main, argv, prog="prog")
    except SystemExit as exc:  # argparse's own usage errors
        rc = exc.code
    return rc, capsys.readouterr().err


TRAIN = train_mod.main
EVAL = evaluate.main
CASES = [
    (EVAL, ["greedy", "--games", "0"], "--games must be >= 1, got 0"),
    (EVAL, ["greedy", "--games", "-4"], "--games must be >= 1, got -4"),
    (EVAL, ["greedy", "--workers", "0"], "--workers must be an integer >= 1, got 0"),
    (EVAL, ["greedy", "--seed", "-5"], "--seed must be >= 0, got -5"),
    (EVAL, ["greedy", "--chunk-games", "0"], "--chunk-games must be >= 1, got 0"),
    (EVAL, ["greedy", "--players", "7"], "--players must be 2, 3 or 4, got 7"),
    (EVAL, ["ppo:nowhere.zip"], "candidate: model file not found"),
    (EVAL, ["greedy", "--players", "3", "3"], "--players lists a player count twice: [3, 3]"),
    (EVAL, ["random", "--modules", "town"], "--modules: unknown module 'town'"),
    (EVAL, ["random", "--modules", "orient", "orient"], "--modules lists a module twice"),
    (
        EVAL,
        [str(MODEL), "--players", "2", "3"],
        f"candidate '{MODEL}' cannot play 3p base: PPO model 'ppo_2p' was trained for 2 players, base game",
    ),
    (
        EVAL,
        ["random", "--opponents", f"ppo:{MODEL}", "--modules", "cities"],
        f"--opponents: none can play 2p cities (agent 'ppo:{MODEL}' plays only the base game",
    ),
    (EVAL, ["greedy", "--opponents", "grredy"], "unknown agent spec 'grredy'"),
    (EVAL, ["grredy"], "unknown agent spec 'grredy'"),
    (EVAL, ["{truncated.zip}"], "is not a zip file"),
    (EVAL, ["{junk.zip}"], "is not a zip file"),
    (EVAL, ["{nomodel.zip}"], "holds no saved model"),
    (EVAL, ["{other_obs.zip}"], "expects observations of shape [100]"),
    (EVAL, ["missing.zip"], "model file not found"),
    (EVAL, ["greedy", "--address", "auto"], "--address is only used with --backend ray"),
    (EVAL, ["greedy", "--json", "nodir/out.json"], "--json 'nodir/out.json'"),
    (TRAIN, ["--config", "{binary.yaml}"], "not a UTF-8 text file"),
    (TRAIN, ["--config", "{nul.yaml}"], "binary file"),
    (TRAIN, ["--config", "{empty.yaml}"], "the config is empty"),
    (TRAIN, ["--config", "missing.yaml"], "config file not found"),
    (TRAIN, ["--config", "{ok.yaml}", "--set", "n_envs=100000"], "n_envs: must be <= 4096, got 100000"),
    (TRAIN, ["--config", "{ok.yaml}", "--set", "n_envs=0"], "n_envs: must be >= 1, got 0"),
    (TRAIN, ["--config", "{ok.yaml}", "--set", "seed=-1"], "seed: must be >= 0"),
    (TRAIN, ["--config", "{ok.yaml}", "--set", "n_envs=4096", "--set", "ppo.n_steps=512"], "ppo.n_steps:"),
    (TRAIN, ["--config", "{ok.yaml}", "--resume", "{truncated.zip}"], "--resume: "),
    (TRAIN, ["--config", "{ok.yaml}", "--resume", "{nomodel.zip}"], "--resume: "),
    (TRAIN, ["--config", "{ok.yaml}", "--resume", "{other_obs.zip}"], "expects observations of shape"),
    (TRAIN, ["--config", "{ok.yaml}", "--resume", "nowhere.zip"], "--resume: model file not found"),
    (TRAIN, ["--config", "{ok.yaml}", "--set", "init_from={truncated.zip}"], "init_from: "),
    (TRAIN, ["--config", "{ok.yaml}", "--set", "init_from={other_obs.zip}"], "init_from: "),
    (TRAIN, ["--config", "{ok.yaml}", "--set", "init_from={nomodel.zip}"], "init_from: "),
    (speed_policies.main, ["--games", "0"], "--games must be >= 1"),
    (speed_policies.main, ["--states", "0"], "--states must be >= 1"),
    (speed_policies.main, ["--workers", "-1"], "--workers must be an integer >= 1"),
    (speed_policies.main, ["--seed", "-2"], "--seed must be >= 0"),
    (speed_policies.main, ["--agents", "nonsense"], "unknown agent spec 'nonsense'"),
    (speed_policies.main, ["--players", "5"], "--players must be 2, 3 or 4, got 5"),
    (gym_quickstart.main, ["--players", "5"], "--players must be 2, 3 or 4, got 5"),
    (gym_quickstart.main, ["--modules", "harbours"], "--modules: "),
    (speed_policies.main, ["--players", "3", "3"], "--players lists a player count twice"),
    (speed_policies.main, ["--modules", "harbours"], "--modules: "),
    (speed_policies.main, ["--modules", "orient", "orient"], "--modules lists a module twice"),
    (tournament.main, ["--agents", "random", "bogus:x=1"], "unknown agent spec 'bogus"),
    (tournament.main, ["--agents", "random", "mcts:sims=abc"], "sims='abc'"),
    (
        tournament.main,
        ["--agents", "random", "greedy", "--players", "7"],
        "--players must be 2, 3 or 4, got 7",
    ),
    (tournament.main, ["--agents", "random", "greedy", "--players", "3", "3"], "lists a player count twice"),
    (tournament.main, ["--agents", "random", "greedy", "--modules", "town"], "unknown module 'town'"),
    (
        tournament.main,
        ["--agents", "random", f"ppo:{MODEL}", "--players", "3", "4"],
        "no configuration has two agents that can play it (ppo:",
    ),
]


@pytest.mark.parametrize(
    ("main", "argv", "match"),
    CASES,
    ids=[f"{m.__module__.split('.')[-1]}:{' '.join(a)}" for m, a, _ in CASES],
)
def test_bad_inputs_one_line_exit_2_nothing_created(main, argv, match, tmp_path, monkeypatch, capsys) -> None:
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    files = _bad_files(inputs)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for name, path in files.items():
        argv = [a.replace("{" + name + "}", str(path)) for a in argv]
    rc, err = _run(main, [*argv, "--no-progress"] if main is tournament.main else argv, capsys)
    assert rc == 2
    assert "Traceback" not in err and err.count("\n") == 1 and err.startswith("prog: error: "), err
    assert match in err, err
    assert not list(work.iterdir()) and not (inputs / "run").exists()  # nothing written


# ---------------------------------------------------------------------------
# Fuzz: random argument lists never give a traceback


VALUES = ["0", "-1", "1", "2", "x", "", "1e3", "-0", "9999999999999999999999", "\x00", "é", "cities"]
OPTIONS = {
    "evaluate": (
        EVAL,
        ["--games", "--players", "--workers", "--seed", "--opponents", "--backend", "--address", "--modules"],
    ),
    "tournament": (
        tournament.main,
        ["--players", "--games", "--workers", "--seed", "--max-turns", "--agents", "--modules"],
    ),
    "policies": (
        speed_policies.main,
        ["--agents", "--anchors", "--games", "--workers", "--states", "--seed", "--players", "--modules"],
    ),
    "train": (TRAIN, ["--config", "--set", "--resume"]),
}


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cli=hs.sampled_from(sorted(OPTIONS)),
    args=hs.lists(
        hs.tuples(hs.integers(0, 20), hs.sampled_from(VALUES + ["random", "greedy", "ray", "n_envs=0"])),
        max_size=4,
    ),
)
def test_fuzz_cli_arguments(cli, args, tmp_path_factory, capsys) -> None:
    main, options = OPTIONS[cli]
    argv = ["random"] if cli == "evaluate" else []
    for k, value in args:
        argv += [options[k % len(options)], value]
    if cli in ("evaluate", "tournament", "policies"):  # keep the runs that are valid tiny and local
        argv += ["--games", "1", "--workers", "1"] + (["--states", "2"] if cli == "policies" else [])
        argv += ["--no-progress"] if cli == "tournament" else []
        if "--backend" in argv:
            argv += ["--backend", "local"]
    work = tmp_path_factory.mktemp("fuzz")
    old = Path.cwd()
    import os

    os.chdir(work)
    try:
        rc, err = _run(main, argv, capsys)
    finally:
        os.chdir(old)
    assert rc in (0, 2), (argv, rc, err)
    assert "Traceback" not in err
    if rc == 2:
        assert not list(work.iterdir()), argv  # refused before anything was written


# ---------------------------------------------------------------------------
# Evaluation: same results whatever runs the games


@pytest.mark.slow
def test_evaluation_does_not_depend_on_workers_or_backend() -> None:
    one = evaluation.evaluate("greedy", ["random"], 130, workers=1, seed=3)
    two = evaluation.evaluate("greedy", ["random"], 130, workers=2, seed=3)
    assert one[0].games == 130 and one == two
    jobs = evaluation.evaluation_jobs("greedy", ["random", "greedy"], 130, 2, 3, True)
    assert [j["games"] for j in jobs] == [100, 30, 100, 30] and len({j["seed"] for j in jobs}) == 4
    pytest.importorskip("ray")
    assert evaluation.evaluate("greedy", ["random"], 130, workers=1, seed=3, backend="ray") == one


def test_smaller_chunks_keep_more_workers_busy_and_fix_their_own_deals(tmp_path) -> None:
    """``chunk_games`` sets the jobs (the unit of seeding): 60 games in chunks of 25 are three jobs
    of 25, 25 and 10, each seeded apart; the results do not depend on the workers, a resume must
    use the same size, and a size below one is refused before any game."""
    jobs = evaluation.evaluation_jobs("random", ["random"], 60, 2, 3, True, chunk_games=25)
    assert [(j["games"], j["first_game"]) for j in jobs] == [(25, 0), (25, 25), (10, 50)]
    assert len({j["seed"] for j in jobs}) == 3
    one = evaluation.evaluate("random", ["random"], 12, workers=1, seed=3, chunk_games=5, out=tmp_path / "e")
    two = evaluation.evaluate("random", ["random"], 12, workers=2, seed=3, chunk_games=5)
    assert one == two and one[0].games == 12
    with pytest.raises(CliError, match="was started with chunk_games 5, not None"):
        evaluation.evaluate("random", ["random"], 12, workers=1, seed=3, out=tmp_path / "e", resume=True)
    with pytest.raises(ValueError, match="chunk_games must be >= 1"):
        evaluation.evaluation_jobs("random", ["random"], 60, 2, 3, True, chunk_games=0)


def test_evaluation_reports_each_player_count_and_the_modules(capsys) -> None:
    results = evaluation.evaluate("random", ["random"], 4, players=[4, 3], seed=1, modules=("trading_posts",))
    assert [(r.players, r.modules, r.games, r.config) for r in results] == [
        (4, ("trading_posts",), 4, "4p trading_posts"),
        (3, ("trading_posts",), 4, "3p trading_posts"),
    ]
    assert (
        results[0].as_dict()["modules"] == ["trading_posts"]
        and results[0].as_dict()["config"] == "4p trading_posts"
    )
    jobs = evaluation.evaluation_jobs("random", ["random"], 4, [4, 3], 1, True, ("trading_posts",))
    assert [(j["players"], j["modules"]) for j in jobs] == [(4, ["trading_posts"]), (3, ["trading_posts"])]
    # A policy plays every game it was trained for and the report has one block per player count.
    assert evaluate.main([str(MODEL), "--opponents", "random", "--games", "2", "--workers", "1"]) is None
    out = capsys.readouterr().out
    assert f"{MODEL} (2 players, base game, seat-rotated, seed 12345):" in out and "vs random" in out
    # An opponent that cannot play a configuration sits it out, named with the reason.
    argv = ["random", "--players", "2", "3", "--games", "2", "--workers", "1", "--opponents", "random"]
    assert evaluate.main([*argv, f"ppo:{MODEL}"]) is None
    out = capsys.readouterr().out
    three = out.split("(3 players, base game,")[1]
    assert (
        "vs random" in three
        and f"vs ppo:{MODEL}: sits out (PPO model 'ppo_2p' was trained for 2 players" in three
    )
    assert f"vs ppo:{MODEL} " in out.split("(3 players")[0]  # ...and plays the 2-player games
    with_modules = evaluation.evaluate("random", ["random", f"ppo:{MODEL}"], 2, [2], modules=("cities",))
    assert [r.opponent for r in with_modules] == ["random"]


def test_model_zip_check_accepts_the_shipped_model() -> None:
    assert model_zip_problem(MODEL) is None


# ---------------------------------------------------------------------------
# Progress and the wall budget


def test_progress_line_tells_steps_rate_and_time_left() -> None:
    fraction, text = budgets.describe_progress(
        16_640, 26_000_000, 5_000.0, wall_elapsed=60.0, wall_left=3420.0
    )
    assert text == "16,640/26,000,000 steps, 5,000 steps/s, 0:57:00 left (wall limit)"
    assert fraction == pytest.approx(60 / 3480)  # the wall limit binds: progress is time, not 0.06% of steps
    fraction, text = budgets.describe_progress(500_000, 1_000_000, 1_000.0)
    assert text == "500,000/1,000,000 steps, 1,000 steps/s, 0:08:20 left" and fraction == 0.5
    fraction, text = budgets.describe_progress(0, 100, 0.0, 0.0, 30.0)
    assert text.endswith("0:00:30 left (wall limit)") and fraction == 0.0
    assert budgets.describe_progress(0, 100, 0.0)[1].endswith("time left unknown")


def test_wall_budget() -> None:
    assert budgets.WallBudget(None).left() is None and not budgets.WallBudget(None).expired()
    spent = budgets.WallBudget(1.0, start=0.0)  # started at perf_counter 0: long ago
    assert spent.expired() and spent.left() == 0.0
    fresh = budgets.WallBudget(10.0)
    assert not fresh.expired() and 599 < fresh.left() <= 600


@pytest.mark.slow
def test_warm_start_counts_against_the_wall_limit(tmp_path) -> None:
    """A warm start far bigger than the wall budget stops at the limit, and PPO then stops at once."""
    cfg = C.from_dict(
        {
            "n_envs": 8,
            "total_timesteps": 10_000_000,
            "max_wall_minutes": 0.05,  # 3 seconds
            "output_dir": str(tmp_path / "run"),
            "network": {"net_arch": [16]},
            "ppo": {"n_steps": 16, "batch_size": 64, "n_epochs": 1},
            "eval": {"every": 0, "games": 2, "opponents": ["random"]},
            "pretrain": {"teacher": "greedy", "samples": 1_000_000, "epochs": 50, "batch_size": 64},
        }
    )
    summary = train(cfg, progress_bar=False)
    pre = summary["pretrain"]
    assert pre["stopped_by_time_limit"] and pre["samples"] < 1_000_000
    assert summary["stopped_by_time_limit"] and summary["timesteps"] < 10_000
    assert summary["total_wall_time_s"] < 60


def test_progress_callback_renders_during_a_run(tmp_path, capsys) -> None:
    cfg = C.from_dict(
        {
            "n_envs": 4,
            "total_timesteps": 64,
            "output_dir": str(tmp_path / "run"),
            "network": {"net_arch": [8]},
            "ppo": {"n_steps": 16, "batch_size": 32, "n_epochs": 1},
            "opponents": {"pool": [{"spec": "random"}]},
            "eval": {"every": 0, "games": 2, "opponents": ["random"]},
        }
    )
    train(cfg, progress_bar=True)
    err = capsys.readouterr().err
    assert "/64 steps" in err and "steps/s" in err and "left" in err
    assert np.isfinite(json.loads((tmp_path / "run" / "summary.json").read_text())["wall_time_s"])


def test_a_stopped_command_says_in_one_line_what_was_saved_and_how_to_go_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from training.common.cli import note_saving

    def stopped_after_saving(argv: list[str] | None) -> None:
        note_saving(tmp_path / "run")
        raise KeyboardInterrupt

    assert (
        run_cli(stopped_after_saving, ["x", "--out", "run", "--force"], prog="python -m training.evaluate")
        == 130
    )
    err = capsys.readouterr().err.strip()
    assert err == (
        f"python -m training.evaluate: stopped (Ctrl-C); what was finished is saved in {tmp_path / 'run'}: "
        "go on with python -m training.evaluate x --out run --resume"
    )

    def stopped_after_a_checkpoint(argv: list[str] | None) -> None:  # PPO: --resume takes the checkpoint
        note_saving(tmp_path / "run", resume_flag="--resume run/checkpoints/latest.zip")
        raise KeyboardInterrupt

    for earlier in (["--resume", "old.zip"], ["--resume=old.zip"], []):
        argv = ["--config", "c.yaml", *earlier, "--no-progress"]
        assert run_cli(stopped_after_a_checkpoint, argv, prog="python -m training.train") == 130
        assert (
            capsys.readouterr()
            .err.strip()
            .endswith(
                "go on with python -m training.train --config c.yaml --no-progress --resume run/checkpoints/latest.zip"
            )
        ), earlier

    def stopped_before_saving(argv: list[str] | None) -> None:
        raise SystemExit(143)

    with pytest.raises(SystemExit) as exc:
        run_cli(stopped_before_saving, [], prog="python -m training.evaluate")
    assert exc.value.code == 143
    assert capsys.readouterr().err.strip() == "python -m training.evaluate: stopped (SIGTERM)"


def test_the_module_choices_of_protocol_commands_are_the_engine_s_modules() -> None:
    from splendor_env.layout import MODULE_NAMES
    from training.common.cli import MODULE_CHOICES, chosen_games

    assert {"none": (), "all": tuple(MODULE_NAMES)} == MODULE_CHOICES
    assert chosen_games([2], ["none"]) == [(2, ())]
    with pytest.raises(CliError, match="--modules takes none or all, got cities"):
        chosen_games(None, ["cities"])
