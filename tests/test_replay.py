"""Records replay move by move, and resume at any move into the AEC env or the Gymnasium view."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import Agent
from agents.gym_view import SplendorGymEnv
from splendor_env import records
from training import play
from training.records import main as records_main


def record_of(specs: list[str], seed: int, **kwargs) -> dict:
    return play.play_game(specs, seed, render="none", verbose=False, **kwargs)["record"]


@pytest.fixture(scope="module")
def recs() -> list[dict]:
    return [
        record_of(["greedy", "random"], 3),
        record_of(["greedy", "random", "random"], 4, max_turns=200),
        record_of(
            ["random", "random"],
            5,
            modules=("cities", "trading_posts", "orient", "strongholds"),
            max_turns=120,
        ),
    ]


def test_records_from_play_replay_exactly(recs: list[dict]) -> None:
    for rec in recs:
        ok, result, _ = records.replay(rec)
        assert ok, (result, rec)


@pytest.mark.parametrize("which", [0, 1, 2])
def test_resuming_at_any_move_and_playing_the_rest_gives_the_recorded_result(
    recs: list[dict], which: int
) -> None:
    rec = recs[which]
    n = len(rec["actions"])
    for k in (0, 1, n // 3, n // 2, n - 1, n):
        env = records.env_at(rec, k)
        for action in rec["actions"][k:]:
            env.step(int(action))
        assert records.game_result(env.game_state) == {f: rec[f] for f in records.RESULT_FIELDS}


def test_env_at_names_a_bad_move(recs: list[dict]) -> None:
    with pytest.raises(ValueError, match=r"move must be an int in 0\.\."):
        records.env_at(recs[0], len(recs[0]["actions"]) + 1)
    with pytest.raises(ValueError, match="move must be"):
        records.env_at(recs[0], -1)
    extra = {**recs[0], "actions": [*recs[0]["actions"], 0, 0]}  # two moves after the end
    with pytest.raises(ValueError, match="record has 2 action\\(s\\) after the end of the game"):
        records.env_at(extra, len(extra["actions"]))


class Scripted(Agent):
    """Plays the recorded actions of its seats, in order."""

    def __init__(self, actions: list[int]) -> None:
        super().__init__(0)
        self.actions = list(actions)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: np.ndarray | None = None) -> int:
        return self.actions.pop(0)


def test_a_game_resumed_in_the_gymnasium_view_finishes_as_recorded(recs: list[dict]) -> None:
    rec = recs[0]
    k = len(rec["actions"]) // 2
    env = records.env_at(rec, k)
    learner = int(env.agent_selection[-1])
    rest = rec["actions"][k:]
    seats = []
    probe = records.env_at(rec, k)
    for a in rest:  # who plays each remaining action
        seats.append(int(probe.agent_selection[-1]))
        probe.step(int(a))
    mine = [a for a, s in zip(rest, seats, strict=True) if s == learner]
    gym = SplendorGymEnv(
        opponents=Scripted([a for a, s in zip(rest, seats, strict=True) if s != learner]),
        learner_seat=learner,
    )
    gym.reset(seed=0, options={"snapshot": env.snapshot()})
    done, reward = False, 0.0
    while not done:
        _, reward, term, trunc, info = gym.step(mine.pop(0))
        done = term or trunc
    assert not mine
    assert info["winners"] == rec["winners"]
    assert reward == (1.0 if rec["winners"] == [learner] else -1.0)


def test_cli_replays_move_by_move_with_boards(
    recs: list[dict], tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "games.jsonl"
    records.write_records(path, recs)
    assert records_main(["replay", str(path), "--index", "1", "--moves", "--render"]) == 0
    out = capsys.readouterr().out
    moves = [line for line in out.splitlines() if line.startswith("move ")]
    assert len(moves) == len(recs[1]["actions"])
    assert "player_0 (greedy): " in moves[0]
    assert out.count("bank: ") == len(recs[1]["actions"])  # a board after every move
    assert "1/1 record(s) reproduced" in out
    assert records_main(["replay", str(path), "--moves"]) == 0
    assert "3/3 record(s) reproduced" in capsys.readouterr().out


def test_play_saves_replayable_records(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "played.jsonl"
    play.main(["--agents", "greedy", "random", "--games", "2", "--render", "none", "--save-games", str(path)])
    saved = list(records.read_records(path))
    assert len(saved) == 2 and all(records.replay(r)[0] for r in saved)
    capsys.readouterr()
    # a path that cannot be written is refused before the first game, not after it
    from training.common.cli import run_cli

    for bad, named in ((tmp_path / "nowhere" / "g.jsonl", "does not exist"), (tmp_path, "is a folder")):
        argv = ["--agents", "greedy", "random", "--games", "1", "--render", "none", "--save-games", str(bad)]
        assert run_cli(play.main, argv, prog="play") == 2
        out, err = capsys.readouterr()
        assert named in err and "game 0" not in out, (bad, out, err)


@pytest.mark.parametrize(
    ("bad", "named"),
    [
        ({"num_players": 2, "actions": []}, "'seed' is missing"),
        ([1, 2], "must be a JSON object, got list"),
        ({"num_players": 2, "seed": 0, "actions": [], "modules": None}, "'modules' must be a list"),
        ({"num_players": 2, "seed": 0, "actions": [], "modules": "orient"}, "'modules' must be a list"),
    ],
)
def test_every_records_command_names_a_malformed_records_field(
    bad: object, named: str, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One error line naming the field, never a traceback, with or without --moves (it read the seed
    before the record was checked) and for the pictures (a null module list failed in the env)."""
    import json

    from training.common.cli import run_cli

    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(bad) + "\n")
    commands = [
        ["replay", str(path)],
        ["replay", str(path), "--moves"],
        ["video", str(path), "--out", str(tmp_path / "g.gif")],
        ["picture", str(path), "--out", str(tmp_path / "g.png")],
    ]
    for argv in commands:
        assert run_cli(records_main, argv, prog="records") == 2, argv
        err = capsys.readouterr().err
        assert named in err and "record 0" in err and "Traceback" not in err, (argv, err)
