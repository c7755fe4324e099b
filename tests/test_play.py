"""The README's main job, ``python -m training.play``: defaults, summaries and argument errors."""

from __future__ import annotations

import pytest

pytest.importorskip("sb3_contrib")

from training import play  # noqa: E402


@pytest.mark.slow
def test_default_game_is_the_shipped_policy_against_greedy(capsys: pytest.CaptureFixture[str]) -> None:
    assert play.SHIPPED_POLICY.is_file()
    assert play.default_agents()[1] == "greedy"
    play.main(["--render", "final"])
    out = capsys.readouterr().out
    assert "game 0 (seed 0): prestige" in out
    assert "winners ['player_" in out


def test_several_games_print_a_win_summary(capsys: pytest.CaptureFixture[str]) -> None:
    play.main(["--agents", "greedy", "random", "random", "--games", "3", "--render", "none", "--quiet"])
    lines = capsys.readouterr().out.splitlines()
    summary = [line for line in lines if line.startswith("player_")]
    assert len(summary) == 3
    assert sum(float(line.split("wins ")[1].split("/")[0]) for line in summary) == pytest.approx(3.0)


@pytest.mark.parametrize(
    "argv, message",
    [(["--agents", "greedy"], "--agents needs 2 to 4 specs"), (["--agents", "greedy", "gready"], "gready")],
)
def test_bad_agents_are_refused(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises((SystemExit, ValueError)) as err:
        play.main(argv)
    text = capsys.readouterr().err + str(err.value)
    assert message in text


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["random", "--modules", "cities"],
            "agent 'ppo:{m}' plays only the base game; modules ['cities']",
        ),
        (
            ["random", "random"],
            "PPO model 'ppo_2p' was trained for 2 players, base game; it cannot play 3 players, base game "
            "(player count: trained for 2, game has 3)",
        ),
    ],
)
def test_play_refuses_a_policy_for_a_game_it_was_not_trained_for(argv, message, capsys) -> None:
    """The shipped 2-player base-game policy is refused in a module game and at a 3-player table."""
    from training.common.cli import run_cli
    from training.play import main

    model = str(play.SHIPPED_POLICY)
    assert run_cli(main, ["--agents", f"ppo:{model}", *argv], prog="play") == 2
    err = capsys.readouterr().err
    assert err.startswith("play: error: ") and err.count("\n") == 1
    assert message.format(m=model) in err


def test_play_game_reports_each_seats_result_and_the_record_of_the_moves() -> None:
    result = play.play_game(["greedy", "random", "random"], seed=3, render="none", verbose=False)
    winners = result["snapshot"]["winners"]
    expected = {f"player_{p}": (1.0 if winners == [p] else 0.0 if p in winners else -1.0) for p in range(3)}
    assert result["rewards"] == expected
    record = result["record"]
    assert record["agents"] == ["greedy", "random", "random"] and record["agent_seeds"] == [303, 304, 305]
    assert record["actions"] == result["actions"] and record["winners"] == winners
