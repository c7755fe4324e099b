"""The config of a PPO self-play run (:mod:`training.ppo.loop`): its sections and the checks across them.

Types and ranges live on the fields (pydantic v2); the shared machinery (file
reading, ``--set`` overrides, one-line :class:`~training.common.config.ConfigError`
messages naming the key) is :mod:`training.common.config`. The keys are
documented in docs/training.md.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictBool

from agents.pool import SNAPSHOTS  # pool spec meaning "a frozen past copy of the learner"
from splendor_env.state import DEFAULT_MAX_TURNS
from training.common.config import (
    ACTIVATIONS,
    ConfigReader,
    Float,
    Int,
    OptFloat,
    OptStr,
    Players,
    Section,
    Str,
    check_agent_spec,
    check_modules,
    player_counts,
    require,
)
from training.common.config import (
    ConfigError as ConfigError,  # re-exported: callers catch training.ppo.config.ConfigError
)

POLICIES = ("mlp", "card_slots")
MAX_N_ENVS = 4096  # games per batch; more buys no speed on a CPU and risks running out of memory
MAX_PRETRAIN_SAMPLES = 4_000_000  # teacher positions held in memory: ~2 KB each
MAX_ROLLOUT = 1 << 20  # n_steps * n_envs: ~2.4 GB of rollout buffer at 497 observation floats per step


class NetworkConfig(Section):
    net_arch: list[Int(ge=1, le=4096)] = Field(
        default=[128, 128], min_length=1
    )  # hidden layers, pi / vf MLPs
    activation: Literal[ACTIVATIONS] = "tanh"
    scale_obs: StrictBool = True  # divide raw counts by their typical maximum (agents.players.ppo.ScaledObs)
    card_features: StrictBool = (
        False  # add per-card "tokens still missing" features (agents.players.ppo.card_gaps)
    )
    policy: Literal[POLICIES] = (
        "mlp"  # or "card_slots": one shared scorer per card slot (agents.players.ppo.CardSlotPolicy)
    )


class PPOConfig(Section):
    learning_rate: Float(gt=0) = 3e-4
    final_learning_rate: OptFloat(ge=0) = None  # linear decay to this value if set
    n_steps: Int(ge=1) = 64  # per game, per rollout
    batch_size: Int(ge=2) = 2048  # at most n_steps * n_envs
    n_epochs: Int(ge=1) = 4
    gamma: Float(gt=0, le=1) = 0.995
    gae_lambda: Float(ge=0, le=1) = 0.95
    clip_range: Float(gt=0) = 0.2
    ent_coef: Float(ge=0) = 0.01
    vf_coef: Float(ge=0) = 0.5
    max_grad_norm: Float(gt=0) = 0.5
    target_kl: OptFloat(gt=0) = None
    normalize_advantage: StrictBool = True


class EnvOptions(Section):
    reward_mode: Literal["terminal", "shaped"] = "terminal"  # shaped: + shaping_scale * prestige gained
    shaping_scale: Float(ge=0) = 0.01
    max_turns: Int(ge=1) = DEFAULT_MAX_TURNS


class PoolEntry(Section):
    spec: Str  # an agents.make spec ("random", "greedy", "ppo:PATH"...) or "snapshots"
    weight: Float(ge=0) = 1.0
    final_weight: OptFloat(ge=0) = None  # linear from weight (step 0) to this (last step)


class OpponentsConfig(Section):
    pool: list[PoolEntry] = Field(default=[PoolEntry(spec="random")], min_length=1)
    snapshot_every: Int(ge=1) = 200_000  # learner steps between frozen copies of the learner
    max_snapshots: Int(ge=1) = 10  # keep the most recent ones
    snapshot_deterministic: StrictBool = False  # snapshots sample their moves by default


class EvalConfig(Section):
    every: Int(ge=0) = 200_000  # learner steps between evaluations; 0 = only at the end
    games: Int(ge=1) = 200  # per opponent, seat-rotated
    # at least one: every run ends with an evaluation, and best.zip follows one of them
    opponents: list[Str] = Field(default=["random", "greedy"], min_length=1)
    best_opponent: OptStr = None  # eval opponent whose win rate selects best.zip (default: last)


class PretrainConfig(Section):
    """Optional warm start: imitate a teacher agent (behaviour cloning) before PPO."""

    teacher: OptStr = None  # agent spec, e.g. "greedy"; None = no pretraining
    samples: Int(ge=1, le=MAX_PRETRAIN_SAMPLES) = 500_000  # teacher decisions recorded (every seat)
    epochs: Int(ge=1) = 3
    batch_size: Int(ge=1) = 2048
    learning_rate: Float(gt=0) = 1e-3  # decays linearly to 0 over the epochs
    value_coef: Float(ge=0) = 0.5  # value head also learns the discounted game outcome


class TrainConfig(Section):
    # one player count, or a list: one policy trained on every count (n_envs split evenly between them)
    players: Players = 2
    modules: list[Str] = []  # any of cities, trading_posts, orient, strongholds

    @property
    def player_counts(self) -> list[int]:
        """``players`` as a sorted list of distinct counts."""
        return player_counts(self.players)

    n_envs: Int(ge=1, le=MAX_N_ENVS) = 128  # games played in one batch
    total_timesteps: Int(ge=1) = 1_000_000  # learner steps, as SB3 counts them
    seed: Int(ge=0) = 0
    output_dir: Str = "runs/ppo_2p"
    checkpoint_every: Int(ge=0) = 500_000
    torch_threads: Int(ge=1) = 1  # 1 beats 2 on a 2-core machine shared with the engine and other jobs
    max_wall_minutes: OptFloat(gt=0) = (
        None  # stop (then evaluate and save) after this long, warm start included
    )
    init_from: OptStr = None  # a MaskablePPO .zip whose policy weights start the run (same network)
    network: NetworkConfig = NetworkConfig()
    ppo: PPOConfig = PPOConfig()
    env: EnvOptions = EnvOptions()
    opponents: OpponentsConfig = OpponentsConfig()
    eval: EvalConfig = EvalConfig()
    pretrain: PretrainConfig = PretrainConfig()


def _cross_checks(cfg: TrainConfig, check_specs: bool) -> None:
    """The checks that involve more than one field, or the agent registry and the file system."""

    check = require
    check_modules(cfg.modules, check)
    if isinstance(cfg.players, list):
        check(bool(cfg.players), "players", "must not be empty (2, 3, 4 or a list of them)")
        check(
            len(set(cfg.players)) == len(cfg.players),
            "players",
            f"a player count is listed twice: {cfg.players}",
        )
        check(
            cfg.n_envs >= len(cfg.players),
            "n_envs",
            f"must be >= the number of player counts ({len(cfg.players)}): each count gets its share of games",
        )
    check(bool(cfg.output_dir.strip()), "output_dir", "must not be empty")
    if cfg.init_from is not None:
        from agents.nets.checkpoint import model_zip_problem

        problem = model_zip_problem(cfg.init_from, cfg.modules)
        check(problem is None, "init_from", str(problem))
        check(cfg.pretrain.teacher is None, "init_from", "set either init_from or pretrain.teacher, not both")
    net = cfg.network
    if net.policy == "card_slots":
        check(
            net.scale_obs and net.card_features,
            "network.policy",
            "'card_slots' reads the card features: set network.scale_obs and network.card_features to true",
        )
    rollout = cfg.ppo.n_steps * cfg.n_envs
    check(
        rollout <= MAX_ROLLOUT, "ppo.n_steps", f"n_steps * n_envs must be <= {MAX_ROLLOUT:,}, got {rollout:,}"
    )
    check(
        cfg.ppo.batch_size <= rollout,
        "ppo.batch_size",
        f"must be in 2..n_steps*n_envs = {rollout}, got {cfg.ppo.batch_size}",
    )
    pool = cfg.opponents.pool
    start = sum(e.weight for e in pool)
    end = sum(e.weight if e.final_weight is None else e.final_weight for e in pool)
    check(start > 0 and end > 0, "opponents.pool", "weights must not all be zero (at the start or the end)")
    ev = cfg.eval
    for i, spec in enumerate(ev.opponents):
        check(
            spec != SNAPSHOTS, f"eval.opponents[{i}]", "'snapshots' is only meaningful in the training pool"
        )
    if ev.best_opponent is not None:
        check(
            ev.best_opponent in ev.opponents,
            "eval.best_opponent",
            f"must be one of eval.opponents {ev.opponents}",
        )
    teacher = cfg.pretrain.teacher
    check(teacher != SNAPSHOTS, "pretrain.teacher", "must be an agent spec such as 'greedy'")
    if check_specs:
        specs = [(f"opponents.pool[{i}].spec", e.spec) for i, e in enumerate(pool) if e.spec != SNAPSHOTS]
        specs += [(f"eval.opponents[{i}]", s) for i, s in enumerate(ev.opponents)]
        specs += [("pretrain.teacher", teacher)] if teacher is not None else []
        for key, spec in specs:
            check_agent_spec(spec, key, cfg.player_counts, tuple(cfg.modules))


_READER = ConfigReader(TrainConfig, _cross_checks)
#: Parse and validate a raw mapping after the ``--set`` overrides.
from_dict = _READER.from_dict
#: Read a YAML config file, apply the overrides, parse and validate it.
load = _READER.load


def to_dict(cfg: TrainConfig) -> dict[str, Any]:
    """Plain mapping (for the run directory's config.yaml and the summary)."""
    return cfg.model_dump()
