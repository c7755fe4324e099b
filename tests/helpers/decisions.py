"""The positions the agents are tested on, and the inputs an agent answers.

* :func:`sample_states`: non-terminal states from random games, every phase
  the game reaches (main, discard, noble choice and the module decisions);
* :func:`noble_choice_state`: the seat on move must choose between two nobles;
* :func:`winning_position`: final round, only one purchase wins;
* :func:`decision_inputs`: observation, mask and seat of the seat on move, the
  three things an agent's ``act`` is given.

They are test fixtures: the test suite owns them, so that a test does not depend
on how a benchmark or a script samples its positions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import BUY_MARKET, num_actions
from splendor_env.cards import CARD_COLOUR, CARD_COST, CARD_LEVEL, CARD_POINTS, NOBLE_REQ
from splendor_env.observation import obs_dim, observe
from tests.helpers.positions import Position

__all__ = ["decision_inputs", "noble_choice_state", "points_cards", "sample_states", "winning_position"]


def sample_states(
    num_players: int,
    games: int,
    seed: int = 0,
    max_per_game: int | None = None,
    modules: Sequence[str] = (),
) -> list[np.ndarray]:
    """Non-terminal states (copies) from random games, in play order (at most ``max_per_game`` a game)."""
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    for g in range(games):
        s = st.new_state(num_players, int(rng.integers(0, 2**62)) + g, modules=tuple(modules))
        mask = np.zeros(num_actions(int(s[st.MODULES])), dtype=np.int8)
        taken = 0
        while not rules.is_over(s):
            if max_per_game is None or taken < max_per_game:
                out.append(s.copy())
                taken += 1
            rules.legal_mask(s, mask)
            legal = np.flatnonzero(mask)
            rules.apply_action(s, int(legal[rng.integers(legal.size)]))
    return out


def decision_inputs(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Observation and mask of the seat on move (module sizes in a module game), and that seat."""
    bits = int(s[st.MODULES])
    seat = int(s[st.CURRENT])
    obs = np.empty(obs_dim(bits), dtype=np.float32)
    observe(s, seat, obs)
    mask = np.zeros(num_actions(bits), dtype=np.int8)
    rules.legal_mask(s, mask)
    return obs, mask, seat


def noble_choice_state(num_players: int, seed: int) -> np.ndarray:
    """A position where the player on move must choose between two qualifying nobles."""
    d = st.to_dict(st.new_state(num_players, seed))
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
    return st.from_dict(d)


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
