"""Self-play options for policy improvement at few simulations (training/expert_iteration/selfplay.py):
playout-cap randomisation, Gumbel AlphaZero's root (agents/players/az.py ``gumbel_search``) and the share of
positions recorded; each off by default."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest

from agents.nets.checkpoint import model_bytes
from agents.nets.shipped import resolve_model
from agents.players.az import AZAgent
from agents.positions import sample_states
from splendor_env import rules
from splendor_env import state as st
from splendor_env.determinize import determinize
from training.expert_iteration import config as search_config
from training.expert_iteration.network import initial_model
from training.expert_iteration.replay import FIELDS, concat
from training.expert_iteration.selfplay import selfplay_job, selfplay_jobs

SIMS = 12


@cache
def _network() -> bytes:
    cfg = search_config.from_dict({"players": 2, "init": "az_2p"}, check_specs=False)
    return model_bytes(initial_model(cfg))


def _jobs(games: int, per_job: int, **selfplay: Any) -> list[dict[str, Any]]:
    sp = {**search_config.SelfPlaySection().model_dump(), "sims": SIMS, "batch": 4, "sample_moves": 4}
    return selfplay_jobs(_network(), 1, 5, games, per_job, [2], (), {**sp, **selfplay})


def _play(games: int, per_job: int, **selfplay: Any) -> dict[str, Any]:
    parts = [selfplay_job(job) for job in _jobs(games, per_job, **selfplay)]
    return {
        "positions": concat([p["positions"] for p in parts]),
        "records": [r for p in parts for r in p["records"]],
    }


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    for k in FIELDS:
        np.testing.assert_array_equal(a["positions"][k], b["positions"][k], err_msg=k)
    assert a["records"] == b["records"]


@cache
def _default() -> dict[str, Any]:
    return _play(2, 2)


@pytest.mark.parametrize("options", [{"full_share": 0.4, "cheap_sims": 3}, {"record_share": 0.3}])
def test_a_share_of_the_decisions_is_recorded_reproducibly_however_the_jobs_are_cut(
    options: dict[str, Any],
) -> None:
    whole = _play(2, 2, **options)
    _same(whole, _play(2, 1, **options))  # one game a job: the same records
    default = _default()
    mine, full = whole["positions"], default["positions"]
    assert 0 < len(mine["value"]) < 0.7 * len(full["value"])
    if "record_share" in options:  # recording alone changes no move: the same games, a subset of rows
        assert [r["actions"] for r in whole["records"]] == [r["actions"] for r in default["records"]]
        rows = {(round(float(p), 6), float(v)) for p, v in zip(full["phase"], full["value"], strict=True)}
        assert all(
            (round(float(p), 6), float(v)) in rows for p, v in zip(mine["phase"], mine["value"], strict=True)
        )


def test_cheap_searches_change_the_games_and_are_not_recorded() -> None:
    cheap = _play(2, 2, full_share=0.4, cheap_sims=3)
    assert [r["actions"] for r in cheap["records"]] != [r["actions"] for r in _default()["records"]]
    # every recorded target is a full search's: 11 visits below the root (12 simulations), not 2
    share = cheap["positions"]["policy"] * (SIMS - 1)
    assert np.allclose(share, np.round(share), atol=1e-4)
    assert sum(r["positions"] for r in cheap["records"]) == len(share)


def test_gumbel_selfplay_records_a_distribution_over_the_legal_ids_reproducibly() -> None:
    a = _play(2, 2, root="gumbel", gumbel_actions=4)
    _same(a, _play(2, 1, root="gumbel", gumbel_actions=4))
    pos = a["positions"]
    assert len(pos["value"]) > 0
    assert np.allclose(pos["policy"].sum(axis=1), 1.0, atol=1e-5)
    assert (pos["policy"][~pos["mask"]] == 0).all()
    # a completed-Q target gives every legal id some weight, unlike visit counts at 12 simulations
    assert (pos["policy"][pos["mask"]] > 0).all()
    assert [r["actions"] for r in a["records"]] != [r["actions"] for r in _default()["records"]]


@cache
def _agent() -> AZAgent:
    return AZAgent(str(resolve_model("az_2p")), seed=0, sims=300, batch=4)


def _positions(k: int) -> list[np.ndarray]:
    states = sample_states(2, 4, seed=3)[::3][:k]
    return [determinize(s, int(s[st.CURRENT]), i) for i, s in enumerate(states)]


def test_gumbel_with_every_legal_move_picks_the_clear_puct_choice() -> None:
    az = _agent()
    checked = 0
    for i, s in enumerate(_positions(12)):
        mask = np.zeros(az.network(2, ()).num_actions, dtype=np.int8)
        rules.legal_mask(s, mask)
        az.seed(i)
        counts = np.floor(az.root_visits(s))
        if mask.sum() < 2 or counts.max() < 0.95 * counts.sum():  # a clear choice only
            continue
        az.seed(i)
        move, target = az.gumbel_search(s, int(mask.sum()))
        assert move == int(np.argmax(counts)) == int(np.argmax(target)), i
        assert abs(float(target.sum()) - 1.0) < 1e-5 and (target[mask == 0] == 0).all()
        checked += 1
    assert checked >= 3


def test_gumbel_search_is_reproducible_from_the_seed_and_samples_with_the_seed() -> None:
    az = _agent()
    s = _positions(6)[5]
    results = []
    for seed in (1, 1, 2):
        az.seed(seed)
        move, target = az.gumbel_search(s, 2)
        results.append((move, target.copy(), az.root_value))
    assert results[0][0] == results[1][0] and np.array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2]
    assert not np.array_equal(results[0][1], results[2][1])  # other sampled moves, other visits


def test_the_default_options_draw_nothing_and_play_as_before() -> None:
    """``full_share`` and ``record_share`` at 1 record every searched decision, as before the options."""
    default = _default()
    explicit = _play(2, 2, full_share=1.0, record_share=1.0, root="puct", cheap_sims=5)
    _same(default, explicit)
    searched = sum(r["positions"] for r in default["records"])
    assert searched == len(default["positions"]["value"]) > 0


@pytest.mark.parametrize(
    ("selfplay", "key"),
    [
        ({"full_share": 0.5, "cheap_sims": 100, "sims": 100}, "selfplay.cheap_sims"),
        ({"full_share": 0}, "selfplay.full_share"),
        ({"record_share": 1.5}, "selfplay.record_share"),
        ({"root": "alpha"}, "selfplay.root"),
        ({"gumbel_actions": 1}, "selfplay.gumbel_actions"),
    ],
)
def test_bad_options_are_refused_naming_the_key(selfplay: dict[str, Any], key: str) -> None:
    with pytest.raises(ValueError, match=key.replace(".", r"\.")) as err:
        search_config.from_dict({"players": 2, "init": "fresh", "selfplay": selfplay}, check_specs=False)
    assert "\n" not in str(err.value).strip()


class _Critic:
    """A stand-in policy whose critic gives each replayed row a value fixed in advance."""

    def __init__(self, values: list[float]) -> None:
        self.values = np.array(values, dtype=np.float32)

    def set_training_mode(self, _: bool) -> None:
        pass

    def predict_values(self, obs: Any) -> Any:
        import torch

        assert obs.shape[0] == self.values.size  # one row per seat and decision of the games won alone
        return torch.as_tensor(self.values[:, None])


def test_the_winner_pick_replays_the_new_games_and_scores_the_critic_by_turn() -> None:
    from training.expert_iteration.learner import winner_pick

    records = _default()["records"]
    won = [r for r in records if len(r["winners"]) == 1 and not r["truncated"]]
    assert won

    def critic(sign: float) -> _Critic:
        rows = [
            sign * (1.0 if q == r["winners"][0] else -1.0)
            for r in won
            for _ in r["actions"]
            for q in range(r["num_players"])
        ]
        return _Critic(rows)

    right, wrong = winner_pick(critic(1.0), records), winner_pick(critic(-1.0), records)
    assert right["winner_pick"] == 1.0 and wrong["winner_pick"] == 0.0
    assert {"winner_pick_0_9", "winner_pick_10_19"} <= right.keys()
    n = sum(len(r["actions"]) * r["num_players"] for r in won)
    assert winner_pick(_Critic([0.0] * n), records)["winner_pick_0_9"] == 0.5  # a tie of two counts 1/2
    assert winner_pick(_Critic([]), [r for r in records if r not in won]) == {}
