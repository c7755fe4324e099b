"""determinize(): hidden information resampled, the seat's view untouched."""

from __future__ import annotations

import numpy as np
import pytest

from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import RESERVE_DECK, RESERVE_MARKET
from splendor_env.cards import CARD_LEVEL
from splendor_env.deal import new_state
from splendor_env.determinize import determinize
from splendor_env.invariants import check_invariants
from splendor_env.observation import OBS_DIM, observe
from tests.helpers import sample_states


def _obs(s: np.ndarray, seat: int) -> np.ndarray:
    out = np.empty(OBS_DIM, dtype=np.float32)
    observe(s, seat, out)
    return out


def blind_state(num_players: int = 2, seed: int = 3) -> np.ndarray:
    """Every seat reserves one card blind, then seat 0 reserves one face up."""
    s = new_state(num_players, seed)
    for p in range(num_players):
        assert rules.step_checked(s, RESERVE_DECK + p % 3) == 0
    assert rules.step_checked(s, RESERVE_MARKET + 5) == 0
    return s


def _reserved(s: np.ndarray, p: int) -> tuple[np.ndarray, np.ndarray]:
    po = st.player_offset(p)
    return (
        s[po + st.P_RESERVED : po + st.P_RESERVED + 3].copy(),
        s[po + st.P_RESERVED_BLIND : po + st.P_RESERVED_BLIND + 3].copy(),
    )


def _hidden_mask(s: np.ndarray, seat: int) -> np.ndarray:
    """True where the state array holds information hidden from ``seat``."""
    hidden = np.zeros(st.STATE_SIZE, dtype=bool)
    hidden[st.DECK : st.DECK + 3 * st.DECK_CAPACITY] = True
    for p in range(int(s[st.N_PLAYERS])):
        if p == seat:
            continue
        cards, blind = _reserved(s, p)
        po = st.player_offset(p)
        for r in range(3):
            if cards[r] >= 0 and blind[r]:
                hidden[po + st.P_RESERVED + r] = True
    return hidden


def _hidden_cards(s: np.ndarray, seat: int) -> list[list[int]]:
    """The multiset of hidden cards per level (what determinize may shuffle)."""
    hidden = s[_hidden_mask(s, seat)]
    cards = sorted(int(c) for c in hidden if c >= 0)
    return [[c for c in cards if CARD_LEVEL[c] == lvl] for lvl in range(3)]


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_view_public_info_and_invariants_are_kept(num_players: int) -> None:
    states = [blind_state(num_players)] + sample_states(num_players, 2, seed=num_players, max_per_game=40)
    rng = np.random.default_rng(0)
    for s in states:
        for seat in range(num_players):
            d = determinize(s, seat, rng)
            assert check_invariants(d) == []
            np.testing.assert_array_equal(_obs(d, seat), _obs(s, seat))
            keep = ~_hidden_mask(s, seat)
            np.testing.assert_array_equal(d[keep], s[keep])
            assert _hidden_cards(d, seat) == _hidden_cards(s, seat)
            if seat == s[st.CURRENT]:  # the mover's own options never depend on hidden cards
                mask_s, mask_d = np.zeros(72, np.int8), np.zeros(72, np.int8)
                rules.legal_mask(s, mask_s)
                rules.legal_mask(d, mask_d)
                np.testing.assert_array_equal(mask_d, mask_s)


def test_hidden_cards_vary_and_own_blind_reserve_never_changes() -> None:
    s = blind_state(2)
    own_before = _reserved(s, 0)
    opp_cards = set()
    deck_tops = set()
    for i in range(200):
        d = determinize(s, 0, i)
        np.testing.assert_array_equal(_reserved(d, 0)[0], own_before[0])
        opp_cards.add(int(_reserved(d, 1)[0][0]))
        deck_tops.add(int(d[st.DECK + s[st.DECK_COUNT] - 1]))  # top of the level-1 deck
    assert len(opp_cards) > 10
    assert len(deck_tops) > 10


def test_opponent_blind_card_is_uniform_over_unseen_pool() -> None:
    s = blind_state(2)
    pool = set(_hidden_cards(s, 0)[1])  # seat 1 reserved a level-2 card blind
    counts: dict[int, int] = {}
    draws = 40 * len(pool)
    for i in range(draws):
        c = int(_reserved(determinize(s, 0, i), 1)[0][0])
        counts[c] = counts.get(c, 0) + 1
    assert set(counts) == pool
    assert min(counts.values()) > 15 and max(counts.values()) < 70  # expected 40 each


def test_result_depends_only_on_the_seat_view() -> None:
    s = blind_state(3)
    for seat in range(3):
        permuted = determinize(s, seat, 99)  # same view, different hidden arrangement
        assert not np.array_equal(permuted, s)
        np.testing.assert_array_equal(determinize(permuted, seat, 5), determinize(s, seat, 5))


def test_input_untouched_and_arguments_checked() -> None:
    s = blind_state(2)
    before = s.copy()
    determinize(s, 1, np.random.default_rng(1))
    np.testing.assert_array_equal(s, before)
    with pytest.raises(ValueError, match="seat"):
        determinize(s, 2, 0)
    with pytest.raises(TypeError, match="rng_or_seed"):
        determinize(s, 0, "seed")


def test_a_spectator_keeps_only_public_information() -> None:
    """``seat=None`` (the app's analysis for a page without a seat): every blind reserve resampled, and the
    result a function of the public information only."""
    s = blind_state(3)
    public = ~np.logical_or.reduce([_hidden_mask(s, seat) for seat in range(3)])
    permuted = determinize(s, None, 99)  # same public view, every hidden card moved
    for seat in range(3):  # each seat's own blind card is hidden from a spectator
        assert len({int(_reserved(determinize(s, None, i), seat)[0][0]) for i in range(20)}) > 5
    np.testing.assert_array_equal(permuted[public], s[public])
    assert check_invariants(permuted) == []
    np.testing.assert_array_equal(determinize(permuted, None, 5), determinize(s, None, 5))
