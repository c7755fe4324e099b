"""One test per rule of docs/rules.md sections 2-4 and 6, on constructed positions.

Every test checks both sides of the engine: what the legality mask offers (and
the reason ``illegal_reason`` gives for what it refuses) and what applying the
action does to the state.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import PAIR_TARGET
from splendor_env.cards import (
    CARD_COLOUR,
    CARD_COST,
    CARD_LEVEL,
    CARD_POINTS,
    LEVEL_OFFSETS,
    LEVEL_SIZES,
    TOKEN_COLOURS,
)
from splendor_env.deal import new_state
from splendor_env.invariants import check_invariants
from splendor_env.observation import CARD_DIM, O_SEATS, OBS_DIM, S_RES, SEAT_DIM, observe
from splendor_env.snapshot import from_dict, to_dict
from tests.helpers import (
    GOLD,
    PASS,
    G,
    K,
    Position,
    R,
    U,
    W,
    bank_of,
    base_cards,
    bonus_of,
    buy_market,
    buy_reserved,
    choose_noble,
    deck,
    discard,
    legal,
    make_state,
    market_card,
    owner_of,
    phase_of,
    play,
    player,
    refused,
    reserve_deck,
    reserve_market,
    take1,
    take2diff,
    take2same,
    take3,
    tokens6,
    tokens_of,
)

TAKE_IDS = set(range(30))
TAKE3_IDS = set(range(10))
TAKE2DIFF_IDS = set(range(10, 20))
TAKE1_IDS = set(range(20, 25))
RESERVE_IDS = set(range(30, 45))
DISCARD_IDS = set(range(60, 66))
NOBLE_IDS = set(range(66, 71))


def cards_purchased(s: np.ndarray, seat: int) -> list[int]:
    return player(s, seat)["purchased"]


def reserved_of(s: np.ndarray, seat: int) -> list[tuple[int, bool]]:
    return [(r["card"], r["blind"]) for r in player(s, seat)["reserved"]]


def noble_owner(s: np.ndarray, noble: int) -> int | None:
    for entry in to_dict(s)["nobles"]:
        if entry["noble"] == noble:
            return entry["owner"]
    raise AssertionError(f"noble {noble} not in the game")


def rewards(s: np.ndarray) -> list[float]:
    out = np.zeros(st.MAX_PLAYERS, dtype=np.float64)
    rules.terminal_rewards(s, out)
    return out[: int(s[st.N_PLAYERS])].tolist()


# ---------------------------------------------------------------------------
# Setup (section 2)


@pytest.mark.parametrize("n,gems", [(2, 4), (3, 5), (4, 7)])
def test_setup(n: int, gems: int) -> None:
    s = new_state(n, seed=7)
    d = to_dict(s)
    assert d["bank"] == dict(zip(TOKEN_COLOURS, [gems] * 5 + [5], strict=True))
    for lvl, row in enumerate(d["market"]):
        assert len(row) == 4 and all(CARD_LEVEL[c] == lvl for c in row), "4 face-up cards of each level"
    assert [len(x) for x in d["decks"]] == [36, 26, 16]
    assert [int(s[st.DECK_COUNT + lvl]) for lvl in range(3)] == [36, 26, 16]
    offered = [e["noble"] for e in d["nobles"]]
    assert len(offered) == n + 1 and len(set(offered)) == n + 1
    assert all(e["owner"] is None for e in d["nobles"])
    assert len(d["players"]) == n
    for p in d["players"]:
        assert sum(p["tokens"].values()) == 0
        assert sum(p["bonuses"].values()) == 0
        assert p["prestige"] == 0 and p["purchased"] == [] and p["reserved"] == [] and p["nobles"] == []
    assert d["current_player"] == 0 and d["phase"] == "main" and d["turn"] == 0
    assert not d["final_round"] and d["winners"] == []
    assert check_invariants(s) == []


@pytest.mark.parametrize("n", [2, 3, 4])
def test_setup_deals_every_card_of_its_level(n: int) -> None:
    """Market plus deck of each level is exactly that level's cards."""
    d = to_dict(new_state(n, seed=3))
    for lvl in range(3):
        cards = sorted(d["market"][lvl] + d["decks"][lvl])
        first = int(LEVEL_OFFSETS[lvl])
        assert cards == list(range(first, first + int(LEVEL_SIZES[lvl])))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_same_seed_same_deal_different_seed_different_deal(n: int) -> None:
    assert np.array_equal(new_state(n, seed=123), new_state(n, seed=123))
    deals = {new_state(n, seed=seed).tobytes() for seed in range(20)}
    assert len(deals) == 20
    decks = {tuple(to_dict(new_state(n, seed=seed))["decks"][2]) for seed in range(20)}
    assert len(decks) == 20, "each level is shuffled, not only the first"
    nobles = {tuple(e["noble"] for e in to_dict(new_state(n, seed=s))["nobles"]) for s in range(20)}
    assert len(nobles) > 1, "the nobles on offer depend on the seed"


@pytest.mark.parametrize("bad", [1, 5, 0])
def test_new_state_rejects_player_counts(bad: int) -> None:
    with pytest.raises(ValueError, match="num_players"):
        new_state(bad)


# ---------------------------------------------------------------------------
# Taking tokens


def test_take_three_different() -> None:
    s = Position(2).build()
    assert legal(s) & TAKE_IDS == TAKE3_IDS | {take2same(c) for c in range(5)}
    after = play(s, take3(W, U, R))
    assert tokens_of(after, 0) == [1, 1, 0, 1, 0, 0]
    assert bank_of(after) == [3, 3, 4, 3, 4, 5]
    assert after[st.CURRENT] == 1 and phase_of(after) == "main" and after[st.TURN] == 1


def test_take_three_refuses_an_empty_colour() -> None:
    s = Position(2).bank("4U 4G 4R 4K 5*").build()  # white all with the opponent
    assert take3(W, U, G) not in legal(s)
    assert refused(s, take3(W, U, G)) == rules.R_COLOUR_EMPTY
    assert take3(U, G, R) in legal(s)


def test_exactly_two_colours_available() -> None:
    """Only two colours: one of each, or one of either; a 3-colour take is impossible."""
    s = Position(2).bank("4W 1U 5*").build()
    takes = legal(s) & TAKE_IDS
    assert takes == {take2diff(W, U), take1(W), take1(U), take2same(W)}
    after = play(s, take2diff(W, U))
    assert tokens_of(after, 0) == [1, 1, 0, 0, 0, 0] and bank_of(after) == [3, 0, 0, 0, 0, 5]
    after = play(s, take1(U))
    assert tokens_of(after, 0) == [0, 1, 0, 0, 0, 0] and bank_of(after) == [4, 0, 0, 0, 0, 5]


def test_exactly_one_colour_available() -> None:
    s = Position(2).bank("3R 5*").build()
    assert legal(s) & TAKE_IDS == {take1(R)}
    assert refused(s, take2diff(W, R)) == rules.R_COLOUR_EMPTY
    assert refused(s, take2same(R)) == rules.R_BANK_BELOW_4
    after = play(s, take1(R))
    assert tokens_of(after, 0) == [0, 0, 0, 1, 0, 0] and bank_of(after) == [0, 0, 0, 2, 0, 5]


def test_fewer_than_three_refused_with_three_colours_even_if_it_forces_discards() -> None:
    s = Position(2).tokens(0, "3W 3U 3G").bank("1W 1U 1G 1R 1K 5*").build()
    for a in TAKE2DIFF_IDS | TAKE1_IDS:
        assert a not in legal(s)
        assert refused(s, a) == rules.R_MUST_TAKE_MORE
    assert legal(s) & TAKE_IDS == TAKE3_IDS
    after = play(s, take3(G, R, K))
    assert phase_of(after) == "discard" and after[st.CURRENT] == 0


@pytest.mark.parametrize("in_bank,allowed", [(3, False), (4, True), (5, True)])
def test_take_two_same_needs_four_in_bank(in_bank: int, allowed: bool) -> None:
    s = Position(3).bank(f"{in_bank}G 5W 5U 5R 5K 5*").build()
    assert (take2same(G) in legal(s)) is allowed
    if allowed:
        after = play(s, take2same(G))
        assert tokens_of(after, 0)[G] == 2 and bank_of(after)[G] == in_bank - 2
    else:
        assert refused(s, take2same(G)) == rules.R_BANK_BELOW_4


def test_take_actions_never_give_gold() -> None:
    """No take action moves gold, whatever the bank holds."""
    for bank in ("4W 4U 4G 4R 4K 5*", "4W 1U 5*", "2R 5*"):
        s = Position(2).bank(bank).build()
        for a in legal(s) & TAKE_IDS:
            after = play(s, a)
            assert tokens_of(after, 0)[GOLD] == 0 and bank_of(after)[GOLD] == 5
    only_gold = Position(2).bank("5*").build()
    assert legal(only_gold) & TAKE_IDS == set()


# ---------------------------------------------------------------------------
# Reserving


def test_reserve_face_up_gives_gold_and_refills() -> None:
    s = Position(2).build()
    card = market_card(s, 1, 2)
    top = deck(s, 1)[-1]
    after = play(s, reserve_market(1, 2))
    assert reserved_of(after, 0) == [(card, False)]
    assert tokens_of(after, 0)[GOLD] == 1 and bank_of(after)[GOLD] == 4
    assert market_card(after, 1, 2) == top, "slot refilled from the top of the same level's deck"
    assert len(deck(after, 1)) == len(deck(s, 1)) - 1
    assert after[st.CURRENT] == 1


def test_reserve_without_gold_left() -> None:
    s = Position(2).tokens(1, "5*").build()
    assert bank_of(s)[GOLD] == 0
    assert reserve_market(0, 0) in legal(s) and reserve_deck(2) in legal(s)
    card = market_card(s, 0, 0)
    after = play(s, reserve_market(0, 0))
    assert reserved_of(after, 0) == [(card, False)]
    assert tokens_of(after, 0)[GOLD] == 0 and bank_of(after)[GOLD] == 0


def test_fourth_reservation_refused() -> None:
    s = Position(2).reserve(0, 0).reserve(0, 40).reserve(0, 70, blind=True).build()
    assert legal(s) & RESERVE_IDS == set()
    for a in RESERVE_IDS:
        assert refused(s, a) == rules.R_RESERVE_FULL
    two = Position(2).reserve(0, 0).reserve(0, 40).build()
    assert legal(two) & RESERVE_IDS == RESERVE_IDS


def test_blind_reserve_from_empty_deck_refused() -> None:
    s = Position(2).deck_size(2, 0).build()
    assert reserve_deck(2) not in legal(s)
    assert refused(s, reserve_deck(2)) == rules.R_EMPTY_DECK
    assert {reserve_deck(0), reserve_deck(1)} <= legal(s)
    assert reserve_market(2, 0) in legal(s), "the face-up level 3 cards can still be reserved"


def test_blind_reserve_takes_the_top_card() -> None:
    s = Position(2).build()
    top = deck(s, 0)[-1]
    after = play(s, reserve_deck(0))
    assert reserved_of(after, 0) == [(top, True)]
    assert tokens_of(after, 0)[GOLD] == 1
    assert deck(after, 0) == deck(s, 0)[:-1]
    assert to_dict(after)["market"] == to_dict(s)["market"]


def _reserve_block(obs: np.ndarray, rel_seat: int, r: int = 0) -> np.ndarray:
    off = O_SEATS + rel_seat * SEAT_DIM + S_RES + r * CARD_DIM
    return obs[off : off + CARD_DIM]


def _obs(s: np.ndarray, seat: int) -> np.ndarray:
    out = np.empty(OBS_DIM, dtype=np.float32)
    observe(s, seat, out)
    return out


def test_blind_reserve_hidden_from_opponents_but_not_owner() -> None:
    """The opponent sees present, blind and the level; the owner sees the whole card."""
    a = Position(2).reserve(0, 5, blind=True).build()
    b = Position(2).reserve(0, 30, blind=True).build()  # another level 1 card, same place
    hidden = _reserve_block(_obs(a, 1), rel_seat=1)
    expected = np.zeros(CARD_DIM, dtype=np.float32)
    expected[[0, 1, 2]] = 1.0  # present, blind, level 1
    assert hidden.tolist() == expected.tolist()
    assert np.array_equal(_obs(a, 1), _obs(b, 1)), "opponent cannot tell which card it is"
    own = _reserve_block(_obs(a, 0), rel_seat=0)
    assert own[0] == 1 and own[1] == 1 and own[2] == 1
    assert own[11:16].tolist() == CARD_COST[5].tolist() and own[10] == CARD_POINTS[5]
    assert not np.array_equal(_obs(a, 0), _obs(b, 0))


def test_face_up_reserve_visible_to_opponents() -> None:
    s = Position(2).reserve(0, 5).build()
    seen = _reserve_block(_obs(s, 1), rel_seat=1)
    assert seen[1] == 0 and seen[11:16].tolist() == CARD_COST[5].tolist()


def test_reserve_above_ten_tokens_requires_discards() -> None:
    s = Position(2).tokens(0, "3W 3U 3G 1R").build()
    assert reserve_market(0, 0) in legal(s)
    after = play(s, reserve_market(0, 0))
    assert sum(tokens_of(after, 0)) == 11
    assert phase_of(after) == "discard" and after[st.CURRENT] == 0
    assert legal(after) == {discard(W), discard(U), discard(G), discard(R), discard(GOLD)}


# ---------------------------------------------------------------------------
# Buying


def test_buy_from_market_pays_and_refills() -> None:
    s = Position(2).tokens(0, "2W 1K 2R").slot(1, 0).build()  # card 0: white, 2R 1K
    top = deck(s, 0)[-1]
    after = play(s, buy_market(0, 1))
    assert cards_purchased(after, 0) == [0]
    assert tokens_of(after, 0) == [2, 0, 0, 0, 0, 0]
    assert bank_of(after) == [2, 4, 4, 4, 4, 5]
    assert player(after, 0)["bonuses"]["white"] == 1
    assert market_card(after, 0, 1) == top and len(deck(after, 0)) == 35


def test_buy_and_reserve_with_empty_deck_leave_the_slot_empty() -> None:
    s = Position(2).tokens(0, "3W").slot(1, 25).deck_size(0, 0).build()  # card 25: 3W
    after = play(s, buy_market(0, 1))
    assert market_card(after, 0, 1) == -1 and len(deck(after, 0)) == 0
    for a in (buy_market(0, 1), reserve_market(0, 1)):
        assert a not in legal(after)
        assert refused(after, a) == rules.R_EMPTY_SLOT
    after = play(s, reserve_market(0, 2))
    assert market_card(after, 0, 2) == -1


def test_buy_reserved_card_compacts_the_reserve() -> None:
    s = (
        Position(2)
        .tokens(0, "3W")
        .reserve(0, 40, blind=True)
        .reserve(0, 25)
        .reserve(0, 70, blind=True)
        .build()
    )
    assert buy_reserved(1) in legal(s) and buy_reserved(0) not in legal(s)
    after = play(s, buy_reserved(1))
    assert cards_purchased(after, 0) == [25]
    assert reserved_of(after, 0) == [(40, True), (70, True)]
    market_before = to_dict(s)["market"]
    assert to_dict(after)["market"] == market_before, "buying from the reserve refills nothing"
    assert refused(with_current(after, 0), buy_reserved(2)) == rules.R_NO_RESERVED_CARD


def with_current(s: np.ndarray, seat: int) -> np.ndarray:
    d = to_dict(s)
    d["current_player"] = seat
    d["turn"] += (seat - d["turn"]) % d["num_players"]  # the seat on move is turn % num_players
    return from_dict(d)


@pytest.mark.parametrize(
    "held,paid,left",
    [
        ("2G 3*", "2G 2*", "1*"),  # gold only for the shortfall
        ("4G 2*", "4G", "2*"),  # gold never spent while the colour is held
        ("3G 1R 1*", "3G 1*", "1R"),
        ("0G 4*", "4*", ""),
    ],
)
def test_buying_with_gold(held: str, paid: str, left: str) -> None:
    s = Position(2).tokens(0, held).slot(0, 7).build()  # card 7: 4 green, 1 point
    after = play(s, buy_market(0, 0))
    assert tokens_of(after, 0) == tokens6(left)
    assert [b - a for a, b in zip(bank_of(s), bank_of(after), strict=True)] == tokens6(paid)
    assert player(after, 0)["prestige"] == 1


def test_cannot_afford_refused() -> None:
    s = Position(2).tokens(0, "3G").slot(0, 7).build()
    assert buy_market(0, 0) not in legal(s)
    assert refused(s, buy_market(0, 0)) == rules.R_CANNOT_AFFORD
    s2 = Position(2).tokens(0, "2G 1*").reserve(0, 7).build()
    assert refused(s2, buy_reserved(0)) == rules.R_CANNOT_AFFORD
    assert buy_market(0, 0) in legal(Position(2).tokens(0, "3G 1*").slot(0, 7).build())


def test_bonuses_covering_the_whole_cost_pay_nothing() -> None:
    s = Position(2).give(0, 16, 17, 18, 19).slot(0, 7).build()  # 4 green bonuses
    assert tokens_of(s, 0) == [0] * 6
    after = play(s, buy_market(0, 0))
    assert 7 in cards_purchased(after, 0)
    assert tokens_of(after, 0) == [0] * 6 and bank_of(after) == bank_of(s)


def test_bonuses_beyond_the_price_give_no_change() -> None:
    s = Position(2).tokens(0, "2U").give(0, 8, 9, 10, 11, 12).slot(0, 1).build()  # 3U
    after = play(s, buy_market(0, 0))
    assert tokens_of(after, 0) == [0, 2, 0, 0, 0, 0] and bank_of(after) == bank_of(s)
    partial = Position(2).tokens(0, "3R").give(0, 24, 25).slot(0, 15).build()  # 4R, 2 red bonuses
    after = play(partial, buy_market(0, 0))
    assert tokens_of(after, 0) == [0, 0, 0, 1, 0, 0]


# ---------------------------------------------------------------------------
# Token limit: the discard phase


def test_discard_phase_one_token_per_decision() -> None:
    s = Position(2).tokens(0, "3W 3U 2G 1*").build()
    after = play(s, take3(W, U, G))  # 12 tokens
    assert phase_of(after) == "discard" and after[st.CURRENT] == 0
    assert legal(after) == {discard(W), discard(U), discard(G), discard(GOLD)}, "only colours held"
    for a in (take3(R, K, W), reserve_deck(0), PASS):
        assert refused(after, a) == rules.R_NOT_MAIN_PHASE
    assert refused(after, discard(R)) == rules.R_NO_TOKEN
    assert refused(after, choose_noble(0)) == rules.R_NOT_NOBLE_PHASE
    one = play(after, discard(W))
    assert sum(tokens_of(one, 0)) == 11 and phase_of(one) == "discard" and one[st.CURRENT] == 0
    assert bank_of(one)[W] == bank_of(after)[W] + 1
    two = play(one, discard(GOLD))  # gold may be discarded too
    assert tokens_of(two, 0) == [3, 4, 3, 0, 0, 0] and bank_of(two)[GOLD] == 5
    assert phase_of(two) == "main" and two[st.CURRENT] == 1 and two[st.TURN] == 1


def test_can_discard_a_token_just_taken() -> None:
    s = Position(2).tokens(0, "3W 3U 2G 1*").build()
    after = play(s, take3(G, R, K))  # 12 tokens, 1 red and 1 black among them
    assert {discard(R), discard(K)} <= legal(after)
    done = play(after, discard(R), discard(K))
    assert tokens_of(done, 0) == [3, 3, 3, 0, 0, 1] and phase_of(done) == "main"
    assert bank_of(done)[R] == bank_of(s)[R] and bank_of(done)[K] == bank_of(s)[K]


def test_discard_does_not_happen_at_exactly_ten() -> None:
    s = Position(2).tokens(0, "3W 3U 1G").build()
    after = play(s, take3(W, U, G))
    assert sum(tokens_of(after, 0)) == 10 and phase_of(after) == "main" and after[st.CURRENT] == 1


def test_turn_continues_to_nobles_after_discarding_to_ten() -> None:
    s = Position(2).tokens(0, "3W 3U 3G 1*").give(0, 0, 1, 2, 3, 8, 9, 10, 11).nobles(0, 3, 4).build()
    after = play(s, take3(G, R, K), discard(W), discard(W))
    assert phase_of(after) == "discard" and noble_owner(after, 0) is None
    done = play(after, discard(W))
    assert noble_owner(done, 0) == 0 and player(done, 0)["prestige"] == 3
    assert phase_of(done) == "main" and done[st.CURRENT] == 1


# ---------------------------------------------------------------------------
# Nobles

WHITE4_BLUE3 = [0, 1, 2, 3, 8, 9, 10]  # purchased cards: 4 white, 3 blue bonuses (0 points)
GREEN3 = [16, 17, 18]


def test_single_qualifying_noble_comes_automatically() -> None:
    # Card 14 (blue, 1W 2G 2R) completes 4 white + 4 blue: noble 0.
    s = Position(2).tokens(0, "2G 2R").give(0, *WHITE4_BLUE3).slot(0, 14).nobles(0, 5, 3).build()
    after = play(s, buy_market(0, 0))
    assert noble_owner(after, 0) == 0
    assert noble_owner(after, 5) is None and noble_owner(after, 3) is None
    assert player(after, 0)["prestige"] == 3 and player(after, 0)["nobles"] == [0]
    assert phase_of(after) == "main" and after[st.CURRENT] == 1


def test_two_qualifying_nobles_the_player_chooses_one() -> None:
    s = Position(2).tokens(0, "2R").give(0, *WHITE4_BLUE3, *GREEN3).slot(0, 14).nobles(0, 5, 3).build()
    after = play(s, buy_market(0, 0))  # now 4W 4U 3G: nobles 0 (4W 4U) and 5 (3W 3U 3G)
    assert phase_of(after) == "noble" and after[st.CURRENT] == 0
    assert legal(after) == {choose_noble(0), choose_noble(1)}
    assert refused(after, choose_noble(2)) == rules.R_NOBLE_NOT_MET
    assert refused(after, choose_noble(3)) == rules.R_NO_NOBLE
    assert refused(after, take3(W, U, G)) == rules.R_NOT_MAIN_PHASE
    chose = play(after, choose_noble(1))
    assert noble_owner(chose, 5) == 0 and noble_owner(chose, 0) is None, "at most one noble per turn"
    assert player(chose, 0)["prestige"] == 3
    assert phase_of(chose) == "main" and chose[st.CURRENT] == 1
    # The other one stays on offer and comes automatically at the end of a later turn.
    later = play(chose, take3(W, U, G))
    assert noble_owner(later, 0) is None
    later = play(later, take3(W, G, K))
    assert noble_owner(later, 0) == 0 and player(later, 0)["prestige"] == 6
    assert phase_of(later) == "main" and later[st.CURRENT] == 1


def test_noble_owned_by_another_player_is_not_offered() -> None:
    """Noble 6 would qualify too, but seat 1 already has it: only the two on offer are choices."""
    s = (
        Position(2)
        .tokens(0, "2R")
        .give(0, *WHITE4_BLUE3, *GREEN3, 32, 33, 34)  # + 3 black bonuses
        .slot(0, 14)
        .nobles(0, 5)
        .noble(1, 6)  # slot 3 (index 2), owned by seat 1
        .build()
    )
    after = play(s, buy_market(0, 0))
    assert phase_of(after) == "noble"
    assert legal(after) == {choose_noble(0), choose_noble(1)}
    assert refused(after, choose_noble(2)) == rules.R_NO_NOBLE
    assert noble_owner(play(after, choose_noble(0)), 6) == 1


def test_nobles_count_bonuses_only_never_tokens() -> None:
    # 3 white + 4 blue bonuses, and 4 white tokens: noble 0 (4W 4U) must not come.
    s = Position(2).tokens(0, "4W").give(0, 0, 1, 2, 8, 9, 10, 11).nobles(0, 5, 3).build()
    after = play(s, take3(U, G, R))
    assert noble_owner(after, 0) is None and player(after, 0)["prestige"] == 0
    assert refused(s, choose_noble(0)) == rules.R_NOT_NOBLE_PHASE
    # Control: with the fourth white bonus the same move brings the noble.
    s = Position(2).tokens(0, "3W").give(0, 0, 1, 2, 3, 8, 9, 10, 11).nobles(0, 5, 3).build()
    assert noble_owner(play(s, take3(U, G, R)), 0) == 0


# ---------------------------------------------------------------------------
# No legal action: passing


def _affordable(card: int, bonuses: list[int], tokens: list[int]) -> bool:
    short = sum(max(0, int(CARD_COST[card, c]) - bonuses[c] - tokens[c]) for c in range(5))
    return short <= tokens[GOLD]


def stuck(num_players: int = 2, purchased: Mapping[int, list[int]] | None = None) -> Position:
    """Every player can only pass: no gem in the bank, 3 reserved cards each, nothing affordable.

    All gem tokens are spread over the players (at most 10 each); the market
    and the reserves are filled with cards that no player can afford.
    """
    total = st.GEMS_FOR_PLAYERS[num_players]
    hands = [[0] * 6 for _ in range(num_players)]
    for c in range(5):  # deal each colour to one player at a time, in colour order
        for i in range(total):
            hands[(c * total + i) * num_players // (5 * total)][c] += 1
    purchased = purchased or {}
    bonuses = [[0] * 5 for _ in range(num_players)]
    for p, cards in purchased.items():
        for card in cards:
            bonuses[p][int(CARD_COLOUR[card])] += 1
    used = {c for cs in purchased.values() for c in cs}
    pool = [
        c
        for c in range(90)
        if c not in used and not any(_affordable(c, bonuses[p], hands[p]) for p in range(num_players))
    ]
    pos = Position(num_players).bank("5*")
    market = []
    for lvl in range(3):
        for k, c in enumerate([c for c in pool if CARD_LEVEL[c] == lvl][:4]):
            pos.slot(lvl * 4 + k, c)
            market.append(c)
    rest = [c for c in pool if c not in market]
    assert len(market) == 12 and len(rest) >= 3 * num_players
    for p in range(num_players):
        pos.tokens(p, hands[p]).give(p, *purchased.get(p, []))
        for c in rest[3 * p : 3 * p + 3]:
            pos.reserve(p, c)
    return pos


def _bank_one_black(d: dict) -> np.ndarray:
    """``d`` with one black token of seat 1 (2 players) or 2 (3 players) put back in the bank."""
    seat = d["num_players"] - 1
    d["players"][seat]["tokens"]["black"] -= 1
    d["bank"]["black"] += 1
    return from_dict(d)


def test_pass_only_when_nothing_else_is_legal() -> None:
    s = stuck(2).build()
    assert legal(s) == {PASS}
    assert rules.illegal_reason(s, PASS) == 0
    fresh = Position(2).build()
    assert PASS not in legal(fresh)
    assert refused(fresh, PASS) == rules.R_PASS_NOT_ALLOWED


def test_pass_with_only_a_take_one_left_is_not_allowed() -> None:
    s = _bank_one_black(stuck(2).snapshot())
    assert legal(s) == {take1(K)}
    assert refused(s, PASS) == rules.R_PASS_NOT_ALLOWED


@pytest.mark.parametrize("n", [2, 3, 4])
def test_all_players_passing_in_a_row_ends_and_scores_the_game(n: int) -> None:
    # Seat 1 owns a 1-point card, so it wins the scored game.
    s = stuck(n, purchased={1: [7]}).build()
    for seat in range(n):
        assert phase_of(s) == "main" and s[st.CURRENT] == seat and legal(s) == {PASS}
        assert s[st.PASSES] == seat
        s = play(s, PASS)
    assert phase_of(s) == "game_over"
    assert to_dict(s)["winners"] == [1]
    assert rewards(s) == [1.0 if p == 1 else -1.0 for p in range(n)]
    assert legal(s) == set()


def test_a_non_pass_turn_resets_the_pass_count() -> None:
    s = play(stuck(3).build(), PASS)
    assert s[st.PASSES] == 1
    # Seat 2 puts a black token back into the bank: seat 1 must take it instead of passing.
    s = _bank_one_black(to_dict(s))
    assert legal(s) == {take1(K)}
    s = play(s, take1(K))
    assert s[st.PASSES] == 0 and phase_of(s) == "main"
    s = play(s, PASS, PASS)
    assert phase_of(s) == "main" and s[st.PASSES] == 2, "only 2 passes in a row so far"


def test_noble_can_arrive_on_a_pass_turn() -> None:
    s = stuck(2, purchased={0: [0, 1, 2, 3, 8, 9, 10, 11]}).nobles(0, 3, 4).build()
    assert legal(s) == {PASS}
    after = play(s, PASS)
    assert noble_owner(after, 0) == 0 and player(after, 0)["prestige"] == 3
    assert after[st.CURRENT] == 1 and after[st.PASSES] == 1


# ---------------------------------------------------------------------------
# End of the game (section 4)

FOURTEEN = [73, 77, 71]  # 5 + 5 + 4 points, white/blue/white bonuses


def test_fifteen_prestige_triggers_the_final_round_two_players() -> None:
    s = Position(2).tokens(0, "4G").give(0, *FOURTEEN).slot(0, 7).build()  # 7: 1 pt, 4G
    after = play(s, buy_market(0, 0))
    assert player(after, 0)["prestige"] == 15
    assert after[st.FINAL_ROUND] == 1 and phase_of(after) == "main" and after[st.CURRENT] == 1
    end = play(after, take3(W, U, G))
    assert phase_of(end) == "game_over" and to_dict(end)["winners"] == [0]
    assert rewards(end) == [1.0, -1.0]


@pytest.mark.parametrize("n,trigger", [(3, 0), (3, 1), (4, 0), (4, 2)])
def test_final_round_completes_and_the_seat_before_the_first_player_plays_last(n: int, trigger: int) -> None:
    s = Position(n).tokens(trigger, "4G").give(trigger, *FOURTEEN).slot(0, 7).current(trigger).build()
    s = play(s, buy_market(0, 0))
    assert s[st.FINAL_ROUND] == 1
    for seat in range(trigger + 1, n):
        assert phase_of(s) == "main" and s[st.CURRENT] == seat
        s = play(s, reserve_deck(0))
    assert phase_of(s) == "game_over" and s[st.TURN] == n  # turn `trigger` was the trigger's
    assert to_dict(s)["winners"] == [trigger]


def test_last_seat_reaching_fifteen_ends_the_game_at_once() -> None:
    s = Position(3).tokens(2, "4G").give(2, *FOURTEEN).slot(0, 7).current(2).build()
    after = play(s, buy_market(0, 0))
    assert phase_of(after) == "game_over" and to_dict(after)["winners"] == [2]


def test_fifteen_through_a_noble_triggers_the_final_round() -> None:
    # 12 points (cards 75, 71, 72), bonuses 4 white + 3 blue; blue card 14 (0 points) brings noble 0.
    s = Position(2).tokens(0, "2G 2R").give(0, 75, 71, 72, 0, 1, 8, 9).slot(0, 14).nobles(0, 5, 3).build()
    assert player(s, 0)["prestige"] == 12
    after = play(s, buy_market(0, 0))
    assert noble_owner(after, 0) == 0 and player(after, 0)["prestige"] == 15
    assert after[st.FINAL_ROUND] == 1 and after[st.CURRENT] == 1


def _final_turn(purchased: dict[int, list[int]], n: int = 2, nobles: dict | None = None) -> np.ndarray:
    """The last turn of the final round: the last seat takes tokens and the game is scored."""
    pos = Position(n).final_round().current(n - 1)
    for p, cards in purchased.items():
        pos.give(p, *cards)
    if nobles:
        pos.nobles()
        for p, ns in nobles.items():
            for k in ns:
                pos.noble(p, k)
    s = play(pos.build(), take3(W, U, G))
    assert phase_of(s) == "game_over"
    return s


@pytest.mark.parametrize(
    "purchased,winners,expected_rewards",
    [
        # most prestige wins
        ({0: [73, 77, 81], 1: [85, 72]}, [0], [1.0, -1.0]),
        # more prestige beats fewer cards
        ({0: [73, 77, 81, 7], 1: [85, 89, 75]}, [0], [1.0, -1.0]),
        # tie on prestige: fewest purchased cards wins (either seat)
        ({0: [73, 77, 81], 1: [85, 89, 71, 7]}, [0], [1.0, -1.0]),
        ({0: [73, 77, 71, 7], 1: [81, 85, 89]}, [1], [-1.0, 1.0]),
        # still tied: shared victory, co-winners get 0
        ({0: [73, 77, 75, 23], 1: [81, 85, 71, 31]}, [0, 1], [0.0, 0.0]),
    ],
)
def test_winner_and_tie_breaks(purchased: dict, winners: list[int], expected_rewards: list[float]) -> None:
    s = _final_turn(purchased)
    assert to_dict(s)["winners"] == winners
    assert [int(x) for x in s[st.OUTCOME : st.OUTCOME + 2]] == [int(p in winners) for p in range(2)]
    assert rewards(s) == expected_rewards


def test_shared_victory_three_players_loser_gets_minus_one() -> None:
    s = _final_turn({0: [73, 77, 75, 23], 1: [81, 85, 71, 31], 2: [89, 87]}, n=3)
    assert to_dict(s)["winners"] == [0, 1]
    assert rewards(s) == [0.0, 0.0, -1.0]


def test_prestige_counts_nobles() -> None:
    """11 points of cards + a noble (14) beats 13 points of cards."""
    s = _final_turn({0: [73, 75, 40, 41], 1: [77, 79, 31, 15, 7, 23]}, nobles={0: [9]})
    assert player(s, 0)["prestige"] == 14 and player(s, 1)["prestige"] == 13
    assert to_dict(s)["winners"] == [0]


def test_no_final_round_below_fifteen() -> None:
    """14 prestige is not enough: the game goes on past the last seat."""
    s = Position(2).give(0, *FOURTEEN).build()
    after = play(s, take3(W, U, G), take3(W, U, G))
    assert player(after, 0)["prestige"] == 14
    assert after[st.FINAL_ROUND] == 0 and phase_of(after) == "main" and after[st.CURRENT] == 0


# ---------------------------------------------------------------------------
# Turn cap


def test_truncation_at_max_turns() -> None:
    s = Position(2, max_turns=3).build()
    s = play(s, take3(W, U, G), take3(W, U, G))
    assert phase_of(s) == "main"
    s = play(s, take3(R, K, W))
    assert phase_of(s) == "truncated" and rules.is_over(s)
    assert to_dict(s)["winners"] == []
    assert rewards(s) == [0.0, 0.0]
    assert legal(s) == set()
    assert refused(s, take3(R, K, G)) == rules.R_GAME_OVER


def test_game_end_wins_over_truncation_on_the_same_turn() -> None:
    s = Position(2, max_turns=10).give(0, 73, 77, 81).final_round().current(1).turn(9).build()
    after = play(s, take3(W, U, G))
    assert phase_of(after) == "game_over" and to_dict(after)["winners"] == [0]


def test_turn_counts_whole_turns_not_decisions() -> None:
    """A turn with discards is still one turn towards the cap."""
    s = Position(2, max_turns=2).tokens(0, "3W 3U 3G").build()
    s = play(s, take3(W, U, G), discard(W), discard(U))
    assert s[st.TURN] == 1 and phase_of(s) == "main"


# ---------------------------------------------------------------------------
# The position builder itself (every test above relies on it)


def test_position_places_what_it_is_told() -> None:
    s = (
        Position(3)
        .bank("2W 3*")
        .tokens(0, "1U 2*")
        .tokens(2, "3R")
        .give(1, 7, 73)
        .reserve(0, 41, blind=True)
        .reserve(0, 2)
        .slot(11, 89)
        .empty_slot(0)
        .deck_size(1, 5)
        .nobles(4, 9)
        .noble(2, 0)
        .current(2)
        .final_round()
        .build()
    )
    d = to_dict(s)
    assert d["bank"] == {"white": 2, "blue": 0, "green": 0, "red": 0, "black": 0, "gold": 3}
    assert tokens_of(s, 0) == [0, 1, 0, 0, 0, 2] and tokens_of(s, 2) == [0, 0, 0, 3, 0, 0]
    assert tokens_of(s, 1) == [3, 4, 5, 2, 5, 0], "the tokens nobody was given go to the other seats"
    assert d["players"][1]["purchased"] == [7, 73] and d["players"][1]["prestige"] == 6
    cut = d["players"][2]["purchased"]
    assert len(cut) == 30 - 4 - 1 - 5 and all(CARD_LEVEL[c] == 1 for c in cut), (
        "cut level-2 cards (all but market, card 41 and 5 left) go to the last seat"
    )
    assert reserved_of(s, 0) == [(41, True), (2, False)]
    assert market_card(s, 2, 3) == 89 and market_card(s, 0, 0) == -1
    assert all(market_card(s, lvl, k) >= 0 for lvl in range(3) for k in range(4) if (lvl, k) != (0, 0)), (
        "a slot a placed card came from is refilled"
    )
    assert len(deck(s, 1)) == 5
    assert [(e["noble"], e["owner"]) for e in d["nobles"]] == [(4, None), (9, None), (0, 2)]
    assert d["current_player"] == 2 and d["turn"] == 2 and d["final_round"]
    assert check_invariants(s) == []


def test_position_refuses_impossible_placements() -> None:
    with pytest.raises(ValueError, match="placed twice"):
        Position(2).give(0, 7).give(1, 7)
    with pytest.raises(ValueError, match="does not belong"):
        Position(2).slot(0, 73)  # a level-3 card in a level-1 slot
    with pytest.raises(ValueError, match="more tokens than exist"):
        Position(2).tokens(0, "5W").build()
    with pytest.raises(ValueError, match="Orient"):
        Position(2).slot(12, 90)


def test_make_state_is_the_keyword_form_of_position() -> None:
    kw = make_state(
        3,
        bank="2W 3*",
        tokens={0: "1U 2*", 2: "3R"},
        purchased={1: [7, 73]},
        reserved={0: [(41, True), 2]},
        market={(2, 3): 89, (0, 0): -1},
        deck_sizes={1: 5},
        nobles=[4, 9],
        player_nobles={2: [0]},
        current=2,
        final_round=True,
    )
    chained = (
        Position(3)
        .give(1, 7, 73)
        .reserve(0, 41, blind=True)
        .reserve(0, 2)
        .slot(11, 89)
        .empty_slot(0)
        .deck_size(1, 5)
        .tokens(0, "1U 2*")
        .tokens(2, "3R")
        .bank("2W 3*")
        .nobles(4, 9)
        .noble(2, 0)
        .current(2)
        .final_round()
        .build()
    )
    assert np.array_equal(kw, chained)


def test_position_places_module_pieces() -> None:
    red, blue = base_cards(R)[:2], base_cards(U)[0]
    s = (
        Position(2, modules=st.MODULE_NAMES)
        .give(0, *red, blue)
        .pair(0, 95, red[0])
        .box(90)
        .slot(13, 91)
        .top(4, 100)
        .deck_size(5, 3, to="box")
        .cities(0, 1)
        .city(1, 9)  # a claimed city starts the final round
        .final_round()
        .trading_posts(1, "extra_token")
        .stronghold(3, 0, 2)
        .stronghold(13, 1)
        .build()
    )
    d = to_dict(s)
    assert d["players"][0]["pairs"] == {"95": red[0]} and bonus_of(s, 0) == [0, 1, 0, 3, 0]
    assert 90 in d["boxed"] and owner_of(s, 90) == st.BOX
    assert d["orient_market"][0][1] == 91 and deck(s, 4)[-1] == 100
    assert len(deck(s, 5)) == 3 and len(d["boxed"]) == 1 + 10 - 2 - 3
    assert d["cities"] == [{"city": 0, "owner": None}, {"city": 1, "owner": None}, {"city": 9, "owner": 1}]
    assert d["players"][1]["trading_posts"] == ["extra_token"]
    assert sorted(d["strongholds"]) == [[3, 0, 2], [13, 1, 1]]
    assert [d["players"][p]["stronghold_supply"] for p in range(2)] == [1, 2]
    assert d["nobles"] == [], "no nobles with Cities"
    assert check_invariants(s) == []


def test_position_sets_the_phase_and_a_pending_decision() -> None:
    discarding = Position(2).tokens(0, "4W 4U 3G").phase("discard").build()
    assert phase_of(discarding) == "discard" and legal(discarding) == {discard(W), discard(U), discard(G)}
    # Mid-turn in the Orient: pair card 95 bought from slot 12, waiting for its host, slot 12 to refill.
    green, red = base_cards(G)[0], base_cards(R)[0]
    pos = Position(2, modules=("orient",)).give(0, green, red, 95).empty_slot(12)
    s = pos.phase("pair_target", pair_card=95, refill_slots=1 << 12).build()
    assert legal(s) == {PAIR_TARGET + green, PAIR_TARGET + red}
    s = play(s, PAIR_TARGET + red)
    assert bonus_of(s, 0) == [0, 0, 1, 2, 0] and s[st.OMARKET] >= 0 and phase_of(s) == "main"
