"""Combination rules (docs/rules.md 7.5): one test per rule, each from a constructed position."""

from __future__ import annotations

import itertools

from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import (
    BUY_DG_MARKET,
    BUY_MARKET,
    BUY_OMARKET,
    CONQUEST,
    FREE_CARD,
    KEEP_DRAWN,
    RESERVE_ODECK,
    SH_PLACE,
    TAKE3,
    TP_TOKEN,
)
from splendor_env.deal import new_state
from splendor_env.invariants import check_invariants
from splendor_env.snapshot import to_dict
from tests.helpers import Position, base_cards, deck, legal, owner_of, phase_of, play, prestige_of, tokens_of

WHITE, BLUE, GREEN, RED, BLACK = range(5)
DOUBLE_GOLD = 90
PAIR_FREE = 108  # costs 4 green 3 red 1 black
SAC_WHITE = 116  # blue, 3 points: sacrifice 2 white
CHEAP = 25  # red, costs 3 white


def game(*modules: str, num_players: int = 2) -> Position:
    """A game with these modules and no nobles on offer, so that no noble visit interferes."""
    return Position(num_players, modules=modules).nobles()


def test_draw_two_works_on_orient_decks() -> None:
    s = game("trading_posts", "orient").trading_posts(0, "draw_two").build()
    first, second = deck(s, 5)[-1], deck(s, 5)[-2]
    s = play(s, RESERVE_ODECK + 2)
    assert phase_of(s) == "keep_drawn_card"
    s = play(s, KEEP_DRAWN + 0)
    d = to_dict(s)
    assert d["players"][0]["reserved"] == [{"card": first, "blind": True}]
    assert d["orient_decks"][2][0] == second


def test_virtual_gold_is_worth_two_with_the_gold_trading_post() -> None:
    card = 63  # 6 red: 3 gold units with the post; 2 virtual (worth 2 each) + 1 real
    pos = game("trading_posts", "orient", num_players=4).give(0, DOUBLE_GOLD).slot(4, card)
    s = pos.tokens(0, "1*").trading_posts(0, "gold_double").build()
    ids = legal(s)
    assert BUY_MARKET + 4 not in ids and BUY_DG_MARKET + 4 in ids
    s = play(s, BUY_DG_MARKET + 4)
    assert owner_of(s, card) == 0 and tokens_of(s, 0) == [0] * 6


def test_losing_a_requirement_by_sacrifice_keeps_the_trading_post() -> None:
    whites = base_cards(WHITE)[:2]
    pos = game("trading_posts", "orient").give(0, *whites).slot(16, SAC_WHITE)
    s = pos.trading_posts(0, "extra_token").build()
    s = play(s, BUY_OMARKET + 4)
    assert owner_of(s, whites[0]) == owner_of(s, whites[1]) == st.BOX
    assert s[st.TP_HELD + 0] == 1 << 2, "the 2-white post stays with 0 white"


def test_token_after_buy_triggers_once_when_a_free_card_is_granted() -> None:
    red = base_cards(RED)[0]
    pos = game("trading_posts", "orient", num_players=4).give(0, red).slot(14, PAIR_FREE)
    s = pos.tokens(0, "4G 2R 1K").trading_posts(0, "token_after_buy").build()
    s = play(s, BUY_OMARKET + 2)
    assert phase_of(s) == "free_card"
    s = play(s, FREE_CARD + 0)
    assert phase_of(s) == "trading_post_token"
    s = play(s, TP_TOKEN + WHITE)
    assert phase_of(s) == "main" and s[st.CURRENT] == 1 and sum(tokens_of(s, 0)) == 1


def test_token_after_buy_on_a_conquest_and_the_main_purchase_token_pays_for_it() -> None:
    target = base_cards(WHITE)[0]  # white, costs 2 red 1 black
    mods = ("trading_posts", "strongholds")
    pos = game(*mods, num_players=4).slot(0, CHEAP).slot(1, target).stronghold(1, 0, 2)
    s = pos.tokens(0, "3W 2R").trading_posts(0, "token_after_buy").build()
    s = play(s, BUY_MARKET + 0)
    assert phase_of(s) == "trading_post_token"
    s = play(s, TP_TOKEN + BLACK, SH_PLACE + 1)
    assert phase_of(s) == "conquest" and CONQUEST + 1 in legal(s), "the black token just taken pays"
    s = play(s, CONQUEST + 1)
    assert owner_of(s, target) == 0 and phase_of(s) == "trading_post_token", (
        "the post triggers on the conquest too"
    )
    s = play(s, TP_TOKEN + GREEN)
    assert phase_of(s) == "stronghold"


def test_strongholds_stand_on_orient_cards_and_block_free_cards() -> None:
    red = base_cards(RED)[0]
    mods = ("orient", "strongholds")
    pos = game(*mods, num_players=4).give(0, red).slot(14, PAIR_FREE).stronghold(12, 1).stronghold(2, 1)
    s = pos.tokens(0, "4G 2R 1K").build()
    assert rules.illegal_reason(s, BUY_OMARKET + 0) == rules.R_OCCUPIED
    s = play(s, BUY_OMARKET + 2)
    assert phase_of(s) == "free_card"
    free = [a - FREE_CARD for a in legal(s)]
    assert 12 not in free and 2 not in free and 0 in free and 13 in free, "not from under an opponent"
    s = play(s, FREE_CARD + 13)
    assert phase_of(s) == "stronghold", "one stronghold action for the purchase and its free card"
    assert SH_PLACE + 15 in legal(s), "strongholds may go on Orient cards"
    s = play(s, SH_PLACE + 15)
    assert phase_of(s) == "main" and s[st.CURRENT] == 1


def test_no_nobles_with_cities_whatever_the_other_modules() -> None:
    others = ("trading_posts", "orient", "strongholds")
    for r in range(4):
        for combo in itertools.combinations(others, r):
            d = to_dict(new_state(4, seed=r, modules=("cities", *combo)))
            assert d["nobles"] == [] and len(d["cities"]) == 3


def test_trading_posts_are_checked_before_cities() -> None:
    # 12 prestige; the points post (5 green) brings it to 14, enough for city 12 (4 green + 4 of another colour).
    cards = [73, base_cards(WHITE)[0], 77, 48, *base_cards(BLUE)[:2], *base_cards(GREEN)[:5]]
    pos = game("cities", "trading_posts").give(0, *cards).cities(12, 2, 0).trading_posts(0, "extra_token")
    s = pos.build()
    assert prestige_of(s, 0) == 12
    s = play(s, TAKE3)
    assert s[st.TP_HELD + 0] == (1 << 2) | (1 << 4) and prestige_of(s, 0) == 14
    assert s[st.CITY_OWNER + 0] == 0, "the city sees the trading-post points of the same turn"


def test_every_module_combination_sets_up_cleanly() -> None:
    for r in range(5):
        for combo in itertools.combinations(st.MODULE_NAMES, r):
            for n in (2, 3, 4):
                s = new_state(n, seed=7, modules=combo)
                assert not check_invariants(s)
                assert st.module_names(int(s[st.MODULES])) == combo
