"""training.value_report: the recorded values are the critic's, the scores are computed right, bad input is refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from agents import make  # noqa: E402
from agents.nets.checkpoint import load_model  # noqa: E402
from agents.nets.numba_net import seat_values  # noqa: E402
from agents.nets.shipped import default_model, shipped_models  # noqa: E402
from agents.runner import rotation_seating  # noqa: E402
from splendor_env.observation import OBS_DIM, OBS_DIM_ALL  # noqa: E402
from training.common.cli import run_cli  # noqa: E402
from training.matches import value_report as vr  # noqa: E402
from training.matches import value_scores as vs  # noqa: E402
from training.value_report import main as value_report_main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "agents" / "shipped" / "ppo_2p.zip"


@pytest.fixture(scope="module")
def policy():
    return load_model(MODEL).policy


@pytest.fixture(scope="module")
def played(policy):
    """Three games of the shipped policy (A) against random (B), with critic values."""
    agents = (make(f"ppo:{MODEL}", seed=1), make("random", seed=2))
    return vr.attach_values(vr.play_games(agents, 3, seed=vr.DEFAULT_SEED), policy)


# ---------------------------------------------------------------------------
# Recording


def test_recorded_values_are_the_critics_own(played, policy) -> None:
    rec = played
    n = rec.game.size
    assert rec.values.shape == (n, 2) and rec.obs.shape == (n, 2, OBS_DIM)
    # torch, one observation at a time (no batching), for a sample of rows and both seats
    import torch as th

    for i in np.linspace(0, n - 1, 7).astype(int):
        for seat in (0, 1):
            with th.no_grad():
                v = policy.predict_values(th.as_tensor(rec.obs[i, seat][None])).item()
            assert rec.values[i, seat] == pytest.approx(v, abs=1e-5)
    # and az's numba export of the same network (what the search evaluates leaves with)
    from agents.nets.numba_net import export_network, forward_numpy

    _, values = forward_numpy(export_network(policy), rec.obs.reshape(2 * n, OBS_DIM))
    np.testing.assert_allclose(values.reshape(n, 2), rec.values, atol=1e-4)
    # the two seats' views differ (each sees its own hand): not one observation copied twice
    assert not np.array_equal(rec.obs[:, 0], rec.obs[:, 1])


def test_every_turn_of_every_game_is_recorded_once(played) -> None:
    rec = played
    for g in range(3):
        turns = rec.turn[rec.game == g]
        assert turns.tolist() == list(range(turns.size))  # one main decision per turn, none missed
        assert turns.size > 20
    assert np.array_equal(rec.mover, rec.turn % 2)  # seat 0 starts, the seats alternate
    # results: one +1 and one -1 per decisive game, A (the policy) in seat g % 2 wins every game
    assert rec.truncated == 0
    for g in range(3):
        assert rec.result[g, g % 2] == 1.0 and rec.result[g, 1 - g % 2] == -1.0
    # prestige never decreases within a game
    for g in range(3):
        assert (np.diff(rec.prestige[rec.game == g], axis=0) >= 0).all()


def test_summary_knows_which_agent_sat_where(played) -> None:
    # the policy (A) beat random in all three games, from seat 0 in games 0 and 2 and seat 1 in game 1
    summary = vs.summarise(played, ("A", "B"), "m", 0)
    assert summary["games"]["a_wins"] == 3 and summary["games"]["b_wins"] == 0
    assert summary["games"]["seat0_wins"] == 2 and summary["games"]["seat1_wins"] == 1
    assert summary["overall"]["agent"]["sign_accuracy"] == 1.0  # "A wins" is right at every decision
    by_agent = summary["value_by_agent"]
    assert by_agent["A (A)"]["positions"] == by_agent["B (B)"]["positions"] == played.game.size
    a_seat = played.game % 2
    rows = np.arange(played.game.size)
    assert by_agent["A (A)"]["mean"] == pytest.approx(played.values[rows, a_seat].mean(), abs=1e-6)


def test_truncated_games_are_left_out_and_counted(policy) -> None:
    agents = (make("random", seed=0), make("random", seed=1))
    rec = vr.attach_values(vr.play_games(agents, 2, seed=5, max_turns=6), policy)
    assert rec.truncated == 2
    summary = vs.summarise(rec, ("random", "random"), "m", 5)
    assert summary["games"]["truncated"] == 2 and summary["games"]["scored"] == 0
    assert summary["decisions"] == 12  # the decisions were played, but none is scored
    assert summary["overall"]["value"]["positions"] == 0
    assert summary["overall"]["leaf"]["sign_accuracy"] is None


# ---------------------------------------------------------------------------
# Scoring, on hand-made arrays


def _record(values, result, game, mover, turn, prestige) -> vs.Record:
    n = len(game)
    return vs.Record(
        game=np.asarray(game),
        turn=np.asarray(turn),
        mover=np.asarray(mover),
        prestige=np.asarray(prestige),
        obs=np.zeros((n, 2, OBS_DIM), np.float32),
        result=np.asarray(result, dtype=np.float64),
        seating=rotation_seating(len(result), 2),
        values=np.asarray(values, dtype=np.float32),
    )


def test_score_by_hand() -> None:
    x = np.array([0.5, -0.2, 0.1, 0.0, -1.0, 0.3])
    result = np.array([1, 1, -1, 1, -1, 0])  # the last row is a shared victory: no sign, but in MSE
    game = np.array([0, 0, 1, 1, 2, 3])
    s = vs.score(x, result, game)
    # hits: right, wrong, wrong, a tie (half), right -> 2.5 of 5
    assert s["sign_accuracy"] == pytest.approx(0.5)
    assert s["decisive_positions"] == 5 and s["positions"] == 6 and s["games"] == 4
    assert s["mse"] == pytest.approx(np.mean((x - result) ** 2))
    assert s["corr"] == pytest.approx(np.corrcoef(x, result)[0, 1])
    lo, hi = s["sign_wilson95"]
    assert lo < 0.5 < hi
    blo, bhi = s["sign_games95"]
    assert 0.0 <= blo <= 0.5 <= bhi <= 1.0


def test_oracle_is_perfect_and_flipped_oracle_always_wrong() -> None:
    rng = np.random.default_rng(0)
    result = rng.choice([-1.0, 1.0], size=200)
    game = np.repeat(np.arange(20), 10)
    good = vs.score(result * rng.uniform(0.1, 1.0, 200), result, game)
    bad = vs.score(-result, result, game)
    assert good["sign_accuracy"] == 1.0 and good["sign_games95"] == [1.0, 1.0]
    assert good["sign_wilson95"][1] == 1.0 and good["corr"] > 0.5
    assert (
        bad["sign_accuracy"] == 0.0 and bad["sign_wilson95"][0] == 0.0 and bad["corr"] == pytest.approx(-1.0)
    )
    assert bad["mse"] == pytest.approx(4.0)


def test_game_bootstrap_resamples_whole_games() -> None:
    # one game of 99 right positions and nine games of one wrong position each: per position 90.8%,
    # but only one game in ten is right, so a resample of games often holds none of it
    game = np.concatenate([np.zeros(99, int), np.arange(1, 10)])
    hits = np.concatenate([np.ones(99), np.zeros(9)])
    lo, hi = vs.game_bootstrap(game, hits)
    assert lo == 0.0 and hi > 0.9
    assert vs.game_bootstrap(np.zeros(5, int), np.ones(5)) == (1.0, 1.0)  # one game: no spread


def test_calibration_rows_by_hand() -> None:
    x = np.array([-2.0, -0.1, -0.2, 0.1, 0.2, 0.9, 1.5])
    result = np.array([-1, -1, 1, 1, 1, -1, 1])
    game = np.array([0, 0, 1, 1, 2, 2, 3])
    rows = {r["bin"]: r for r in vs.calibration(x, result, game)}
    assert list(rows) == vs.bin_labels(vs.VALUE_EDGES, open_low=True)
    assert rows["<-1"]["positions"] == 1 and rows["<-1"]["mean_result"] == -1.0
    neg = rows["[-0.25,0)"]
    assert neg["positions"] == 2 and neg["games"] == 2 and neg["mean_result"] == 0.0
    assert neg["mean_x"] == pytest.approx(-0.15) and neg["win_share"] == 0.5
    pos = rows["[0,0.25)"]
    assert pos["positions"] == 2 and pos["games"] == 2 and pos["mean_result"] == 1.0
    assert pos["mean_result_games95"] == [1.0, 1.0]
    assert rows["[0.75,1)"]["mean_result"] == -1.0 and rows[">=1"]["positions"] == 1
    assert rows["[0.5,0.75)"]["positions"] == 0 and rows["[0.5,0.75)"]["mean_result"] is None
    assert sum(r["positions"] for r in rows.values()) == x.size


def test_predictions_leaf_value_and_lead_from_the_seat_on_move() -> None:
    rec = _record(
        values=[[0.9, 0.7], [0.2, 0.8], [1.0, 1.0]],
        result=[[1, -1], [np.nan, np.nan]],  # game 1 was truncated
        game=[0, 0, 1],
        mover=[0, 1, 0],
        turn=[0, 1, 0],
        prestige=[[3, 1], [3, 5], [0, 0]],
    )
    leaf = vs.predictions(rec, "leaf")
    np.testing.assert_allclose(leaf.x, [0.1, 0.3], atol=1e-6)  # (0.9-0.7)/2; seat 1 on move: (0.8-0.2)/2
    assert leaf.result.tolist() == [1.0, -1.0] and leaf.lead.tolist() == [3, 5]
    lead = vs.predictions(rec, "lead")
    assert lead.x.tolist() == [2.0, 2.0]
    who = vs.predictions(rec, "agent")  # game 0: agent A in seat 0
    assert who.x.tolist() == [1.0, -1.0]
    value = vs.predictions(rec, "value")
    np.testing.assert_allclose(value.x, [0.9, 0.7, 0.2, 0.8], atol=1e-6)
    assert value.result.tolist() == [1.0, -1.0, 1.0, -1.0] and value.game.tolist() == [0, 0, 0, 0]
    with pytest.raises(ValueError, match="unknown predictor"):
        vs.predictions(rec, "policy")


def test_phase_bins() -> None:
    p = vs.Predictions(
        x=np.array([1.0, -1.0, 1.0, 1.0, -1.0]),
        result=np.array([1.0, 1.0, 1.0, -1.0, -1.0]),
        game=np.array([0, 0, 0, 1, 1]),
        turn=np.array([0, 9, 10, 39, 77]),
        lead=np.array([0, 2, 3, 14, 15]),
    )
    rows = {r["bin"]: r for r in vs.phase_table(p, "turn", vs.TURN_EDGES)}
    assert list(rows) == ["0-9", "10-19", "20-29", "30-39", "40+"]
    assert rows["0-9"]["positions"] == 2 and rows["0-9"]["sign_accuracy"] == 0.5
    assert rows["20-29"]["positions"] == 0 and rows["20-29"]["sign_accuracy"] is None
    assert rows["30-39"]["sign_accuracy"] == 0.0 and rows["40+"]["sign_accuracy"] == 1.0
    lead = {r["bin"]: r["positions"] for r in vs.phase_table(p, "lead", vs.LEAD_EDGES)}
    assert lead == {"0-2": 2, "3-5": 1, "6-8": 0, "9-11": 0, "12-14": 1, "15+": 1}


def _assert_pick_is_sign_accuracy(summary) -> None:
    """Two players: the winner pick of the leaf (prestige leader) is the leaf's (lead's) sign accuracy, bin by bin."""
    wp = summary["winner_pick"]
    for pick, kind in (("leaf", "leaf"), ("prestige", "lead")):
        pairs = [(wp["overall"][pick], summary["overall"][kind])]
        for key in ("by_turn", "by_lead"):
            pairs += list(zip(wp[key][pick], summary[key][kind], strict=True))
        for w, s in pairs:
            assert w["positions"] == s["decisive_positions"]
            if s["sign_accuracy"] is None:
                assert w["accuracy"] is None and w["games95"] is None
            else:
                assert w["accuracy"] == pytest.approx(s["sign_accuracy"], abs=1e-12)
                assert w["games95"] == pytest.approx(s["sign_games95"], abs=1e-12)


def test_two_player_winner_pick_is_sign_accuracy_on_decisive_games(played) -> None:
    _assert_pick_is_sign_accuracy(vs.summarise(played, ("A", "B"), "m", 0))
    # by hand: ties (leaf 0, equal prestige) count half in both, the shared game is left out of both
    rec = _record(
        values=[[0.5, 0.5], [0.2, 0.8], [0.9, 0.1], [0.3, 0.3]],
        result=[[1, -1], [0, 0], [-1, 1]],
        game=[0, 0, 1, 2],
        mover=[0, 1, 0, 1],
        turn=[0, 1, 0, 0],
        prestige=[[2, 2], [3, 1], [4, 4], [1, 6]],
    )
    summary = vs.summarise(rec, ("A", "B"), "m", 0)
    _assert_pick_is_sign_accuracy(summary)
    wp = summary["winner_pick"]
    assert wp["overall"]["leaf"]["accuracy"] == pytest.approx(1 / 3)  # tie, wrong, tie
    assert wp["overall"]["prestige"]["accuracy"] == pytest.approx(2.5 / 3)  # tie, right, right
    assert wp["games_scored"] == 2 and wp["shared_left_out"] == 1 and wp["chance"] == 0.5


def test_three_player_winner_pick_by_hand(tmp_path) -> None:
    rec = vs.Record(
        game=np.array([0, 0, 0, 1, 2, 3]),
        turn=np.array([0, 20, 70, 0, 5, 0]),
        mover=np.array([0, 2, 1, 0, 2, 0]),
        prestige=np.array([[3, 1, 5], [5, 5, 4], [8, 2, 8], [1, 1, 1], [7, 7, 7], [0, 0, 0]]),
        obs=np.zeros((6, 3, OBS_DIM), np.float32),
        # game 0: seat 0 won alone; game 1: seats 0 and 1 shared the win (left out); game 2: seat 2 won alone;
        # game 3 truncated (left out)
        result=np.array([[1, -1, -1], [0, 0, -1], [-1, -1, 1], [np.nan] * 3]),
        seating=rotation_seating(4, 3),
        values=np.array(
            [[0.9, 0.3, 0.6], [0.2, 0.8, 0.5], [0.7, 0.7, 0.1], [0.9, 0.0, 0.0], [0.1, 0.4, 0.7], [1, 0, 0]],
            np.float32,
        ),
    )
    picks = vs.winner_picks(rec)
    assert picks.game.tolist() == [0, 0, 0, 2]
    # leaf (the highest seat_values): seat 0 right, seat 1 wrong, seats 0 and 1 tied (winner among 2), seat 2 right
    np.testing.assert_allclose(picks.hits["leaf"], [1, 0, 0.5, 1])
    # prestige leader: seat 2 wrong, seats 0/1 tied, seats 0/2 tied, all three tied
    np.testing.assert_allclose(picks.hits["prestige"], [0, 0.5, 0.5, 1 / 3])
    # the leaf of every seat is agents.nets.numba_net.seat_values of that row, as the search computes it
    every = vs.seat_leaf_values(rec.values)
    for row in range(6):
        out = np.zeros(3)
        seat_values(rec.values[row].astype(np.float64), 3, out)
        assert every[row].tolist() == out.tolist()
    np.testing.assert_array_equal(vs.leaf_values(rec.values, rec.mover), every[np.arange(6), rec.mover])
    wp = vs.summarise(rec, ("A", "B"), "m", 0)["winner_pick"]
    assert wp["chance"] == pytest.approx(1 / 3) and wp["games_scored"] == 2 and wp["shared_left_out"] == 1
    leaf, pres = wp["overall"]["leaf"], wp["overall"]["prestige"]
    assert leaf["positions"] == pres["positions"] == 4 and leaf["games"] == 2
    assert leaf["accuracy"] == pytest.approx(2.5 / 4) and pres["accuracy"] == pytest.approx((1 + 1 / 3) / 4)
    lo, hi = leaf["games95"]
    assert 0.0 <= lo <= leaf["accuracy"] <= hi <= 1.0
    turn = {r["bin"]: r for r in wp["by_turn"]["leaf"]}
    assert list(turn) == ["0-14", "15-29", "30-44", "45-59", "60+"]
    assert turn["0-14"]["accuracy"] == 1.0 and turn["0-14"]["games"] == 2 and turn["15-29"]["accuracy"] == 0.0
    assert (
        turn["30-44"]["positions"] == 0
        and turn["30-44"]["accuracy"] is None
        and turn["60+"]["accuracy"] == 0.5
    )
    assert [r["accuracy"] for r in wp["by_turn"]["prestige"]] == pytest.approx([1 / 6, 0.5, None, None, 0.5])
    lead = {r["bin"]: r for r in wp["by_lead"]["leaf"]}  # leader's prestige 5, 5, 8, 7
    assert (
        lead["3-5"]["accuracy"] == 0.5 and lead["6-8"]["accuracy"] == 0.75 and lead["0-2"]["positions"] == 0
    )
    by_lead_prestige = {r["bin"]: r["accuracy"] for r in wp["by_lead"]["prestige"]}
    assert by_lead_prestige["3-5"] == pytest.approx(0.25) and by_lead_prestige["6-8"] == pytest.approx(5 / 12)
    # text and phases.csv carry it
    summary = vs.summarise(rec, ("A", "B"), "m", 0)
    text = vr.format_report(summary)
    assert "2 games won alone, 1 shared left out" in text and "chance 1/3 = 33.3%" in text
    assert "  all   all         4     2   62.5%" in text
    vr.write_outputs(summary, tmp_path)
    import csv

    with (tmp_path / "phases.csv").open() as f:
        rows = {(r["phase"], r["bin"], r["predictor"]): r for r in csv.DictReader(f)}
    assert rows[("all", "all", "leaf")]["winner_pick"] == "0.6250"
    assert rows[("all", "all", "lead")]["winner_pick"] == "0.3333"
    assert rows[("all", "all", "lead")]["winner_pick_positions"] == "4"
    assert rows[("turn", "0-14", "leaf")]["winner_pick"] == "1.0000"
    assert (
        rows[("all", "all", "value")]["winner_pick"] == ""
        and rows[("all", "all", "agent")]["winner_pick"] == ""
    )


# ---------------------------------------------------------------------------
# CLI


def _run(argv, capsys) -> tuple[int, str]:
    try:
        rc = run_cli(value_report_main, argv, prog="prog")
    except SystemExit as exc:  # argparse's own usage errors
        rc = exc.code
    return rc, capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--games", "0"], "--games must be >= 1"),
        (["--seed", "-1"], "--seed must be in"),
        (["--agents", "greedy", "nosuchagent"], "--agents 'nosuchagent': unknown agent spec"),
        (["--agents", "greedy"], "--agents needs exactly two specs"),
        (["--agents", "greedy", "ppo:nope.zip"], "--agents 'ppo:nope.zip': PPO model file not found"),
        (
            ["--agents", "greedy", f"ppo:{ROOT / 'agents' / 'shipped' / 'ppo_base_3_4p.zip'}"],
            "cannot play 2 players",
        ),
        (
            [
                "--agents",
                "greedy",
                "random",
                "--model",
                str(ROOT / "agents" / "shipped" / "ppo_base_3_4p.zip"),
            ],
            "--model: .*3 or 4",
        ),
        (
            [
                "--agents",
                "greedy",
                "random",
                "--model",
                str(ROOT / "agents" / "shipped" / "ppo_modules_2p.zip"),
            ],
            "--model: .*modules",
        ),
        (["--agents", "greedy", "random", "--model", "missing.zip"], "--model: model file not found"),
        # another game: the model trained for one game is refused for another, naming both
        (
            ["--players", "3", "--agents", "greedy", "random", "--model", "ppo_2p"],
            r"--model: PPO model 'ppo_2p' was trained for 2 players, base game; "
            r"it cannot play 3 players, base game",
        ),
        (
            ["--modules", "orient", "strongholds", "cities", "trading_posts", "--agents", "greedy", "random"]
            + ["--model", "ppo_base_3_4p"],
            r"--model: PPO model 'ppo_base_3_4p' .*it cannot play 2 players, "
            r"modules cities\+trading_posts\+orient\+strongholds",
        ),
        (
            ["--players", "3", "--agents", "ppo:ppo_2p", "greedy"],
            "--agents 'ppo:ppo_2p': .*cannot play 3 players",
        ),
        (
            ["--players", "3", "--modules", "orient"],
            "--model: no shipped network covers 3 players, modules orient",
        ),
        (["--players", "5"], "--players must be 2, 3 or 4, got 5"),
        (["--modules", "castles"], "--modules: "),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, match, tmp_path, capsys) -> None:
    rc, err = _run([*argv, "--out", str(tmp_path / "out")], capsys)
    assert rc == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("prog: error: ")
    import re

    assert re.search(match, err), err
    assert not (tmp_path / "out").exists()


def test_out_must_not_be_a_file(tmp_path, capsys) -> None:
    target = tmp_path / "f"
    target.write_text("x")
    rc, err = _run(["--agents", "greedy", "random", "--out", str(target)], capsys)
    assert rc == 2 and "is a file" in err


def test_tiny_run_writes_the_report(tmp_path, capsys) -> None:
    out = tmp_path / "report"
    summary = value_report_main(
        ["--games", "2", "--agents", "greedy", "random", "--model", str(MODEL), "--out", str(out)]
    )
    printed = capsys.readouterr().out
    assert "calibration of leaf" in printed and "by leader's prestige" in printed
    data = json.loads((out / "value_report.json").read_text())
    assert data == json.loads(json.dumps(summary))
    for key in (
        "agents",
        "model",
        "seed",
        "games",
        "decisions",
        "overall",
        "by_turn",
        "by_lead",
        "calibration",
        "winner_pick",
    ):
        assert key in data
    assert set(data["overall"]) == {"value", "leaf", "lead", "agent"} and set(data["calibration"]) == {
        "value",
        "leaf",
    }
    assert data["games"]["played"] == 2 and data["seed"] == vr.DEFAULT_SEED
    for kind in ("leaf", "lead", "agent"):  # one row per decision from the seat on move
        assert data["overall"][kind]["positions"] == data["decisions"]
    assert data["overall"]["value"]["positions"] == 2 * data["decisions"]  # both seats
    assert [r["bin"] for r in data["by_turn"]["leaf"]] == ["0-9", "10-19", "20-29", "30-39", "40+"]
    phases = (out / "phases.csv").read_text().splitlines()
    assert phases[0].startswith("phase,bin,predictor") and len(phases) == 1 + 4 * (1 + 5 + 6)
    assert phases[0].endswith(
        ",winner_pick_positions,winner_pick,winner_pick_games95_lo,winner_pick_games95_hi"
    )
    assert "winner pick: is the seat with the highest leaf the sole winner?" in printed
    assert (
        set(data["winner_pick"]["overall"]) == {"leaf", "prestige"} and data["winner_pick"]["chance"] == 0.5
    )
    assert (out / "calibration.csv").read_text().count("\n") == 1 + 2 * 10


# ---------------------------------------------------------------------------
# Any player count and modules


@pytest.fixture(scope="module")
def played_3p():
    """Three 3-player games of the shipped 3-4p policy (A, seat g % 3) against greedy (B), with critic values."""
    model = load_model(default_model(3))
    agents = (make(f"ppo:{default_model(3)}", seed=1), make("greedy", seed=2))
    return vr.attach_values(
        vr.play_games(agents, 3, seed=vr.DEFAULT_SEED, players=3), model.policy
    ), model.policy


def _torch_values(policy, obs: np.ndarray) -> np.ndarray:
    import torch as th

    with th.no_grad():
        return policy.predict_values(th.as_tensor(obs)).numpy()[:, 0]


def test_three_players_record_every_seat(played_3p) -> None:
    rec, policy = played_3p
    n = rec.game.size
    assert rec.players == 3 and rec.modules == ()
    assert rec.obs.shape == (n, 3, OBS_DIM) and rec.values.shape == (n, 3) and rec.prestige.shape == (n, 3)
    # A (agent 0) sits in seat g % 3, B in the other two: as training.evaluate seats a candidate
    assert np.array_equal(rec.seating, rotation_seating(3, 3)) and rec.a_seat.tolist() == [0, 1, 2]
    for g in range(3):
        turns = rec.turn[rec.game == g]
        assert turns.tolist() == list(range(turns.size)) and turns.size > 30
    assert np.array_equal(rec.mover, rec.turn % 3)
    # the critic's own values of every seat's view, for a sample of rows
    rows = np.linspace(0, n - 1, 5).astype(int)
    np.testing.assert_allclose(
        rec.values[rows], _torch_values(policy, rec.obs[rows].reshape(-1, OBS_DIM)).reshape(-1, 3), atol=1e-5
    )
    # each seat sees itself first: seat p's view is not seat q's
    assert not np.array_equal(rec.obs[:, 0], rec.obs[:, 1]) and not np.array_equal(
        rec.obs[:, 1], rec.obs[:, 2]
    )


def test_three_player_results_are_terminal_rewards(monkeypatch) -> None:
    # every final state goes through splendor_env.rules.terminal_rewards, whose per-seat rewards are the results
    from splendor_env.rules import terminal_rewards

    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def spy(state: np.ndarray, out: np.ndarray) -> None:
        terminal_rewards(state, out)
        seen.append((state.copy(), out.copy()))

    monkeypatch.setattr(vr, "terminal_rewards", spy)
    rec = vr.play_games(
        (make("greedy", seed=0), make("greedy", seed=1)), 3, seed=vr.DEFAULT_SEED + 7, players=3
    )
    assert rec.truncated == 0 and len(seen) == 3
    assert sorted(tuple(out[:3]) for _, out in seen) == sorted(tuple(r) for r in rec.result)
    for r in rec.result:  # a sole winner +1 and two losers -1, or co-winners 0 and losers -1
        assert set(r) <= {-1.0, 0.0, 1.0}
        assert (r == 1).sum() == 1 and (r == -1).sum() == 2 or ((r == 1).sum() == 0 and (r == 0).sum() >= 2)


def test_three_player_leaf_is_the_searchs_seat_values(played_3p) -> None:
    rec, _ = played_3p
    leaf = vs.predictions(rec, "leaf")
    keep = ~np.isnan(rec.result[rec.game, 0])
    vals, mover = rec.values[keep].astype(np.float64), rec.mover[keep]
    for i in np.linspace(0, vals.shape[0] - 1, 9).astype(int):
        out = np.zeros(3)
        seat_values(vals[i].copy(), 3, out)  # what agents.search.tree backs up for this leaf
        assert leaf.x[i] == out[mover[i]]
        others = np.delete(vals[i], mover[i])
        assert leaf.x[i] == pytest.approx(0.5 * (vals[i, mover[i]] - others.mean()))
    assert (
        leaf.x.size == int(keep.sum()) and leaf.result.tolist() == rec.result[rec.game[keep], mover].tolist()
    )


def test_three_player_summary(played_3p) -> None:
    rec, _ = played_3p
    summary = vs.summarise(rec, ("A", "B"), "m", 0)
    gm = summary["games"]
    assert summary["game"] == {"players": 3, "modules": []}
    assert gm["a_wins"] + gm["b_wins"] + gm["shared"] == 3 - gm["truncated"]
    assert gm["seat0_wins"] + gm["seat1_wins"] + gm["seat2_wins"] == gm["a_wins"] + gm["b_wins"]
    n = summary["decisions"]
    assert summary["overall"]["value"]["positions"] == 3 * n and summary["overall"]["leaf"]["positions"] == n
    by_agent = summary["value_by_agent"]
    assert (
        by_agent["A (A)"]["positions"] == n and by_agent["B (B)"]["positions"] == 2 * n
    )  # one seat, two seats
    assert summary["turn_edges"] == [0, 15, 30, 45, 60]
    assert [r["bin"] for r in summary["by_turn"]["leaf"]] == ["0-14", "15-29", "30-44", "45-59", "60+"]
    text = vr.format_report(summary)
    assert "of 3p base" in text and "A in seat g % 3" in text and "seat 2 " in text


def test_three_player_lead_and_agent_baselines_by_hand() -> None:
    rec = vs.Record(
        game=np.array([0, 0, 1, 2]),
        turn=np.array([0, 1, 2, 0]),
        mover=np.array([0, 1, 2, 0]),
        prestige=np.array([[3, 1, 5], [3, 6, 5], [7, 7, 2], [0, 0, 0]]),
        obs=np.zeros((4, 3, OBS_DIM), np.float32),
        # game 0: A (seat 0) won alone; game 1: A (seat 1) shared the win with seat 0; game 2 truncated
        result=np.array([[1, -1, -1], [0, 0, -1], [np.nan] * 3]),
        seating=rotation_seating(3, 3),
        values=np.array([[0.9, 0.3, 0.6], [0.2, 0.8, 0.5], [0.1, 0.4, 0.7], [0, 0, 0]], np.float32),
    )
    lead = vs.predictions(rec, "lead")  # own prestige minus the best other seat's
    assert lead.x.tolist() == [3 - 5, 6 - 5, 2 - 7] and lead.lead.tolist() == [5, 6, 7]
    assert lead.result.tolist() == [1.0, -1.0, -1.0]
    # A's seats: +1 and 0 -> +1; B's: -1, -1, 0, -1 -> -1
    assert vs.agent_signs(rec).tolist() == [1.0, -1.0]
    assert vs.predictions(rec, "agent").x.tolist() == [1.0, -1.0, -1.0]  # A on move in row 0 only
    leaf = vs.predictions(rec, "leaf")
    np.testing.assert_allclose(
        leaf.x, [0.5 * (0.9 - 0.45), 0.5 * (0.8 - 0.35), 0.5 * (0.7 - 0.25)], atol=1e-6
    )
    value = vs.predictions(rec, "value")
    assert value.x.size == 9 and value.game.tolist() == [0, 0, 0, 0, 0, 0, 1, 1, 1]
    summary = vs.summarise(rec, ("A", "B"), "m", 0)
    assert summary["games"] == {
        "played": 3,
        "truncated": 1,
        "scored": 2,
        "shared": 1,
        "a_wins": 1,
        "b_wins": 0,
        "seat0_wins": 1,
        "seat1_wins": 0,
        "seat2_wins": 0,
    }
    assert summary["agent_baseline"] == {"A": 1, "B": -1}


def test_module_game_uses_the_module_observation_and_seat_values() -> None:
    mods = ("cities", "trading_posts", "orient", "strongholds")
    name = default_model(2, mods)
    policy = load_model(name).policy
    agents = (make(f"ppo:{name}", seed=1), make("greedy", seed=2))
    rec = vr.attach_values(vr.play_games(agents, 2, seed=vr.DEFAULT_SEED, modules=mods), policy)
    n = rec.game.size
    assert rec.modules == mods and rec.obs.shape == (n, 2, OBS_DIM_ALL) and n > 20
    rows = np.linspace(0, n - 1, 5).astype(int)
    np.testing.assert_allclose(
        rec.values[rows],
        _torch_values(policy, rec.obs[rows].reshape(-1, OBS_DIM_ALL)).reshape(-1, 2),
        atol=1e-5,
    )
    leaf = vs.predictions(rec, "leaf")
    keep = ~np.isnan(rec.result[rec.game, 0])
    vals, mover = rec.values[keep].astype(np.float64), rec.mover[keep]
    out = np.zeros(2)
    for i in range(0, vals.shape[0], 7):
        seat_values(vals[i].copy(), 2, out)
        assert leaf.x[i] == out[mover[i]] == 0.5 * (vals[i, mover[i]] - vals[i, 1 - mover[i]])
    summary = vs.summarise(rec, ("A", "B"), name, 0)
    assert summary["game"] == {"players": 2, "modules": list(mods)}
    assert "of 2p cities+trading_posts+orient+strongholds" in vr.format_report(summary)


@pytest.mark.parametrize(
    ("players", "modules"),
    sorted(
        {(n, tuple(m["game"]["modules"])) for m in shipped_models().values() for n in m["game"]["players"]}
    ),
)
def test_defaults_are_the_games_shipped_network(players, modules) -> None:
    # every game a shipped network covers: --model and agent A default to the network az would use
    import argparse

    args = argparse.Namespace(players=players, modules=list(reversed(modules)), model=None, agents=None)
    vr.resolve_game_args(args)
    name = default_model(players, modules)
    assert args.model == name and args.agents == [f"ppo:{name}", "greedy"]
    assert tuple(args.modules) == modules  # the engine's order, whatever order was given
    # an explicit --model is kept; the agents still default to the game's shipped network
    args = argparse.Namespace(players=players, modules=list(modules), model="x.zip", agents=None)
    vr.resolve_game_args(args)
    assert args.model == "x.zip" and args.agents == [f"ppo:{name}", "greedy"]


def test_default_two_player_command_is_unchanged() -> None:
    # the 2-player base defaults are what they were (ppo_2p while it is the shipped default) and the turn bins too
    import argparse

    args = argparse.Namespace(players=2, modules=[], model=None, agents=None)
    vr.resolve_game_args(args)
    assert args.model == default_model(2) and args.agents == [f"ppo:{default_model(2)}", "greedy"]
    assert vs.turn_edges(2) == vs.TURN_EDGES and vs.turn_edges(4) == (0, 20, 40, 60, 80)


def test_tiny_three_player_run_writes_the_report(tmp_path, capsys) -> None:
    out = tmp_path / "report"
    summary = value_report_main(
        ["--players", "3", "--games", "2", "--agents", "greedy", "greedy", "--out", str(out)]
    )
    printed = capsys.readouterr().out
    assert f"critic of {default_model(3)}; 2 games of 3p base greedy (A) vs greedy (B)" in printed
    data = json.loads((out / "value_report.json").read_text())
    assert data == json.loads(json.dumps(summary)) and data["model"] == default_model(3)
    assert data["overall"]["value"]["positions"] == 3 * data["decisions"]
    phases = (out / "phases.csv").read_text().splitlines()
    assert len(phases) == 1 + 4 * (1 + 5 + 6) and any(",60+," in row for row in phases)
