"""The batched engine against the AEC env: same games, same observations, masks and rewards."""

from __future__ import annotations

import numpy as np
import pytest

import splendor_env
from splendor_env import state as st
from splendor_env.actions import NUM_ACTIONS
from splendor_env.deal import new_state
from splendor_env.invariants import check_invariants
from splendor_env.observation import OBS_DIM, observe
from splendor_env.vector import SplendorBatch, sample_legal_actions
from tests.helpers import assert_batched_games_equal_aec_games


@pytest.mark.parametrize("num_players", [2, 3, pytest.param(4, marks=pytest.mark.slow)])
@pytest.mark.parametrize("reward_mode", ["terminal", "shaped"])
def test_batched_games_equal_aec_games_step_by_step(num_players: int, reward_mode: str) -> None:
    """Random games through both paths from the same seeds agree at every step, across auto-resets."""
    finished = assert_batched_games_equal_aec_games(
        num_players,
        batch=4,
        base_seed=1000,
        action_seed=7,
        steps=1500,
        reward_mode=reward_mode,
        max_turns=120,
    )
    assert finished >= 4, "the test should cross several auto-resets"


def test_step_subset_leaves_other_games_untouched() -> None:
    venv = SplendorBatch(3, 2)
    obs, masks, _ = venv.reset(seed=5)
    before = venv.states.copy()
    action = int(np.flatnonzero(masks[1])[0])
    obs2, _, _, rewards, term, trunc, _ = venv.step(np.array([action]), env_ids=np.array([1]))
    np.testing.assert_array_equal(venv.states[[0, 2]], before[[0, 2]])
    assert not np.array_equal(venv.states[1], before[1])
    np.testing.assert_array_equal(obs2[[0, 2]], obs[[0, 2]])
    assert not rewards[[0, 2]].any() and not term.any() and not trunc.any()


def test_illegal_action_raises_and_changes_nothing() -> None:
    venv = SplendorBatch(2, 2)
    _, masks, _ = venv.reset(seed=3)
    illegal = int(np.flatnonzero(masks[1] == 0)[0])
    legal = int(np.flatnonzero(masks[0])[0])
    before = venv.states.copy()
    with pytest.raises(splendor_env.IllegalActionError, match=rf"game 1: illegal action {illegal}"):
        venv.step(np.array([legal, illegal]))
    np.testing.assert_array_equal(venv.states, before)
    assert issubclass(splendor_env.IllegalActionError, ValueError)  # except ValueError still catches it
    with pytest.raises(splendor_env.IllegalActionError, match="out of range"):
        venv.step(np.array([legal, NUM_ACTIONS]))
    with pytest.raises(ValueError, match="integer array of shape"):
        venv.step(np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="integer array of shape"):
        venv.step(np.array([legal]))
    with pytest.raises(ValueError, match="distinct game indices"):
        venv.step(np.array([legal, legal]), env_ids=np.array([0, 0]))
    np.testing.assert_array_equal(venv.states, before)


def test_masks_are_a_method_and_the_old_name_warns() -> None:
    venv = SplendorBatch(2, 2)
    _, masks, _ = venv.reset(seed=3)
    np.testing.assert_array_equal(venv.action_masks(), masks)
    with pytest.warns(DeprecationWarning, match="SplendorBatch"):
        from splendor_env.vector import VectorEnv
    assert VectorEnv is SplendorBatch


def test_bad_construction_and_order_errors() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        SplendorBatch(0)
    with pytest.raises(ValueError, match="num_players"):
        SplendorBatch(2, num_players=5)
    with pytest.raises(TypeError, match="unknown option"):
        SplendorBatch(2, colour_blind=True)
    with pytest.raises(RuntimeError, match="before reset"):
        SplendorBatch(2).step(np.array([0, 0]))


def test_seeded_resets_are_reproducible_and_distinct() -> None:
    a, b = SplendorBatch(3, 2), SplendorBatch(3, 2)
    oa, ma, _ = a.reset(seed=11)
    ob, mb, _ = b.reset(seed=11)
    np.testing.assert_array_equal(a.states, b.states)
    assert not np.array_equal(a.states[0], a.states[1]), "games in one batch get different seeds"
    np.testing.assert_array_equal(a.states[2], splendor_env.new_state(2, seed=13))


@pytest.mark.parametrize("num_players", [2, 4])
def test_game_seeds_name_the_deal_of_every_slot_across_auto_resets(num_players: int) -> None:
    batch = SplendorBatch(6, num_players, max_turns=30)
    batch.reset(seed=100)
    np.testing.assert_array_equal(batch.game_seeds(), np.arange(100, 106))
    restarted = 0
    for step in range(400):
        _, _, _, _, term, trunc, _ = batch.step(batch.sample_actions(seed=step))
        for slot in np.flatnonzero(term | trunc):
            restarted += 1
            fresh = splendor_env.new_state(num_players, seed=int(batch.game_seeds()[slot]), max_turns=30)
            np.testing.assert_array_equal(batch.states[slot], fresh)
    seeds = batch.game_seeds()
    assert restarted > 6 and len(set(seeds.tolist())) == 6 and seeds.max() == 100 + 6 + restarted - 1
    seeds[:] = -1  # a copy: the batch's own record is untouched
    assert (batch.game_seeds() >= 100).all()


def test_observe_other_seat_matches_single_game_observe() -> None:
    venv = SplendorBatch(2, 3)
    venv.reset(seed=0)
    seen = venv.observe(2)
    expected = np.empty(OBS_DIM, dtype=np.float32)
    observe(venv.states[1], 2, expected)
    np.testing.assert_array_equal(seen[1], expected)


@pytest.mark.parametrize("width", [1, 7, 8, 9, 72, 749, 2045, 4100])
@pytest.mark.parametrize("dtype", [np.int8, np.bool_])
def test_sample_legal_actions_draws_the_kth_legal_id_of_the_stream(width: int, dtype: type) -> None:
    """The sampler counts legal ids 8 bytes at a time; whatever the width (a tail shorter than 8,
    legal ids only in the tail or only in the first word, rows longer than the 255 words a byte
    lane can count), it returns the k-th legal id in id
    order for k drawn from the stream, exactly as a plain scan would."""
    from splendor_env.rng import rand_below

    gen = np.random.default_rng(width)
    masks = (gen.random((300, width)) < gen.choice([0.02, 0.2, 0.9], size=(300, 1))).astype(dtype)
    masks[np.arange(300), gen.integers(0, width, 300)] = 1  # every row has a legal id
    masks[0] = 0
    masks[0, width - 1] = 1  # only the last id (in the tail when width % 8)
    masks[1] = 0
    masks[1, 0] = 1  # only the first id
    got = sample_legal_actions(masks, np.array([42], dtype=np.uint64))
    stream = np.array([42], dtype=np.uint64)
    expected = [
        int(np.flatnonzero(row)[rand_below(stream, int(row.sum()))]) for row in masks.astype(np.int64)
    ]
    np.testing.assert_array_equal(got, expected)


def test_sample_legal_actions_reads_any_mask_layout_id_by_id() -> None:
    """Only rows of contiguous bytes are read 8 at a time; a Fortran-ordered or strided mask
    (a user's view) gives the same draws as its contiguous copy."""
    gen = np.random.default_rng(5)
    masks = (gen.random((50, 2 * 749)) < 0.1).astype(np.int8)
    masks[:, 0] = 1
    views = [np.asfortranarray(masks), masks[:, ::2]]
    for view in views:
        expected = sample_legal_actions(np.ascontiguousarray(view), np.array([3], dtype=np.uint64))
        np.testing.assert_array_equal(sample_legal_actions(view, np.array([3], dtype=np.uint64)), expected)


def test_sample_legal_actions_only_picks_legal_ids() -> None:
    venv = SplendorBatch(64, 4, copy=False)
    _, masks, _ = venv.reset(seed=2)
    rng = np.array([9], dtype=np.uint64)
    for step in range(300):
        actions = sample_legal_actions(masks, rng)
        assert masks[np.arange(64), actions].all()
        _, masks, *_ = venv.step(actions)
        if step % 25 == 0:
            assert not [p for row in venv.states for p in check_invariants(row)]


def _mid_game(num_players: int, seed: int, moves: int, modules: tuple[str, ...] = ()) -> np.ndarray:
    """A state ``moves`` random legal moves into game ``seed``."""
    from splendor_env import rules

    s = new_state(num_players, seed, modules=modules)
    rng = np.random.default_rng(seed)
    mask = np.zeros(splendor_env.actions.num_actions(st.parse_modules(modules)), dtype=np.int8)
    for _ in range(moves):
        if rules.is_over(s):
            break
        rules.legal_mask(s, mask)
        rules.apply_action(s, int(rng.choice(np.flatnonzero(mask))))
    return s


@pytest.mark.parametrize(
    ("num_players", "modules"), [(2, ()), (3, ("cities",)), (4, ("orient", "strongholds"))]
)
def test_loaded_positions_play_on_as_the_aec_rules_do(num_players: int, modules: tuple[str, ...]) -> None:
    from splendor_env import rules

    starts = np.stack([_mid_game(num_players, 10 + k, 7 + 5 * k, modules) for k in range(3)])
    venv = SplendorBatch(3, num_players, modules=modules)
    obs, masks, player = venv.load(starts)
    np.testing.assert_array_equal(venv.states, starts)
    assert (venv.game_seeds() == -1).all()
    expect_obs = np.zeros_like(obs[0])
    expect_mask = np.zeros_like(masks[0])
    for b in range(3):
        assert player[b] == starts[b, st.CURRENT]
        observe(starts[b], int(player[b]), expect_obs)
        rules.legal_mask(starts[b], expect_mask)
        np.testing.assert_array_equal(obs[b], expect_obs)
        np.testing.assert_array_equal(masks[b], expect_mask)
    singles = starts.copy()
    for _ in range(6):  # the same moves in the batch and one game at a time
        actions = np.array([int(np.flatnonzero(masks[b])[-1]) for b in range(3)])
        obs, masks, player, _, term, trunc, _ = venv.step(actions)
        for b in range(3):
            rules.apply_action(singles[b], int(actions[b]))
        assert not (term | trunc).any()
        np.testing.assert_array_equal(venv.states, singles)


def test_load_replaces_only_the_listed_games() -> None:
    venv = SplendorBatch(3, 2)
    venv.reset(seed=4)
    before = venv.states.copy()
    seeds = venv.game_seeds()
    pos = _mid_game(2, 99, 9)
    venv.load(pos[None], env_ids=np.array([1]))
    np.testing.assert_array_equal(venv.states[1], pos)
    np.testing.assert_array_equal(venv.states[[0, 2]], before[[0, 2]])
    np.testing.assert_array_equal(venv.game_seeds(), [seeds[0], -1, seeds[2]])


def test_bad_loads_are_refused_and_change_nothing() -> None:
    fresh = SplendorBatch(2, 2)
    with pytest.raises(RuntimeError, match="must load every game"):
        fresh.load(_mid_game(2, 1, 3)[None], env_ids=np.array([0]))
    venv = SplendorBatch(2, 2)
    venv.reset(seed=8)
    before = venv.states.copy()
    good = _mid_game(2, 1, 3)
    with pytest.raises(ValueError, match="integer array of shape"):
        venv.load(good[None])
    with pytest.raises(ValueError, match="integer array of shape"):
        venv.load(np.stack([good, good]).astype(np.float32))
    with pytest.raises(ValueError, match=r"states\[1\]: a 3-player game"):
        venv.load(np.stack([good, new_state(3, 1)]))
    broken = good.copy()
    broken[st.BANK] += 1  # a token out of nowhere
    with pytest.raises(ValueError, match=r"states\[0\]: .*token"):
        venv.load(np.stack([broken, good]))
    over = _mid_game(2, 1, 10_000)  # played to its end
    assert over[st.PHASE] in (st.PHASE_GAME_OVER, st.PHASE_TRUNCATED)
    with pytest.raises(ValueError, match=r"states\[1\]: the game is over"):
        venv.load(np.stack([good, over]))
    wide = np.stack([good, good]).astype(np.int64)
    wide[0, st.MAX_TURNS] += 2**32  # would wrap to a small cap in int32
    with pytest.raises(ValueError, match="outside the int32 range"):
        venv.load(wide)
    np.testing.assert_array_equal(venv.states, before)
    # check=False skips only the invariants: the shape, game and finished checks still refuse
    venv.load(np.stack([broken, good]), check=False)
    np.testing.assert_array_equal(venv.states, np.stack([broken, good]))
    with pytest.raises(ValueError, match=r"states\[1\]: a 3-player game"):
        venv.load(np.stack([good, new_state(3, 1)]), check=False)
    with pytest.raises(ValueError, match=r"states\[1\]: the game is over"):
        venv.load(np.stack([good, over]), check=False)


@pytest.mark.parametrize(
    "phase", ["keep_drawn_card", "city", "trading_post_choice", "pair_target", "sacrifice_choice"]
)
def test_a_module_phase_with_nothing_pending_is_refused(phase: str) -> None:
    """The invariants do not see a module choice with nothing to choose: loaded, its game had no legal
    move (sampling divided by zero) or, for a drawn card that was never drawn, a step that never returned."""
    mods = ("cities", "trading_posts", "orient", "strongholds")
    s = new_state(2, 0, modules=mods)
    s[st.PHASE] = st.PHASE_NAMES.index(phase)
    venv = SplendorBatch(1, num_players=2, modules=mods, seed=0)
    with pytest.raises(ValueError, match=r"states\[0\]: .*(pending|stage|no legal action)"):
        venv.load(s[None])
