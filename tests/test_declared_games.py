"""The games an agent declares (``players``, ``plays_modules``): every command honours them.

Why: a 2-player agent of a user's own package must not be asked to play 3 and 4 players or the
module games, where it would fail on its first move or cost a benchmark card most of its games.
A game it does not declare is refused by ``training.play`` and ``training.evaluate`` in one line
naming the spec and the game, skipped with the reason by a tournament and a card; a malformed
declaration is refused when the class is built. The agents live in a package in ``tmp_path``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import agents
from agents.base import check_game
from tests.helpers.agent_package import write_agent_package
from training.common.cli import run_cli
from training.common.games import plays
from training.evaluate import main as evaluate_main
from training.matches import card as bm
from training.matches.tournament import run_tournament
from training.play import main as play_main

SOURCE = '''
"""Agents that declare their games, well and badly."""
import numpy as np

from agents.base import Agent
from agents.players.greedy import GreedyAgent


class Two(Agent):
    """greedy, declared for the 2-player base game only."""

    players = (2,)
    plays_modules = False

    def __init__(self, seed=None):
        super().__init__(seed)
        self.inner = GreedyAgent(seed)

    def seed(self, seed):
        super().seed(seed)
        self.inner.seed(seed)

    def act(self, observation, action_mask, state=None):
        return self.inner.act(observation, action_mask)


class ThreeOnly:
    """Not an Agent subclass: the same attribute declares its games."""

    players = [3]

    def seed(self, seed):
        pass

    def act(self, observation, action_mask, state=None):
        return int(np.flatnonzero(action_mask)[0])

    def act_batch(self, observations, action_masks):
        return np.array([self.act(o, m) for o, m in zip(observations, action_masks)])


class Finer(Agent):
    """2 or 3 players, modules too, but not the 3-player module games: its own check_game says so."""

    players = (2, 3)

    def act(self, observation, action_mask, state=None):
        return int(np.flatnonzero(action_mask)[0])

    def check_game(self, num_players, modules=()):
        if num_players == 3 and modules:
            raise ValueError("Finer plays modules with 2 players only")


class Five(Agent):
    players = (5,)

    def act(self, observation, action_mask, state=None):
        return 0


class Bare(Agent):
    players = 2

    def act(self, observation, action_mask, state=None):
        return 0


class Empty(Agent):
    players = ()

    def act(self, observation, action_mask, state=None):
        return 0


class Worded(Agent):
    plays_modules = "no"

    def act(self, observation, action_mask, state=None):
        return 0
'''

TWO = "gamebots.bots:Two"


@pytest.fixture
def bots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = write_agent_package(tmp_path / "site", "gamebots", SOURCE)
    monkeypatch.syspath_prepend(str(root))
    yield root
    for name in [m for m in sys.modules if m == "gamebots" or m.startswith("gamebots.")]:
        del sys.modules[name]


def test_the_base_agent_declares_every_game() -> None:
    assert agents.base.Agent.players == (2, 3, 4) and agents.base.Agent.plays_modules is True
    for n in (2, 3, 4):
        check_game(agents.make("greedy"), "greedy", ("cities",), n)


def test_a_declared_game_is_played_and_any_other_refused_naming_the_game(bots: Path) -> None:
    two = agents.make(TWO, seed=0)
    check_game(two, TWO, (), 2)
    assert plays(two, TWO, 3) == f"agent {TWO!r} does not play 3p base: it declares players = (2,)"
    assert plays(two, TWO, 4, ("orient",)) == (
        f"agent {TWO!r} does not play 4p orient: it declares players = (2,)"
    )
    assert "plays only the base game" in plays(two, TWO, 2, ("cities",))
    duck = agents.make("gamebots.bots:ThreeOnly")
    assert plays(duck, "duck", 3, ("cities",)) is None
    assert "does not play 2p base: it declares players = (3,)" in plays(duck, "duck", 2)


def test_check_game_of_its_own_still_refines_the_declaration(bots: Path) -> None:
    finer = agents.make("gamebots.bots:Finer")
    assert plays(finer, "finer", 2, ("cities",)) is None and plays(finer, "finer", 3) is None
    assert plays(finer, "finer", 3, ("cities",)) == "Finer plays modules with 2 players only"
    assert "does not play 4p base" in plays(finer, "finer", 4)


@pytest.mark.parametrize(
    ("cls", "says"),
    [
        (
            "Five",
            "class Five declares players = (5,): it must be a non-empty tuple of distinct player counts",
        ),
        ("Bare", "class Bare declares players = 2: it must be a non-empty tuple of distinct player counts "),
        ("Empty", "class Empty declares players = ()"),
        ("Worded", "class Worded declares plays_modules = 'no': it must be True or False"),
    ],
)
def test_a_malformed_declaration_is_refused_when_built(bots: Path, cls: str, says: str) -> None:
    spec = f"gamebots.bots:{cls}"
    with pytest.raises(
        ValueError, match="^" + f"agent {spec!r}: {says}".replace("(", r"\(").replace(")", r"\)")
    ):
        agents.make(spec)
    if cls == "Bare":
        with pytest.raises(ValueError, match=r"\(write players = \(2,\)\)"):
            agents.make(spec)


def test_play_and_evaluate_refuse_an_undeclared_game_in_one_line(
    bots: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(play_main, ["--agents", TWO, "random", "random", "--quiet"], prog="play") == 2
    err = capsys.readouterr().err
    assert err == f"play: error: agent {TWO!r} does not play 3p base: it declares players = (2,)\n"
    argv = [TWO, "--opponents", "random", "--games", "2", "--players", "2", "3", "--out", str(tmp_path / "e")]
    assert run_cli(evaluate_main, argv, prog="evaluate") == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"evaluate: error: candidate {TWO!r} cannot play 3p base: ") and err.count("\n") == 1
    )
    assert not (tmp_path / "e").exists()
    argv = [TWO, "--opponents", "random", "--games", "2", "--modules", "cities"]
    assert run_cli(evaluate_main, argv, prog="evaluate") == 2
    assert f"candidate {TWO!r} cannot play 2p cities: " in capsys.readouterr().err


def test_a_tournament_plays_the_agent_only_where_declared(bots: Path) -> None:
    lines: list[str] = []
    summary = run_tournament([TWO, "random", "greedy"], [2, 3], games=3, progress=False, echo=lines.append)
    two, three = summary["configurations"]
    assert TWO in two["agents"] and TWO not in three["agents"]
    assert (
        f"3p base: {TWO} sits out: agent {TWO!r} does not play 3p base: it declares players = (2,)" in lines
    )


@pytest.fixture
def small_protocol(monkeypatch: pytest.MonkeyPatch) -> dict:
    """Two cheap references, four games (three of them not the 2-player base game), 4 games each."""
    all_four = ["cities", "trading_posts", "orient", "strongholds"]
    monkeypatch.setitem(bm.PROTOCOL, "references", {"random": 624.0, "greedy": 1326.0})
    monkeypatch.setitem(bm.PROTOCOL, "configs", [[2, []], [3, []], [4, []], [2, all_four]])
    monkeypatch.setitem(bm.PROTOCOL, "games", {"full": 6, "quick": 4})
    return bm.PROTOCOL


def test_a_2_player_base_agent_s_card_plays_only_the_2_player_base_game(
    bots: Path, small_protocol: dict, tmp_path: Path
) -> None:
    card = bm.run_benchmark(TWO, tmp_path / "card", quick=True, echo=lambda _: None, progress_bar=False)
    assert [c["config"] for c in card["configs"]] == ["2p base"]
    assert card["cost"]["games"] == 8  # 4 games against each of the two references
    assert card["skipped"]["3p base"] == f"agent {TWO!r} does not play 3p base: it declares players = (2,)"
    assert "does not play 4p base" in card["skipped"]["4p base"]
    assert "does not play 2p" not in str(card["skipped"]) and len(card["skipped"]) == 3
    assert bm.card_games(TWO, [(2, ())], 4, small_protocol) == 8
