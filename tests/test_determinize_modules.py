"""determinize() with the Cities of Splendor modules: hidden cards resampled, the seat's view untouched.

Hidden from a seat, beyond the base game's deck orders and blind reserves: the
Orient decks' order, other seats' blind reserves from an Orient deck, and the two
cards the "draw two" trading post shows only to the player on move.
"""

from __future__ import annotations

import numpy as np
import pytest

from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import KEEP_DRAWN, RESERVE_DECK, RESERVE_ODECK, num_actions
from splendor_env.cards import ALL_CARD_LEVEL, NUM_CARDS, TP_DRAW_TWO
from splendor_env.deal import new_state
from splendor_env.determinize import determinize
from splendor_env.invariants import check_invariants
from splendor_env.observation import obs_dim, observe

SINGLE = [(m,) for m in st.MODULE_NAMES]
CONFIGS = SINGLE + [st.MODULE_NAMES]


def _obs(s: np.ndarray, seat: int) -> np.ndarray:
    out = np.empty(obs_dim(int(s[st.MODULES])), dtype=np.float32)
    observe(s, seat, out)
    return out


def _mask(s: np.ndarray) -> np.ndarray:
    m = np.zeros(num_actions(int(s[st.MODULES])), dtype=np.int8)
    rules.legal_mask(s, m)
    return m


def _give_draw_two(s: np.ndarray) -> None:
    """Every seat holds the "draw two" trading post (tiles are kept whatever the bonuses)."""
    for p in range(int(s[st.N_PLAYERS])):
        s[st.TP_HELD + p] |= 1 << TP_DRAW_TWO


def module_states(
    num_players: int, modules: tuple[str, ...], games: int, seed: int, per_game: int = 60
) -> list:
    """States from random games; with trading posts every seat can draw two, so that phase shows up."""
    rng = np.random.default_rng(seed)
    out = []
    for g in range(games):
        s = new_state(num_players, seed * 100 + g, modules=modules)
        if "trading_posts" in modules:
            _give_draw_two(s)
        plies = 0
        while not rules.is_over(s) and plies < 400:
            if plies % max(1, 400 // per_game) == 0 or s[st.PHASE] == st.PHASE_KEEP_DRAWN_CARD:
                out.append(s.copy())
            legal = np.flatnonzero(_mask(s))
            # Favour blind reserves so that hidden reserved cards are common.
            blind = [
                a
                for a in legal
                if RESERVE_DECK <= a < RESERVE_DECK + 3 or RESERVE_ODECK <= a < RESERVE_ODECK + 3
            ]
            a = (
                blind[rng.integers(len(blind))]
                if blind and rng.random() < 0.3
                else legal[rng.integers(legal.size)]
            )
            rules.apply_action(s, int(a))
            plies += 1
    return out


def blind_state(num_players: int, modules: tuple[str, ...], seed: int = 3) -> np.ndarray:
    """Every seat reserves blind from a base deck, then (with the Orient) from an Orient deck."""
    s = new_state(num_players, seed, modules=modules)
    rounds = [RESERVE_DECK] + ([RESERVE_ODECK] if "orient" in modules else [])
    for first in rounds:
        for p in range(num_players):
            assert rules.step_checked(s, first + p % 3) == 0
            while s[st.PHASE] not in (st.PHASE_MAIN,):  # strongholds or discards: any answer
                assert rules.step_checked(s, int(np.flatnonzero(_mask(s))[0])) == 0
    return s


def drawn_state(num_players: int, modules: tuple[str, ...], deck_action: int, seed: int = 5) -> np.ndarray:
    """The player on move drew two cards with the "draw two" trading post and must keep one."""
    s = new_state(num_players, seed, modules=modules)
    _give_draw_two(s)
    assert rules.step_checked(s, deck_action) == 0
    assert s[st.PHASE] == st.PHASE_KEEP_DRAWN_CARD
    return s


def hidden_mask(s: np.ndarray, seat: int) -> np.ndarray:
    """True where the state array holds information hidden from ``seat``."""
    hidden = np.zeros(len(s), dtype=bool)
    hidden[st.DECK : st.DECK + 3 * st.DECK_CAPACITY] = True
    if s[st.MODULES]:
        hidden[st.ODECK : st.ODECK + 30] = True
        if s[st.PD_DRAWN0] >= 0 and seat != s[st.CURRENT]:
            hidden[st.PD_DRAWN0] = hidden[st.PD_DRAWN1] = True
    for p in range(int(s[st.N_PLAYERS])):
        po = st.player_offset(p)
        for r in range(3):
            if p != seat and s[po + st.P_RESERVED + r] >= 0 and s[po + st.P_RESERVED_BLIND + r]:
                hidden[po + st.P_RESERVED + r] = True
    return hidden


def hidden_cards(s: np.ndarray, seat: int) -> list[list[int]]:
    """Per (kind, level): the sorted hidden cards, base levels 1-3 then Orient levels 1-3."""
    cards = sorted(int(c) for c in s[hidden_mask(s, seat)] if c >= 0)
    return [
        [c for c in cards if ALL_CARD_LEVEL[c] == lvl and (c >= NUM_CARDS) == orient]
        for orient in (0, 1)
        for lvl in range(3)
    ]


def check_determinized(s: np.ndarray, seat: int, d: np.ndarray) -> None:
    assert check_invariants(d) == []
    np.testing.assert_array_equal(_obs(d, seat), _obs(s, seat))
    keep = ~hidden_mask(s, seat)
    np.testing.assert_array_equal(d[keep], s[keep])
    assert hidden_cards(d, seat) == hidden_cards(s, seat)
    if seat == s[st.CURRENT]:  # the mover's own options never depend on hidden cards
        np.testing.assert_array_equal(_mask(d), _mask(s))


@pytest.mark.parametrize("modules", CONFIGS, ids=lambda m: "+".join(m))
@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_view_public_info_and_invariants_are_kept(num_players: int, modules: tuple[str, ...]) -> None:
    states = [blind_state(num_players, modules)] + module_states(
        num_players, modules, 1, seed=num_players, per_game=25
    )
    if "trading_posts" in modules:
        states.append(drawn_state(num_players, modules, RESERVE_DECK + 1))
    rng = np.random.default_rng(0)
    for s in states:
        for seat in range(num_players):
            check_determinized(s, seat, determinize(s, seat, rng))


def test_sampled_states_cover_what_is_hidden() -> None:
    """The random states used above do hold Orient blind reserves, drawn cards and bottom-put cards."""
    states = module_states(2, st.MODULE_NAMES, 1, seed=2, per_game=25)
    assert any(s[st.PHASE] == st.PHASE_KEEP_DRAWN_CARD for s in states)
    orient_blind = 0
    for s in states:
        for p in range(2):
            po = st.player_offset(p)
            orient_blind += sum(
                s[po + st.P_RESERVED + r] >= NUM_CARDS and s[po + st.P_RESERVED_BLIND + r] for r in range(3)
            )
    assert orient_blind > 0


def _counts(values: list[int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def test_opponent_orient_blind_card_is_uniform_over_unseen_pool() -> None:
    s = blind_state(2, ("orient",))
    po = st.player_offset(1)
    r = next(r for r in range(3) if s[po + st.P_RESERVED + r] >= NUM_CARDS)
    lvl = int(ALL_CARD_LEVEL[s[po + st.P_RESERVED + r]])
    pool = set(hidden_cards(s, 0)[3 + lvl])
    draws = 60 * len(pool)
    counts = _counts([int(determinize(s, 0, i)[po + st.P_RESERVED + r]) for i in range(draws)])
    assert set(counts) == pool  # only unseen Orient cards of that level, each of them
    chi2 = sum((c - 60) ** 2 / 60 for c in counts.values())
    assert chi2 < 2.5 * len(pool)  # expected ~ len(pool) - 1 for a uniform draw


@pytest.mark.parametrize("deck_action", [RESERVE_DECK + 0, RESERVE_ODECK + 1])
def test_drawn_cards_hidden_from_others_and_uniform(deck_action: int) -> None:
    s = drawn_state(2, ("trading_posts", "orient"), deck_action)
    mover = int(s[st.CURRENT])
    other = 1 - mover
    drawn = (int(s[st.PD_DRAWN0]), int(s[st.PD_DRAWN1]))
    for i in range(20):  # the mover sees them: they never change for the mover
        d = determinize(s, mover, i)
        assert (int(d[st.PD_DRAWN0]), int(d[st.PD_DRAWN1])) == drawn
    orient = deck_action >= RESERVE_ODECK
    lvl = deck_action - (RESERVE_ODECK if orient else RESERVE_DECK)
    pool = set(hidden_cards(s, other)[3 * orient + lvl])
    assert set(drawn) <= pool
    draws = 40 * len(pool)
    firsts = []
    for i in range(draws):
        d = determinize(s, other, i)
        a, b = int(d[st.PD_DRAWN0]), int(d[st.PD_DRAWN1])
        assert a != b and {a, b} <= pool
        firsts.append(a)
        if i < 5:
            check_determinized(s, other, d)
    counts = _counts(firsts)
    assert set(counts) == pool
    chi2 = sum((c - 40) ** 2 / 40 for c in counts.values())
    assert chi2 < 2.5 * len(pool)


def test_card_put_under_a_deck_is_resampled() -> None:
    """After "draw two" the returned card is at the bottom; other seats cannot know which it was."""
    s = drawn_state(2, ("trading_posts", "orient"), RESERVE_ODECK + 0)
    returned = int(s[st.PD_DRAWN1])
    assert rules.step_checked(s, KEEP_DRAWN + 0) == 0
    bottom = st.ODECK + 0
    assert s[bottom] == returned
    bottoms = {int(determinize(s, 1, i)[bottom]) for i in range(100)}
    assert len(bottoms) > 3


@pytest.mark.parametrize("modules", CONFIGS, ids=lambda m: "+".join(m))
def test_result_depends_only_on_the_seat_view(modules: tuple[str, ...]) -> None:
    states = [blind_state(3, modules)]
    if "trading_posts" in modules:
        states.append(drawn_state(3, modules, RESERVE_DECK + 2))
    for s in states:
        for seat in range(3):
            permuted = determinize(s, seat, 99)  # same view, different hidden arrangement
            assert not np.array_equal(permuted, s)
            np.testing.assert_array_equal(determinize(permuted, seat, 5), determinize(s, seat, 5))


def test_base_game_stream_is_unchanged() -> None:
    """Module support draws nothing extra in a base game: the base determinisation stays pinned."""
    s = new_state(2, 3)
    for a in (RESERVE_DECK + 0, RESERVE_DECK + 1):
        assert rules.step_checked(s, a) == 0
    d = determinize(s, 0, 12345)
    po = st.player_offset(1)
    # Pinned from the implementation before the modules were supported.
    assert int(d[po + st.P_RESERVED]) == PINNED_BASE_CARD
    assert d[st.DECK + int(s[st.DECK_COUNT]) - 1] == PINNED_BASE_TOP


PINNED_BASE_CARD = 58
PINNED_BASE_TOP = 24
