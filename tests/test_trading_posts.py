"""Trading Posts (docs/rules.md 7.2): one test per rule, each from a constructed position."""

from __future__ import annotations

import numpy as np

from splendor_env import state as st
from splendor_env.actions import (
    BUY_MARKET,
    CHOOSE_NOBLE,
    CHOOSE_TRADING_POST,
    KEEP_DRAWN,
    RESERVE_DECK,
    TAKE2_SAME,
    TAKE3,
    TP_EXTRA_TOKEN,
    TP_TOKEN,
)
from splendor_env.observation import (
    CARD_DIM,
    CARD_TABLE,
    FULL_CARD_DIM,
    HIDDEN_CARD_TABLE,
    O_BOX,
    O_PDRAWN,
    obs_dim,
    observe,
)
from splendor_env.snapshot import to_dict
from tests.helpers import (
    Position,
    bank_of,
    base_cards,
    bonus_of,
    deck,
    legal,
    owner_of,
    phase_of,
    play,
    prestige_of,
    tokens_of,
)

TP = ("trading_posts",)
WHITE, BLUE, GREEN, RED, BLACK = range(5)


def tp(num_players: int = 2) -> Position:
    """A Trading Posts game with no nobles on offer, so that no noble visit interferes."""
    return Position(num_players, modules=TP).nobles()


def held(s: np.ndarray, p: int) -> int:
    return int(s[st.TP_HELD + p])


def test_trading_post_claimed_automatically_at_end_of_turn() -> None:
    s = tp().give(0, *base_cards(WHITE)[:2]).build()  # 2 white: the extra-token post
    s = play(s, TAKE3)
    assert held(s, 0) == 1 << 2 and phase_of(s) == "main" and s[st.CURRENT] == 1


def test_trading_post_is_kept_and_never_taken_twice() -> None:
    s = tp().give(0, *base_cards(WHITE)[:2]).build()
    s = play(s, TAKE3)
    # Kept for the rest of the game: never claimed twice, and no second tile of the same power.
    s = play(s, TAKE3, TAKE3)
    assert held(s, 0) == 1 << 2 and phase_of(s) == "main"


def test_several_trading_posts_qualify_player_chooses_one_per_turn() -> None:
    # 2 white and 3 black: the extra-token and the draw-two posts both qualify.
    s = tp().give(0, *base_cards(WHITE)[:2], *base_cards(BLACK)[:3]).build()
    s = play(s, TAKE3)
    assert phase_of(s) == "trading_post_choice"
    assert legal(s) == {CHOOSE_TRADING_POST + 1, CHOOSE_TRADING_POST + 2}
    s = play(s, CHOOSE_TRADING_POST + 2)
    assert held(s, 0) == 1 << 2 and s[st.CURRENT] == 1  # only one per turn
    s = play(s, TAKE3, TAKE3)  # player 1, then player 0 again: the other one comes now
    assert held(s, 0) == (1 << 2) | (1 << 1)


def test_token_after_buy_is_taken_before_the_refill_and_may_be_a_spent_colour() -> None:
    card = 25  # red, costs 3 white
    s = tp().slot(0, card).tokens(0, "3W").bank("1W 4G 4R 4K 5*").trading_posts(0, "token_after_buy").build()
    top = deck(s, 0)[-1]
    s = play(s, BUY_MARKET + 0)
    assert phase_of(s) == "trading_post_token"
    assert s[st.MARKET + 0] == -1, "the market is refilled only after the token"
    # Any gem colour the bank holds, including white just spent; blue is empty; never gold.
    assert legal(s) == {TP_TOKEN + c for c in (WHITE, GREEN, RED, BLACK)}
    s = play(s, TP_TOKEN + WHITE)
    assert tokens_of(s, 0) == [1, 0, 0, 0, 0, 0]
    assert s[st.MARKET + 0] == top and s[st.CURRENT] == 1


def test_cards_drawn_with_the_draw_two_post_are_not_counted_in_the_box() -> None:
    """With the Orient too, the observation counts the box from the places cards can be: the two
    drawn cards wait outside every deck, market and hand, and must not read as boxed."""
    s = Position(2, modules=TP + ("orient",)).nobles().trading_posts(0, "draw_two").build()
    s = play(s, RESERVE_DECK + 1)
    assert phase_of(s) == "keep_drawn_card"
    obs = np.zeros(obs_dim(st.MOD_TRADING_POSTS | st.MOD_ORIENT), np.float32)
    observe(s, 0, obs)
    assert obs[O_BOX] == 0


def test_draw_two_keeps_one_reserved_and_puts_the_other_under_the_deck() -> None:
    s = tp().trading_posts(0, "draw_two").build()
    first, second = deck(s, 1)[-1], deck(s, 1)[-2]
    s = play(s, RESERVE_DECK + 1)
    assert phase_of(s) == "keep_drawn_card" and legal(s) == {KEEP_DRAWN, KEEP_DRAWN + 1}
    # The drawn cards are shown to their owner only; the others see two hidden level-2 cards.
    own, other = np.zeros(obs_dim(st.MOD_TRADING_POSTS), np.float32), np.zeros(obs_dim(1), np.float32)
    observe(s, 0, own)
    observe(s, 1, other)
    np.testing.assert_array_equal(own[O_PDRAWN : O_PDRAWN + CARD_DIM], CARD_TABLE[first])
    np.testing.assert_array_equal(
        own[O_PDRAWN + FULL_CARD_DIM : O_PDRAWN + FULL_CARD_DIM + CARD_DIM], CARD_TABLE[second]
    )
    for k in range(2):
        off = O_PDRAWN + k * FULL_CARD_DIM
        np.testing.assert_array_equal(other[off : off + CARD_DIM], HIDDEN_CARD_TABLE[1])
    s = play(s, KEEP_DRAWN + 1)
    d = to_dict(s)
    assert d["players"][0]["reserved"] == [{"card": second, "blind": True}]
    assert d["decks"][1][0] == first, "the other card goes to the bottom of its deck"
    assert tokens_of(s, 0)[5] == 1, "reserving still gives a gold"


def test_draw_two_with_one_card_left_reserves_it() -> None:
    # The other level-3 deck cards must still be somewhere: player 1 has bought them.
    pos = tp().trading_posts(0, "draw_two").deck_size(2, 1, to=1)
    last = pos.deck(2)[-1]
    s = pos.build()
    s = play(s, RESERVE_DECK + 2)
    assert phase_of(s) == "main" and to_dict(s)["players"][0]["reserved"] == [{"card": last, "blind": True}]


def test_extra_token_with_two_of_a_kind_is_of_another_colour() -> None:
    s = tp().trading_posts(0, "extra_token").bank("4W 4U 4R 4K 5*").build()
    s = play(s, TAKE2_SAME + RED)
    assert phase_of(s) == "trading_post_extra_token"
    assert legal(s) == {TP_EXTRA_TOKEN + c for c in (WHITE, BLUE, BLACK)}  # not red, not empty green
    s = play(s, TP_EXTRA_TOKEN + BLUE)
    assert tokens_of(s, 0) == [0, 1, 0, 2, 0, 0]


def test_two_of_a_kind_still_needs_four_in_the_bank() -> None:
    s = tp().trading_posts(0, "extra_token").bank("4W 4U 4G 3R 4K 5*").build()
    assert TAKE2_SAME + RED not in legal(s)


def test_gold_counts_double_when_buying() -> None:
    card = 63  # L2 red, 3 points, costs 6 red
    pos = tp(4).slot(4, card).tokens(0, "3*")
    s = pos.build()
    assert BUY_MARKET + 4 not in legal(s), "without the power 3 gold do not pay 6"
    s = pos.trading_posts(0, "gold_double").build()
    assert BUY_MARKET + 4 in legal(s)
    s = play(s, BUY_MARKET + 4)
    assert tokens_of(s, 0) == [0, 0, 0, 0, 0, 0] and bonus_of(s, 0)[RED] == 1


def test_gold_counts_double_gives_no_change() -> None:
    """5 red owed and no red token: 3 gold (worth 6) pay, and the extra 1 gives nothing back."""
    pos = tp(4).slot(4, 42).tokens(0, "3*").trading_posts(0, "gold_double")
    before = pos.build()
    s = play(before, BUY_MARKET + 4)  # 42: white, costs 5 red
    assert owner_of(s, 42) == 0 and tokens_of(s, 0) == [0] * 6
    assert bank_of(s)[5] == bank_of(before)[5] + 3
    # With 1 red token the 4 left take exactly 2 gold: 1 red + 2 gold, one gold kept.
    pos = tp(4).slot(4, 42).tokens(0, "1R 3*").trading_posts(0, "gold_double")
    s = play(pos.build(), BUY_MARKET + 4)
    assert tokens_of(s, 0) == [0, 0, 0, 0, 0, 1]


def test_gold_counts_double_never_spends_a_token_it_does_not_need() -> None:
    """Owing 3 white with 2 white + 1 gold: 1 white + 1 gold pays (the second white stays)."""
    s = tp().slot(0, 25).tokens(0, "2W 1*").trading_posts(0, "gold_double").build()
    s = play(s, BUY_MARKET + 0)  # 25 costs 3 white
    assert tokens_of(s, 0) == [1, 0, 0, 0, 0, 0]
    # An even shortfall uses every coloured token: 3 owed with 1 white -> 1 white + 1 gold.
    s = tp().slot(0, 25).tokens(0, "1W 2*").trading_posts(0, "gold_double").build()
    s = play(s, BUY_MARKET + 0)
    assert tokens_of(s, 0) == [0, 0, 0, 0, 0, 1]


def test_gold_still_counts_one_for_the_token_limit() -> None:
    s = tp().trading_posts(0, "gold_double").tokens(0, "5* 2W 1U").build()
    s = play(s, TAKE3)  # 8 + 3 = 11 tokens
    assert phase_of(s) == "discard"


def test_points_post_gives_one_point_per_post_and_counts_for_the_end() -> None:
    cards = [73, 77, 69]  # 5 + 5 + 3 points
    greens = base_cards(GREEN)[:5]  # 0-point greens: 5 green bonuses
    s = tp().give(0, *cards, *greens).trading_posts(0, "extra_token").build()
    assert prestige_of(s, 0) == 13
    # Only the points post qualifies (5 green); the player already holds one other post.
    s = play(s, TAKE3)
    assert held(s, 0) == (1 << 2) | (1 << 4)
    assert prestige_of(s, 0) == 15, "1 point per trading post held, this one included"
    assert s[st.FINAL_ROUND] == 1, "trading-post points count towards the 15-point end"


def test_every_player_may_take_the_same_trading_post() -> None:
    """Each power's column holds a tile per player: all four players get the 2-white post."""
    whites = base_cards(WHITE)[:8]
    pos = tp(4)
    for p in range(4):
        pos.give(p, *whites[2 * p : 2 * p + 2])
    s = play(pos.build(), TAKE3, TAKE3, TAKE3, TAKE3)
    assert [held(s, p) for p in range(4)] == [1 << 2] * 4


def test_trading_posts_are_checked_after_the_nobles() -> None:
    # 4 white, 4 blue, 3 green: nobles 0 (4W 4U) and 5 (3W 3U 3G) qualify, and the 2-white post.
    cards = [*base_cards(WHITE)[:4], *base_cards(BLUE)[:4], *base_cards(GREEN)[:3]]
    s = tp().give(0, *cards).nobles(0, 5, 3).build()
    s = play(s, TAKE3)
    assert phase_of(s) == "noble" and held(s, 0) == 0, "the noble choice comes first"
    s = play(s, CHOOSE_NOBLE + 1)
    assert held(s, 0) == 1 << 2 and phase_of(s) == "main" and s[st.CURRENT] == 1
