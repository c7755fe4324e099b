"""The shipped all-modules policy: it records its game and plays only that game.

``agents/shipped/ppo_modules_2p.zip`` was trained with ``configs/ppo_modules_2p.yaml``
(2 players, cities + trading posts + orient + strongholds). A move it picks must
be legal, and the base game or another module set is refused up front.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

import splendor_env  # noqa: E402
from agents.players.ppo import PPOAgent  # noqa: E402
from training.ppo import config as C  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "agents" / "shipped" / "ppo_modules_2p.zip"
ALL = ["cities", "trading_posts", "orient", "strongholds"]


def test_config_trains_two_players_with_every_module() -> None:
    cfg = C.load(ROOT / "configs" / "ppo_modules_2p.yaml")
    assert cfg.player_counts == [2] and cfg.modules == ALL
    assert cfg.network.policy == "card_slots" and cfg.pretrain.teacher == "greedy"
    assert cfg.max_wall_minutes is not None and cfg.max_wall_minutes <= 60


def test_shipped_model_records_its_game_and_matches_its_sidecar() -> None:
    agent = PPOAgent(MODEL)
    assert agent.game["players"] == [2] and agent.game["modules"] == ALL
    assert (agent.game["obs_dim"], agent.game["num_actions"], agent.game["inferred"]) == (1134, 749, False)
    meta = json.loads(MODEL.with_suffix(".json").read_text())
    assert meta["game"] == {"players": [2], "modules": ALL}
    assert meta["config"]["modules"] == ALL


@pytest.mark.slow
def test_shipped_model_plays_legal_moves_in_its_game_only() -> None:
    agent = PPOAgent(MODEL)
    env = splendor_env.env(num_players=2, modules=tuple(ALL))
    env.reset(seed=3)
    for _ in range(40):  # a stretch of a game against itself, every move legal
        obs = env.observe(env.agent_selection)
        move = agent.act(obs["observation"], obs["action_mask"])
        assert obs["action_mask"][move]
        env.step(int(move))
        if not env.agents or all(env.terminations.values()):
            break
    with pytest.raises(ValueError, match=r"game has none \(base game\)"):
        agent.check_game(2)
    with pytest.raises(ValueError, match=r"player count: trained for 2, game has 3"):
        agent.check_game(3, tuple(ALL))
