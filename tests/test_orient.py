"""The Orient (docs/rules.md 7.3): one test per rule, each from a constructed position."""

from __future__ import annotations

import numpy as np

from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import (
    BUY_DG_MARKET,
    BUY_DG_RESERVED,
    BUY_MARKET,
    BUY_OMARKET,
    FREE_CARD,
    PAIR_TARGET,
    RESERVE_ODECK,
    RESERVE_OMARKET,
    SACRIFICE,
    TAKE3,
)
from splendor_env.cards import ALL_CARD_EFFECT, ALL_CARD_LEVEL, EFFECTS, NOBLE_REQ, NUM_CARDS
from splendor_env.deal import new_state
from splendor_env.observation import O_CARDS_COLOUR, OBS_DIM_ALL, observe
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

OR = ("orient",)
WHITE, BLUE, GREEN, RED, BLACK = range(5)
DOUBLE_GOLD = 90  # costs 3 green
PAIR = 95  # costs 3 blue 2 green
PAIR_FREE = 108  # costs 4 green 3 red 1 black
DOUBLE_BONUS_BLACK = 100  # costs 3 blue 4 red
RESERVE_NOBLE_GREEN = 105  # an ordinary card
FREE_L2 = 110  # black, costs 6 white 3 blue 1 black
SAC_RED = 115  # black, 3 points: sacrifice 2 red


def orient(num_players: int = 2) -> Position:
    """An Orient game with no nobles on offer, so that no noble visit interferes."""
    return Position(num_players, modules=OR).nobles()


def test_orient_market_has_two_cards_per_level_from_its_own_decks() -> None:
    s = new_state(3, seed=4, modules=OR)
    d = to_dict(s)
    for lvl in range(3):
        assert len(d["orient_market"][lvl]) == 2 and len(d["orient_decks"][lvl]) == 8
        assert all(ALL_CARD_LEVEL[c] == lvl and c >= NUM_CARDS for c in d["orient_market"][lvl])
        assert len(d["market"][lvl]) == 4 and all(c < NUM_CARDS for c in d["market"][lvl])
    placed = [c for row in d["orient_market"] for c in row] + sum(d["orient_decks"], [])
    assert sorted(placed) == list(range(90, 120))


def test_bought_or_reserved_orient_card_is_replaced_from_the_orient_deck() -> None:
    s = orient().slot(12, DOUBLE_GOLD).tokens(0, "3G").build()
    top = deck(s, 3)[-1]
    s = play(s, BUY_OMARKET + 0)
    assert owner_of(s, DOUBLE_GOLD) == 0 and s[st.OMARKET + 0] == top
    top2 = deck(s, 5)[-1]
    card = s[st.OMARKET + 5]
    s = play(s, RESERVE_OMARKET + 5)  # player 1 reserves an Orient level-3 card
    assert to_dict(s)["players"][1]["reserved"] == [{"card": int(card), "blind": False}]
    assert s[st.OMARKET + 5] == top2


def test_blind_reserve_from_an_orient_deck() -> None:
    s = orient().build()
    top = deck(s, 4)[-1]
    s = play(s, RESERVE_ODECK + 1)
    assert to_dict(s)["players"][0]["reserved"] == [{"card": top, "blind": True}]


def test_empty_orient_deck_leaves_the_slot_empty() -> None:
    s = orient().slot(12, DOUBLE_GOLD).tokens(0, "3G").deck_size(3, 0, to="box").build()
    s = play(s, BUY_OMARKET + 0)
    assert s[st.OMARKET + 0] == -1


def test_double_gold_card_has_no_bonus_and_pays_two_virtual_gold() -> None:
    target = 25  # red, costs 3 white
    pos = orient().give(0, DOUBLE_GOLD).slot(0, target).tokens(0, "1W")
    s = pos.build()
    assert bonus_of(s, 0) == [0, 0, 0, 0, 0]
    ids = legal(s)
    assert BUY_MARKET + 0 not in ids and BUY_DG_MARKET + 0 in ids
    s = play(s, BUY_DG_MARKET + 0)
    assert owner_of(s, target) == 0 and owner_of(s, DOUBLE_GOLD) == st.BOX
    assert tokens_of(s, 0) == [0, 0, 0, 0, 0, 0]
    po = st.player_offset(0)
    assert s[po + st.P_CARDS] == 1, "the spent double-gold card leaves the player's cards"


def test_virtual_gold_is_spent_before_tokens_and_real_gold_after_it() -> None:
    target = 25  # 3 white: 1 white token + 2 virtual gold; no token the purchase does not need
    s = orient().give(0, DOUBLE_GOLD).slot(0, target).tokens(0, "2W 1*").build()
    s = play(s, BUY_DG_MARKET + 0)
    assert tokens_of(s, 0) == [1, 0, 0, 0, 0, 1], "virtual gold covers 2 of the 3 white: one white is kept"
    # 4 short: 2 virtual + 2 real gold.
    s = orient(4).give(0, DOUBLE_GOLD).slot(4, 63).tokens(0, "2R 3*").build()
    s = play(s, BUY_DG_MARKET + 4)  # 63 costs 6 red
    assert tokens_of(s, 0) == [0, 0, 0, 0, 0, 1]


def test_double_gold_is_spent_only_when_held_and_needed() -> None:
    target = 25
    s = orient().slot(0, target).tokens(0, "1W").build()
    assert rules.illegal_reason(s, BUY_DG_MARKET + 0) == rules.R_NO_DOUBLE_GOLD
    s = orient().give(0, DOUBLE_GOLD).slot(0, target).tokens(0, "3W").build()
    assert rules.illegal_reason(s, BUY_DG_MARKET + 0) == rules.R_DOUBLE_GOLD_NOT_NEEDED
    assert BUY_MARKET + 0 in legal(s)
    s = orient().give(0, DOUBLE_GOLD).reserve(0, target).tokens(0, "1W").build()
    assert BUY_DG_RESERVED + 0 in legal(s)


def test_pair_card_cannot_be_bought_without_a_card_with_a_bonus() -> None:
    s = orient().slot(12, PAIR).tokens(0, "3U 2G").build()
    assert rules.illegal_reason(s, BUY_OMARKET + 0) == rules.R_NO_PAIR_TARGET
    # A double-gold card has no bonus: still not enough.
    s = orient().give(0, DOUBLE_GOLD).slot(12, PAIR).tokens(0, "3U 2G").build()
    assert BUY_OMARKET + 0 not in legal(s)


def test_pair_attaches_to_a_chosen_purchased_card_before_the_refill() -> None:
    red, blue = base_cards(RED)[0], base_cards(BLUE)[0]
    pos = orient().give(0, red, blue, DOUBLE_GOLD).slot(12, PAIR).tokens(0, "2U 2G")
    s = pos.build()
    s = play(s, BUY_OMARKET + 0)  # 3 blue 2 green, one blue paid by the bonus
    assert phase_of(s) == "pair_target" and s[st.OMARKET + 0] == -1
    assert legal(s) == {PAIR_TARGET + red, PAIR_TARGET + blue}, "only owned cards that have a colour"
    s = play(s, PAIR_TARGET + red)
    assert bonus_of(s, 0) == [0, 1, 0, 2, 0]
    assert to_dict(s)["players"][0]["pairs"] == {str(PAIR): red}
    assert s[st.OMARKET + 0] >= 0


def test_pair_with_one_possible_host_attaches_alone() -> None:
    red = base_cards(RED)[0]
    s = play(orient().give(0, red).slot(12, PAIR).tokens(0, "3U 2G").build(), BUY_OMARKET + 0)
    assert phase_of(s) == "main" and bonus_of(s, 0) == [0, 0, 0, 2, 0]


def test_pair_free_level1_pairs_then_takes_a_face_up_level1_card_then_refills_both() -> None:
    red = base_cards(RED)[0]
    free = base_cards(GREEN)[0]
    pos = orient(4).give(0, red).slot(14, PAIR_FREE).slot(1, free).slot(12, DOUBLE_GOLD)
    s = pos.tokens(0, "4G 2R 1K").build()
    base_top, orient_top = deck(s, 0)[-1], deck(s, 4)[-1]
    s = play(s, BUY_OMARKET + 2)  # pair attaches alone (one host), then the free card
    assert phase_of(s) == "free_card"
    level1 = [m for m in (0, 1, 2, 3, 12, 13) if s[st.slot_addr(m)] >= 0]
    assert legal(s) == {FREE_CARD + m for m in level1}, "any face-up level-1 card, base or Orient"
    s = play(s, FREE_CARD + 1)
    assert owner_of(s, free) == 0 and tokens_of(s, 0) == [0, 0, 0, 0, 0, 0], "not a purchase: nothing paid"
    assert bonus_of(s, 0) == [0, 0, 1, 2, 0]
    assert s[st.MARKET + 1] == base_top and s[st.OMARKET + 2] == orient_top


def test_free_card_applies_its_own_effect() -> None:
    # free level 2 takes a pair + free level 1 card: pair, then a free level-1 card.
    red = base_cards(RED)[0]
    pos = orient(4).give(0, red).slot(16, FREE_L2).slot(15, PAIR_FREE)
    s = pos.tokens(0, "6W 3U 1K").build()
    s = play(s, BUY_OMARKET + 4)
    assert phase_of(s) == "free_card"
    assert FREE_CARD + 15 in legal(s) and all(
        ALL_CARD_LEVEL[s[st.slot_addr(a - FREE_CARD)]] == 1 for a in legal(s)
    )
    s = play(s, FREE_CARD + 15)
    assert phase_of(s) == "pair_target" and legal(s) == {PAIR_TARGET + red, PAIR_TARGET + FREE_L2}
    s = play(s, PAIR_TARGET + FREE_L2)
    assert phase_of(s) == "free_card", "after the pair, the pair card's own free level-1 card"
    assert all(a - FREE_CARD in (0, 1, 2, 3, 12, 13) for a in legal(s))
    s = play(s, min(legal(s)))
    assert phase_of(s) == "main" and owner_of(s, FREE_L2) == 0 and owner_of(s, PAIR_FREE) == 0


def test_double_bonus_gives_two_bonuses_but_counts_as_one_card() -> None:
    s = orient(4).slot(14, DOUBLE_BONUS_BLACK).tokens(0, "3U 4R").build()
    s = play(s, BUY_OMARKET + 2)
    assert bonus_of(s, 0) == [0, 0, 0, 0, 2] and s[st.player_offset(0) + st.P_CARDS] == 1


def test_reserve_noble_cards_are_ordinary_cards() -> None:
    assert EFFECTS[ALL_CARD_EFFECT[RESERVE_NOBLE_GREEN]] == "none"
    s = orient(4).slot(14, RESERVE_NOBLE_GREEN).tokens(0, "2W 2U 2R 2K").build()
    s = play(s, BUY_OMARKET + 2)
    assert bonus_of(s, 0) == [0, 0, 1, 0, 0] and prestige_of(s, 0) == 1 and phase_of(s) == "main"


def test_sacrifice_needs_two_cards_of_the_colour_and_no_tokens() -> None:
    reds = base_cards(RED)[:3]
    s = orient().give(0, reds[0]).slot(16, SAC_RED).build()
    assert rules.illegal_reason(s, BUY_OMARKET + 4) == rules.R_CANNOT_SACRIFICE
    # Exactly two: both go to the box without a decision.
    s = orient().give(0, *reds[:2]).slot(16, SAC_RED).tokens(0, "2R").build()
    s = play(s, BUY_OMARKET + 4)
    assert phase_of(s) == "main" and tokens_of(s, 0)[RED] == 2, "tokens and bonuses do not pay for it"
    assert owner_of(s, reds[0]) == owner_of(s, reds[1]) == st.BOX and owner_of(s, SAC_RED) == 0
    assert bonus_of(s, 0) == [0, 0, 0, 0, 1] and prestige_of(s, 0) == 3


def test_sacrifice_choice_when_more_cards_than_needed() -> None:
    reds = base_cards(RED)[:3]
    s = orient().give(0, *reds).slot(16, SAC_RED).build()
    s = play(s, BUY_OMARKET + 4)
    assert phase_of(s) == "sacrifice_choice" and legal(s) == {SACRIFICE + c for c in reds}
    s = play(s, SACRIFICE + reds[2])
    assert legal(s) == {SACRIFICE + c for c in reds[:2]}
    s = play(s, SACRIFICE + reds[0])
    assert owner_of(s, reds[1]) == 0 and bonus_of(s, 0)[RED] == 1 and phase_of(s) == "main"


def test_sacrifice_discards_attached_pair_cards_first() -> None:
    reds = base_cards(RED)[:2]
    blue = base_cards(BLUE)[0]
    s = orient().give(0, *reds, blue).pair(0, PAIR, reds[0]).slot(16, SAC_RED).build()
    assert bonus_of(s, 0) == [0, 1, 0, 3, 0]
    s = play(s, BUY_OMARKET + 4)  # the pair goes first, alone; then one of the two red cards
    assert owner_of(s, PAIR) == st.BOX
    assert phase_of(s) == "sacrifice_choice" and legal(s) == {SACRIFICE + c for c in reds}
    s = play(s, SACRIFICE + reds[0])
    assert bonus_of(s, 0) == [0, 1, 0, 1, 1]


def test_sacrifice_keeps_nobles_already_taken() -> None:
    reds, blacks = base_cards(RED)[:4], base_cards(BLACK)[:4]
    rk = [n for n in range(10) if NOBLE_REQ[n].tolist() == [0, 0, 0, 4, 4]][0]
    s = orient().give(0, *reds, *blacks).slot(16, SAC_RED).noble(0, rk).build()
    assert prestige_of(s, 0) == 3
    s = play(s, BUY_OMARKET + 4, SACRIFICE + reds[0], SACRIFICE + reds[1])
    assert to_dict(s)["nobles"] == [{"noble": rk, "owner": 0}] and prestige_of(s, 0) == 6


def test_orient_actions_are_masked_without_the_module() -> None:
    s = Position(modules=("cities",)).build()
    assert rules.illegal_reason(s, RESERVE_OMARKET) == rules.R_MODULE_OFF
    assert all(a < 72 for a in legal(s))
    assert TAKE3 in legal(s)


def test_double_gold_payment_never_spends_an_unneeded_token() -> None:
    target = 25  # costs 3 white
    # 3 short: both virtual gold, then 1 real gold; the white token is not touched.
    s = orient().give(0, DOUBLE_GOLD).slot(0, target).tokens(0, "2*").build()
    s = play(s, BUY_DG_MARKET + 0)
    assert tokens_of(s, 0) == [0, 0, 0, 0, 0, 1]
    # 1 short with 2 white: one virtual gold for the shortfall, the other replaces a white token.
    s = orient().give(0, DOUBLE_GOLD).slot(0, target).tokens(0, "2W").build()
    s = play(s, BUY_DG_MARKET + 0)
    assert tokens_of(s, 0) == [1, 0, 0, 0, 0, 0]


def test_observation_counts_cards_per_colour_not_bonuses() -> None:
    """A double-bonus card is one card (two bonuses); a pair card counts in its host's colour."""
    black, red, red2 = base_cards(BLACK)[0], base_cards(RED)[0], base_cards(RED)[1]
    s = orient().give(0, black, red, DOUBLE_BONUS_BLACK).pair(0, PAIR, red).give(1, red2).build()
    assert bonus_of(s, 0)[BLACK] == 3 and bonus_of(s, 0)[RED] == 2
    obs = np.zeros(OBS_DIM_ALL, np.float32)
    observe(s, 1, obs)  # seat 1 observes: its own block first, then seat 0
    mine, theirs = obs[O_CARDS_COLOUR : O_CARDS_COLOUR + 5], obs[O_CARDS_COLOUR + 5 : O_CARDS_COLOUR + 10]
    assert theirs.tolist() == [0, 0, 0, 2, 2] and mine.tolist() == [0, 0, 0, 1, 0]


def test_unused_virtual_gold_is_lost() -> None:
    """1 short: one virtual gold pays, the other is not kept (no gold token, nothing for later)."""
    whites = base_cards(WHITE)[:2]
    s = orient().give(0, DOUBLE_GOLD, *whites).slot(0, 25).build()  # 25 costs 3 white: 2 bonuses + 1
    s = play(s, BUY_DG_MARKET + 0)
    assert owner_of(s, 25) == 0 and owner_of(s, DOUBLE_GOLD) == st.BOX
    assert tokens_of(s, 0) == [0] * 6 and bank_of(s)[5] == 5


def test_sacrifice_never_uses_reserved_cards() -> None:
    reds = base_cards(RED)[:2]
    s = orient().give(0, reds[0]).reserve(0, reds[1]).slot(16, SAC_RED).build()
    assert rules.illegal_reason(s, BUY_OMARKET + 4) == rules.R_CANNOT_SACRIFICE


def test_a_pair_counts_as_a_card_of_its_hosts_colour_for_a_sacrifice() -> None:
    """One red card with a pair attached: two red cards to sacrifice, the pair going first."""
    red = base_cards(RED)[0]
    s = orient().give(0, red).pair(0, PAIR, red).slot(16, SAC_RED).build()
    assert BUY_OMARKET + 4 in legal(s)
    s = play(s, BUY_OMARKET + 4)
    assert owner_of(s, PAIR) == owner_of(s, red) == st.BOX and owner_of(s, SAC_RED) == 0
    assert phase_of(s) == "main" and bonus_of(s, 0) == [0, 0, 0, 0, 1]
