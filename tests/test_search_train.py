"""Expert iteration (training/expert_iteration/, training/search_train.py): config, self-play targets, buffer, runs, resume, backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from tests.helpers.search_runs import tiny
from tests.helpers.selfplay_jobs import selfplay_options
from training.common.config import ConfigError
from training.expert_iteration import config as search_config
from training.expert_iteration.replay import ReplayBuffer
from training.expert_iteration.selfplay import choose_move, sharpen, visit_target


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"selfplay": {"simz": 3}}, "selfplay.simz: unknown key 'simz'; known keys here: ['games', 'sims'"),
        ({"gate": {"threshold": 1.5}}, "gate.threshold: must be <= 1, got 1.5"),
        ({"players": 5}, "players: a player count must be 2, 3 or 4, got 5"),
        ({"modules": ["citys"]}, "modules[0]: unknown module 'citys'"),
        ({"init": "nope.zip"}, "init: model file not found: 'nope.zip'"),
        ({"init": "ppo_2p", "modules": ["cities"]}, "init: "),
        ({"train": {"min_positions": 10, "batch_size": 0}}, "train.batch_size: must be >= 1, got 0"),
        ({"buffer": {"capacity": 5}}, "train.min_positions: must be <= buffer.capacity (5)"),
        ({"eval": {"modes": ["mcts"]}}, "eval.modes[0]: must be one of 'ppo' or 'az', got 'mcts'"),
        ({"device": "tpu"}, "device: must be one of"),
        (
            {"selfplay": {"opponent_share": 0.5}},
            "selfplay.opponent_share: is 0.5 but selfplay.opponents is empty",
        ),
        ({"selfplay": {"opponent_share": 1.5}}, "selfplay.opponent_share: must be <= 1, got 1.5"),
    ],
)
def test_config_errors_name_the_key(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        search_config.from_dict(change, check_specs=False)
    assert str(err.value).startswith(message), str(err.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"", "the config is empty"),
        (b"players: 2\x00", "binary file (NUL bytes)"),
        (b"- 2\n", "the top level must be a mapping"),
        (b"players: [2\n", "not valid YAML"),
    ],
)
def test_config_files_are_read_like_the_ppo_configs(tmp_path: Path, text: bytes, message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(text)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        search_config.load(path, check_specs=False)


def test_set_reaches_into_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("players: 3\n")
    cfg = search_config.load(path, ["eval.opponents.0=random", "train.epochs=0.5"], check_specs=False)
    assert cfg.eval.opponents == ["random"] and cfg.train.epochs == 0.5 and cfg.players == 3
    with pytest.raises(ConfigError, match="eval.opponents has no item '3'"):
        search_config.load(path, ["eval.opponents.3=random"], check_specs=False)


def test_search_configs_are_read_by_the_one_loader_of_the_ppo_configs(tmp_path: Path) -> None:
    from training.common.config import parse_config, read_mapping
    from training.expert_iteration.config import SearchTrainConfig

    path = tmp_path / "c.yaml"
    path.write_text("players: [3, 4]\neval: {games: 10}\n")
    overrides = ["eval.opponents.0=random", "gate.threshold=0.6"]
    cfg = search_config.load(path, overrides, check_specs=False)
    assert cfg == parse_config(SearchTrainConfig, read_mapping(path), overrides)
    assert (cfg.eval.opponents, cfg.eval.games, cfg.eval.modes) == (["random"], 10, ["ppo", "az"])


def test_shipped_configs_are_valid() -> None:
    root = Path(__file__).resolve().parents[1] / "configs"
    games = {}
    for name in ("search_2p", "search_3_4p", "search_modules_2p"):
        cfg = search_config.load(root / f"{name}.yaml", check_specs=False)
        games[name] = (cfg.player_counts, tuple(cfg.modules), cfg.init)
    assert games["search_2p"] == ([2], (), "ppo_2p")
    assert games["search_3_4p"] == ([3, 4], (), "ppo_base_3_4p")
    assert games["search_modules_2p"] == (
        [2],
        ("cities", "trading_posts", "orient", "strongholds"),
        "ppo_modules_2p",
    )
    # every search config loads (a candidate recipe too); a recipe from a network retired from the
    # package (0.6.0) says where to get it, and loads with a network of the same game standing in
    from agents.nets.shipped import retired_note
    from training.common.config import read_mapping

    stand_in = {}
    for path in sorted(root.glob("search_*.yaml")):
        if retired_note(read_mapping(path).get("init", "")) is not None:
            with pytest.raises(ConfigError, match="retired"):
                search_config.load(path, check_specs=False)
            stand_in[path.name] = ["init=az_2p"]
        search_config.load(path, stand_in.get(path.name), check_specs=False)
    assert sorted(stand_in) == ["search_2p_gumbel_long.yaml", "search_2p_kept_long.yaml"]
    # the long runs: each from a shipped az network of its game, 12 hours in pieces of at most 2.5
    for name, init in (("2p", "az_2p"), ("3_4p", "az_3_4p_v2"), ("modules_2p", "az_modules_2p")):
        long = search_config.load(root / f"search_{name}_long.yaml", check_specs=False)
        short = search_config.load(root / f"search_{name}.yaml", check_specs=False)
        assert (long.player_counts, long.modules) == (short.player_counts, short.modules)
        assert long.init == init and long.max_total_wall_minutes == 720 and long.max_wall_minutes <= 150
    # a variant is its base (``base:``) with what it writes over it
    assert read_mapping(root / "search_2p_kept_long.yaml")["init"] == "az_2p_v3"
    kept = search_config.load(
        root / "search_2p_kept_long.yaml", ["init=az_2p"], check_specs=False
    ).model_dump()
    long = search_config.load(root / "search_2p_long.yaml", check_specs=False).model_dump()
    long.update(output_dir="runs/search_2p_v4", max_wall_minutes=100, max_total_wall_minutes=360)
    long["selfplay"].update(sims=160, reuse=True)
    assert kept == long


def test_visit_target_and_move_choice() -> None:
    mask = np.array([1, 0, 1, 1, 0], np.int8)
    counts = np.array([3.4, 0.0, 0.25, 5.3, 0.0])  # root_visits: visits + a tie-break below 1
    target = visit_target(counts, mask)
    np.testing.assert_allclose(target, [3 / 8, 0, 0, 5 / 8, 0])
    assert choose_move(counts, target, False, 1.0, np.random.default_rng(0)) == 3
    picks = {choose_move(counts, target, True, 1.0, np.random.default_rng(s)) for s in range(40)}
    assert picks == {0, 3}  # sampled only among visited legal moves
    one = visit_target(np.array([0.25, 0.3, 0.2]), np.array([1, 1, 0]))  # no visit: the best valued move
    np.testing.assert_array_equal(one, [0, 1, 0])


def test_replay_buffer_drops_the_oldest_and_round_trips(tmp_path: Path) -> None:
    buf = ReplayBuffer(5, 3, 4)

    def batch(first: int, k: int) -> dict[str, np.ndarray]:
        v = np.arange(first, first + k, dtype=np.float32)
        return {
            "obs": np.repeat(v[:, None], 3, 1),
            "mask": np.ones((k, 4), bool),
            "policy": np.full((k, 4), 0.25, np.float32),
            "value": v,
            "q": -v,
            "seat": np.zeros(k, np.int8),
            "phase": np.zeros(k, np.float32),
        }

    buf.add(batch(0, 3))
    buf.add(batch(3, 4))
    assert buf.size == 5 and buf.added == 7
    np.testing.assert_array_equal(buf.ordered()["value"], [2, 3, 4, 5, 6])
    buf.save(tmp_path / "b.npz")
    again = ReplayBuffer.load(tmp_path / "b.npz", 5, 3, 4)
    np.testing.assert_array_equal(again.ordered()["value"], [2, 3, 4, 5, 6])
    np.testing.assert_array_equal(again.ordered()["q"], [-2, -3, -4, -5, -6])
    assert again.added == 7
    again.add(batch(7, 9))  # more than the capacity at once: its newest positions
    np.testing.assert_array_equal(again.ordered()["value"], [11, 12, 13, 14, 15])


def test_a_buffer_saved_without_search_values_loads_with_the_results_as_q(tmp_path: Path) -> None:
    v = np.array([1.0, -1.0], np.float32)
    old = {"obs": np.zeros((2, 3), np.float32), "mask": np.ones((2, 4), bool)}
    old |= {"policy": np.full((2, 4), 0.25, np.float32), "value": v, "seat": np.zeros(2, np.int8)}
    np.savez(tmp_path / "old.npz", added=np.int64(2), phase=np.zeros(2, np.float32), **old)
    buf = ReplayBuffer.load(tmp_path / "old.npz", 5, 3, 4)
    np.testing.assert_array_equal(buf.ordered()["q"], v)


def test_sharpened_target_keeps_the_order_and_the_legal_ids() -> None:
    target = np.array([0.5, 0.0, 0.3, 0.2], np.float32)
    assert sharpen(target, 1.0) is target
    sharp = sharpen(target, 0.5)
    np.testing.assert_allclose(sharp, np.array([25, 0, 9, 4]) / 38, rtol=1e-6)
    assert sharp.dtype == np.float32


def test_value_target_mixes_the_result_and_the_search_value() -> None:
    import torch

    from training.expert_iteration.learner import losses
    from training.expert_iteration.network import fresh_model

    cfg = search_config.from_dict({"players": 2}, check_specs=False)
    policy = fresh_model(cfg).policy
    n_obs, n_act = policy.observation_space.shape[0], policy.action_space.n
    batch = {
        "obs": np.zeros((2, n_obs), np.float32),
        "mask": np.ones((2, n_act), bool),
        "policy": np.full((2, n_act), 1 / n_act, np.float32),
        "value": np.array([1.0, -1.0], np.float32),
        "q": np.array([0.2, 0.4], np.float32),
    }
    with torch.no_grad():
        _, plain, values = losses(policy, batch, torch.device("cpu"))
        _, mixed, _ = losses(policy, batch, torch.device("cpu"), 0.5)
    v = values.numpy()
    np.testing.assert_allclose(plain.item(), np.mean((v - [1.0, -1.0]) ** 2), rtol=1e-5)
    np.testing.assert_allclose(mixed.item(), np.mean((v - [0.6, -0.3]) ** 2), rtol=1e-5)


def test_a_part_of_an_epoch_trains_on_that_share_of_the_buffer(tmp_path: Path) -> None:
    import torch

    from training.common.budgets import WallBudget
    from training.expert_iteration.learner import make_optimizer, train_network
    from training.expert_iteration.network import fresh_model

    raw = tiny(tmp_path, train__epochs=0.25, train__batch_size=10)
    cfg = search_config.from_dict(raw, check_specs=False)
    policy = fresh_model(cfg).policy
    buf = _random_buffer(policy, 400)
    rng = np.random.default_rng(0)
    opt = make_optimizer(policy, cfg)
    out = train_network(policy, opt, buf, cfg, rng, torch.device("cpu"), WallBudget(None))
    assert out["train_batches"] == 10  # a quarter of 400 positions in batches of 10
    cfg = search_config.from_dict(tiny(tmp_path, train__epochs=1.5, train__batch_size=100), check_specs=False)
    out = train_network(policy, opt, buf, cfg, rng, torch.device("cpu"), WallBudget(None))
    assert out["train_batches"] == 6  # one pass (4 batches) and half of another (2)


def test_selfplay_refuses_games_that_need_different_networks() -> None:
    """One search evaluates every root with one network, so games that a shipped ``az`` plays with two
    networks (2 players: az_2p, 3: az_3_4p) are refused by name instead of searched with the wrong one."""
    from agents.players.az import AZAgent
    from splendor_env.env import raw_env
    from training.expert_iteration.selfplay import Game, game_seeds, play_games

    az = AZAgent(seed=0, sims=8, batch=8)
    sp = selfplay_options()
    games = [Game(g, game_seeds(0, 0, g), raw_env(num_players=n), sp) for g, n in enumerate((2, 3))]
    with pytest.raises(ValueError, match="one network; these games need .*az_2p.*az_3_4p"):
        play_games(az, games)


def test_selfplay_targets_are_visit_shares_and_each_seats_result(tmp_path: Path) -> None:
    from agents.players.az import AZAgent
    from training.expert_iteration.network import fresh_model
    from training.expert_iteration.selfplay import game_seeds, play_selfplay_game

    cfg = search_config.from_dict(tiny(tmp_path), check_specs=False)
    az = AZAgent(model=fresh_model(cfg), seed=0, sims=8)
    sp = selfplay_options(sample_moves=4, max_turns=200)
    data, record = play_selfplay_game(az, sp, 2, (), game_seeds(0, 0, 0))
    assert len(data["value"]) > 10
    np.testing.assert_allclose(data["policy"].sum(axis=1), 1.0, rtol=1e-6)
    assert not data["policy"][~data["mask"]].any()  # mass on legal ids only
    winners = record["winners"]
    expected = [
        0.0 if record["truncated"] else (1.0 if winners == [p] else 0.0 if p in winners else -1.0)
        for p in range(2)
    ]
    np.testing.assert_array_equal(data["value"], np.array(expected, np.float32)[data["seat"]])
    assert set(data["seat"].tolist()) == {0, 1} and data["phase"].min() >= 0 and data["phase"].max() < 1
    assert np.abs(data["q"]).max() <= 1.0 and np.unique(data["q"]).size > 2  # the search's own values


def test_an_unknown_selfplay_opponent_is_refused_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"selfplay.opponents\[1\]: unknown or unusable agent spec 'grady'"):
        search_config.from_dict({"selfplay": {"opponents": ["greedy", "grady"], "opponent_share": 0.5}})


def test_opponent_games_are_drawn_from_the_seeds_at_the_configured_share() -> None:
    from training.expert_iteration.selfplay import opponent_game

    assert all(opponent_game(0, 3, g, 4, 0.0) is None for g in range(200))
    seats = [opponent_game(0, 3, g, 4, 1.0) for g in range(200)]
    assert set(seats) == {0, 1, 2, 3}  # every seat, not a fixed one
    half = [opponent_game(0, 3, g, 3, 0.5) for g in range(2000)]
    assert half == [opponent_game(0, 3, g, 3, 0.5) for g in range(2000)]  # reproducible
    mixed = np.array([s is not None for s in half])
    assert 0.45 < mixed.mean() < 0.55
    # not tied to the parity of the game index, which alternates the player counts
    assert 0.4 < mixed[::2].mean() < 0.6 and 0.4 < mixed[1::2].mean() < 0.6
    assert half != [opponent_game(1, 3, g, 3, 0.5) for g in range(2000)]  # the config seed matters


def game_against_greedy(
    tmp_path: Path, n: int, seat: int, max_turns: int
) -> tuple[dict[str, np.ndarray], dict[str, Any], Any]:
    """An 8-simulation search with a fresh network in ``seat`` against ``greedy`` in the others."""
    from agents import build
    from agents.players.az import AZAgent
    from training.expert_iteration.network import fresh_model
    from training.expert_iteration.selfplay import game_seeds, play_selfplay_game

    cfg = search_config.from_dict(tiny(tmp_path, players=n), check_specs=False)
    az = AZAgent(model=fresh_model(cfg), seed=0, sims=8)
    greedy = [build("greedy", seed=0) for _ in range(n)]
    sp = selfplay_options(sample_moves=4, max_turns=max_turns)
    data, record = play_selfplay_game(az, sp, n, (), game_seeds(0, 0, 1), (greedy, "greedy", seat))
    return data, record, az


def test_a_game_against_opponents_records_only_the_search_seat(tmp_path: Path) -> None:
    data, record, _ = game_against_greedy(tmp_path, 3, 2, 200)
    assert record["agents"] == ["greedy", "greedy", "az"]
    assert len(data["value"]) > 5 and set(data["seat"].tolist()) == {2}
    won = 2 in record["winners"]
    expected = 0.0 if record["truncated"] else (1.0 if record["winners"] == [2] else 0.0 if won else -1.0)
    assert (data["value"] == expected).all()
    np.testing.assert_allclose(data["policy"].sum(axis=1), 1.0, rtol=1e-6)
    assert data["phase"].min() == 0.0  # the phase counts the search seat's own decisions


def test_a_game_cut_before_the_search_moves_records_nothing(tmp_path: Path) -> None:
    from training.expert_iteration.replay import FIELDS, concat
    from training.expert_iteration.selfplay import game_seeds, play_selfplay_game

    data, record, az = game_against_greedy(tmp_path, 4, 3, 1)
    assert record["truncated"] and all(len(data[k]) == 0 for k in FIELDS)
    full, _ = play_selfplay_game(
        az, selfplay_options(sample_moves=4, max_turns=8), 4, (), game_seeds(0, 0, 0)
    )
    assert len(concat([data, full])["obs"]) == len(full["obs"])  # empty parts join the others


def test_selfplay_jobs_with_opponents_do_not_depend_on_how_games_are_cut(tmp_path: Path) -> None:
    from agents.nets.checkpoint import model_bytes
    from training.common.jobs import map_jobs
    from training.expert_iteration.gate import opponent_win_rates
    from training.expert_iteration.network import fresh_model
    from training.expert_iteration.selfplay import selfplay_job, selfplay_jobs

    raw = tiny(tmp_path, players=[3, 4], selfplay__opponents=["greedy"], selfplay__opponent_share=0.5)
    cfg = search_config.from_dict(raw, check_specs=False)
    network = model_bytes(fresh_model(cfg))
    sp = cfg.selfplay.model_dump()
    whole = map_jobs(selfplay_job, selfplay_jobs(network, 0, cfg.seed, 6, 6, [3, 4], (), sp))
    split = map_jobs(selfplay_job, selfplay_jobs(network, 0, cfg.seed, 6, 2, [3, 4], (), sp))
    records = whole[0]["records"]
    assert [r["actions"] for r in records] == [r["actions"] for p in split for r in p["records"]]
    np.testing.assert_array_equal(
        whole[0]["positions"]["obs"], np.concatenate([p["positions"]["obs"] for p in split])
    )
    mixed = [r for r in records if r["search_seat"] >= 0]
    assert mixed and len(mixed) < len(records)
    for r in mixed:
        assert r["agents"][r["search_seat"]] == "az" and r["agents"].count("greedy") == r["num_players"] - 1
    rates = opponent_win_rates(records, [3, 4])
    assert set(rates) <= {"opponent_win_rate_vs_greedy_3p", "opponent_win_rate_vs_greedy_4p"} and rates
    assert opponent_win_rates([r for r in records if r["search_seat"] < 0], [3, 4]) == {}


def test_opponent_win_rates_score_sole_and_shared_wins() -> None:
    from training.expert_iteration.gate import opponent_win_rates

    def rec(n: int, seat: int, winners: list[int]) -> dict[str, Any]:
        agents = ["greedy"] * n
        if seat >= 0:
            agents[seat] = "az"
        return {"num_players": n, "search_seat": seat, "agents": agents, "winners": winners}

    records = [rec(3, 0, [0]), rec(3, 1, [0]), rec(3, 2, [1, 2]), rec(3, -1, [0]), rec(4, 3, [3])]
    assert opponent_win_rates(records, [3, 4]) == {
        "opponent_win_rate_vs_greedy_3p": pytest.approx((1 + 0 + 0.5) / 3),
        "opponent_win_rate_vs_greedy_4p": 1.0,
    }
    assert opponent_win_rates(records[:2], [3]) == {"opponent_win_rate_vs_greedy": 0.5}


def test_root_value_is_the_mean_value_of_the_searched_moves() -> None:
    from agents.players.az import AZAgent
    from agents.positions import sample_states
    from splendor_env.state import CURRENT

    az = AZAgent(seed=0, sims=64)
    state = sample_states(2, 1, seed=3)[10]
    counts = az.root_visits(state)
    assert az.last_tree is not None
    _, visits, values = az.last_tree.root_stats(int(state[CURRENT]))
    assert np.floor(counts).sum() == visits.sum() >= 60
    assert az.root_value == pytest.approx(values.sum() / visits.sum()) and -1.0 <= az.root_value <= 1.0


def run_tiny(raw: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    from training.expert_iteration.loop import search_train

    return search_train(search_config.from_dict(raw), progress=False, log=lambda *_: None, **kwargs)


def plays_as_ppo_and_az(path: Path, players: int, modules: tuple[str, ...]) -> None:
    import agents
    from agents.runner import play_game

    for spec in (f"ppo:{path}", f"az:{path},sims=8"):
        agent = agents.make(spec, seed=0)
        record = play_game([agent] * players, seed=1, modules=modules, max_turns=30)
        assert record["actions"], spec


@pytest.mark.slow
@pytest.mark.parametrize(
    ("players", "modules", "init"),
    [(2, [], "ppo_2p"), (3, [], "fresh"), (2, ["cities"], "fresh")],
)
def test_tiny_run_gives_a_network_for_ppo_and_az(
    tmp_path: Path, players: int, modules: list[str], init: str
) -> None:
    raw = tiny(tmp_path, players=players, modules=modules, init=init, iterations=2)
    summary = run_tiny(raw)
    out = tmp_path / "run"
    assert summary["iterations"] == 2 and not summary["stopped_by_time_limit"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert [m["iteration"] for m in metrics] == [0, 1]
    assert "gate_accepted" in metrics[0] and "eval_win_rate_vs_greedy_ppo" in metrics[1]
    assert {p.name for p in (out / "checkpoints").iterdir()} >= {
        "learner.zip",
        "best.zip",
        "buffer.npz",
        "optimizer.pt",
        "state.json",
    }
    assert list((out / "tb").iterdir())
    plays_as_ppo_and_az(out / "best.zip", players, tuple(modules))
    plays_as_ppo_and_az(out / "checkpoints" / "learner.zip", players, tuple(modules))


@pytest.mark.slow
def test_a_run_with_a_residual_critic_and_aux_targets_resumes_and_plays(tmp_path: Path) -> None:
    raw = tiny(tmp_path, network={"critic_blocks": 1, "critic_width": 32}, iterations=1)
    raw["train"]["aux_coef"] = 0.5
    run_tiny(raw)
    out = tmp_path / "run"
    metrics = json.loads((out / "metrics.json").read_text())
    assert np.isfinite(metrics[0]["train_aux_loss"])
    with np.load(out / "checkpoints" / "buffer.npz") as z:
        assert np.isfinite(z["margin"]).all() and (z["moves_left"] >= 0).all()
    run_tiny({**raw, "iterations": 2}, resume=True)
    assert [m["iteration"] for m in json.loads((out / "metrics.json").read_text())] == [0, 1]
    plays_as_ppo_and_az(out / "best.zip", 2, ())


@pytest.mark.slow
def test_aux_targets_switched_on_at_resume_keep_the_saved_optimizer(tmp_path: Path) -> None:
    import torch

    raw = tiny(tmp_path, train__value_learning_rate=1e-4)
    run_tiny(raw)
    ckpt = tmp_path / "run" / "checkpoints"
    before = torch.load(ckpt / "optimizer.pt")
    raw["train"]["aux_coef"] = 0.5
    run_tiny({**raw, "iterations": 2}, resume=True)
    after = torch.load(ckpt / "optimizer.pt")
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert "train_aux_loss" not in metrics[0] and np.isfinite(metrics[1]["train_aux_loss"])
    # the head's weight and bias joined the critic's group; the actor's group is as it was
    assert [len(g["params"]) for g in after["param_groups"]] == [
        len(before["param_groups"][0]["params"]),
        len(before["param_groups"][1]["params"]) + 2,
    ]
    kept = before["state"][0]["step"]  # the moments went on from the saved ones, not from zero
    assert after["state"][0]["step"] > kept > 0


@pytest.mark.slow
def test_resume_continues_the_iteration_count_and_keeps_the_buffer(tmp_path: Path) -> None:
    raw = tiny(tmp_path, snapshot_every=1)
    run_tiny(raw)
    ckpt = tmp_path / "run" / "checkpoints"
    before = np.load(ckpt / "buffer.npz")["value"]
    raw["iterations"] = 2
    summary = run_tiny(raw, resume=True)
    assert summary["iterations"] == 2
    pieces = summary["pieces"]  # each invocation's iterations and wall time, for the models page
    assert [(p["resumed"], p["from_iteration"], p["to_iteration"]) for p in pieces] == [
        (False, 0, 1),
        (True, 1, 2),
    ]
    assert summary["total_wall_seconds"] == pytest.approx(sum(p["wall_seconds"] for p in pieces))
    assert summary["total_wall_seconds"] > summary["wall_seconds"] > 0
    after = np.load(ckpt / "buffer.npz")["value"]
    assert len(after) > len(before)
    np.testing.assert_array_equal(after[: len(before)], before)
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert [m["iteration"] for m in metrics] == [0, 1]
    # each row's wall_seconds is the run's time at its end, over both pieces
    assert 0 < metrics[0]["wall_seconds"] <= pieces[0]["wall_seconds"]
    assert pieces[0]["wall_seconds"] < metrics[1]["wall_seconds"] <= summary["total_wall_seconds"]
    # snapshot_every: 1 kept the gated network after each iteration, the last one is best.zip
    snapshots = sorted(p.name for p in (tmp_path / "run" / "snapshots").iterdir())
    assert snapshots == ["best-0001.zip", "best-0002.zip"]
    last = (tmp_path / "run" / "snapshots" / "best-0002.zip").read_bytes()
    assert last == (tmp_path / "run" / "best.zip").read_bytes()


def test_snapshots_are_kept_every_k_gated_iterations_and_only_then(tmp_path: Path) -> None:
    from training.expert_iteration.learner import make_optimizer
    from training.expert_iteration.loop import Run
    from training.expert_iteration.network import fresh_model

    cfg = search_config.from_dict(tiny(tmp_path), check_specs=False)
    run, learner = Run(cfg), fresh_model(cfg)
    buffer = _random_buffer(learner.policy, 16)
    optimizer = make_optimizer(learner.policy, cfg)
    snapshots = run.out / "snapshots"
    run.iteration = 2
    run.save(learner, b"best-2", optimizer, buffer, "gate")
    assert not snapshots.exists()  # snapshot_every: 0 keeps none
    run.cfg = cfg.model_copy(update={"snapshot_every": 2})
    run.iteration = 3
    run.save(learner, b"best-3", optimizer, buffer, "gate")  # 3 is not a multiple of 2
    run.iteration = 4
    run.save(learner, b"best-4", optimizer, buffer, "train")  # only the gate step changes best.zip
    assert not snapshots.exists()
    run.save(learner, b"best-4", optimizer, buffer, "gate")
    assert sorted(p.name for p in snapshots.iterdir()) == ["best-0004.zip"]
    assert (snapshots / "best-0004.zip").read_bytes() == b"best-4"


@pytest.mark.slow
def test_wall_clock_limit_stops_cleanly_after_a_step(tmp_path: Path) -> None:
    raw = tiny(tmp_path, max_wall_minutes=1e-6, iterations=3)
    summary = run_tiny(raw)
    assert summary["stopped_by_time_limit"] and summary["iterations"] == 0 and summary["next_step"] == "train"
    state = json.loads((tmp_path / "run" / "checkpoints" / "state.json").read_text())
    assert (state["iteration"], state["step"]) == (0, "train") and state["positions"] > 0
    raw.pop("max_wall_minutes")
    assert run_tiny(raw, resume=True)["iterations"] == 3  # the rest of the run, no self-play repeated


@pytest.mark.slow
def test_the_whole_runs_limit_counts_every_piece(tmp_path: Path) -> None:
    raw = tiny(tmp_path, max_total_wall_minutes=1e-6, iterations=3)
    first = run_tiny(raw)
    assert first["stopped_by_time_limit"] and first["next_step"] == "train"  # one step, then the limit
    ckpt = tmp_path / "run" / "checkpoints" / "state.json"
    before = json.loads(ckpt.read_text())
    again = run_tiny(raw, resume=True)  # already past the limit: no step at all
    after = json.loads(ckpt.read_text())
    assert again["stopped_by_time_limit"] and (after["iteration"], after["step"]) == (0, "train")
    assert after["positions"] == before["positions"]
    raw.pop("max_total_wall_minutes")
    assert run_tiny(raw, resume=True)["iterations"] == 3


@pytest.mark.slow
def test_local_and_ray_backends_play_the_same_games(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    from agents.nets.checkpoint import model_bytes
    from training.common.jobs import map_jobs
    from training.expert_iteration.network import fresh_model
    from training.expert_iteration.selfplay import selfplay_job, selfplay_jobs

    cfg = search_config.from_dict(tiny(tmp_path), check_specs=False)
    network = model_bytes(fresh_model(cfg))
    sp = cfg.selfplay.model_dump()
    whole = selfplay_jobs(network, 3, cfg.seed, 4, 4, [2], (), sp)  # one job of 4 games
    split = selfplay_jobs(network, 3, cfg.seed, 4, 1, [2], (), sp)  # four jobs of 1 game
    local = map_jobs(selfplay_job, whole)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = map_jobs(selfplay_job, split, workers=2, backend="ray")
    finally:
        ray.shutdown()
    assert [r["actions"] for r in local[0]["records"]] == [r["actions"] for p in remote for r in p["records"]]
    for key in ("obs", "policy", "value"):
        np.testing.assert_array_equal(
            local[0]["positions"][key], np.concatenate([p["positions"][key] for p in remote])
        )


@pytest.mark.slow
def test_gate_games_on_the_kept_pool_are_the_games_played_in_the_main_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.nets.checkpoint import model_bytes
    from training.expert_iteration import loop
    from training.expert_iteration.gate import GATE_CHUNK, iteration_matches
    from training.expert_iteration.loop import Workers
    from training.expert_iteration.network import fresh_model

    pools_used = []

    def spy(fn: Any, jobs: Any, *args: Any, **kwargs: Any) -> Any:
        pools_used.append(kwargs.get("pool"))
        return real_map_jobs(fn, jobs, *args, **kwargs)

    real_map_jobs = loop.map_jobs
    monkeypatch.setattr(loop, "map_jobs", spy)

    cfg = search_config.from_dict(tiny(tmp_path, gate__games=2 * GATE_CHUNK), check_specs=False)
    network = model_bytes(fresh_model(cfg))
    jobs = iteration_matches(cfg, 0, network, network, trained=True)  # 2 gate jobs and greedy's
    assert len(jobs) == 3
    here, pooled = Workers.start(1, "local", None), Workers.start(2, "local", None)
    try:
        assert pooled.pool is not None and here.pool is None
        played = pooled.matches(jobs)
        assert played == here.matches(jobs)
        assert pools_used == [pooled.pool, None]  # the run's workers, not this process
        assert sum(r.games for r in played) == 2 * GATE_CHUNK + cfg.eval.games
    finally:
        pooled.stop(now=True)


def test_cli_refuses_a_bad_config_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from training.common.cli import run_cli
    from training.search_train import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("players: 2\nselfplay: {sims: 1}\n")
    assert run_cli(main, ["--config", str(bad)], prog="search_train") == 2
    assert "selfplay.sims: must be >= 2, got 1" in capsys.readouterr().err


def test_truncated_selfplay_is_reported_once_a_piece_with_the_key_to_change(tmp_path: Path) -> None:
    from training.expert_iteration.loop import search_train, warn_truncation

    cfg = search_config.from_dict(tiny(tmp_path, players=4))
    said: list[str] = []
    assert not warn_truncation(1, 40, cfg, said.append)  # 2.5%: normal
    assert warn_truncation(3, 40, cfg, said.append)
    assert len(said) == 1 and "selfplay.max_turns = 60" in said[0] and "about 160" in said[0]

    # a 4-player game cut at 12 single turns: every game truncated, one warning for the piece
    raw = tiny(tmp_path, players=4, iterations=2, selfplay__max_turns=12, gate__games=0)
    raw["eval"]["every"] = 0
    lines: list[str] = []
    search_train(search_config.from_dict(raw), progress=False, log=lambda *a: lines.append(" ".join(a)))
    warnings = [line for line in lines if line.startswith("warning:")]
    assert len(warnings) == 1 and "2 of 2 self-play games" in warnings[0]


def test_gate_pools_player_counts_on_the_two_player_scale() -> None:
    from training.expert_iteration.gate import gate_score

    assert gate_score({2: 0.6}) == pytest.approx(0.6)  # one count: its own rate
    assert gate_score({3: 1 / 3, 4: 1 / 4}) == pytest.approx(0.5)  # chance at both tables
    # better at 3, a little short at 4: pooled, it clears a 0.55 bar that 4 players alone would not
    assert gate_score({3: 0.40, 4: 0.26}) == pytest.approx((0.60 + 0.52) / 2)
    assert gate_score({3: 0.40, 4: 0.26}) >= 0.55 > 0.26 * 2


def _random_buffer(policy: Any, size: int, seed: int = 0) -> ReplayBuffer:
    n_obs, n_act = policy.observation_space.shape[0], policy.action_space.n
    rng = np.random.default_rng(seed)
    buf = ReplayBuffer(size, n_obs, n_act)
    buf.add(
        {
            "obs": rng.random((size, n_obs), dtype=np.float32),
            "mask": np.ones((size, n_act), bool),
            "policy": np.full((size, n_act), 1 / n_act, np.float32),
            "value": np.sign(rng.random(size) - 0.5).astype(np.float32),
            "q": np.zeros(size, np.float32),
            "seat": np.zeros(size, np.int8),
            "phase": np.zeros(size, np.float32),
        }
    )
    return buf


@pytest.mark.parametrize("value_lr", [0.0, 1e-4])
def test_the_critic_learns_at_its_own_rate_and_zero_keeps_it(tmp_path: Path, value_lr: float) -> None:
    import torch

    from training.common.budgets import WallBudget
    from training.expert_iteration.learner import critic_parameters, make_optimizer, train_network
    from training.expert_iteration.network import fresh_model

    raw = tiny(tmp_path, train__value_learning_rate=value_lr, train__learning_rate=1e-2)
    cfg = search_config.from_dict(raw, check_specs=False)
    policy = fresh_model(cfg).policy
    critic = {id(p) for p in critic_parameters(policy)}
    assert {n.split(".")[0] for n, p in policy.named_parameters() if id(p) in critic} == {
        "mlp_extractor",
        "value_net",
    }
    assert not any(id(p) in critic for p in policy.action_net.parameters())
    before = {n: p.detach().clone() for n, p in policy.named_parameters()}
    opt = make_optimizer(policy, cfg)
    assert [g["lr"] for g in opt.param_groups] == [1e-2, value_lr]
    train_network(
        policy,
        opt,
        _random_buffer(policy, 64),
        cfg,
        np.random.default_rng(0),
        torch.device("cpu"),
        WallBudget(None),
    )
    moved = {n: (p.detach() - before[n]).abs().max().item() for n, p in policy.named_parameters()}
    actor_move = max(v for n, v in moved.items() if n.startswith("action_net"))
    critic_move = max(moved[n] for n, p in policy.named_parameters() if id(p) in critic)
    assert actor_move > 1e-3
    if value_lr == 0:
        assert critic_move == 0.0
    else:
        assert 0 < critic_move < actor_move / 10  # Adam steps scale with the rate: 1e-4 against 1e-2


def test_resume_takes_the_configs_rates_and_names_a_changed_critic_group(tmp_path: Path) -> None:
    import torch

    from training.expert_iteration.learner import make_optimizer, resume_optimizer
    from training.expert_iteration.network import fresh_model

    cfg = search_config.from_dict(tiny(tmp_path, train__value_learning_rate=1e-4), check_specs=False)
    policy = fresh_model(cfg).policy
    torch.save(make_optimizer(policy, cfg).state_dict(), tmp_path / "opt.pt")
    later = search_config.from_dict(
        tiny(tmp_path, train__value_learning_rate=2e-5, train__learning_rate=3e-4), check_specs=False
    )
    opt = resume_optimizer(policy, later, tmp_path / "opt.pt")
    assert [g["lr"] for g in opt.param_groups] == [3e-4, 2e-5]  # not the saved 1e-3 and 1e-4
    one_group = search_config.from_dict(tiny(tmp_path), check_specs=False)
    with pytest.raises(
        ConfigError, match="train.value_learning_rate: the checkpoint's optimizer has a separate"
    ):
        resume_optimizer(policy, one_group, tmp_path / "opt.pt")


def test_a_checkpoint_rewrites_only_what_its_step_changed(tmp_path: Path) -> None:
    from training.expert_iteration.learner import make_optimizer
    from training.expert_iteration.loop import Run
    from training.expert_iteration.network import fresh_model

    cfg = search_config.from_dict(tiny(tmp_path), check_specs=False)
    run, learner = Run(cfg), fresh_model(cfg)
    buffer = _random_buffer(learner.policy, 16)
    optimizer = make_optimizer(learner.policy, cfg)
    run.save(learner, b"best-0", optimizer, buffer, "selfplay")  # the first save writes every file
    files = ["buffer.npz", "learner.zip", "optimizer.pt", "best.zip", "state.json"]
    assert sorted(p.name for p in run.ckpt.iterdir()) == sorted(files)  # nothing left aside

    def inodes() -> dict[str, int]:
        return {name: (run.ckpt / name).stat().st_ino for name in files}

    for done, rewritten in [
        ("train", {"learner.zip", "optimizer.pt"}),
        ("gate", {"best.zip"}),
        ("selfplay", {"buffer.npz"}),
    ]:
        before = inodes()
        run.save(learner, b"best-1", optimizer, buffer, done)
        after = inodes()
        assert {n for n in files if after[n] != before[n]} == rewritten | {"state.json"}, done
    assert (run.out / "best.zip").read_bytes() == b"best-1"


def test_new_games_are_scored_against_the_results_and_against_the_training_target(tmp_path: Path) -> None:
    import torch

    from training.expert_iteration.learner import evaluate_positions
    from training.expert_iteration.network import fresh_model

    cfg = search_config.from_dict(tiny(tmp_path), check_specs=False)
    policy = fresh_model(cfg).policy
    data = _random_buffer(policy, 64).get(np.arange(64))
    data["q"] = -data["value"]  # a search that disagrees with every result: the mixed target is 0
    with torch.no_grad():
        values = policy.predict_values(torch.as_tensor(data["obs"])).squeeze(-1).numpy()
    plain = evaluate_positions(policy, data, torch.device("cpu"))
    mixed = evaluate_positions(policy, data, torch.device("cpu"), search_value_weight=0.5)
    assert plain["value_target_loss"] == pytest.approx(plain["value_loss"])
    assert mixed["value_loss"] == pytest.approx(np.mean((values - data["value"]) ** 2), rel=1e-5)
    assert mixed["value_target_loss"] == pytest.approx(np.mean(values**2), rel=1e-5)
