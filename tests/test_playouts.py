"""training.matches.playouts and the value report's --playouts: each decision played out by the agents of its
game, from hidden cards resampled for the seat on move, exactly as one game at a time would play it."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from agents.base import Agent  # noqa: E402
from splendor_env import rules  # noqa: E402
from splendor_env import state as st  # noqa: E402
from splendor_env.actions import num_actions  # noqa: E402
from splendor_env.deal import new_state  # noqa: E402
from splendor_env.determinize import determinize_inplace  # noqa: E402
from splendor_env.observation import OBS_DIM, obs_dim, observe  # noqa: E402
from training.matches import value_report as vr  # noqa: E402
from training.matches import value_scores as vs  # noqa: E402
from training.matches.playouts import playout_seed, playout_values  # noqa: E402
from training.value_report import main as value_report_main  # noqa: E402


class _Pick(Agent):
    """The first (``last=False``) or last legal id: deterministic, the same alone and in a batch."""

    def __init__(self, last: bool) -> None:
        super().__init__(0)
        self.last = last

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        legal = np.flatnonzero(action_mask)
        return int(legal[-1] if self.last else legal[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return np.array(
            [self.act(o, m) for o, m in zip(observations, action_masks, strict=True)], dtype=np.int64
        )


AGENTS = (_Pick(last=False), _Pick(last=True))


def _positions(num_players: int, modules: tuple[str, ...], count: int) -> np.ndarray:
    rng = np.random.default_rng(num_players)
    mask = np.zeros(num_actions(st.parse_modules(modules)), dtype=np.int8)
    out = []
    for k in range(count):
        s = new_state(num_players, 100 + k, modules=modules)
        for _ in range(5 + 6 * k):
            rules.legal_mask(s, mask)
            rules.apply_action(s, int(rng.choice(np.flatnonzero(mask))))
        out.append(s)
    return np.stack(out)


def _by_hand(states, movers, seating, playouts, seed) -> np.ndarray:
    """One playout at a time: determinise with the playout's seed, then each seat's agent alone."""
    n = int(states[0, st.N_PLAYERS])
    mods = int(states[0, st.MODULES])
    obs = np.zeros(obs_dim(mods), dtype=np.float32)
    mask = np.zeros(num_actions(mods), dtype=np.int8)
    rewards = np.zeros(st.MAX_PLAYERS)
    out = np.zeros((len(states), n))
    for i, s0 in enumerate(states):
        for k in range(playouts):
            s = s0.copy()
            determinize_inplace(s, int(movers[i]), np.array([playout_seed(seed, i, k, playouts)], np.uint64))
            while not rules.is_over(s):
                p = int(s[st.CURRENT])
                observe(s, p, obs)
                rules.legal_mask(s, mask)
                rules.apply_action(s, AGENTS[seating[i, p]].act(obs, mask))
            rules.terminal_rewards(s, rewards)
            out[i] += rewards[:n]
    return out / playouts


@pytest.mark.parametrize(("num_players", "modules"), [(2, ()), (3, ()), (4, ("cities", "trading_posts"))])
def test_playouts_are_the_games_one_at_a_time_for_any_batch(
    num_players: int, modules: tuple[str, ...]
) -> None:
    states = _positions(num_players, modules, 3)
    movers = states[:, st.CURRENT].copy()
    seating = np.array([[int(p == i % num_players) for p in range(num_players)] for i in range(3)])
    expect = _by_hand(states, movers, seating, 4, seed=9)
    for batch in (5, 2048):  # a batch boundary inside a row's playouts, and all at once
        got = playout_values(states, movers, seating, AGENTS, 4, seed=9, batch=batch)
        np.testing.assert_allclose(got, expect)
    assert got.shape == (3, num_players) and np.abs(got).max() <= 1


def test_the_hidden_cards_are_resampled_for_the_seat_on_move() -> None:
    states = _positions(2, (), 2)
    seating = np.array([[0, 1], [1, 0]])
    movers = states[:, st.CURRENT].copy()
    a = playout_values(states, movers, seating, AGENTS, 6, seed=1)
    np.testing.assert_allclose(a, _by_hand(states, movers, seating, 6, seed=1))
    b = playout_values(states, 1 - movers, seating, AGENTS, 6, seed=1)  # the other seat's resampling
    np.testing.assert_allclose(b, _by_hand(states, 1 - movers, seating, 6, seed=1))
    with pytest.raises(ValueError, match="playouts must be >= 1"):
        playout_values(states, movers, seating, AGENTS, 0, seed=1)


def test_winner_pick_of_the_playouts_by_hand() -> None:
    rec = vs.Record(
        game=np.array([0, 0, 1, 2]),
        turn=np.array([0, 1, 0, 0]),
        mover=np.array([0, 1, 0, 1]),
        prestige=np.array([[2, 2], [3, 1], [4, 4], [1, 6]]),
        obs=np.zeros((4, 2, OBS_DIM), np.float32),
        result=np.array([[1.0, -1.0], [-1.0, 1.0], [0.0, 0.0]]),
        seating=np.array([[0, 1], [1, 0], [0, 1]]),
        values=np.array([[0.1, 0.2], [0.3, -0.3], [0.5, 0.0], [0.0, 0.0]], np.float32),
        playouts=np.array([[0.5, -0.5], [0.0, 0.0], [-0.25, 0.25], [np.nan, np.nan]]),
        playout_count=4,
    )
    summary = vs.summarise(rec, ("A", "B"), "m", 0)
    wp = summary["winner_pick"]
    # playouts: right, a tie (half), right; the shared game (row 3) is left out
    assert wp["overall"]["playouts"]["accuracy"] == pytest.approx(2.5 / 3)
    assert wp["overall"]["playouts"]["positions"] == 3
    # the leaf: wrong, right, wrong; the gap is paired row by row: +1, -0.5, +1
    assert wp["overall"]["leaf"]["accuracy"] == pytest.approx(1 / 3)
    assert wp["overall"]["gap"]["accuracy"] == pytest.approx(0.5)
    lo, hi = wp["overall"]["gap"]["games95"]
    assert -0.5 <= lo <= 0.5 <= hi <= 1.0
    assert [r["bin"] for r in wp["by_turn"]["gap"]] == [r["bin"] for r in wp["by_turn"]["leaf"]]
    assert wp["playouts"] == 4
    printed = vr.format_report(summary)
    assert (
        "wins most of 4 playouts" in printed
        and "playouts minus leaf on the same decisions: +50.0 points" in printed
    )
    rec.playouts = None
    wp = vs.summarise(rec, ("A", "B"), "m", 0)["winner_pick"]
    assert "playouts" not in wp["overall"] and "gap" not in wp["overall"]


def test_add_playouts_fills_the_rows_of_games_won_alone() -> None:
    record = vr.play_games(AGENTS, 3, seed=vr.DEFAULT_SEED, keep_states=True)
    assert record.states.shape == (record.game.size, st.STATE_SIZE)
    for i in (0, record.game.size - 1):  # the kept state is the decision's: its own observation
        view = np.zeros(OBS_DIM, np.float32)
        observe(record.states[i], int(record.mover[i]), view)
        np.testing.assert_array_equal(view, record.obs[i, record.mover[i]])
    vr.add_playouts(record, AGENTS, 2, seed=5)
    won_alone = ((record.result == 1).sum(axis=1) == 1)[record.game]
    assert np.isnan(record.playouts[~won_alone]).all() and not np.isnan(record.playouts[won_alone]).any()
    rows = np.flatnonzero(won_alone)[:4]
    expect = _by_hand(record.states[rows], record.mover[rows], record.seating[record.game[rows]], 2, seed=5)
    got = playout_values(
        record.states[rows], record.mover[rows], record.seating[record.game[rows]], AGENTS, 2, 5
    )
    np.testing.assert_allclose(got, expect)
    with pytest.raises(ValueError, match="keep_states=True"):
        vr.add_playouts(vr.play_games(AGENTS, 1, seed=vr.DEFAULT_SEED), AGENTS, 2, seed=5)


def test_cli_playouts_column_and_json(tmp_path, capsys) -> None:
    out = tmp_path / "report"
    summary = value_report_main(
        [
            "--games",
            "2",
            "--agents",
            "greedy",
            "random",
            "--model",
            "ppo_2p",
            "--out",
            str(out),
            "--playouts",
            "2",
        ]
    )
    printed = capsys.readouterr().out
    assert "playouts = the seat that wins most of 2 playouts" in printed
    data = json.loads((out / "value_report.json").read_text())
    wp = data["winner_pick"]
    assert wp["playouts"] == 2 and set(wp["overall"]) == {"leaf", "prestige", "playouts", "gap"}
    assert [r["bin"] for r in wp["by_turn"]["playouts"]] == [r["bin"] for r in wp["by_turn"]["leaf"]]
    assert data["seconds"]["playouts"] >= 0 and summary["winner_pick"]["playouts"] == 2


def test_cli_refuses_negative_playouts(capsys) -> None:
    from training.common.cli import run_cli

    rc = run_cli(value_report_main, ["--agents", "greedy", "random", "--playouts", "-1"], prog="prog")
    err = capsys.readouterr().err
    assert rc == 2 and "--playouts must be >= 0, got -1" in err
