"""Self-play rewards, a tiny end-to-end training run (checkpoint, reload, resume) and evaluation."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import agents  # noqa: E402
from agents.players.ppo import PPOAgent  # noqa: E402
from splendor_env import state as st  # noqa: E402
from splendor_env.observation import O_ON_MOVE, O_SEAT_ONEHOT, OBS_DIM  # noqa: E402
from training.common.stats import wilson as wilson_interval  # noqa: E402
from training.matches.match import play_match  # noqa: E402
from training.ppo import config as C  # noqa: E402
from training.ppo.loop import train  # noqa: E402
from training.ppo.vec_env import MixedSelfPlayVecEnv, OpponentPool, SelfPlayVecEnv  # noqa: E402


def _spy_steps(env: SelfPlayVecEnv) -> list[np.ndarray]:
    """Record, for every engine step call, the games that ended (the caller clears the list)."""
    calls: list[np.ndarray] = []
    real_step = env.venv.step

    def step(actions, env_ids=None):
        out = real_step(actions, env_ids)
        calls.append(np.flatnonzero(out[4] | out[5]))
        return out

    env.venv.step = step
    return calls


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_learner_rewards_include_losses_on_opponent_moves(num_players: int) -> None:
    pool = OpponentPool([("greedy", 1.0, None), ("random", 1.0, None)], seed=1)
    env = SelfPlayVecEnv(32, pool, num_players=num_players, seed=3)
    obs = env.reset()
    learner = agents.make("random", seed=5)
    results = {"own": set(), "opponent": set()}
    finished = 0
    calls = _spy_steps(env)
    while finished < 120:
        # The learner only ever sees positions where it is on move, in its own seat.
        assert obs.shape == (32, OBS_DIM)
        assert (obs[:, O_ON_MOVE] == 1).all()
        assert (obs[np.arange(32), O_SEAT_ONEHOT + env.seat] == 1).all()
        masks = env.action_masks()
        assert masks.dtype == bool and masks.shape == (32, 72) and masks.any(axis=1).all()
        seats_before = env.seat.copy()
        calls.clear()
        obs, rewards, dones, infos = env.step(learner.act_batch(obs, masks))
        ended_on_own = set(calls[0].tolist())  # the first engine call of a step is the learner's move
        for b in np.flatnonzero(dones):
            info = infos[b]
            assert info["outcome"] is not None  # no truncation at the default turn cap
            assert rewards[b] == info["outcome"]  # terminal reward reaches the learner...
            assert info["terminal_observation"][O_SEAT_ONEHOT + seats_before[b]] == 1
            results["own" if b in ended_on_own else "opponent"].add(float(rewards[b]))
            finished += 1
        assert (rewards[~dones] == 0).all()
    # ...whether the game ended on its own move or on an opponent's.
    assert {-1.0, 1.0} <= results["opponent"]
    assert -1.0 in results["own"] | results["opponent"]


def test_learner_seat_zero_loses_on_opponent_move() -> None:
    """2 players, learner in seat 0: the game always ends on seat 1's move; a loss must read -1."""
    pool = OpponentPool([("greedy", 1.0, None)], seed=0)
    env = SelfPlayVecEnv(16, pool, seed=0)
    obs = env.reset()
    learner = agents.make("random", seed=0)
    seen = []
    for _ in range(400):
        seats = env.seat.copy()
        obs, rewards, dones, infos = env.step(learner.act_batch(obs, env.action_masks()))
        seen += [(seats[b], rewards[b]) for b in np.flatnonzero(dones)]
    assert any(seat == 0 and r == -1.0 for seat, r in seen)
    assert all(r in (-1.0, 0.0, 1.0) for _, r in seen)
    losses = sum(r == -1.0 for _, r in seen)
    assert losses >= 0.9 * len(seen)  # random against greedy


def test_learner_wins_get_plus_one() -> None:
    pool = OpponentPool([("random", 1.0, None)], seed=0)
    env = SelfPlayVecEnv(16, pool, seed=0)
    obs = env.reset()
    learner = agents.make("greedy", seed=0)
    outcomes = []
    for _ in range(400):
        obs, rewards, dones, infos = env.step(learner.act_batch(obs, env.action_masks()))
        outcomes += [(rewards[b], infos[b]["episode"]["r"]) for b in np.flatnonzero(dones)]
    assert outcomes and sum(r == 1.0 for r, _ in outcomes) >= 0.9 * len(outcomes)
    assert all(r == ep for r, ep in outcomes)  # terminal-only rewards: the return is the outcome


def test_wilson_interval() -> None:
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    assert wilson_interval(100, 100)[1] == pytest.approx(1.0) and wilson_interval(0, 100)[0] == pytest.approx(
        0.0
    )


def test_play_match_seat_rotation() -> None:
    result = play_match(agents.make("greedy", seed=0), agents.make("random", seed=1), 40, seed=0)
    assert result.games == 40 and result.wins + result.shared + result.losses + result.truncated == 40
    assert result.win_rate > 0.8


class _PeekingSearchAgent(agents.Agent):
    """A search agent stand-in: records what it is given and plays its state's first legal move."""

    needs_state = True

    def __init__(self) -> None:
        super().__init__(seed=0)
        self.calls = 0

    def act(self, observation, action_mask, state=None) -> int:
        from splendor_env import rules
        from splendor_env.actions import num_actions
        from splendor_env.state import MODULES

        assert state is not None, "a needs_state agent must be given a state"
        own = np.zeros(num_actions(int(state[MODULES])), dtype=np.int8)
        rules.legal_mask(state, own)
        assert np.array_equal(own, action_mask), "the state given is not the decision asked about"
        self.calls += 1
        return int(np.flatnonzero(own)[0])


@pytest.mark.parametrize(("num_players", "modules"), [(2, ()), (3, ("cities", "orient"))])
def test_play_match_gives_search_agents_a_determinised_state(num_players, modules) -> None:
    """``training.evaluate`` plays search agents (mcts) too: each decision comes with the state of that decision."""
    searcher = _PeekingSearchAgent()
    result = play_match(searcher, agents.make("random", seed=1), 6, num_players, seed=2, modules=modules)
    assert result.games == 6 and searcher.calls > 6 * 10


def test_play_match_search_agent_sees_no_hidden_information(monkeypatch) -> None:
    """Every state a search agent gets comes out of determinize for the seat on move, never the true state."""
    from agents import runner  # evaluate plays through the runner: its decision_state determinises

    made = []
    real = runner.determinize

    def spy(s, seat, rng):
        assert seat == int(s[st.CURRENT])
        made.append(real(s, seat, rng))
        return made[-1]

    monkeypatch.setattr(runner, "determinize", spy)
    searcher = _PeekingSearchAgent()
    given = []
    real_act = searcher.act
    searcher.act = lambda obs, mask, state=None: given.append(state) or real_act(obs, mask, state)
    play_match(searcher, agents.make("greedy", seed=1), 2, 2, seed=3)
    assert len(given) == len(made) == searcher.calls > 0
    assert all(g is m for g, m in zip(given, made, strict=True))


def _tiny_config(tmp_path, **overrides) -> C.TrainConfig:
    raw = {
        "n_envs": 8,
        "total_timesteps": 1024,
        "output_dir": str(tmp_path / "run"),
        "checkpoint_every": 512,
        "torch_threads": 1,
        "network": {"net_arch": [16], "card_features": True},
        "ppo": {"n_steps": 32, "batch_size": 128, "n_epochs": 1},
        "opponents": {
            "pool": [
                {"spec": "random"},
                {"spec": "greedy", "weight": 0.5},
                {"spec": "snapshots", "final_weight": 2},
            ],
            "snapshot_every": 512,
        },
        "eval": {"every": 512, "games": 6, "opponents": ["random", "greedy"]},
        "pretrain": {"teacher": "greedy", "samples": 3000, "epochs": 1, "batch_size": 512},
    }
    return C.from_dict(raw, [f"{k}={v}" for k, v in overrides.items()])


@pytest.mark.slow
def test_tiny_training_run_checkpoint_reload_resume(tmp_path) -> None:
    cfg = _tiny_config(tmp_path)
    summary = train(cfg, progress_bar=False)
    run = tmp_path / "run"
    assert summary["timesteps"] >= 1024
    assert summary["learner_steps_per_s"] > 0 and summary["opponent_steps_this_run"] > 0
    assert [r["opponent"] for r in summary["final_eval"]] == ["random", "greedy"]
    assert summary["pretrain"]["samples"] == 3000
    for name in (
        "final.zip",
        "summary.json",
        "config.yaml",
        "checkpoints/latest.zip",
        "checkpoints/best.zip",
    ):
        assert (run / name).is_file(), name
    meta = json.loads((run / "checkpoints/latest.json").read_text())
    assert meta["snapshots"] and meta["num_timesteps"] == summary["timesteps"]
    assert list((run / "tb").rglob("events.out.tfevents*"))

    # Reload as an agent, directly and through the registry.
    agent = PPOAgent(run / "final.zip")
    env = SelfPlayVecEnv(4, OpponentPool([("random", 1.0, None)], seed=0), seed=0)
    obs = env.reset()
    actions = agent.act_batch(obs, env.action_masks())
    assert env.action_masks()[np.arange(4), actions].all()
    assert agents.make(f"ppo:{run / 'final.zip'}").act(obs[0], env.action_masks()[0]) in range(72)
    stochastic = PPOAgent(run / "final.zip", deterministic=False, seed=3)
    again = PPOAgent(run / "final.zip", deterministic=False, seed=3)
    assert (stochastic.act_batch(obs, env.action_masks()) == again.act_batch(obs, env.action_masks())).all()

    # Resume: the step count and the opponent pool carry on.
    cfg2 = _tiny_config(tmp_path, total_timesteps=2048)
    summary2 = train(cfg2, resume=str(run / "checkpoints/latest.zip"), progress_bar=False)
    assert summary2["timesteps"] >= 2048
    assert summary2["learner_steps_this_run"] == summary2["timesteps"] - summary["timesteps"]
    meta2 = json.loads((run / "checkpoints/latest.json").read_text())
    assert set(meta["snapshots"]) & set(meta2["snapshots"])  # old snapshots were reloaded into the pool


def test_wall_clock_limit_stops_training(tmp_path) -> None:
    cfg = _tiny_config(
        tmp_path, total_timesteps=10_000_000, max_wall_minutes=1e-4, **{"pretrain.teacher": "null"}
    )
    summary = train(cfg, progress_bar=False)
    assert summary["stopped_by_time_limit"] and summary["timesteps"] < 10_000
    assert (tmp_path / "run" / "final.zip").is_file()


@pytest.mark.slow
def test_card_slot_policy_trains_and_warm_starts_a_run(tmp_path) -> None:
    """Pretraining reports held-out agreement; ``init_from`` copies those weights into a new run."""
    slots = {"network.policy": "card_slots", "network.card_features": "true"}
    first = train(_tiny_config(tmp_path, **slots), progress_bar=False)
    agreement = first["pretrain"]["held_out_agreement"]
    assert 0.0 <= agreement <= 1.0
    source = tmp_path / "run" / "final.zip"
    agent = PPOAgent(source)
    assert type(agent.policy).__name__ == "CardSlotPolicy"
    env = SelfPlayVecEnv(8, OpponentPool([("greedy", 1.0, None)], seed=0), seed=1)
    obs = env.reset()
    masks = env.action_masks()
    actions = agent.act_batch(obs, masks)
    assert masks[np.arange(8), actions].all()

    second = tmp_path / "second"
    cfg = _tiny_config(
        tmp_path,
        total_timesteps=1,
        init_from=str(source),
        output_dir=str(second),
        **slots,
        **{"pretrain.teacher": "null", "eval.every": 0},
    )
    cfg.ppo.learning_rate = cfg.ppo.final_learning_rate = 1e-12  # the one update must not move the weights
    train(cfg, progress_bar=False)
    started = PPOAgent(second / "final.zip")
    np.testing.assert_allclose(started.logits(obs), agent.logits(obs), atol=1e-4)

    mlp = _tiny_config(tmp_path, init_from=str(source), **{"pretrain.teacher": "null"})
    with pytest.raises(C.ConfigError, match="init_from: .* has a different network"):
        train(mlp, progress_bar=False)


def test_ppo_agent_missing_file(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="nowhere.zip"):
        PPOAgent(tmp_path / "nowhere.zip")


def test_card_slot_inputs_line_up_with_the_observation() -> None:
    """Slot i of the card-slot actor sees market card i (slots 12-14: the observer's reserved cards)."""
    import torch as th

    from agents.nets.policy_net import CARD_GAP_DIM, N_SLOTS, SLOT_IN, ScaledObs, slot_inputs
    from splendor_env.observation import CARD_DIM, O_MARKET, O_SEATS, S_RES

    env = SelfPlayVecEnv(16, OpponentPool([("greedy", 1.0, None)], seed=0), seed=2)
    obs = env.reset()
    player = agents.make("random", seed=1)  # random play reserves cards often
    for _ in range(12):
        obs = env.step(player.act_batch(obs, env.action_masks()))[0]
    extractor = ScaledObs(env.observation_space, card_features=True)
    features = extractor(th.as_tensor(obs))
    slots = slot_inputs(features).numpy()
    assert slots.shape == (16, N_SLOTS, SLOT_IN)
    scaled = features.numpy()
    for i in range(12):
        np.testing.assert_array_equal(
            slots[:, i, :CARD_DIM], scaled[:, O_MARKET + i * CARD_DIM : O_MARKET + (i + 1) * CARD_DIM]
        )
    for r in range(3):
        off = O_SEATS + S_RES + r * CARD_DIM
        np.testing.assert_array_equal(slots[:, 12 + r, :CARD_DIM], scaled[:, off : off + CARD_DIM])
    gaps = scaled[:, OBS_DIM : OBS_DIM + CARD_GAP_DIM].reshape(16, 2, N_SLOTS, 4)
    np.testing.assert_array_equal(slots[:, :, CARD_DIM : CARD_DIM + 4], gaps[:, 0])
    np.testing.assert_array_equal(slots[:, :12, CARD_DIM + 4 : CARD_DIM + 8], gaps[:, 1, :12])
    assert not slots[:, 12:, CARD_DIM + 4 : CARD_DIM + 8].any()
    np.testing.assert_array_equal(slots[0, :, CARD_DIM + 8 :], np.eye(N_SLOTS))
    assert obs[:, O_SEATS + S_RES].any(), "no game reserved a card: the reserved slots went untested"


@pytest.mark.slow
def test_shipped_policy_still_beats_greedy() -> None:
    """Guards the shipped model against changes to the observation or the network code.

    It won 92.7% of 1000 games against greedy; 60 games below 75% would be a
    broken model, not bad luck (probability below 1e-5 at 92.7%; the games are
    seeded, so the result does not change from run to run anyway).
    """
    from training.play import SHIPPED_POLICY

    result = play_match(PPOAgent(SHIPPED_POLICY), agents.make("greedy", seed=0), 60, seed=777)
    assert result.win_rate >= 0.75, result


def _seats_present(obs: np.ndarray) -> np.ndarray:
    """Player count of each observation (the seat blocks' ``present`` flags)."""
    from splendor_env.observation import O_SEATS, S_PRESENT, SEAT_DIM

    return obs[:, [O_SEATS + k * SEAT_DIM + S_PRESENT for k in range(4)]].sum(axis=1).astype(int)


def test_each_opponent_seat_is_drawn_from_the_pool_independently() -> None:
    """4 players, pool random:greedy 1:1: the three opponents of a game are mixed in 3 games out of 4."""
    env = SelfPlayVecEnv(200, OpponentPool([("random", 1.0, None), ("greedy", 1.0, None)], seed=0), 4, seed=0)
    env.reset()
    opponents = [set(row[row >= 0].tolist()) for row in env.opp]
    assert all(len(row[row >= 0]) == 3 for row in env.opp)  # every seat but the learner's has an opponent
    mixed = np.mean([len(s) == 2 for s in opponents])
    assert 0.6 < mixed < 0.9, mixed


def test_one_learner_over_several_player_counts() -> None:
    """MixedSelfPlayVecEnv: games split between 3 and 4 players, rewards and infos from the learner's seat."""
    pool = OpponentPool([("random", 1.0, None), ("greedy", 1.0, None)], seed=0)
    env = MixedSelfPlayVecEnv(11, pool, [3, 4], seed=5)
    assert [p.num_envs for p in env.parts] == [6, 5] and env.observation_space.shape == (OBS_DIM,)
    obs = env.reset()
    assert obs.shape == (11, OBS_DIM) and _seats_present(obs).tolist() == [3] * 6 + [4] * 5
    learner = agents.make("greedy", seed=2)
    ended = {3: [], 4: []}
    for _ in range(300):
        masks = env.action_masks()
        assert masks.shape == (11, 72) and masks.any(axis=1).all()
        obs, rewards, dones, infos = env.step(learner.act_batch(obs, masks))
        assert (obs[:, O_ON_MOVE] == 1).all()
        for b in np.flatnonzero(dones):
            assert rewards[b] == infos[b]["outcome"]
            ended[infos[b]["players"]].append(b)
    assert ended[3] and ended[4] and max(ended[3]) < 6 <= min(ended[4])
    assert env.opponent_steps == sum(p.opponent_steps for p in env.parts) > 0
    again = MixedSelfPlayVecEnv(11, OpponentPool([("random", 1.0, None)], seed=0), [3, 4], seed=5)
    again.seed(9)
    again.reset()
    seats = [p.seat.copy() for p in again.parts]
    again.seed(9)
    again.reset()
    for part, before in zip(again.parts, seats, strict=True):  # a seeded reset reaches every part
        np.testing.assert_array_equal(part.seat, before)


def test_teacher_positions_are_shared_between_player_counts(tmp_path) -> None:
    from training.ppo.pretrain import teacher_dataset

    cfg = _tiny_config(tmp_path, players="[3, 4]", **{"pretrain.samples": 4000})
    data = teacher_dataset(cfg, seed=0)
    assert _seats_present(data["obs"]).tolist() == [3] * 2000 + [4] * 2000
    for part in (data["value"][:2000], data["value"][2000:]):  # finished games gave their positions a value
        assert (part > 0).any() and (part < 0).any()


@pytest.mark.slow
def test_tiny_run_for_three_and_four_players_records_its_games(tmp_path) -> None:
    cfg = _tiny_config(
        tmp_path,
        players="[3, 4]",
        **{"eval.opponents": "[random, greedy]", "pretrain.samples": 2000, "network.net_arch": "[16]"},
    )
    summary = train(cfg, progress_bar=False)
    assert [(r["opponent"], r["players"]) for r in summary["final_eval"]] == [
        ("random@3p", 3),
        ("greedy@3p", 3),
        ("random@4p", 4),
        ("greedy@4p", 4),
    ]
    assert summary["game"] == {"players": [3, 4], "modules": []}
    history = summary["eval_history"][0]["results"]
    greedy = np.mean([r["win_rate"] for r in history if r["opponent"].startswith("greedy")])
    assert summary["best_score"] >= greedy  # best.zip is chosen by the mean over player counts
    agent = PPOAgent(tmp_path / "run" / "final.zip")
    assert agent.game["players"] == [3, 4]
    snapshot = sorted((tmp_path / "run" / "snapshots").glob("*.zip"))[-1]
    assert PPOAgent(snapshot).game["players"] == [3, 4]  # pool snapshots know their games too
    with pytest.raises(ValueError, match="trained for 3 or 4, game has 2"):
        agent.check_game(2)


@pytest.mark.slow
def test_tiny_module_run_with_the_card_slot_policy(tmp_path) -> None:
    """A module game (749 actions, 1134 observation floats) trains the card-slot network end to end."""
    cfg = _tiny_config(
        tmp_path,
        modules="[cities, orient]",
        **{
            "network.policy": "card_slots",
            "opponents.pool": "[{spec: random}, {spec: snapshots}]",
            "eval.opponents": "[random]",
            "pretrain.teacher": "random",
            "pretrain.samples": 1000,
        },
    )
    summary = train(cfg, progress_bar=False)
    assert summary["game"] == {"players": [2], "modules": ["cities", "orient"]}
    assert summary["final_eval"][0]["modules"] == ["cities", "orient"]
    agent = PPOAgent(tmp_path / "run" / "final.zip")
    assert agent.game["num_actions"] == 749 and agent.plays_modules
    env = SelfPlayVecEnv(
        4, OpponentPool([("random", 1.0, None)], seed=0), modules=("cities", "orient"), seed=0
    )
    obs = env.reset()
    actions = agent.act_batch(obs, env.action_masks())
    assert env.action_masks()[np.arange(4), actions].all()
    with pytest.raises(ValueError, match=r"game has none \(base game\)"):
        agent.check_game(2)


def test_a_pool_agent_that_cannot_play_the_game_is_refused() -> None:
    from training.play import SHIPPED_POLICY

    pool = OpponentPool([(f"ppo:{SHIPPED_POLICY}", 1.0, None)], seed=0)
    with pytest.raises(ValueError, match="trained for 2, game has 3"):
        SelfPlayVecEnv(4, pool, 3, seed=0)
