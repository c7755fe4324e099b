"""The positions the agents are tested on, and the inputs an agent answers.

* :func:`sample_states`: non-terminal states from random games, every phase
  the game reaches (main, discard, noble choice and the module decisions);
* :func:`noble_choice_state`: the seat on move must choose between two nobles;
* :func:`winning_position`: final round, only one purchase wins;
* :func:`decision_inputs`: observation, mask and seat of the seat on move, the
  three things an agent's ``act`` is given.

``sample_states`` and ``decision_inputs`` are :mod:`agents.positions` (public: the
policy benchmarks time agents on the same positions); the builders are the
suite's own fixtures.
"""

from __future__ import annotations

import numpy as np

from agents.positions import decision_inputs, sample_states
from splendor_env.actions import BUY_MARKET
from splendor_env.cards import CARD_COLOUR, CARD_COST, CARD_LEVEL, CARD_POINTS, NOBLE_REQ
from splendor_env.deal import new_state
from splendor_env.snapshot import from_dict, to_dict
from tests.helpers.positions import Position

__all__ = ["decision_inputs", "noble_choice_state", "points_cards", "sample_states", "winning_position"]


def noble_choice_state(num_players: int, seed: int) -> np.ndarray:
    """A position where the player on move must choose between two qualifying nobles."""
    d = to_dict(new_state(num_players, seed))
    req = np.maximum(NOBLE_REQ[d["nobles"][0]["noble"]], NOBLE_REQ[d["nobles"][1]["noble"]])
    me = d["players"][d["current_player"]]
    for colour in range(5):
        for _ in range(int(req[colour])):
            for deck in d["decks"]:
                pick = next((c for c in deck if CARD_COLOUR[c] == colour), None)
                if pick is not None:
                    deck.remove(pick)
                    me["purchased"].append(pick)
                    break
    d["phase"] = "noble"
    return from_dict(d)


def points_cards(total: int, avoid: set[int]) -> list[int]:
    """Level 3 cards worth exactly ``total`` points together (none of ``avoid``), by backtracking."""
    pool = [int(c) for c in np.flatnonzero((CARD_LEVEL == 2) & (CARD_POINTS > 0)) if int(c) not in avoid]

    def pick(i: int, left: int) -> list[int] | None:
        if left == 0:
            return []
        for j in range(i, len(pool)):
            if CARD_POINTS[pool[j]] <= left:
                rest = pick(j + 1, left - int(CARD_POINTS[pool[j]]))
                if rest is not None:
                    return [pool[j], *rest]
        return None

    out = pick(0, total)
    assert out is not None
    return out


def winning_position() -> tuple[np.ndarray, int]:
    """Final round, seat 1 on move (last of the round) at 13 points against 15: only buying the
    2-point card in market slot 4 (level 2) wins; seat 1 holds exactly its cost in tokens.

    Returns the state and the winning action id.
    """
    target = next(
        int(c) for c in np.flatnonzero((CARD_LEVEL == 1) & (CARD_POINTS == 2)) if CARD_COST[c].max() <= 4
    )
    p = Position(2, seed=5).slot(4, target)
    first = points_cards(15, {target})
    p.give(0, *first)
    p.give(1, *points_cards(13, {target, *first}))
    s = p.tokens(1, [int(x) for x in CARD_COST[target]]).current(1).turn(41).final_round().build()
    return s, BUY_MARKET + 4
