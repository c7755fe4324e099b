"""Human play: move codes, input validation with scripted streams, and the training.play CLI."""

from __future__ import annotations

import io

import numpy as np
import pytest

import agents
import splendor_env
from agents.players.human import HumanAgent, QuitGame, move_code
from splendor_env.actions import NUM_ACTIONS_ALL
from training import play


def first_decision(seed: int = 0) -> tuple[dict, np.ndarray]:
    env = splendor_env.raw_env()
    env.reset(seed=seed)
    return env.observe(env.agent_selection), env.engine_state()


def test_every_action_has_a_distinct_code() -> None:
    codes = [move_code(a) for a in range(NUM_ACTIONS_ALL)]
    assert len(set(codes)) == NUM_ACTIONS_ALL
    assert [move_code(a) for a in (0, 27, 32, 42, 47, 57, 65, 66, 71)] == [
        "twug", "tgg", "r13", "rd1", "b13", "br1", "d*", "n1", "pass"
    ]  # fmt: skip


def test_bad_entries_are_explained_and_asked_again() -> None:
    obs, state = first_decision()
    out = io.StringIO()
    human = agents.make("human", input=io.StringIO("zzz\n0\nb34\n\n?\nTWUG\n"), output=out)
    action = human.act(obs["observation"], obs["action_mask"], state=state)
    text = out.getvalue()
    assert action == 0  # codes are case-insensitive
    assert "you are player_0" in text and "bank:" in text  # the board
    assert "take 1 white, 1 blue, 1 green" in text and "twug" in text  # moves in words with codes
    assert "'zzz' is not a move code" in text
    assert "there is no move number 0" in text
    assert "'b34' is not a legal move now" in text
    assert text.count("your legal moves") == 2  # listed again after '?'


def test_a_number_picks_the_listed_move_and_q_quits() -> None:
    obs, state = first_decision()
    legal = np.flatnonzero(obs["action_mask"])
    human = HumanAgent(input=io.StringIO("3\n"), output=io.StringIO())
    assert human.act(obs["observation"], obs["action_mask"], state=state) == legal[2]
    with pytest.raises(QuitGame):
        HumanAgent(input=io.StringIO("q\n"), output=io.StringIO()).act(
            obs["observation"], obs["action_mask"], state=state
        )
    with pytest.raises(ValueError, match="input ended"):
        HumanAgent(input=io.StringIO(""), output=io.StringIO()).act(
            obs["observation"], obs["action_mask"], state=state
        )
    with pytest.raises(ValueError, match="needs state="):
        HumanAgent(input=io.StringIO("1\n")).act(obs["observation"], obs["action_mask"])


@pytest.mark.parametrize(
    "argv",
    [
        ["--agents", "human", "random"],
        ["--agents", "random", "human", "greedy"],
        ["--agents", "human", "random", "random", "random", "--modules", "cities", "orient", "strongholds"],
    ],
)
def test_play_cli_with_scripted_input(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("nonsense\n" + "1\n" * 400))
    play.main([*argv, "--max-turns", "30", "--seed", "1"])
    out = capsys.readouterr().out
    assert "'nonsense' is not a move code" in out
    assert out.count("your legal moves") >= 5
    seat = argv[1:].index("human")
    assert f"player_{seat} (human): " in out  # the human's moves are logged in words like the others'
    assert "game 0 (seed 1): prestige" in out


@pytest.mark.slow
def test_play_against_the_shipped_policy_and_quit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("sb3_contrib")
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n1\nq\n"))
    play.main(["--agents", "human", f"ppo:{play.SHIPPED_POLICY}"])
    out = capsys.readouterr().out
    assert "player_1 (ppo:" in out
    assert "game 0 abandoned: player_0 quit the game" in out
