"""training.critic_fit: a network's critic refit on games of the network alone, its actor kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch

from agents import build
from agents.nets.checkpoint import load_model, model_bytes
from agents.nets.numba_net import export_network
from agents.nets.shipped import retired_note
from training.common.cli import CliError
from training.common.config import ConfigError
from training.critic import config as fit_config
from training.critic.fit import critic_fit, critic_state, train_critic
from training.critic.positions import collect, draw_positions, jobs_for, split_games
from training.expert_iteration.ship import ship
from training.matches.value_report import play_games

TINY = {"model": "az_2p", "games": 12, "validation_games": 6, "games_per_job": 5, "positions_per_game": 3}


def config(tmp_path: Path, **over: Any) -> fit_config.CriticFitConfig:
    raw = {**TINY, "output_dir": str(tmp_path / "fit"), **over}
    return fit_config.from_dict(raw)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, "model: name the network"),
        ({"model": "no_such_model"}, "model: model file not found"),
        ({"model": "az_modules_2p"}, "model:"),
        ({"model": "az_2p", "positions_per_game": 0}, "positions_per_game"),
        ({"model": "az_2p", "playouts": -1}, "playouts"),
        ({"model": "az_2p", "players": 5}, "players"),
        ({"model": "az_2p", "fit": {"epochs": 0}}, "fit.epochs"),
        ({"model": "az_2p", "fitt": {}}, "fitt"),
        ({"model": "az_2p", "modules": ["cities", "cities"]}, "modules[1]"),
    ],
)
def test_config_errors_name_the_key(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        fit_config.from_dict(raw)


def test_games_are_shared_over_the_player_counts_and_held_out_seeds_are_other_deals(tmp_path: Path) -> None:
    assert split_games(7, [3, 4]) == {3: 4, 4: 3}
    cfg = config(tmp_path, model="az_3_4p", players=[3, 4], games=9, validation_games=4)
    train, held = jobs_for(cfg, b"", validation=False), jobs_for(cfg, b"", validation=True)
    assert sum(j.count for j in train) == 9 and sum(j.count for j in held) == 4
    deals = lambda jobs: {(j.players, j.first_seed + i) for j in jobs for i in range(j.count)}  # noqa: E731
    assert len(deals(train)) == 9 and not deals(train) & deals(held)
    assert all(j.per_game == 3 for j in train) and all(j.per_game == 0 for j in held)


def test_drawn_positions_are_distinct_decisions_of_finished_games_with_their_results() -> None:
    agent = build("ppo:az_2p")
    record = play_games((agent, agent), 8, seed=77, max_turns=58)  # about half the games cut at 58 turns
    finished = ~np.isnan(record.result[:, 0])
    assert 0 < finished.sum() < 8
    pos = draw_positions(record, 4, np.random.default_rng(0))
    assert pos.truncated == int((~finished).sum()) and pos.games == 8
    # each drawn row is one decision (its nearest recorded one, float16 rounding aside), none twice
    gap = np.abs(record.obs[None] - pos.obs.astype(np.float32)[:, None]).max(axis=(2, 3))
    rows = gap.argmin(axis=1)
    assert gap.min(axis=1).max() <= 1e-3 and len(set(rows.tolist())) == len(rows)
    games = record.game[rows]
    assert finished[games].all()
    per_game = np.bincount(games, minlength=8)[finished]
    assert (per_game == 4).all()  # every finished game is longer than 4 decisions
    np.testing.assert_array_equal(pos.result, record.result[games])


def test_playout_targets_are_the_mean_of_the_game_and_its_playouts(tmp_path: Path) -> None:
    from training.critic.positions import GamesJob, play_job
    from training.matches.playouts import playout_values

    cfg = config(tmp_path, playouts=3)
    train, held = jobs_for(cfg, b"n", validation=False), jobs_for(cfg, b"n", validation=True)
    assert all(j.playouts == 3 for j in train) and all(
        j.playouts == 0 for j in held
    )  # held out: real results
    network = model_bytes(load_model("az_2p"))
    job = GamesJob(network, 2, (), 500, 2, 100, 2, playouts=3)
    pos = play_job(job)
    plain = play_job(GamesJob(network, 2, (), 500, 2, 100, 2))
    np.testing.assert_array_equal(pos.obs, plain.obs)  # the same drawn decisions
    # by hand: the same games with their states, the same draw, the playouts of the drawn rows
    agent = build("ppo:az_2p")
    record = play_games((agent, agent), 2, 500, batch=500, max_turns=100, keep_states=True)
    rows: list[np.ndarray] = []
    draw_positions(
        record, 2, np.random.default_rng([500, 2]), lambda r: rows.append(r) or record.result[record.game[r]]
    )
    keep = rows[0]
    mean = playout_values(
        record.states[keep], record.mover[keep], np.zeros((keep.size, 2), int), (agent,), 3, 500
    )
    expect = (record.result[record.game[keep]] + 3 * mean) / 4
    np.testing.assert_allclose(pos.result, expect, atol=1e-6)
    assert not np.array_equal(pos.result, plain.result)  # the playouts moved some targets off +-1
    assert set(np.unique(plain.result)) <= {-1.0, 0.0, 1.0}


def test_the_positions_do_not_depend_on_the_workers(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    network = model_bytes(load_model("az_2p"))
    one = collect(cfg, network, 1, "local", None)[1][2]
    two = collect(cfg, network, 2, "local", None)[1][2]
    np.testing.assert_array_equal(one.obs, two.obs)
    np.testing.assert_array_equal(one.result, two.result)


def test_training_keeps_the_critic_of_the_best_held_out_check() -> None:
    model = load_model("az_2p")
    policy = model.policy
    views = (
        np.random.default_rng(0).integers(0, 3, (64, policy.observation_space.shape[0])).astype(np.float16)
    )
    targets = np.ones(64, dtype=np.float32)
    fit = fit_config.FitSection(epochs=4, batch_size=16, evals=4, learning_rate=1e-2)
    scores = iter([0.9, 0.8, 0.5, 0.7, 0.6])  # the third check (step 8 of 16) is the best
    seen: dict[int, dict[str, Any]] = {}

    def check() -> dict[str, float]:
        seen[len(seen)] = critic_state(policy)
        return {"mse": next(scores)}

    rows = train_critic(policy, views, targets, fit, 0, check)
    assert [r["step"] for r in rows] == [0, 4, 8, 12, 16]
    kept = critic_state(policy)
    for key in ("critic", "value_net"):
        for name, tensor in kept[key].items():
            torch.testing.assert_close(tensor, seen[2][key][name])
    assert any(not torch.equal(t, seen[4]["value_net"][n]) for n, t in kept["value_net"].items())


def test_a_refit_keeps_the_actor_writes_its_folder_and_ships(tmp_path: Path) -> None:
    cfg = config(tmp_path, fit={"epochs": 2, "learning_rate": 1e-3, "evals": 2, "batch_size": 16})
    facts = critic_fit(cfg, workers=1)
    out = Path(cfg.output_dir)
    old, new = load_model("az_2p").policy, load_model(out / "best.zip").policy
    obs = torch.as_tensor(np.random.default_rng(1).integers(0, 3, (8, 497)).astype(np.float32))
    with torch.no_grad():
        torch.testing.assert_close(
            old.get_distribution(obs).distribution.logits, new.get_distribution(obs).distribution.logits
        )
    rows = json.loads((out / "metrics.json").read_text())
    assert [r["step"] for r in rows][0] == 0 and len(rows) == 3
    assert facts["games"] == {"2": 12} and facts["best"] == min(rows, key=lambda r: r["mse"])
    assert 0 < facts["views"] <= 2 * 3 * 12  # two seats' views of up to 3 decisions of each game
    meta = json.loads(ship(out, "az_refit", "a refit", "python -m training.critic_fit --config c.yaml", [], [], False,
                           tmp_path / "shipped").read_text())  # fmt: skip
    assert meta["game"] == {"players": [2], "modules": []}
    assert meta["training"]["critic_fit"]["model"] == "az_2p"
    assert meta["training"]["base_training"]["iterations"] == 262  # az_2p's own expert iteration
    assert meta["training_curve"] == rows


def test_held_out_games_that_never_end_are_an_error_naming_the_fix(tmp_path: Path) -> None:
    with pytest.raises(CliError, match="raise max_turns or validation_games"):
        critic_fit(config(tmp_path, max_turns=10), workers=1)


def test_a_new_residual_critic_saves_loads_and_searches(tmp_path: Path) -> None:
    cfg = config(tmp_path, fit={"epochs": 1, "evals": 1, "critic_blocks": 1, "critic_width": 16})
    critic_fit(cfg, workers=1)
    path = str(Path(cfg.output_dir) / "best.zip")
    model = load_model(path)
    assert model.policy.mlp_extractor.latent_dim_vf == 16
    export_network(model.policy)  # the search's numba copy accepts it
    agent = build(f"az:{path},sims=8")
    from splendor_env import env as make_env

    env = make_env(num_players=2)
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent.act(obs["observation"], obs["action_mask"], env.game_state)]


def test_a_refit_covers_every_player_count_of_its_network(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        model="az_3_4p",
        players=[3, 4],
        games=4,
        validation_games=4,
        max_turns=400,
        fit={"epochs": 1, "evals": 1},
    )
    facts = critic_fit(cfg, workers=1)
    assert facts["games"] == {"3": 2, "4": 2}
    assert {"3p_mse", "4p_mse", "3p_winner_pick", "4p_winner_pick"} <= set(facts["before"])


@pytest.mark.parametrize(
    "path", sorted((Path(__file__).parents[1] / "configs").glob("critic_fit_*.yaml")), ids=lambda p: p.name
)
def test_shipped_configs_are_valid(path: Path) -> None:
    from training.common.config import read_mapping

    model = read_mapping(path)["model"]
    if model.startswith("runs/"):  # a search run's network: it exists once that config has run
        configs = path.parent.glob("search_*.yaml")
        assert any(model.startswith(read_mapping(c)["output_dir"] + "/") for c in configs), (
            f"{path.name}: no shipped search config writes {model}"
        )
        cfg = fit_config.load(path, ["model=az_2p"])  # a network of the same game stands in
    elif retired_note(model) is not None:  # a recipe from a network retired from the package
        with pytest.raises(ConfigError, match="retired"):
            fit_config.load(path)
        cfg = fit_config.load(path, ["model=az_2p"])  # a network of the same game stands in
    else:
        cfg = fit_config.load(path)
    assert cfg.output_dir.startswith("runs/critic_fit_")
