"""Strongholds (docs/rules.md 7.4): one test per rule, each from a constructed position."""

from __future__ import annotations

import numpy as np
import pytest

from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import (
    BUY_MARKET,
    BUY_RESERVED,
    CONQUEST,
    NUM_SLOTS,
    RESERVE_MARKET,
    SH_MOVE,
    SH_PLACE,
    SH_REMOVE,
    TAKE3,
)
from splendor_env.deal import new_state
from splendor_env.snapshot import to_dict
from tests.helpers import (
    G,
    K,
    Position,
    U,
    W,
    base_cards,
    legal,
    owner_of,
    phase_of,
    play,
    prestige_of,
    take3,
    tokens_of,
)

SH = ("strongholds",)
WHITE, BLUE, GREEN, RED, BLACK = range(5)
CHEAP = 25  # red, costs 3 white


def strongholds(num_players: int = 2) -> Position:
    """A Strongholds game with no nobles on offer, so that no noble visit interferes."""
    return Position(num_players, modules=SH).nobles()


def on(s, m: int, p: int) -> int:
    return int(s[st.SH_ON + m * st.MAX_PLAYERS + p])


def supply(s, p: int) -> int:
    return int(s[st.SH_SUPPLY + p])


def test_each_player_starts_with_three_strongholds() -> None:
    for n in (2, 3, 4):
        s = new_state(n, seed=1, modules=SH)
        assert [supply(s, p) for p in range(4)] == [3] * n + [0] * (4 - n)


def test_every_purchase_is_followed_by_a_stronghold_action_before_the_refill() -> None:
    s = strongholds().slot(0, CHEAP).tokens(0, "3W").build()
    s = play(s, BUY_MARKET + 0)
    assert phase_of(s) == "stronghold" and s[st.MARKET + 0] == -1
    # Supply only, nothing on the board: place on any face-up card but the one just bought.
    assert legal(s) == {SH_PLACE + m for m in range(1, 12)}
    s = play(s, SH_PLACE + 5)
    assert on(s, 5, 0) == 1 and supply(s, 0) == 2 and s[st.MARKET + 0] >= 0 and s[st.CURRENT] == 1


def test_no_stronghold_action_after_taking_tokens_or_reserving() -> None:
    s = strongholds().build()
    s = play(s, TAKE3)
    assert phase_of(s) == "main" and s[st.CURRENT] == 1
    s = play(s, RESERVE_MARKET + 3)
    assert phase_of(s) == "main" and s[st.CURRENT] == 0


def test_move_own_stronghold_never_onto_an_opponents_card() -> None:
    s = strongholds().slot(0, CHEAP).tokens(0, "3W").stronghold(2, 0).stronghold(7, 1).build()
    s = play(s, BUY_MARKET + 0)
    ids = legal(s)
    moves = [a - SH_MOVE for a in ids if SH_MOVE <= a < SH_REMOVE]
    assert all(src == 2 for src, _ in (divmod(i, NUM_SLOTS) for i in moves))
    assert sorted(dst for _, dst in (divmod(i, NUM_SLOTS) for i in moves)) == [1, 3, 4, 5, 6, 8, 9, 10, 11]
    assert SH_PLACE + 7 not in ids and SH_PLACE + 2 in ids, "onto own strongholds is fine"
    s = play(s, SH_MOVE + 2 * NUM_SLOTS + 9)
    assert on(s, 2, 0) == 0 and on(s, 9, 0) == 1 and supply(s, 0) == 2


def test_remove_only_an_opponent_stronghold_standing_alone_on_its_card() -> None:
    pos = strongholds().slot(0, CHEAP).tokens(0, "3W").stronghold(3, 1, 1).stronghold(6, 1, 2)
    s = pos.build()
    s = play(s, BUY_MARKET + 0)
    removes = sorted(a for a in legal(s) if a >= SH_REMOVE)
    assert removes == [SH_REMOVE + 3]
    s = play(s, SH_REMOVE + 3)
    assert on(s, 3, 1) == 0 and supply(s, 1) == 1, "back to its owner"


def test_occupied_card_can_be_bought_or_reserved_only_by_the_occupier() -> None:
    pos = strongholds().slot(0, CHEAP).tokens(0, "3W").tokens(1, "1W").stronghold(0, 1, 2)
    s = pos.build()
    assert rules.illegal_reason(s, BUY_MARKET + 0) == rules.R_OCCUPIED
    assert rules.illegal_reason(s, RESERVE_MARKET + 0) == rules.R_OCCUPIED
    # The occupier reserves it and its strongholds go home.
    s = pos.current(1).build()
    s = play(s, RESERVE_MARKET + 0)
    assert supply(s, 1) == 3 and on(s, 0, 1) == 0


def test_conquest_after_the_main_action_before_token_limit_and_nobles() -> None:
    # All three strongholds on a card: after taking 3 tokens (10 -> 13) the player may also buy it.
    card = 63  # L2 red 3 points, costs 6 red
    pos = strongholds(4).slot(4, card).stronghold(4, 0, 3)
    s = pos.tokens(0, "6R 4K").build()
    s = play(s, TAKE3)  # white, blue, green: 13 tokens
    assert phase_of(s) == "conquest" and legal(s) == {CONQUEST + 0, CONQUEST + 1}
    s = play(s, CONQUEST + 1)
    assert owner_of(s, card) == 0 and supply(s, 0) == 3, "the strongholds come back"
    assert phase_of(s) == "stronghold", "then a stronghold action as after any purchase"
    s = play(s, SH_PLACE + 5)
    assert tokens_of(s, 0) == [1, 1, 1, 0, 4, 0] and phase_of(s) == "main", "7 tokens: no discard needed"


def test_conquest_may_be_declined() -> None:
    card = 63
    s = strongholds(4).slot(4, card).stronghold(4, 0, 3).tokens(0, "6R").build()
    s = play(s, TAKE3, CONQUEST + 0)
    assert owner_of(s, card) == -1 and s[st.CURRENT] == 1


def test_conquest_is_not_offered_without_the_price() -> None:
    card = 63
    s = strongholds(4).slot(4, card).stronghold(4, 0, 3).tokens(0, "2R").build()
    s = play(s, TAKE3)
    assert phase_of(s) == "main" and s[st.CURRENT] == 1


def test_conquest_after_a_purchase_whose_stronghold_action_completed_the_three() -> None:
    card = 63
    pos = strongholds(4).slot(0, CHEAP).slot(4, card).stronghold(4, 0, 2)
    s = pos.tokens(0, "3W 6R").build()
    s = play(s, BUY_MARKET + 0, SH_PLACE + 4)
    assert phase_of(s) == "conquest"
    s = play(s, CONQUEST + 1)
    assert owner_of(s, CHEAP) == 0 and owner_of(s, card) == 0, "a turn may buy two cards"


def test_conquest_purchase_uses_bonuses_gained_this_turn() -> None:
    card = base_cards(WHITE)[1]  # white, costs 3 blue
    blue = base_cards(BLUE)[2]  # blue, costs 2 green 2 black
    pos = strongholds(4).slot(0, card).slot(1, blue).stronghold(0, 0, 2)
    s = pos.tokens(0, "2G 2K 2U").build()
    s = play(s, BUY_MARKET + 1, SH_PLACE + 0)  # the blue bonus makes the white card affordable
    assert CONQUEST + 1 in legal(s)


def test_buying_a_reserved_card_is_also_followed_by_a_stronghold_action() -> None:
    s = strongholds().reserve(0, CHEAP).tokens(0, "3W").build()
    s = play(s, BUY_RESERVED + 0)
    assert owner_of(s, CHEAP) == 0 and phase_of(s) == "stronghold"
    assert legal(s) == {SH_PLACE + m for m in range(12)}, "no market slot was emptied"
    s = play(s, SH_PLACE + 5)
    assert on(s, 5, 0) == 1 and phase_of(s) == "main" and s[st.CURRENT] == 1


def test_occupier_buying_the_card_takes_its_strongholds_back() -> None:
    s = strongholds().slot(0, CHEAP).tokens(1, "3W").stronghold(0, 1, 2).current(1).build()
    s = play(s, BUY_MARKET + 0)
    assert owner_of(s, CHEAP) == 1 and on(s, 0, 1) == 0 and supply(s, 1) == 3
    assert phase_of(s) == "stronghold", "then the usual stronghold action"


def test_conquest_after_reserving() -> None:
    card = 63  # L2 red 3 points, costs 6 red
    s = strongholds(4).slot(4, card).stronghold(4, 0, 3).tokens(0, "6R").build()
    reserved = int(s[st.MARKET + 0])
    s = play(s, RESERVE_MARKET + 0)
    assert phase_of(s) == "conquest" and CONQUEST + 1 in legal(s)
    s = play(s, CONQUEST + 1, SH_PLACE + 5)
    d = to_dict(s)
    assert d["players"][0]["reserved"] == [{"card": reserved, "blind": False}] and owner_of(s, card) == 0
    assert tokens_of(s, 0) == [0, 0, 0, 0, 0, 1], "the reserve's gold is kept: red tokens paid"


def test_conquest_may_pay_with_tokens_taken_this_turn() -> None:
    s = strongholds().slot(0, CHEAP).stronghold(0, 0, 3).tokens(0, "2W").build()  # CHEAP costs 3 white
    s = play(s, take3(W, U, G))
    assert phase_of(s) == "conquest", "the white just taken makes the card affordable"
    s = play(s, CONQUEST + 1)
    assert owner_of(s, CHEAP) == 0 and tokens_of(s, 0) == [0, 1, 1, 0, 0, 0]


def test_conquest_comes_before_the_noble_check() -> None:
    # 4 white 3 blue bonuses; the conquered card 14 (blue, 1W 2G 2R) completes noble 0 (4W 4U).
    cards = [*base_cards(WHITE)[:4], *base_cards(BLUE)[:3]]
    pos = strongholds().give(0, *cards).slot(0, 14).stronghold(0, 0, 3).tokens(0, "2G 2R").nobles(0, 5, 3)
    s = play(pos.build(), take3(W, U, K), CONQUEST + 1, SH_PLACE + 1)
    assert owner_of(s, 14) == 0 and prestige_of(s, 0) == 3, "noble 0 visits at the end of the same turn"
    assert to_dict(s)["players"][0]["nobles"] == [0]


@pytest.mark.parametrize("modules", [("strongholds",), st.MODULE_NAMES])
def test_the_batched_mask_reuses_the_decision_mask_the_turn_just_computed(modules: tuple[str, ...]) -> None:
    """After an action, the turn pipeline has already computed the mask of the decision it stopped
    at (to see whether it has more than one option); ``legal_mask_after`` copies it instead of
    computing it again, and must give exactly ``legal_mask`` at every step, reused or not."""
    from splendor_env.actions import NUM_ACTIONS_ALL
    from splendor_env.rules import apply_action_with, is_over, legal_mask, legal_mask_after

    rng = np.random.default_rng(3)
    scratch = np.zeros(NUM_ACTIONS_ALL + 1, dtype=np.int8)
    reused = 0
    for seed in range(3):
        s = new_state(3, seed=seed, modules=modules)
        expected = np.zeros(NUM_ACTIONS_ALL, dtype=np.int8)
        got = np.ones(NUM_ACTIONS_ALL, dtype=np.int8)  # stale ones must be cleared
        while not is_over(s):
            n = legal_mask(s, expected)
            a = int(rng.choice(np.flatnonzero(expected)))
            apply_action_with(s, a, scratch)
            if is_over(s):
                break
            reused += int(scratch[NUM_ACTIONS_ALL])
            assert legal_mask_after(s, got, scratch) == legal_mask(s, expected)
            np.testing.assert_array_equal(got, expected)
            assert n > 0
    assert reused > 20, "stronghold decisions should reuse the pipeline's mask"
