"""The board the page builds (``training.app.board``): every legal id names a piece that is on the board.

Why: the page plays only by clicking pieces, so a decision whose id names a
piece the board does not show could not be made at all; random games with
every module reach each kind of decision, and each is checked here without a
browser (the browser tests then click them).
"""

from __future__ import annotations

import csv
from collections import Counter
from importlib import resources
from typing import Any

import numpy as np
import pytest

from splendor_env import rules
from splendor_env.actions import block_of
from splendor_env.cards import COLOURS, NUM_CARDS
from splendor_env.env import raw_env
from splendor_env.layout import ACTION_BLOCKS, PHASE_NAMES, first_id
from splendor_env.picture_layout import PHASE_TEXT
from splendor_env.records import seat_of
from tests.helpers import Position, base_cards
from training.app.board import board, card, last_moves, said, spends, target

MODULES = ("cities", "trading_posts", "orient", "strongholds")


def on_board(view: dict[str, Any], seat: int, element: str) -> bool:
    """Whether the page (training/app/web/table.js) draws a piece with this id for ``seat``."""
    kind, _, key = element.rpartition("-") if element.count("-") else (element, "", "")
    me = view["players"][seat]
    if element in ("bank", "decision"):
        return True
    index = int(key) if key.isdigit() else None
    checks = {
        "slot": lambda: any(s["slot"] == index and s["card"] for s in view["slots"]),
        "deck": lambda: index < 3 and view["decks"][index] > 0,
        "odeck": lambda: index < len(view["orient_decks"]) and view["orient_decks"][index] > 0,
        "reserved": lambda: index < len(me["reserved"]) and me["reserved"][index]["card"] is not None,
        "token": lambda: me["tokens"].get(key, 0) > 0,
        "bank": lambda: key in view["bank"],
        "noble": lambda: index < len(view["nobles"]),
        "city": lambda: index < len(view["cities"]),
        "post": lambda: index < len(view["trading_posts"]),
        "drawn": lambda: index < len(view["drawn"]) and view["drawn"][index] is not None,
        "card": lambda: any(c["id"] == index for c in me["purchased"]),
    }
    return checks[kind]()


def check_games(games: list[tuple[str, ...]]) -> Counter[str]:
    """Play random games; at each step every legal id must name a piece of the seat's board. The blocks seen."""
    seen: Counter[str] = Counter()
    rng = np.random.default_rng(0)
    for game, modules in enumerate(games):
        env = raw_env(num_players=2 + game % 3, modules=modules)
        env.reset(seed=game)
        while not any(env.terminations.values()) and not any(env.truncations.values()):
            seat = seat_of(env.agent_selection)
            state = env.game_state
            view = board(state, seat)
            legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
            for action in legal:
                where = target(int(action))
                seen[block_of(int(action))[0]] += 1
                assert on_board(view, seat, where["target"]), (env.describe_action(int(action)), where)
                if where["verb"].startswith("buy"):
                    paid = spends(state, int(action))
                    assert all(view["players"][seat]["tokens"][c] >= n > 0 for c, n in paid.items())
            assert "_" not in view["phase_text"], view["phase_text"]  # words for a person, never the engine's
            played = int(rng.choice(legal))
            words = said(state, played)  # the move as the other players read it beside the panel
            assert words["seat"] == seat and words["text"] and "_" not in words["text"], words
            env.step(played)
    return seen


def test_every_legal_id_of_a_module_game_names_a_piece_on_the_board() -> None:
    assert check_games([MODULES, ()])["buy_market"] > 0


@pytest.mark.slow
def test_random_games_reach_every_decision_and_each_names_a_piece_on_the_board() -> None:
    seen = check_games([MODULES] * 12 + [(), ("strongholds",)] * 6)
    # pass: only when nothing else is legal; conquest: all three strongholds on one card you can buy.
    # Random games reach neither; both are buttons on the board's decision bar (the last test).
    never = {"pass", "conquest"}
    blocks = {name for name, _, _ in ACTION_BLOCKS}
    assert blocks - set(seen) <= never, sorted(blocks - set(seen))


def test_a_board_hides_what_the_seat_may_not_see() -> None:
    env = raw_env(num_players=2)
    env.reset(seed=5)
    env.step(42)  # player_0 reserves the top of the level-1 deck, blind
    mine, theirs, spectator = board(env.game_state, 0), board(env.game_state, 1), board(env.game_state, None)
    assert mine["players"][0]["reserved"][0]["card"] is not None
    assert theirs["players"][0]["reserved"][0] == {"card": None, "blind": True}
    assert spectator["players"][0]["reserved"][0]["card"] is None
    assert isinstance(theirs["players"][0]["purchased"], int) and mine["decks"] == [35, 26, 16]


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (0, {"target": "bank", "verb": "take", "gems": ["white", "blue", "green"]}),
        (25, {"target": "bank", "verb": "take", "gems": ["white", "white"]}),
        (47, {"target": "slot-2", "verb": "buy"}),
        (43, {"target": "deck-1", "verb": "reserve blind"}),
        (65, {"target": "token-gold", "verb": "discard"}),
        (71, {"target": "decision", "verb": "pass"}),
        (first_id("conquest") + 1, {"target": "decision", "verb": "conquest"}),
        (
            first_id("stronghold_move") + 18 * 2 + 5,
            {"target": "slot-2", "verb": "move stronghold", "to": "slot-5"},
        ),
        (first_id("keep_drawn_card") + 1, {"target": "drawn-1", "verb": "keep"}),
        (first_id("reserve_orient_market") + 3, {"target": "slot-15", "verb": "reserve"}),
    ],
)
def test_an_id_names_its_piece(action: int, expected: dict[str, Any]) -> None:
    assert target(action) == expected


def test_every_phase_has_words_and_the_discard_phase_says_how_many() -> None:
    assert set(PHASE_NAMES) <= set(PHASE_TEXT)
    env = raw_env(num_players=2)
    env.reset(seed=5)
    while (
        board(env.game_state, None)["phase"] != "discard"
    ):  # take three gems a turn until one must give back
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    seat = seat_of(env.agent_selection)
    view = board(env.game_state, seat)
    held = sum(view["players"][seat]["tokens"].values())
    assert held > 10 and view["phase_text"].startswith(f"return {held - 10} of {held} tokens")


def test_a_move_is_said_as_at_the_table_and_a_turn_gathers_its_moves() -> None:
    env = raw_env(num_players=2)
    env.reset(seed=5)
    state = env.game_state
    level2 = board(state, None)["slots"][5]["card"]
    assert said(state, 25 + 3) == {"seat": 0, "text": "took 2 red", "marks": ["bank-red"]}
    assert said(state, 0)["text"] == "took white, blue, green"
    assert said(state, 42 + 2) == {"seat": 0, "text": "reserved from L3", "marks": ["deck-2", "player-0"]}
    assert said(state, 30 + 5)["text"] == f"reserved a L2 {level2['colour']} card"
    history = [
        (1, 0, said(state, 0)),
        (2, 1, said(state, 1)),
        (3, 1, {"text": "returned 1 red", "marks": []}),
    ]
    first, second = last_moves(history, 2)
    assert first == {
        "move": 1,
        "words": ["took white, blue, green"],
        "marks": ["bank-white", "bank-blue", "bank-green"],
    }
    assert second is not None and second["move"] == 3 and second["words"][1] == "returned 1 red"


def test_a_sacrifice_card_names_the_cards_it_takes_and_each_seat_the_cards_it_could_give() -> None:
    """A sacrifice card has no token cost: its face names the cards it takes instead (as the data
    says), and each seat the cards it holds per colour as the engine counts them for a sacrifice."""
    with resources.files("splendor_env.data").joinpath("orient_cards.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for i, row in enumerate(rows):
        face = card(NUM_CARDS + i)
        assert face is not None
        if row["effect"] == "sacrifice":
            want = {"colour": row["sacrifice_color"], "count": int(row["sacrifice_count"])}
            assert face["sacrifice"] == want and face["cost"] == [0] * 5, (i, face)
        else:
            assert face["sacrifice"] is None, (i, face)
    assert all(card(c)["sacrifice"] is None for c in range(NUM_CARDS))  # type: ignore[index]
    # Seat 0 holds a red card with a pair card on it and a black double-bonus card: two red cards to
    # sacrifice, one black (its bonuses say 2), so it may buy the red-taking card and not the black-taking one.
    red = base_cards(COLOURS.index("red"))[0]
    sac_red, sac_black, pair, double_black = 115, 119, 95, 100
    state = (
        Position(2, modules=("orient",))
        .nobles()
        .give(0, red, double_black)
        .pair(0, pair, red)
        .slot(16, sac_red)
        .slot(17, sac_black)
        .build()
    )
    view = board(state, 0)
    slots = {s["slot"]: s["card"] for s in view["slots"]}
    assert slots[16]["sacrifice"] == {"colour": "red", "count": 2}
    assert slots[17]["sacrifice"] == {"colour": "black", "count": 2}
    me = view["players"][0]
    assert me["bonuses"]["red"] == 2 and me["bonuses"]["black"] == 2
    assert me["cards_held"] == {"white": 0, "blue": 0, "green": 0, "red": 2, "black": 1}
    assert view["players"][1]["cards_held"] == dict.fromkeys(COLOURS, 0)
    buy = first_id("buy_orient_market")
    assert rules.illegal_reason(state, buy + 4) == rules.OK
    assert rules.illegal_reason(state, buy + 5) == rules.R_CANNOT_SACRIFICE
    assert "cards_held" not in board(Position(2).build(), 0)["players"][0]  # no Orient, no sacrifice
