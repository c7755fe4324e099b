"""Cities (docs/rules.md 7.1): one test per rule, each from a constructed position."""

from __future__ import annotations

import numpy as np

from splendor_env import state as st
from splendor_env.actions import CHOOSE_CITY, TAKE3
from splendor_env.cards import CITY_TILE
from splendor_env.deal import new_state
from splendor_env.observation import CITY_DIM, MODULE_SEAT_DIM, O_CITIES, O_MSEATS, OBS_DIM_ALL, observe
from splendor_env.snapshot import to_dict
from tests.helpers import Position, base_cards, legal, phase_of, play, prestige_of

CI = ("cities",)
WHITE, BLUE, GREEN, RED, BLACK = range(5)


def city_owner(s: np.ndarray, city: int) -> int:
    for k in range(3):
        if s[st.CITY_ID + k] == city:
            return int(s[st.CITY_OWNER + k])
    raise AssertionError(f"city {city} not in the game")


def test_three_cities_of_different_tiles_replace_the_nobles() -> None:
    sides = set()
    for seed in range(40):
        for n in (2, 3, 4):
            d = to_dict(new_state(n, seed, modules=CI))
            cities = [c["city"] for c in d["cities"]]
            assert len(cities) == 3 and len({int(CITY_TILE[c]) for c in cities}) == 3
            assert d["nobles"] == [], "no nobles with Cities"
            sides.update(cities)
    assert sides == set(range(14)), "either side of every tile can come up"


def test_city_needs_the_prestige_and_the_bonuses() -> None:
    l3 = [73, 77, 81]  # 5 points each (white, blue, green)
    s = Position(modules=CI).give(0, *l3, 39).cities(2, 0, 1).build()  # 16 prestige; city 2 asks 17, no bonus
    s = play(s, TAKE3)
    assert city_owner(s, 2) == -1 and s[st.FINAL_ROUND] == 0
    s = Position(modules=CI).give(0, *l3, 48).cities(2, 0, 1).build()  # 17 prestige
    s = play(s, TAKE3)
    assert city_owner(s, 2) == 0 and s[st.FINAL_ROUND] == 1


def test_n_cards_of_one_colour_must_be_a_colour_the_tile_does_not_name() -> None:
    points = [73, 77, 81, 63]  # 18 prestige, one bonus each of white, blue, green, red
    greens = base_cards(GREEN)[:7]  # 8 green in all
    s = (
        Position(modules=CI).give(0, *points, *greens).cities(12).build()
    )  # 14 prestige, 4 green + 4 of another colour
    s = play(s, TAKE3)
    assert city_owner(s, 12) == -1, "the 8 greens cannot also be the 'other colour'"
    s = (
        Position(modules=CI).give(0, *points, *greens[:3], *base_cards(BLUE)[:3]).cities(12).build()
    )  # 4 green, 4 blue
    s = play(s, TAKE3)
    assert city_owner(s, 12) == 0
    s = (
        Position(modules=CI).give(0, *points, *base_cards(GREEN)[:5]).cities(11).build()
    )  # 12 prestige, 6 of one colour
    s = play(s, TAKE3)
    assert city_owner(s, 11) == 0


def test_several_cities_qualify_the_player_chooses_and_keeps_at_most_one() -> None:
    s = (
        Position(modules=CI).give(0, 73, 77, 81, 85, 39).cities(2, 5, 0).build()
    )  # 21 prestige, 1 of each colour
    s = play(s, TAKE3)
    assert phase_of(s) == "city" and legal(s) == {CHOOSE_CITY + 0, CHOOSE_CITY + 1}  # 17, and 16 + 1 of each
    s = play(s, CHOOSE_CITY + 1)
    assert city_owner(s, 5) == 0 and city_owner(s, 2) == -1
    s = play(s, TAKE3)  # player 1, last of the round: the game ends
    assert phase_of(s) == "game_over" and city_owner(s, 2) == -1


def test_fifteen_points_do_not_end_the_game_with_cities() -> None:
    s = Position(modules=CI).give(0, 73, 77, 81).cities(0, 1, 9).build()  # 15 prestige, no city reachable
    s = play(s, TAKE3, TAKE3)
    assert s[st.FINAL_ROUND] == 0 and phase_of(s) == "main"


def _p0_claims_city0() -> Position:
    """Player 0: 13 prestige, 4 red and 3 black, 9 cards: meets city 0 (13, 4 red 3 black)."""
    return Position(modules=CI).give(0, *base_cards(RED)[:3], 63, *base_cards(BLACK)[:3], 73, 77)


def test_sole_city_holder_wins_even_with_less_prestige() -> None:
    s = _p0_claims_city0().give(1, 71, 75, 79, 83, 87).cities(0, 1, 9).build()  # player 1: 20 prestige
    s = play(s, TAKE3)
    assert city_owner(s, 0) == 0 and s[st.FINAL_ROUND] == 1 and phase_of(s) == "main"
    s = play(s, TAKE3)  # the round is completed
    assert phase_of(s) == "game_over" and to_dict(s)["winners"] == [0]
    assert prestige_of(s, 1) > prestige_of(s, 0)


def test_among_city_holders_most_prestige_wins() -> None:
    p1 = [71, 75, 79, 83, 87, *base_cards(WHITE)[:2], *base_cards(BLUE)[:3]]  # 20 prestige, 3 white 4 blue
    s = _p0_claims_city0().give(1, *p1).cities(0, 1, 9).build()
    s = play(s, TAKE3, TAKE3)
    assert city_owner(s, 0) == 0 and city_owner(s, 1) == 1
    assert phase_of(s) == "game_over" and to_dict(s)["winners"] == [1]


def test_city_holders_tied_on_prestige_fewest_cards_wins() -> None:
    p1 = [75, 76, 48, 45, *base_cards(WHITE)[:2], *base_cards(BLUE)[:1]]  # 4+4+2+3 = 13, 3W 4U, 7 cards
    s = _p0_claims_city0().give(1, *p1).cities(0, 1, 9).build()
    assert prestige_of(s, 0) == prestige_of(s, 1) == 13
    s = play(s, TAKE3, TAKE3)
    assert city_owner(s, 1) == 1 and to_dict(s)["winners"] == [1]


def test_a_claimed_city_leaves_the_supply() -> None:
    # Both players meet city 2 (17 prestige); player 0 claims it first, player 1 cannot any more.
    s = Position(modules=CI).give(0, 73, 77, 81, 48).give(1, 71, 75, 79, 83, 87).cities(2, 0, 1).build()
    s = play(s, TAKE3)
    assert city_owner(s, 2) == 0
    obs = np.zeros(OBS_DIM_ALL, np.float32)
    observe(s, 1, obs)
    assert obs[O_CITIES] == 0 and obs[O_CITIES + CITY_DIM] == 1, "no longer on offer"
    assert obs[O_MSEATS + MODULE_SEAT_DIM + 1] == 1, "claimed by player 0 (seat block 1 for observer 1)"
    s = play(s, TAKE3)
    assert city_owner(s, 2) == 0 and phase_of(s) == "game_over" and to_dict(s)["winners"] == [0]


def test_city_holders_tied_on_prestige_and_cards_share_the_victory() -> None:
    # Player 1: 13 prestige, 3 white 4 blue (city 1), 9 cards, like player 0 with city 0.
    p1 = [75, 76, 48, 45, *base_cards(WHITE)[:2], *base_cards(BLUE)[:1], *base_cards(GREEN)[:2]]
    s = _p0_claims_city0().give(1, *p1).cities(0, 1, 9).build()
    assert prestige_of(s, 0) == prestige_of(s, 1) == 13
    assert [s[st.player_offset(p) + st.P_CARDS] for p in range(2)] == [9, 9]
    s = play(s, TAKE3, TAKE3)
    assert city_owner(s, 0) == 0 and city_owner(s, 1) == 1
    assert phase_of(s) == "game_over" and to_dict(s)["winners"] == [0, 1]


def test_city_bonuses_count_cards_never_tokens() -> None:
    # 13 prestige, 3 red and 3 black bonuses, 4 red tokens: city 0 (13, 4 red 3 black) must not come.
    cards = [*base_cards(RED)[:2], 63, *base_cards(BLACK)[:3], 73, 77]
    s = Position(modules=CI).give(0, *cards).tokens(0, "4R").cities(0, 1, 9).build()
    assert prestige_of(s, 0) == 13
    s = play(s, TAKE3)
    assert city_owner(s, 0) == -1 and s[st.FINAL_ROUND] == 0
    # Control: with a fourth red card the same move claims it.
    s = Position(modules=CI).give(0, *cards, base_cards(RED)[2]).tokens(0, "4R").cities(0, 1, 9).build()
    assert city_owner(play(s, TAKE3), 0) == 0
