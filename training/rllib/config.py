"""The config of an RLlib PPO run (:mod:`training.rllib.loop`): its sections and the checks across them.

Read like every training config (:class:`training.common.config.ConfigReader`): a YAML
file under the defaults, ``--set key=value`` overrides, one-line errors naming the key.
The keys are documented in docs/tutorials/rllib.md.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from splendor_env.state import DEFAULT_MAX_TURNS
from training.common.config import (
    ConfigReader,
    Float,
    Int,
    OptFloat,
    Section,
    Str,
    check_agent_spec,
    check_modules,
    require,
)


class EnvRunnersConfig(Section):
    """Who plays the games: 0 env runners samples in the driver process (no Ray workers)."""

    num_env_runners: Int(ge=0, le=1024) = 1
    envs_per_runner: Int(ge=1, le=256) = 1
    rollout_fragment_length: Int(ge=1) = 200  # env steps a runner collects before sending them


class PPOSection(Section):
    lr: Float(gt=0) = 3e-4
    gamma: Float(gt=0, le=1) = 0.995
    gae_lambda: Float(ge=0, le=1) = 0.95
    clip_param: Float(gt=0) = 0.2
    entropy_coeff: Float(ge=0) = 0.01
    vf_loss_coeff: Float(ge=0) = 0.5
    num_epochs: Int(ge=1) = 4
    train_batch_size: Int(ge=2) = 4000  # env steps per iteration (all seats together)
    minibatch_size: Int(ge=2) = 500


class NetworkSection(Section):
    hidden: list[Int(ge=1, le=4096)] = Field(default=[128, 128], min_length=1)  # fcnet_hiddens
    activation: Literal["relu", "tanh"] = "relu"


class EnvSection(Section):
    reward_mode: Literal["terminal", "shaped"] = "shaped"  # shaped: + shaping_scale * prestige gained
    shaping_scale: Float(ge=0, le=1) = 0.02
    max_turns: Int(ge=1) = DEFAULT_MAX_TURNS


class EvalSection(Section):
    games: Int(ge=0) = 100  # per opponent, seat-rotated; 0 = no evaluation
    opponents: list[Str] = ["random", "greedy"]


class RLlibConfig(Section):
    players: Int(ge=2, le=4) = 2  # every seat is the one shared policy
    modules: list[Str] = []  # any of cities, trading_posts, orient, strongholds
    seed: Int(ge=0) = 0
    output_dir: Str = "runs/rllib_2p"
    iterations: Int(ge=1) = 20  # PPO iterations (each train_batch_size env steps)
    max_wall_minutes: OptFloat(gt=0) = None  # stop (then save and evaluate) after this long
    checkpoint_every: Int(ge=1) = 5  # iterations between checkpoints (and one at the end)
    env_runners: EnvRunnersConfig = EnvRunnersConfig()
    ppo: PPOSection = PPOSection()
    network: NetworkSection = NetworkSection()
    env: EnvSection = EnvSection()
    eval: EvalSection = EvalSection()


def _cross_checks(cfg: RLlibConfig, check_specs: bool) -> None:
    check = require
    check_modules(cfg.modules, check)
    check(bool(cfg.output_dir.strip()), "output_dir", "must not be empty")
    check(
        cfg.ppo.minibatch_size <= cfg.ppo.train_batch_size,
        "ppo.minibatch_size",
        f"must be <= ppo.train_batch_size ({cfg.ppo.train_batch_size}), got {cfg.ppo.minibatch_size}",
    )
    if check_specs:
        for i, spec in enumerate(cfg.eval.opponents):
            check_agent_spec(spec, f"eval.opponents[{i}]", [cfg.players], tuple(cfg.modules))


_READER = ConfigReader(RLlibConfig, _cross_checks)
#: Parse and validate a raw mapping after the ``--set`` overrides.
from_dict = _READER.from_dict
#: Read a YAML config file, apply the overrides, parse and validate it.
load = _READER.load
