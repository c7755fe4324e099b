"""Random play over all 16 module combinations for 2, 3 and 4 players.

For every combination and player count: PettingZoo's api_test passes; random
games keep tokens, cards (Orient cards and the box included) and strongholds
conserved at every step; the Orient's owned-card sections of the observation
match a card-by-card count for every seat; masks are exact (every unmasked id is accepted,
every masked one refused with the state untouched); games end. The batched
engine plays the same games as the AEC env with modules.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from numba import njit
from pettingzoo.test import api_test

import splendor_env
from splendor_env import rules
from splendor_env import state as st
from splendor_env.actions import NUM_ACTIONS, NUM_ACTIONS_ALL, num_actions
from splendor_env.cards import ALL_CARD_EFFECT, EFFECT_DOUBLE_GOLD, NUM_ALL_CARDS
from splendor_env.deal import new_state
from splendor_env.invariants import check_invariants
from splendor_env.observation import (
    M_DG,
    M_PAIR,
    MODULE_SEAT_DIM,
    O_BOX,
    O_CARDS_COLOUR,
    O_MSEATS,
    OBS_DIM,
    OBS_DIM_ALL,
    obs_dim,
    observe,
)
from splendor_env.snapshot import from_dict, to_dict
from splendor_env.vector import SplendorBatch
from tests.helpers import assert_batched_games_equal_aec_games

COMBOS = [combo for r in range(5) for combo in itertools.combinations(st.MODULE_NAMES, r)]
assert len(COMBOS) == 16


def _name(combo: tuple[str, ...]) -> str:
    return "+".join(combo) or "base"


@njit(cache=True)
def _first_mask_error(s: np.ndarray, mask: np.ndarray) -> int:
    """-1 if every id is accepted exactly when unmasked and refused ids leave the state unchanged."""
    tmp = s.copy()
    for a in range(-1, mask.shape[0] + 1):
        tmp[:] = s
        r = rules.step_checked(tmp, a)
        legal = 0 <= a < mask.shape[0] and mask[a] == 1
        if (r == 0) != legal:
            return a if a >= 0 else mask.shape[0] + 1
        if r != 0:
            for i in range(s.shape[0]):
                if tmp[i] != s[i]:
                    return a if a >= 0 else mask.shape[0] + 1
    return -1


@pytest.mark.parametrize("num_players", [2, 3, pytest.param(4, marks=pytest.mark.slow)])
@pytest.mark.parametrize("combo", COMBOS, ids=_name)
def test_random_games_conserve_everything_with_exact_masks_and_end(
    combo: tuple[str, ...], num_players: int
) -> None:
    _play_checked_random_game(combo, num_players, COMBOS.index(combo) * 10 + num_players)


def test_the_box_count_in_the_observation_is_checked_against_cards_actually_boxed() -> None:
    """The Orient observation counts the box from every other place a card can be; the random games
    above compare it with the owners at every step, and some of them do box cards."""
    assert max(_play_checked_random_game(("orient",), 2, seed) for seed in range(4)) > 0


def _play_checked_random_game(combo: tuple[str, ...], num_players: int, seed: int) -> int:
    """One random game checked at every step; returns the most cards seen in the box at once."""
    bits = st.parse_modules(combo)
    rng = np.random.default_rng(seed)
    mask = np.zeros(num_actions(bits), dtype=np.int8)
    obs = np.zeros(obs_dim(bits), dtype=np.float32)
    s = new_state(num_players, seed=int(rng.integers(1 << 30)), max_turns=600, modules=combo)
    steps = 0
    boxed_seen = 0
    while not rules.is_over(s):
        n = rules.legal_mask(s, mask)
        assert n == mask.sum() > 0
        bad = _first_mask_error(s, mask)
        assert bad == -1, (
            f"action {bad} in phase {st.PHASE_NAMES[s[st.PHASE]]}: mask and step_checked disagree"
        )
        a = int(rng.choice(np.flatnonzero(mask)))
        assert rules.step_checked(s, a) == 0
        problems = check_invariants(s)
        assert not problems, (a, problems)
        for seat in range(num_players):
            observe(s, seat, obs)
            assert np.isfinite(obs).all() and obs.min() >= 0.0
            if bits & st.MOD_ORIENT:
                assert _owned_sections(obs, num_players) == _owned_sections_from_state(s, seat), seat
        if bits & st.MOD_ORIENT:  # the observation counts the box from the other places; check it
            owners = np.concatenate(
                [s[st.CARD_OWNER : st.CARD_OWNER + 90], s[st.OCARD_OWNER : st.OCARD_OWNER + 30]]
            )
            boxed_seen = max(boxed_seen, int((owners == st.BOX).sum()))
            assert obs[O_BOX] == (owners == st.BOX).sum()
        steps += 1
        assert steps < 20_000, "a game must end"
    assert s[st.PHASE] in (st.PHASE_GAME_OVER, st.PHASE_TRUNCATED)
    assert from_dict(to_dict(s)).tolist() == s.tolist()
    return boxed_seen


def _owned_sections(obs: np.ndarray, n: int) -> list[list[float]]:
    """Per observer-relative seat: double-gold cards, pair bonuses (5) and cards per colour (5)."""
    rows = []
    for rel in range(n):
        mo = O_MSEATS + rel * MODULE_SEAT_DIM
        rows.append(
            [float(obs[mo + M_DG])]
            + obs[mo + M_PAIR : mo + M_PAIR + 5].tolist()
            + obs[O_CARDS_COLOUR + rel * 5 : O_CARDS_COLOUR + rel * 5 + 5].tolist()
        )
    return rows


def _owned_sections_from_state(s: np.ndarray, seat: int) -> list[list[float]]:
    """The same numbers counted card by card from the owners (the observation's reference)."""
    n = int(s[st.N_PLAYERS])
    rows = []
    for rel in range(n):
        p = (seat + rel) % n
        dg, pairs, per_colour = 0, [0] * 5, [0] * 5
        for card in range(NUM_ALL_CARDS):
            if rules.orient.owner(s, card) != p:
                continue
            if ALL_CARD_EFFECT[card] == EFFECT_DOUBLE_GOLD:
                dg += 1
            colour = rules.orient.card_colour_now(s, card)
            if colour >= 0:
                per_colour[colour] += 1
                if rules.orient.is_pair(card):
                    pairs[colour] += 1
        rows.append([float(dg)] + [float(x) for x in pairs + per_colour])
    return rows


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("combo", COMBOS, ids=_name)
def test_pettingzoo_api(combo: tuple[str, ...], num_players: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(splendor_env.env(num_players=num_players, modules=combo), num_cycles=200)


@pytest.mark.parametrize("combo", [(), ("orient",), st.MODULE_NAMES], ids=_name)
def test_spaces_base_unchanged_and_extended_with_modules(combo: tuple[str, ...]) -> None:
    e = splendor_env.env(num_players=2, modules=combo)
    e.reset(seed=1)
    o = e.observe("player_0")
    n, d = (NUM_ACTIONS, OBS_DIM) if not combo else (NUM_ACTIONS_ALL, OBS_DIM_ALL)
    assert e.action_space("player_0").n == n and o["action_mask"].shape == (n,)
    assert o["observation"].shape == (d,) and e.observation_space("player_0")["observation"].shape == (d,)
    assert e.engine_state().shape == ((st.STATE_SIZE,) if not combo else (st.STATE_SIZE_ALL,))
    assert (NUM_ACTIONS, OBS_DIM) == (72, 497)


@pytest.mark.parametrize("combo", [(), ("orient",), st.MODULE_NAMES], ids=_name)
def test_observe_overwrites_every_number_of_a_dirty_buffer(combo: tuple[str, ...]) -> None:
    """observe zeroes the row in pieces (for speed); a reused buffer, even one longer than the
    observation, must read exactly like a fresh one."""
    s = new_state(3, seed=4, modules=combo)
    clean = np.zeros(obs_dim(st.parse_modules(combo)) + 7, dtype=np.float32)
    dirty = np.full_like(clean, 9.0)
    observe(s, 1, clean)
    observe(s, 1, dirty)
    np.testing.assert_array_equal(dirty, clean)


def test_base_part_of_a_module_observation_is_the_base_layout() -> None:
    """With modules, the first 497 numbers mean what they mean in the base game."""
    base = new_state(3, seed=9)
    mod = new_state(3, seed=9, modules=("trading_posts", "strongholds"))
    a, b = np.zeros(OBS_DIM, np.float32), np.zeros(OBS_DIM_ALL, np.float32)
    observe(base, 1, a)
    observe(mod, 1, b)
    np.testing.assert_array_equal(a, b[:OBS_DIM])
    assert mod[: st.STATE_SIZE][st.MODULES] != 0
    np.testing.assert_array_equal(np.delete(base, st.MODULES), np.delete(mod[: st.STATE_SIZE], st.MODULES))


@pytest.mark.parametrize("bad", ["cties", ("cities", "nobles"), 3, ("orient", None)])
def test_unknown_module_is_a_clear_error(bad) -> None:
    err = TypeError if bad == 3 else ValueError
    with pytest.raises(err, match="module"):
        splendor_env.env(modules=bad)
    with pytest.raises(err, match="module"):
        SplendorBatch(2, modules=bad)
    with pytest.raises(err, match="module"):
        new_state(2, modules=bad)


def test_module_option_is_normalised_and_order_free() -> None:
    e = splendor_env.raw_env(modules=["strongholds", "cities", "cities"])
    assert e.config.modules == ("cities", "strongholds")
    assert splendor_env.raw_env(modules="orient").config.modules == ("orient",)


def test_snapshot_restore_and_describe_with_modules() -> None:
    e = splendor_env.raw_env(num_players=3, modules=st.MODULE_NAMES, render_mode="ansi")
    e.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(60):
        legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
        a = int(rng.choice(legal))
        assert e.describe_action(a)
        e.step(a)
    snap = e.snapshot()
    other = splendor_env.raw_env(num_players=3, modules=st.MODULE_NAMES)
    other.reset(seed=0)
    other.restore(snap)
    np.testing.assert_array_equal(other.engine_state(), e.engine_state())
    assert "cities:" in e.render()
    base = splendor_env.raw_env(num_players=3)
    base.reset(seed=0)
    with pytest.raises(ValueError, match="modules"):
        base.restore(snap)
    texts = [splendor_env.describe(a) for a in range(NUM_ACTIONS_ALL)]
    assert len(set(texts)) == NUM_ACTIONS_ALL


def test_module_ids_are_refused_in_a_base_game() -> None:
    e = splendor_env.raw_env(num_players=2)
    e.reset(seed=0)
    with pytest.raises(splendor_env.IllegalActionError, match="out of range"):
        e.step(72)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_batched_games_equal_aec_games_with_modules(num_players: int) -> None:
    combo = st.MODULE_NAMES if num_players != 3 else ("orient", "strongholds")
    finished = assert_batched_games_equal_aec_games(
        num_players, batch=3, base_seed=500, action_seed=1, steps=900, modules=combo, max_turns=150
    )
    assert finished >= 2


def test_determinize_keeps_the_seats_view_of_a_module_game() -> None:
    """Determinisation works for module games (tests/test_determinize_modules.py checks it in depth)."""
    from splendor_env.determinize import determinize
    from splendor_env.observation import obs_dim, observe

    s = new_state(2, seed=1, modules=("orient",))
    d = determinize(s, 0, 3)
    before, after = np.zeros(obs_dim(1), np.float32), np.zeros(obs_dim(1), np.float32)
    observe(s, 0, before)
    observe(d, 0, after)
    assert np.array_equal(before, after) and not check_invariants(d)
