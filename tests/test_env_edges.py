"""API edges of the AEC env and the batched engine that once failed: observing every agent after the
end, a refused snapshot reset, numpy integers as options, turn caps past int32, sampling seeds."""

from __future__ import annotations

import json

import numpy as np
import pytest

import splendor_env
from splendor_env import records
from splendor_env.vector import SplendorBatch


@pytest.mark.parametrize(("n", "modules"), [(2, ()), (3, ("cities", "orient")), (4, ())])
def test_every_agent_can_be_observed_after_the_game_ends(n: int, modules: tuple[str, ...]) -> None:
    """PettingZoo drops a dead agent's entries once it is stepped; observe() of it raised KeyError."""
    e = splendor_env.env(num_players=n, modules=modules, max_turns=3 * n)
    e.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert not e.agents
    for agent in e.possible_agents:
        seen = e.observe(agent)
        assert not seen["action_mask"].any() and seen["observation"].shape == (e.unwrapped._obs_dim,)


def test_a_refused_snapshot_reset_leaves_the_generator_as_it_was() -> None:
    a, b = splendor_env.raw_env(), splendor_env.raw_env()
    a.reset(seed=1)
    b.reset(seed=1)
    with pytest.raises(ValueError, match="snapshot"):
        b.reset(seed=99, options={"snapshot": {"bogus": 1}})
    a.reset()
    b.reset()  # the next deal from each generator: the same game if the refusal changed nothing
    np.testing.assert_array_equal(a.engine_state(), b.engine_state())
    # a good snapshot with a seed: the state is the snapshot's, the generator reseeded
    snap = a.snapshot()
    b.reset(seed=5, options={"snapshot": snap})
    np.testing.assert_array_equal(b.engine_state(), a.engine_state())
    c = splendor_env.raw_env()
    c.reset(seed=5)
    c.reset()
    b.reset()
    np.testing.assert_array_equal(b.engine_state(), c.engine_state())


def test_numpy_integer_options_become_ints_that_records_can_write() -> None:
    e = splendor_env.raw_env(num_players=np.uint8(3), max_turns=np.int64(50))
    assert type(e.config.num_players) is int and type(e.config.max_turns) is int
    e.reset(seed=4)
    record = records.game_record(e, 4, ["a", "b", "c"], [])
    assert json.loads(json.dumps(record))["num_players"] == 3


@pytest.mark.parametrize("cap", [2**31, 2**32 + 5])
def test_a_turn_cap_past_int32_is_refused_not_wrapped(cap: int) -> None:
    with pytest.raises(ValueError, match=r"max_turns must be in 1..2147483647"):
        splendor_env.new_state(2, 0, max_turns=cap)
    with pytest.raises(ValueError, match=r"max_turns must be in 1..2147483647"):
        splendor_env.raw_env(max_turns=cap)


@pytest.mark.parametrize(
    ("seed", "error"), [(2.7, TypeError), ("5", TypeError), (True, TypeError), (-1, ValueError)]
)
def test_sample_actions_checks_its_seed_as_reset_does(seed: object, error: type) -> None:
    v = SplendorBatch(4, num_players=2, seed=0)
    v.reset(seed=0)
    with pytest.raises(error, match="sample_actions seed"):
        v.sample_actions(seed=seed)
    np.testing.assert_array_equal(v.sample_actions(seed=np.int64(7)), v.sample_actions(seed=7))
